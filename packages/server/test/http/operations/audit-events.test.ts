import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../../src/core/audit/audit-log.js';
import { AUTH_FAILURE_GROUPS_PER_MINUTE, MANY_ADDRESSES_ACTOR } from '../../../src/core/audit/client-auth-failures.js';
import { basicAuth, build, form, T0, type TestApp } from '../../helpers/build.js';
import { appWithCustomer } from '../../helpers/builders.js';
import { fixedClock } from '../../../src/core/clock.js';
import { postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import {
  addCustomer,
  authorizeParams,
  Browser,
  enterOtp,
  exchangeCode,
  expectClientRedirect,
  latestOtp,
  logIn,
  MOBILE,
  PIN,
  REDIRECT_URI,
  startLogin,
  submitCredentials,
  wrongOtp,
  type Response,
} from '../../helpers/customer-flow.js';
import { expectOAuthError, postToken, type Credentials } from '../../helpers/wire.js';

/**
 * Security events the HTTP app records in the audit log: failed client
 * authentication, PIN lockout, one-time-PIN exhaustion, code replay and use
 * of a revoked refresh token. Each is one event, and none ever holds a
 * secret, PIN, code or token.
 */

/** The address `inject()` requests come from. */
const IP = '127.0.0.1';
const WRONG_PIN = '975310';

async function events(t: TestApp, type?: AuditRecord['type']): Promise<AuditRecord[]> {
  return t.storage.audit.listAuditEvents({ limit: 10_000, ...(type ? { type } : {}) });
}

/**
 * Expects that no value in `secrets` appears in any recorded event. Digit
 * strings (PINs, one-time PINs) count only as whole numbers, not as digits
 * inside a timestamp or ID.
 */
async function expectNoSecretsRecorded(t: TestApp, secrets: ReadonlyArray<string | undefined>): Promise<void> {
  const serialized = JSON.stringify(await events(t));
  for (const secret of secrets) {
    expect(typeof secret === 'string' && secret.length >= 4, `a secret to look for: ${String(secret)}`).toBe(true);
    const value = secret as string;
    if (/^\d+$/.test(value)) expect(serialized).not.toMatch(new RegExp(`(?<!\\d)${value}(?!\\d)`));
    else expect(serialized).not.toContain(value);
  }
}

function clientCredentialsBody(extra: Record<string, string> = {}): string {
  return form({ grant_type: 'client_credentials', ...extra });
}

describe('failed client authentication', () => {
  it('with HTTP Basic: one event naming the claimed client, the method and the reason, never the secret', async () => {
    const t = await build();
    const client = await t.createClient();
    const tried = `${client.secret.slice(0, -4)}AAAA`;
    t.clock.advance(42);
    const res = await postToken(t.app, { authorization: basicAuth(client.id, tried), body: clientCredentialsBody() });
    expectOAuthError(res, { status: 401, error: 'invalid_client', challenge: 'basic' });

    const recorded = await events(t);
    expect(recorded).toEqual([
      {
        id: expect.any(String),
        at: T0 + 42,
        type: 'client.authentication_failed',
        actor: `ip:${IP}`,
        subject: client.id,
        outcome: 'failure',
        details: { method: 'client_secret_basic', reason: 'client authentication failed', count: 1 },
        requestId: res.headers['x-request-id'],
      },
    ]);
    await expectNoSecretsRecorded(t, [client.secret, tried]);
  });

  it('with client_secret_post: the same event with its method', async () => {
    const t = await build();
    const client = await t.createClient();
    const tried = 'not-the-secret-at-all';
    const res = await postToken(t.app, { body: clientCredentialsBody({ client_id: client.id, client_secret: tried }) });
    expectOAuthError(res, { status: 401, error: 'invalid_client' });
    expect(await events(t)).toEqual([
      expect.objectContaining({
        type: 'client.authentication_failed',
        actor: `ip:${IP}`,
        subject: client.id,
        outcome: 'failure',
        details: { method: 'client_secret_post', reason: 'client authentication failed', count: 1 },
      }),
    ]);
    await expectNoSecretsRecorded(t, [client.secret, tried]);
  });

  it('an ID that names no client is not recorded: the failure counts for its address as an unknown client', async () => {
    const t = await build();
    const res = await postToken(t.app, { authorization: basicAuth('cid_sandbox_nobody', 'guess-guess-guess'), body: clientCredentialsBody() });
    expectOAuthError(res, { status: 401, error: 'invalid_client' });
    expect(await events(t)).toEqual([
      expect.objectContaining({
        type: 'client.authentication_failed',
        actor: `ip:${IP}`,
        subject: null,
        details: { method: 'client_secret_basic', reason: 'client authentication failed', client: 'unknown', count: 1 },
      }),
    ]);
    expect(JSON.stringify(await events(t))).not.toContain('cid_sandbox_nobody');
    await expectNoSecretsRecorded(t, ['guess-guess-guess']);
  });

  it('credentials of the other environment are recorded with that reason', async () => {
    const t = await build();
    const secret = `csk_production_${'B'.repeat(43)}`;
    const res = await postToken(t.app, { authorization: basicAuth(`cid_production_${'A'.repeat(22)}`, secret), body: clientCredentialsBody() });
    expectOAuthError(res, { status: 401, error: 'invalid_client', description: /production/ });
    expect(await events(t)).toEqual([
      expect.objectContaining({
        type: 'client.authentication_failed',
        subject: null,
        details: { method: 'client_secret_basic', reason: expect.stringMatching(/production credentials/), client: 'unknown', count: 1 },
      }),
    ]);
    await expectNoSecretsRecorded(t, [secret]);
  });

  it('a disabled client is recorded too', async () => {
    const t = await build();
    const client = await t.createClient();
    await t.storage.clients.updateClient(client.id, { status: 'disabled' }, T0);
    expectOAuthError(await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: clientCredentialsBody() }), { status: 401, error: 'invalid_client' });
    expect(await events(t)).toEqual([expect.objectContaining({ type: 'client.authentication_failed', subject: client.id, details: expect.objectContaining({ reason: 'client is disabled' }) })]);
    await expectNoSecretsRecorded(t, [client.secret]);
  });

  it('failures at /introspect and /revoke are recorded the same way', async () => {
    const t = await build();
    const client = await t.createClient();
    for (const url of ['/introspect', '/revoke']) {
      t.clock.advance(60);
      const res = await t.app.inject({
        method: 'POST',
        url,
        headers: { authorization: basicAuth(client.id, 'wrong-secret-value'), 'content-type': 'application/x-www-form-urlencoded' },
        payload: form({ token: 'whatever' }),
      });
      expect(res.statusCode).toBe(401);
    }
    expect((await events(t)).map((e) => [e.type, e.subject])).toEqual([
      ['client.authentication_failed', client.id],
      ['client.authentication_failed', client.id],
    ]);
    await expectNoSecretsRecorded(t, ['wrong-secret-value', client.secret]);
  });

  it('a successful authentication records nothing; failures in different minutes are one event each', async () => {
    const t = await build();
    const client = await t.createClient();
    expect((await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: clientCredentialsBody() })).statusCode).toBe(200);
    expect(await events(t)).toEqual([]);
    for (let i = 0; i < 3; i++) {
      t.clock.advance(60);
      await postToken(t.app, { authorization: basicAuth(client.id, `wrong-${i}-secret`), body: clientCredentialsBody() });
    }
    expect(await events(t, 'client.authentication_failed')).toHaveLength(3);
  });
});

