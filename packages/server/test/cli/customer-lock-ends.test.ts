import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidToken } from '../../src/core/errors.js';
import { hashCode } from '../../src/core/codes/authorization-code.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../helpers/postgres.js';
import { exchangeCode, REDIRECT_URI } from '../helpers/customer-flow.js';
import {
  accessClaims,
  expectInactive,
  expectInvalidToken,
  expectTokensBody,
  getProfile,
  introspect,
  postTokens,
  refreshAtToken,
  type CustomerTokens,
} from '../helpers/token-session.js';
import { expectOAuthError } from '../helpers/wire.js';
import { expectFailure } from './command-line.js';
import { customerHoldings, operatorBench, type CustomerHoldings, type OperatorBench } from './operator-bench.js';

noticePostgresSkipped('customers lock ends every token, on PostgreSQL');

interface LockView {
  profileId: string;
  status: string;
  alreadyLocked: boolean;
  ended: { journeys: number; sessions: number; tokenSessions: number; codes: number; approvals: number };
}

/** Every way a client could still act for the customer with `tokens` is refused. */
async function expectTokensEnded(b: OperatorBench, s: CustomerHoldings, tokens: CustomerTokens): Promise<void> {
  expectOAuthError(await refreshAtToken(b.t.app, s.client, tokens.refreshToken), { status: 400, error: 'invalid_grant' });
  expectInactive(await introspect(b.t.app, s.client, tokens.accessToken));
  expectInactive(await introspect(b.t.app, s.client, tokens.refreshToken));
  expectInvalidToken(await getProfile(b.t.app, tokens.accessToken));
  await expect(b.t.services.customerAccess.verify(tokens.accessToken)).rejects.toBeInstanceOf(InvalidToken);
  const viaTokens = await postTokens(b.t.app, { bearer: s.bearer, body: { refreshToken: tokens.refreshToken } });
  expectOAuthError(viaTokens, { status: 400, error: 'invalid_grant' });
}

function lockTests(open: () => Promise<OperatorBench>): void {
  it('ends every login session, token session and unredeemed code of the customer, and counts them', async () => {
    const b = await open();
    const s = await customerHoldings(b);
    // A refresh at POST /tokens whose answer a retry would replay.
    const reference = randomUUID();
    const request = { bearer: s.bearer, reference, body: { refreshToken: s.second.refreshToken } };
    const answered = expectTokensBody(await postTokens(b.t.app, request));
    expect(expectTokensBody(await postTokens(b.t.app, request))).toEqual(answered);
    // Everything works before the lock.
    expect((await getProfile(b.t.app, s.tokens.accessToken)).statusCode).toBe(200);
    expect((await getProfile(b.t.app, answered.accessToken)).statusCode).toBe(200);
    expect((await introspect(b.t.app, s.client, s.second.refreshToken)).json()).toMatchObject({ active: true });

    b.clock.advance(1);
    const locked = await b.w.cliJson<LockView>(['customers', 'lock', s.profileId]);
    expect(locked).toMatchObject({
      profileId: s.profileId,
      status: 'locked',
      alreadyLocked: false,
      ended: { journeys: 0, sessions: 1, tokenSessions: 2, codes: 2, approvals: 1 },
    });
    const events = await b.audit('customer.locked');
    expect(events).toHaveLength(1);
    expect(events[0]?.details).toEqual({ journeys_ended: 0, sessions_ended: 1, token_sessions_revoked: 2, codes_ended: 2, approvals_removed: 1, passkeys_suspended: 0 });

    for (const tokens of [s.tokens, s.second, answered]) await expectTokensEnded(b, s, tokens);
    // A retry of the refresh gets invalid_grant, not the stored tokens.
    const replay = await postTokens(b.t.app, request);
    expectOAuthError(replay, { status: 400, error: 'invalid_grant' });
    expect(replay.body).not.toContain(answered.accessToken);
    // A code issued before the lock cannot be exchanged.
    expectOAuthError(await exchangeCode(b.t.app, s.client, { code: s.codes[0], redirect_uri: REDIRECT_URI }), { status: 400, error: 'invalid_grant' });
    // The other is ended, not merely refused while the customer is locked.
    expect((await b.t.storage.codes.findAuthorizationCode(hashCode(s.codes[1])))?.expiresAt).toBe(0);
  });

  it('unlock revives no token and no code the lock ended', async () => {
    const b = await open();
    const s = await customerHoldings(b);
    b.clock.advance(1);
    // For people, the output says what was ended.
    const text = await b.w.cli(['customers', 'lock', s.profileId]);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toMatch(/status:\s+locked\n/);
    expect(text.stdout).toContain(
      'Locked. Cancelled 0 sign-ins under way, ended 1 login session, revoked 2 token sessions (their refresh and access tokens), ended 2 unredeemed authorization codes, removed 1 client approval.',
    );
    const revokedAt = (sid: string) => b.t.storage.tokenSessions.findTokenSession(sid).then((session) => session?.revokedAt);
    const sids = await Promise.all([s.tokens, s.second].map(async (tokens) => (await accessClaims(b.t, tokens.accessToken)).sid));
    b.clock.advance(1);
    await b.w.cliJson(['customers', 'unlock', s.profileId]);
    b.clock.advance(1);

    for (const tokens of [s.tokens, s.second]) await expectTokensEnded(b, s, tokens);
    // The code nobody tried while the customer was locked is refused too.
    expectOAuthError(await exchangeCode(b.t.app, s.client, { code: s.codes[1], redirect_uri: REDIRECT_URI }), {
      status: 400,
      error: 'invalid_grant',
      description: 'authorization code has expired or was ended',
    });
    for (const sid of sids) expect(await revokedAt(sid)).toBe(b.clock.nowSeconds() - 2);
  });

  it('a second lock is a no-op that says the customer was already locked', async () => {
    const b = await open();
    const s = await customerHoldings(b);
    b.clock.advance(1);
    await b.w.cliJson(['customers', 'lock', s.profileId]);
    b.clock.advance(1);
    const again = await b.w.cliJson<LockView>(['customers', 'lock', s.profileId]);
    expect(again).toMatchObject({ status: 'locked', alreadyLocked: true, ended: { journeys: 0, sessions: 0, tokenSessions: 0, codes: 0, approvals: 0 } });
    const text = await b.w.cli(['customers', 'lock', s.profileId]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('already locked: nothing changed');
    expect(await b.audit('customer.locked')).toHaveLength(1);
    // The customer's row was not written again.
    expect((await b.t.storage.customers.findCustomer(s.profileId))?.updatedAt).toBe(b.clock.nowSeconds() - 1);
  });

  it('locking an unknown customer fails with one line and changes nothing', async () => {
    const b = await open();
    const line = expectFailure(await b.w.cli(['customers', 'lock', '100000000000']), 1);
    expect(line).toContain('no customer 100000000000');
    expect(await b.audit('customer.locked')).toEqual([]);
  });
}

describe('customers lock, on SQLite', () => {
  lockTests(() => operatorBench());
});

describe.skipIf(!postgresAdminUrl)('customers lock, on PostgreSQL', () => {
  const pg = usePostgresStorage();
  lockTests(() => operatorBench({ url: pg.databaseUrl(), open: pg.open }));
});
