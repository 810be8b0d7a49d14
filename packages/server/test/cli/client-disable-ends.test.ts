import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { InvalidToken } from '../../src/core/errors.js';
import { changeReached } from '../helpers/change-reached.js';
import { introspectToken } from '../../src/core/tokens/introspect-token.js';
import { issueClientAccessToken } from '../../src/core/grants/client-credentials.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../helpers/postgres.js';
import { approveIfAsked, authorizeParams, authorizeUrl, exchangeCode, expectClientRedirect, REDIRECT_URI } from '../helpers/customer-flow.js';
import {
  accessClaims,
  expectInactive,
  expectInvalidToken,
  expectTokensBody,
  getProfile,
  introspect,
  lifecycle,
  postTokens,
  refreshAtToken,
  type CustomerTokens,
} from '../helpers/token-session.js';
import { expectOAuthError, obtainToken } from '../helpers/wire.js';
import { expectFailure } from './command-line.js';
import {
  customerHoldings,
  holdingTokenSessionInserts,
  operatorBench,
  pausingBetweenRedeemSteps,
  untilLockWaiters,
  type CustomerHoldings,
  type OperatorBench,
} from './operator-bench.js';
import { hashCode } from '../../src/core/codes/authorization-code.js';

noticePostgresSkipped('clients disable ends every token, on PostgreSQL');

interface StatusView {
  clientId: string;
  status: string;
  tokensEndedAt: string | null;
  changed: boolean;
  ended: { tokenSessions: number; codes: number };
}

/** Reads of the clock by which an enable has tried once and polled the clock while it waits (it polls every 20 ms). */
const WAITING_READS = 6;

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/** The customer tokens of the client's sessions are refused everywhere. */
async function expectCustomerTokensRefused(b: OperatorBench, tokens: CustomerTokens): Promise<void> {
  expectInvalidToken(await getProfile(b.t.app, tokens.accessToken));
  await expect(b.t.services.customerAccess.verify(tokens.accessToken)).rejects.toBeInstanceOf(InvalidToken);
}

/** The running app (another instance) has heard of the client's new status. */
const statusReached = (b: OperatorBench, id: string, status: string) =>
  changeReached(async () => (await b.t.services.findClient(id))?.status === status);

/** Disables the client (one second after the holdings were made) and waits for the app to hear of it. */
async function disable(b: OperatorBench, s: CustomerHoldings): Promise<StatusView> {
  b.clock.advance(1);
  const disabled = await b.w.cliJson<StatusView>(['clients', 'disable', s.client.id]);
  await statusReached(b, s.client.id, 'disabled');
  return disabled;
}

/** Enables the client again (two seconds on: no wait for every server to have heard of the disable) and waits for the app to hear of it. */
async function enable(b: OperatorBench, s: CustomerHoldings): Promise<StatusView> {
  b.clock.advance(2);
  const enabled = await b.w.cliJson<StatusView>(['clients', 'enable', s.client.id]);
  await statusReached(b, s.client.id, 'active');
  return enabled;
}