describe('a flood of made-up client credentials writes a bounded number of audit rows per instance', () => {
  const N = 400;
  const tokenFrom = (t: TestApp, address: string, id: string, secret: string) =>
    t.app.inject({ method: 'POST', url: '/token', remoteAddress: address, headers: { authorization: basicAuth(id, secret), 'content-type': 'application/x-www-form-urlencoded' }, payload: clientCredentialsBody() });

  it(`${N} made-up client IDs from one address in a minute: one row with count ${N}; a real client's failure keeps its ID`, async () => {
    const t = await build({ clock: fixedClock(T0 - (T0 % 60)) });
    const client = await t.createClient();
    for (let i = 0; i < N; i++) expect((await tokenFrom(t, '203.0.113.50', `cid_sandbox_madeup${i}`, 'guess-guess-guess')).statusCode).toBe(401);
    expect((await tokenFrom(t, '203.0.113.50', client.id, 'wrong-secret-value')).statusCode).toBe(401);
    const written = await events(t, 'client.authentication_failed');
    expect(written.map((e) => [e.actor, e.subject, e.details?.['count']])).toHaveLength(2);
    expect(written.map((e) => [e.actor, e.subject, e.details?.['count']])).toEqual(
      expect.arrayContaining([
        ['ip:203.0.113.50', client.id, 1],
        ['ip:203.0.113.50', null, N],
      ]),
    );
  });

  it(`${N} made-up client IDs from ${N} addresses in a minute: at most ${AUTH_FAILURE_GROUPS_PER_MINUTE} rows plus one, every failure counted; a real client's failure keeps its ID`, async () => {
    const t = await build({ clock: fixedClock(T0 - (T0 % 60)) });
    const client = await t.createClient();
    for (let i = 0; i < N; i++) expect((await tokenFrom(t, `10.${i >> 8}.${i & 255}.1`, `cid_sandbox_madeup${i}`, 'guess-guess-guess')).statusCode).toBe(401);
    expect((await tokenFrom(t, '203.0.113.51', client.id, 'wrong-secret-value')).statusCode).toBe(401);
    const written = await events(t, 'client.authentication_failed');
    const madeUp = written.filter((e) => e.subject === null);
    expect(madeUp.length).toBeLessThanOrEqual(AUTH_FAILURE_GROUPS_PER_MINUTE + 1);
    expect(madeUp.reduce((sum, e) => sum + Number(e.details?.['count']), 0)).toBe(N);
    expect(JSON.stringify(written)).not.toContain('madeup');
    // Past the bound, the real client's failure from a new address is counted under its ID (the address folded).
    expect(written.filter((e) => e.subject === client.id)).toEqual([
      expect.objectContaining({ actor: MANY_ADDRESSES_ACTOR, details: { method: 'client_secret_basic', reason: 'client authentication failed', count: 1 } }),
    ]);
  });
});

/** 100 failures of one client from one address in one minute, through two instances on one database. */
async function hundredFailures(shared: Storage | undefined): Promise<void> {
  const start = T0 - (T0 % 60);
  const t = await build({ clock: fixedClock(start), ...(shared ? { storage: shared } : {}) });
  const other = await build({ clock: t.clock, storage: shared ?? t.storage, masterKey: t.masterKey });
  const client = await t.createClient();
  const fail = (app: TestApp['app']) => postToken(app, { authorization: basicAuth(client.id, 'wrong-secret-value'), body: clientCredentialsBody() });
  await fail(t.app);
  expect(await events(t, 'client.authentication_failed')).toEqual([expect.objectContaining({ subject: client.id, details: expect.objectContaining({ count: 1 }) })]);
  t.clock.advance(30);
  await Promise.all(Array.from({ length: 99 }, (_, i) => fail(i % 2 ? t.app : other.app)));
  t.clock.advance(29);
  expect(await events(t, 'client.authentication_failed')).toEqual([
    expect.objectContaining({ actor: `ip:${IP}`, subject: client.id, at: start, details: { method: 'client_secret_basic', reason: 'client authentication failed', count: 100 } }),
  ]);
  t.clock.advance(1);
  await fail(other.app);
  const next = await events(t, 'client.authentication_failed');
  expect(next.map((e) => [e.at - start, e.details?.['count']])).toEqual([
    [0, 100],
    [60, 1],
  ]);
}

describe('repeated failed client authentications: one event per client, address and minute', () => {
  it('SQLite: 100 failures in one minute, two instances at once, are one event with count 100; the next minute starts a new one', async () => {
    await hundredFailures(undefined);
  });

  describe.skipIf(!postgresAdminUrl)('PostgreSQL', () => {
    const postgres = usePostgresStorage();
    it('100 failures in one minute, two instances at once, are one event with count 100; the next minute starts a new one', async () => {
      const shared = postgres.open();
      await shared.migrate();
      await hundredFailures(shared);
    });
  });
});