function disableTests(open: () => Promise<OperatorBench>): void {
  it('disable ends the client access tokens, the token sessions and the codes of the client, and counts them', async () => {
    const b = await open();
    const s = await customerHoldings(b);
    // Another client of the same customer keeps its tokens.
    const other = await s.addClient();
    const othersTokens = await s.newSession(other);
    const disabledAt = b.clock.nowSeconds() + 1;

    const disabled = await disable(b, s);
    expect(disabled).toMatchObject({ clientId: s.client.id, status: 'disabled', changed: true, tokensEndedAt: iso(disabledAt), ended: { tokenSessions: 2, codes: 2 } });
    const events = await b.audit('client.disabled');
    expect(events.map((e) => e.details)).toEqual([{ token_sessions_revoked: 2, codes_ended: 2, tokens_ended_at: disabledAt }]);

    // The client access token: refused at POST /tokens, inactive to introspection.
    const refused = await postTokens(b.t.app, { bearer: s.bearer, body: { refreshToken: s.tokens.refreshToken } });
    expectInvalidToken(refused);
    const client = await b.t.storage.clients.findClient(s.client.id);
    expect(await introspectToken(s.bearer, client!, b.t.services.tokenState)).toEqual({ active: false });
    // The customer tokens of its sessions.
    for (const tokens of [s.tokens, s.second]) {
      await expectCustomerTokensRefused(b, tokens);
      expect(await introspectToken(tokens.accessToken, client!, b.t.services.tokenState)).toEqual({ active: false });
      expect(await introspectToken(tokens.refreshToken, client!, b.t.services.tokenState)).toEqual({ active: false });
    }
    // The disabled client cannot even ask.
    expectOAuthError(await introspect(b.t.app, s.client, s.bearer), { status: 401, error: 'invalid_client' });

    // The other client's tokens of the same customer are untouched.
    expect((await getProfile(b.t.app, othersTokens.accessToken)).statusCode).toBe(200);
    expect((await introspect(b.t.app, other, othersTokens.refreshToken)).json()).toMatchObject({ active: true });
  });

  it('enable revives no token: old ones stay refused, new ones work', async () => {
    const b = await open();
    const s = await customerHoldings(b);
    // A refresh at POST /tokens whose answer a retry would replay.
    const reference = randomUUID();
    const answered = expectTokensBody(await postTokens(b.t.app, { bearer: s.bearer, reference, body: { refreshToken: s.second.refreshToken } }));
    await disable(b, s);
    const enabled = await enable(b, s);
    expect(enabled).toMatchObject({ status: 'active', changed: true, ended: { tokenSessions: 0, codes: 0 } });
    expect(await b.audit('client.enabled')).toHaveLength(1);

    // The old client access token stays refused, and inactive.
    expectInvalidToken(await postTokens(b.t.app, { bearer: s.bearer, body: { refreshToken: s.tokens.refreshToken } }), 'the access token was ended when its client was disabled');
    expectInactive(await introspect(b.t.app, s.client, s.bearer));
    // So do the old customer tokens and codes.
    const bearer = await obtainToken(b.t, s.client);
    for (const tokens of [s.tokens, s.second]) {
      await expectCustomerTokensRefused(b, tokens);
      expectInactive(await introspect(b.t.app, s.client, tokens.accessToken));
      expectInactive(await introspect(b.t.app, s.client, tokens.refreshToken));
      expectOAuthError(await refreshAtToken(b.t.app, s.client, tokens.refreshToken), { status: 400, error: 'invalid_grant' });
      expectOAuthError(await postTokens(b.t.app, { bearer, body: { refreshToken: tokens.refreshToken } }), { status: 400, error: 'invalid_grant' });
    }
    // A retry of the refresh made before the disable gets invalid_grant, not the stored tokens.
    const replay = await postTokens(b.t.app, { bearer, reference, body: { refreshToken: s.second.refreshToken } });
    expectOAuthError(replay, { status: 400, error: 'invalid_grant' });
    expect(replay.body).not.toContain(answered.accessToken);
    for (const code of s.codes) {
      expectOAuthError(await exchangeCode(b.t.app, s.client, { code, redirect_uri: REDIRECT_URI }), { status: 400, error: 'invalid_grant' });
    }

    // New tokens work.
    expect((await introspect(b.t.app, s.client, bearer)).json()).toMatchObject({ active: true });
    const fresh = await s.newSession();
    expect((await getProfile(b.t.app, fresh.accessToken)).statusCode).toBe(200);
    expectTokensBody(await postTokens(b.t.app, { bearer, body: { refreshToken: fresh.refreshToken } }));
  });

  it('an enable in the second of the disable waits until every server has heard of the disable: a token issued after it is never ended', async () => {
    const b = await open();
    const s = await customerHoldings(b);
    b.clock.advance(1);
    const second = b.clock.nowSeconds();
    const before = await obtainToken(b.t, s.client);
    await b.w.cliJson(['clients', 'disable', s.client.id]);
    // A token a server issued in the next second, before it heard of the disable.
    b.clock.advance(1);
    const { keyRing, urls, runtime } = b.t.services;
    const late = (await issueClientAccessToken({ id: s.client.id }, { keys: keyRing, clock: b.clock, urls, lifetimes: runtime.config.lifetimes })).token;
    // The clock moves on only once the enable waits for it: after the enable
    // has read the second of the late token in its attempt and then in
    // several of its polls, however slowly the command starts.
    const read = b.clock.nowSeconds.bind(b.clock);
    let readsInTheLateSecond = 0;
    const reads = vi.spyOn(b.clock, 'nowSeconds').mockImplementation(() => {
      if (read() === second + 1 && ++readsInTheLateSecond === WAITING_READS) b.clock.advance(1);
      return read();
    });
    const enabled = await b.w.cliJson<StatusView>(['clients', 'enable', s.client.id]).finally(() => reads.mockRestore());
    expect(readsInTheLateSecond).toBe(WAITING_READS);
    expect(enabled).toMatchObject({ status: 'active', changed: true, tokensEndedAt: iso(second + 1) });
    expect(b.clock.nowSeconds()).toBe(second + 2);
    const stored = await b.t.storage.clients.findClient(s.client.id);
    expect(stored).toMatchObject({ status: 'active', tokensEndedAt: second + 1 });

    // Fresh app (no cached client): the token of the enable's second works, the one of the disable's does not.
    const fresh = await b.freshApp();
    const after = await obtainToken(fresh, s.client);
    expect((await introspect(fresh.app, s.client, after)).json()).toMatchObject({ active: true, iat: second + 2 });
    expectInactive(await introspect(fresh.app, s.client, before));
    expectInactive(await introspect(fresh.app, s.client, late));
  });

  it('disabling a disabled client and enabling an enabled one are no-ops that say so', async () => {
    const b = await open();
    const s = await customerHoldings(b);
    await disable(b, s);
    const stored = await b.t.storage.clients.findClient(s.client.id);
    b.clock.advance(1);
    expect(await b.w.cliJson<StatusView>(['clients', 'disable', s.client.id])).toMatchObject({ status: 'disabled', changed: false, ended: { tokenSessions: 0, codes: 0 } });
    const text = await b.w.cli(['clients', 'disable', s.client.id]);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toContain('The client was already disabled: nothing changed.');
    // Nothing was written: not even tokensEndedAt moved.
    expect(await b.t.storage.clients.findClient(s.client.id)).toEqual(stored);

    await enable(b, s);
    const enabledText = await b.w.cli(['clients', 'enable', s.client.id]);
    expect(enabledText).toMatchObject({ code: 0, stderr: '' });
    expect(enabledText.stdout).toContain('The client was already enabled: nothing changed.');
    expect(await b.audit('client.disabled')).toHaveLength(1);
    expect(await b.audit('client.enabled')).toHaveLength(1);
  });
}