describe('customer login', () => {
  it('5 wrong PINs lock the account: one event, at the 5th; attempts during the lock add none', async () => {
    const { t, client, browser } = await appWithCustomer();
    let { page } = await startLogin(browser, authorizeParams(client));
    for (let attempt = 1; attempt <= 4; attempt++) {
      t.clock.advance(1);
      page = await browser.submit(page, { mobile: MOBILE, pin: WRONG_PIN, action: 'login' });
    }
    expect(await events(t)).toEqual([]);

    t.clock.advance(1);
    page = await browser.submit(page, { mobile: MOBILE, pin: WRONG_PIN, action: 'login' });
    const lockedAt = T0 + 5;
    const profileId = (await t.storage.customers.findCustomerByMobile(MOBILE))?.profileId;
    expect(await events(t)).toEqual([
      {
        id: expect.any(String),
        at: lockedAt,
        type: 'customer.pin_lockout',
        actor: `ip:${IP}`,
        subject: profileId,
        outcome: 'failure',
        details: { client_id: client.id, locked_until: lockedAt + 900, pin_checked: true },
        requestId: page.headers['x-request-id'],
      },
    ]);

    // Wrong and right PINs during the lock are refused without new events.
    page = await browser.submit(page, { mobile: MOBILE, pin: WRONG_PIN, action: 'login' });
    page = await browser.submit(page, { mobile: MOBILE, pin: PIN, action: 'login' });
    expect(await events(t, 'customer.pin_lockout')).toHaveLength(1);
    await expectNoSecretsRecorded(t, [PIN, WRONG_PIN, (await t.storage.customers.findCustomerByMobile(MOBILE))?.pinHash]);
  });

  it('5 wrong one-time PINs end the challenge: recorded once, not again for later entries', async () => {
    const { t, client, browser } = await appWithCustomer();
    const { page } = await startLogin(browser, authorizeParams(client));
    let otpPage: Response = await submitCredentials(browser, page, MOBILE, PIN);
    const code = await latestOtp(t.app, MOBILE);
    const wrong = wrongOtp(code);
    for (let attempt = 1; attempt <= 4; attempt++) otpPage = await enterOtp(browser, otpPage, MOBILE, wrong);
    expect(await events(t)).toEqual([]);

    t.clock.advance(7);
    otpPage = await enterOtp(browser, otpPage, MOBILE, wrong);
    expect(await events(t)).toEqual([
      {
        id: expect.any(String),
        at: T0 + 7,
        type: 'otp.exhausted',
        actor: 'ip:127.0.0.1',
        subject: (await t.storage.customers.findCustomerByMobile(MOBILE))?.profileId,
        outcome: 'failure',
        details: { client_id: client.id, purpose: 'login' },
        requestId: otpPage.headers['x-request-id'],
      },
    ]);

    // A 6th wrong code, and even the right one, fail without another event.
    otpPage = await enterOtp(browser, otpPage, MOBILE, wrong);
    const right = await enterOtp(browser, otpPage, MOBILE, code);
    expect(right.headers.location ?? '').not.toContain('code=');
    expect(await events(t, 'otp.exhausted')).toHaveLength(1);
    await expectNoSecretsRecorded(t, [PIN, code, wrong]);
  });
});

describe('tokens', () => {
  async function loggedIn(grants: string[] = ['client_credentials', 'authorization_code', 'refresh_token']) {
    const t = await build();
    const client = await t.createClient({ grants });
    const customer = await addCustomer(t);
    const browser = new Browser(t.app);
    const params = await logIn(browser, authorizeParams(client));
    return { t, client, profileId: customer.profileId, browser, code: params.get('code') as string };
  }

  async function exchange(t: TestApp, client: Credentials, code: string) {
    const res = await exchangeCode(t.app, client, { code, redirect_uri: REDIRECT_URI });
    expect(res.statusCode).toBe(200);
    return res.json<{ access_token: string; refresh_token: string }>();
  }

  it('a replayed authorization code: one event naming the client and the customer, never the code or tokens', async () => {
    const { t, client, profileId, code } = await loggedIn();
    const tokens = await exchange(t, client, code);
    expect(await events(t)).toEqual([]);

    t.clock.advance(3);
    const replayed = await exchangeCode(t.app, client, { code, redirect_uri: REDIRECT_URI });
    expectOAuthError(replayed, { status: 400, error: 'invalid_grant' });
    expect(await events(t)).toEqual([
      {
        id: expect.any(String),
        at: T0 + 3,
        type: 'code.replayed',
        actor: `client:${client.id}`,
        subject: profileId,
        outcome: 'failure',
        details: { revoked_sessions: 1 },
        requestId: replayed.headers['x-request-id'],
      },
    ]);
    await expectNoSecretsRecorded(t, [code, tokens.access_token, tokens.refresh_token, client.secret]);
  });

  it('an unknown code is not a replay and records nothing', async () => {
    const { t, client } = await loggedIn();
    expectOAuthError(await exchangeCode(t.app, client, { code: 'A'.repeat(43), redirect_uri: REDIRECT_URI }), { status: 400, error: 'invalid_grant' });
    expect(await events(t)).toEqual([]);
  });

  it('a revoked refresh token used at /token: one event; the refresh is refused', async () => {
    const { t, client, profileId, code } = await loggedIn(['client_credentials', 'authorization_code', 'refresh_token']);
    const tokens = await exchange(t, client, code);
    const refresh = () => postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }) });
    expect((await refresh()).statusCode).toBe(200);

    const revoked = await t.app.inject({
      method: 'POST',
      url: '/revoke',
      headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ token: tokens.refresh_token, token_type_hint: 'refresh_token' }),
    });
    expect(revoked.statusCode).toBe(200);
    expect(await events(t)).toEqual([]);

    t.clock.advance(11);
    const refused = await refresh();
    expectOAuthError(refused, { status: 400, error: 'invalid_grant' });
    const recorded = await events(t);
    expect(recorded).toEqual([
      {
        id: expect.any(String),
        at: T0 + 11,
        type: 'refresh_token.revoked_use',
        actor: `client:${client.id}`,
        subject: profileId,
        outcome: 'failure',
        details: { sid: expect.stringMatching(/^[A-Za-z0-9_-]{20,}$/) },
        requestId: refused.headers['x-request-id'],
      },
    ]);
    await expectNoSecretsRecorded(t, [code, tokens.access_token, tokens.refresh_token, client.secret]);
  });

  it('a revoked refresh token used at POST /tokens is recorded the same way', async () => {
    const { t, client, profileId, code } = await loggedIn(['client_credentials', 'authorization_code', 'refresh_token']);
    const tokens = await exchange(t, client, code);
    await t.app.inject({
      method: 'POST',
      url: '/revoke',
      headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ token: tokens.refresh_token }),
    });
    const bearer = (await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: clientCredentialsBody() })).json<{ access_token: string }>().access_token;
    const res = await t.app.inject({
      method: 'POST',
      url: '/tokens',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'request-reference-no': randomUUID() },
      payload: JSON.stringify({ refreshToken: tokens.refresh_token }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await events(t)).toEqual([expect.objectContaining({ type: 'refresh_token.revoked_use', actor: `client:${client.id}`, subject: profileId, outcome: 'failure', requestId: res.headers['x-request-id'] })]);
    await expectNoSecretsRecorded(t, [code, tokens.access_token, tokens.refresh_token, client.secret, bearer]);
  });
});

describe('every security event together', () => {
  it('holds no client secret, PIN, one-time PIN, code, access or refresh token', async () => {
    const t = await build();
    const client = await t.createClient({ grants: ['client_credentials', 'authorization_code', 'refresh_token'] });
    await addCustomer(t);
    const other = await addCustomer(t, '+639181234321', '246810');
    const secrets: string[] = [client.secret, PIN, '246810', WRONG_PIN];

    // Failed client authentication, both methods.
    await postToken(t.app, { authorization: basicAuth(client.id, 'basic-wrong-secret'), body: clientCredentialsBody() });
    await postToken(t.app, { body: clientCredentialsBody({ client_id: client.id, client_secret: 'post-wrong-secret' }) });
    secrets.push('basic-wrong-secret', 'post-wrong-secret');
    const access = (await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: clientCredentialsBody() })).json<{ access_token: string }>().access_token;
    secrets.push(access);

    // A login, a code exchanged and replayed, its refresh token revoked and used.
    const browser = new Browser(t.app);
    const { page } = await startLogin(browser, authorizeParams(client));
    const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
    const otp = await latestOtp(t.app, MOBILE);
    const code = expectClientRedirect(await enterOtp(browser, otpPage, MOBILE, otp)).get('code') as string;
    const tokens = (await exchangeCode(t.app, client, { code, redirect_uri: REDIRECT_URI })).json<{ access_token: string; refresh_token: string }>();
    await exchangeCode(t.app, client, { code, redirect_uri: REDIRECT_URI });
    await t.app.inject({
      method: 'POST',
      url: '/revoke',
      headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ token: tokens.refresh_token }),
    });
    await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }) });
    secrets.push(otp, code, tokens.access_token, tokens.refresh_token);

    // Another customer: one-time PINs used up, then the PIN locked out.
    const second = new Browser(t.app);
    const start = await startLogin(second, authorizeParams(client));
    let otherOtpPage = await submitCredentials(second, start.page, other.mobile, '246810');
    const otherOtp = await latestOtp(t.app, other.mobile);
    for (let attempt = 1; attempt <= 5; attempt++) otherOtpPage = await enterOtp(second, otherOtpPage, other.mobile, wrongOtp(otherOtp));
    secrets.push(otherOtp, wrongOtp(otherOtp));
    const third = new Browser(t.app);
    let { page: lockPage } = await startLogin(third, authorizeParams(client));
    for (let attempt = 1; attempt <= 5; attempt++) lockPage = await third.submit(lockPage, { mobile: other.mobile, pin: WRONG_PIN, action: 'login' });
    secrets.push(other.pinHash);

    const recorded = await events(t);
    expect([...new Set(recorded.map((e) => e.type))].sort()).toEqual([
      'client.authentication_failed',
      'code.replayed',
      'customer.pin_lockout',
      'otp.exhausted',
      'refresh_token.revoked_use',
    ]);
    expect(recorded.every((e) => e.outcome === 'failure')).toBe(true);
    await expectNoSecretsRecorded(t, secrets);
  });
});