describe('clients disable and enable, on SQLite', () => {
  disableTests(() => operatorBench());

  it('an enable gives up, changing nothing, when the clock does not pass the second of the disable', async () => {
    const b = await operatorBench();
    const created = await b.w.cliJson<{ clientId: string }>(['clients', 'create', '--name', 'Shop', '--redirect-uri', REDIRECT_URI]);
    await b.w.cliJson(['clients', 'disable', created.clientId]);
    const line = expectFailure(await b.w.cli(['clients', 'enable', created.clientId]), 1);
    expect(line).toContain('nothing changed, try again');
    expect((await b.t.storage.clients.findClient(created.clientId))?.status).toBe('disabled');
    expect(await b.audit('client.enabled')).toEqual([]);
  });

  it('disable and enable of an unknown client fail with one line', async () => {
    const b = await operatorBench();
    expect(expectFailure(await b.w.cli(['clients', 'disable', 'cid_sandbox_nope']), 1)).toContain('no client cid_sandbox_nope');
    expect(expectFailure(await b.w.cli(['clients', 'enable', 'cid_sandbox_nope']), 1)).toContain('no client cid_sandbox_nope');
  });
});

/** What an exchange whose code was ended between its two steps is told. */
const ENDED = 'authorization code has expired or was ended';

describe.skipIf(!postgresAdminUrl)('clients disable and enable, on PostgreSQL', () => {
  const pg = usePostgresStorage();
  disableTests(() => operatorBench({ url: pg.databaseUrl(), open: pg.open }));

  it('a disable between the two steps of a code exchange, even one undone by an enable: the exchange gives no tokens', async () => {
    const { storage, gate } = pausingBetweenRedeemSteps(pg.open());
    const b = await operatorBench({ url: pg.databaseUrl(), open: () => storage });
    const s = await lifecycle({ t: b.t });
    const code = expectClientRedirect(await approveIfAsked(s.browser, await s.browser.get(authorizeUrl(authorizeParams(s.client))))).get('code') ?? '';

    gate.on = true;
    const exchanging = exchangeCode(b.t.app, s.client, { code, redirect_uri: REDIRECT_URI });
    await gate.reached;
    // The tokens are minted but the code is not consumed yet: the disable ends it with the login's token session.
    const disabled = await b.w.cliJson<StatusView>(['clients', 'disable', s.client.id]);
    expect(disabled.ended).toEqual({ tokenSessions: 1, codes: 1 });
    // Enabled again before the exchange goes on: what the disable ended stays ended.
    b.clock.advance(3);
    expect((await b.w.cliJson<StatusView>(['clients', 'enable', s.client.id])).status).toBe('active');
    gate.open();
    expectOAuthError(await exchanging, { status: 400, error: 'invalid_grant', description: ENDED });
    gate.on = false;
    // Nothing of the code is left to revoke.
    expect(await b.t.storage.tokenSessions.revokeTokenSessionsByCode(hashCode(code), b.clock.nowSeconds())).toBe(0);
  });

  it('a disable meeting the token session a code exchange is adding waits for it, then revokes it', async () => {
    const b = await operatorBench({ url: pg.databaseUrl(), open: pg.open });
    const s = await lifecycle({ t: b.t });
    const code = expectClientRedirect(await approveIfAsked(s.browser, await s.browser.get(authorizeUrl(authorizeParams(s.client))))).get('code') ?? '';

    const hold = await holdingTokenSessionInserts(pg.databaseUrl());
    try {
      const exchanging = exchangeCode(b.t.app, s.client, { code, redirect_uri: REDIRECT_URI });
      // The insert waits, holding the client's row in share mode.
      expect(await untilLockWaiters(pg.databaseUrl(), 1)).toBe(true);
      const disabling = b.w.cliJson<StatusView>(['clients', 'disable', s.client.id]);
      // And the disable waits for that row.
      expect(await untilLockWaiters(pg.databaseUrl(), 2)).toBe(true);
      await hold.release();

      const exchanged = await exchanging;
      expect(exchanged.statusCode).toBe(200);
      const disabled = await disabling;
      // The login's token session and the one the exchange made; the exchanged code was no longer open.
      expect(disabled.ended).toEqual({ tokenSessions: 2, codes: 0 });
      const { sid } = await accessClaims(b.t, exchanged.json<{ access_token: string }>().access_token);
      expect((await b.t.storage.tokenSessions.findTokenSession(sid))?.revokedAt).toBe(b.clock.nowSeconds());
    } finally {
      await hold.drop();
    }
  });
});
