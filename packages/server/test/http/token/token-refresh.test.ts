import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import { build, T0, TEST_AUTH_URL, TEST_BASE_URL, type BuildOptions } from '../../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import { authorizeParams, authorizeUrl, exchangeCode, expectClientRedirect, MASKED_MOBILE, REDIRECT_URI } from '../../helpers/customer-flow.js';
import {
  accessClaims,
  expectInactive,
  expectIntrospection,
  expectInvalidToken,
  expectRefreshed,
  expectRevoked,
  getProfile,
  introspect,
  isActive,
  lifecycle,
  NO_REFRESH_GRANTS,
  refreshAtToken,
  revoke,
  signWithServerKey,
  type Lifecycle,
} from '../../helpers/token-session.js';
import { expectOAuthError, obtainToken } from '../../helpers/wire.js';

const INVALID_OR_EXPIRED = 'refresh token is invalid or expired';

function expectInvalidGrant(res: Awaited<ReturnType<typeof refreshAtToken>>, description: string): void {
  expectOAuthError(res, { status: 400, error: 'invalid_grant', description, challenge: 'none' });
}

describe('POST /token grant_type=refresh_token', () => {
  it('returns a new JWE access token of the same session, echoes the refresh token, expires_in; never cached', async () => {
    const { t, client, profileId, tokens } = await lifecycle();
    const before = await accessClaims(t, tokens.accessToken);
    t.clock.advance(42);

    const body = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken));
    expect(body.refresh_token).toBe(tokens.refreshToken);
    expect(body.access_token).not.toBe(tokens.accessToken);
    const after = await accessClaims(t, body.access_token);
    expect(after).toEqual({
      iss: TEST_AUTH_URL,
      aud: TEST_BASE_URL,
      sub: profileId,
      client_id: client.id,
      sid: before.sid,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      iat: T0 + 42,
      exp: T0 + 42 + 3600,
      // Those of the sign-in at T0, unchanged: a refresh is no new authentication.
      acr: 'urn:connect:acr:pin-sms',
      amr: ['pin', 'sms', 'mfa'],
      auth_time: T0,
    });
    expect(after.jti).not.toBe(before.jti);

    const session = await t.storage.tokenSessions.findTokenSession(before.sid);
    expect(session).toMatchObject({ accessJti: after.jti, accessExpiresAt: T0 + 42 + 3600, refreshJti: decodeJwt(tokens.refreshToken).jti, revokedAt: null });
  });

  it('accepts client_secret_post as well as HTTP Basic', async () => {
    const { t, client, tokens } = await lifecycle();
    expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken, 'post'));
  });

  it('the previous access token is inactive at introspection at once; the new one is active', async () => {
    const { t, client, tokens } = await lifecycle();
    expect(await isActive(t.app, client, tokens.accessToken)).toBe(true);
    const body = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken));
    expectInactive(await introspect(t.app, client, tokens.accessToken));
    expect(await isActive(t.app, client, body.access_token)).toBe(true);
  });

  it('the previous access token: refused at /customer/profile at once when its session was not read this second', async () => {
    const { t, client, tokens } = await lifecycle();
    t.clock.advance(10);
    const body = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken));
    expectInvalidToken(await getProfile(t.app, tokens.accessToken), 'the access token has been replaced or revoked');
    expect((await getProfile(t.app, body.access_token)).statusCode).toBe(200);
  });

  it('the previous access token is refused at the very next request after the refresh, on the instance that refreshed', async () => {
    const { t, client, tokens } = await lifecycle();
    t.clock.advance(10);
    expect((await getProfile(t.app, tokens.accessToken)).statusCode).toBe(200);
    expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken));
    // No time passes: the instance held the session's state and forgot it when it refreshed.
    expectInvalidToken(await getProfile(t.app, tokens.accessToken), 'the access token has been replaced or revoked');
  });

  it('the new access token is accepted at /customer/profile at once, even in the second the old one was cached in', async () => {
    const { t, client, profileId, tokens } = await lifecycle();
    expect((await getProfile(t.app, tokens.accessToken)).statusCode).toBe(200);
    const body = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken));
    const res = await getProfile(t.app, body.access_token);
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 200,
      body: { profileId, userId: MASKED_MOBILE, clientId: client.id, tokenExpiresAt: T0 + 3600 },
    });
    // Having seen the new token, the instance knows the old one is replaced.
    expectInvalidToken(await getProfile(t.app, tokens.accessToken));
  });

  it('the refresh token stays valid and refreshes again; only the newest access token is ever active', async () => {
    const { t, client, tokens } = await lifecycle();
    const minted = [tokens.accessToken];
    for (let i = 0; i < 4; i++) {
      t.clock.advance(600);
      const body = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken));
      expect(body.refresh_token).toBe(tokens.refreshToken);
      minted.push(body.access_token);
    }
    expect(new Set(minted).size).toBe(5);
    const active = await Promise.all(minted.map((token) => isActive(t.app, client, token)));
    expect(active).toEqual([false, false, false, false, true]);
    expect(await isActive(t.app, client, tokens.refreshToken)).toBe(true);
  });

  it('refreshing one session leaves the customer’s other sessions alone', async () => {
    const { t, client, tokens, newSession } = await lifecycle();
    const second = await newSession();
    expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken));
    expect(await isActive(t.app, client, second.accessToken)).toBe(true);
    expect((await getProfile(t.app, second.accessToken)).statusCode).toBe(200);
  });

  it('simultaneous refreshes with one refresh token all succeed with one access token, which stays active (CONNECT_REFRESH_REUSE_SECONDS)', async () => {
    const { t, client, tokens } = await lifecycle();
    const responses = await Promise.all(Array.from({ length: 10 }, () => refreshAtToken(t.app, client, tokens.refreshToken)));
    const minted = responses.map((res) => expectRefreshed(res).access_token);
    expect(new Set(minted).size).toBe(1);
    for (const token of minted) expect((await getProfile(t.app, token)).statusCode).toBe(200);
    const active = await Promise.all([tokens.accessToken, ...minted].map((token) => isActive(t.app, client, token)));
    // The access token from before the refreshes is retired all the same.
    expect(active).toEqual([false, ...minted.map(() => true)]);
  });

  it('refreshes within CONNECT_REFRESH_REUSE_SECONDS of the one that minted get its token again; at the end of the interval a new one', async () => {
    const { t, client, tokens } = await lifecycle({ env: { CONNECT_REFRESH_REUSE_SECONDS: '5' } });
    const first = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken));
    t.clock.advance(4);
    const reused = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken), 3596);
    expect(reused.access_token).toBe(first.access_token);
    t.clock.advance(1);
    const fresh = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken));
    expect(fresh.access_token).not.toBe(first.access_token);
    expect(await isActive(t.app, client, first.access_token)).toBe(false);
    expect(await isActive(t.app, client, fresh.access_token)).toBe(true);
    expect(await isActive(t.app, client, tokens.accessToken)).toBe(false);
  });

  it('CONNECT_REFRESH_REUSE_SECONDS=0: simultaneous refreshes all succeed, and exactly one of their access tokens stays active', async () => {
    const { t, client, tokens } = await lifecycle({ env: { CONNECT_REFRESH_REUSE_SECONDS: '0' } });
    const responses = await Promise.all(Array.from({ length: 5 }, () => refreshAtToken(t.app, client, tokens.refreshToken)));
    const minted = responses.map((res) => expectRefreshed(res).access_token);
    expect(new Set(minted).size).toBe(5);
    const active = await Promise.all([tokens.accessToken, ...minted].map((token) => isActive(t.app, client, token)));
    expect(active.filter(Boolean)).toHaveLength(1);
    expect(active[0]).toBe(false);
  });

  it('refused: no refresh_token → invalid_request', async () => {
    const { t, client } = await lifecycle();
    expectOAuthError(await refreshAtToken(t.app, client, undefined), { status: 400, error: 'invalid_request', description: 'refresh_token is required' });
    expectOAuthError(await refreshAtToken(t.app, client, ''), { status: 400, error: 'invalid_request', description: 'refresh_token is required' });
  });

  describe('refused with invalid_grant (400)', () => {
    let s: Lifecycle;
    beforeEach(async () => {
      s = await lifecycle();
    });

    it.each([
      ['garbage', () => 'not-a-token'],
      ['three dots', () => 'a.b.c'],
      ['the refresh token truncated by one character', () => s.tokens.refreshToken.slice(0, -1)],
      ['the refresh token without its signature', () => s.tokens.refreshToken.split('.').slice(0, 2).join('.')],
      ['the refresh token with its signature cut in half', () => s.tokens.refreshToken.slice(0, -43)],
      ['a 10 KB token', () => `${s.tokens.refreshToken}${'A'.repeat(10_240)}`],
      ['the customer access token (a JWE)', () => s.tokens.accessToken],
      ['a client access token', async () => obtainToken(s.t, s.client)],
    ] as ReadonlyArray<[string, () => string | Promise<string>]>)('%s → "refresh token is invalid or expired"', async (_name, token) => {
      expectInvalidGrant(await refreshAtToken(s.t.app, s.client, await token()), INVALID_OR_EXPIRED);
      // The real refresh token is unaffected.
      expectRefreshed(await refreshAtToken(s.t.app, s.client, s.tokens.refreshToken));
    });

    it('a well-signed refresh token for a session that does not exist → "refresh token is invalid"', async () => {
      const claims = decodeJwt(s.tokens.refreshToken);
      const unknown = await signWithServerKey(s.t, { typ: 'rt+jwt' }, { ...claims, sid: randomBytes(16).toString('base64url') });
      expectInvalidGrant(await refreshAtToken(s.t.app, s.client, unknown), 'refresh token is invalid');
    });

    it('a well-signed refresh token of an existing session but another jti → "refresh token is invalid"', async () => {
      const claims = decodeJwt(s.tokens.refreshToken);
      const stale = await signWithServerKey(s.t, { typ: 'rt+jwt' }, { ...claims, jti: randomUUID() });
      expectInvalidGrant(await refreshAtToken(s.t.app, s.client, stale), 'refresh token is invalid');
    });

    it('a refresh token from another server (another master key) → "refresh token is invalid or expired"', async () => {
      const other = await lifecycle();
      expectInvalidGrant(await refreshAtToken(s.t.app, s.client, other.tokens.refreshToken), INVALID_OR_EXPIRED);
    });

    it('another client’s refresh token; the owner can still use it', async () => {
      const other = await s.addClient();
      expectInvalidGrant(await refreshAtToken(s.t.app, other, s.tokens.refreshToken), 'refresh token was issued to another client');
      expect(await isActive(s.t.app, s.client, s.tokens.accessToken)).toBe(true);
      expectRefreshed(await refreshAtToken(s.t.app, s.client, s.tokens.refreshToken));
    });

    it('a refresh token revoked through /revoke → "refresh token has been revoked"', async () => {
      expectRevoked(await revoke(s.t.app, s.client, s.tokens.refreshToken));
      expectInvalidGrant(await refreshAtToken(s.t.app, s.client, s.tokens.refreshToken), 'refresh token has been revoked');
      const [event] = await s.t.storage.audit.listAuditEvents({ type: 'refresh_token.revoked_use', limit: 10 });
      expect(event).toMatchObject({ actor: `client:${s.client.id}`, subject: s.profileId, outcome: 'failure' });
    });

    it('a refresh token whose session was revoked by a code replay', async () => {
      const { t, client, browser } = s;
      const code = expectClientRedirect(await browser.get(authorizeUrl(authorizeParams(client)))).get('code') ?? '';
      const first = await exchangeCode(t.app, client, { code, redirect_uri: REDIRECT_URI });
      expect(first.statusCode).toBe(200);
      expectOAuthError(await exchangeCode(t.app, client, { code, redirect_uri: REDIRECT_URI }), { status: 400, error: 'invalid_grant' });
      expectInvalidGrant(await refreshAtToken(t.app, client, first.json<{ refresh_token: string }>().refresh_token), 'refresh token has been revoked');
    });
  });

  it('a client without the refresh_token grant gets no refresh token, and any it presents → unauthorized_client (400), unspent', async () => {
    const s = await lifecycle({ grants: NO_REFRESH_GRANTS });
    expect(s.tokens.refreshToken).toBeUndefined();
    const other = await s.addClient();
    const othersTokens = await s.newSession(other);
    expectOAuthError(await refreshAtToken(s.t.app, s.client, othersTokens.refreshToken), {
      status: 400,
      error: 'unauthorized_client',
      description: 'this client is not allowed the refresh_token grant',
      challenge: 'none',
    });
    expect(await isActive(s.t.app, s.client, s.tokens.accessToken)).toBe(true);
    expect(await isActive(s.t.app, other, othersTokens.accessToken)).toBe(true);
  });

  it('a client whose refresh grant is withdrawn → unauthorized_client once the client cache has moved on', async () => {
    const { t, client, tokens } = await lifecycle();
    await t.storage.clients.updateClient(client.id, { grants: [...NO_REFRESH_GRANTS] }, t.clock.nowSeconds());
    t.clock.advance(5);
    expectOAuthError(await refreshAtToken(t.app, client, tokens.refreshToken), { status: 400, error: 'unauthorized_client' });
  });

  it('a wrong secret or a disabled client → invalid_client, and nothing is refreshed', async () => {
    const { t, client, tokens } = await lifecycle();
    expectOAuthError(await refreshAtToken(t.app, { id: client.id, secret: `${client.secret}x` }, tokens.refreshToken), {
      status: 401,
      error: 'invalid_client',
      challenge: 'basic',
    });
    await t.storage.clients.updateClient(client.id, { status: 'disabled' }, t.clock.nowSeconds());
    t.clock.advance(5);
    expectOAuthError(await refreshAtToken(t.app, client, tokens.refreshToken), { status: 401, error: 'invalid_client', description: 'client is disabled' });
    const session = await t.storage.tokenSessions.findTokenSession((await accessClaims(t, tokens.accessToken)).sid);
    expect(session?.accessJti).toBe((await accessClaims(t, tokens.accessToken)).jti);
  });
});

describe('docs/tokens.md: lifetimes to the second (access 60 s, refresh 300 s)', () => {
  const SHORT: BuildOptions = { accessTokenTtlSeconds: 60, refreshTokenTtlSeconds: 300 };

  it('exp - iat is exactly the configured lifetime, for the login’s and for refreshed tokens', async () => {
    const { t, client, tokens } = await lifecycle(SHORT);
    const access = await accessClaims(t, tokens.accessToken);
    const refresh = decodeJwt(tokens.refreshToken);
    expect([access.iat, (access.exp ?? 0) - (access.iat ?? 0)]).toEqual([T0, 60]);
    expect([refresh.iat, (refresh.exp ?? 0) - (refresh.iat ?? 0)]).toEqual([T0, 300]);

    t.clock.advance(17);
    const body = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken), 60);
    const refreshed = await accessClaims(t, body.access_token);
    expect([refreshed.iat, refreshed.exp]).toEqual([T0 + 17, T0 + 17 + 60]);
    // The refresh token is not renewed: it still ends 300 s after the login.
    expect(decodeJwt(body.refresh_token).exp).toBe(T0 + 300);
  });

  it('customer access token: valid at exp - 1; expired at exp and after (introspection inactive, profile 401)', async () => {
    const { t, client, tokens } = await lifecycle(SHORT);
    t.clock.set(T0 + 59);
    expect(expectIntrospection(await introspect(t.app, client, tokens.accessToken))).toMatchObject({ active: true, exp: T0 + 60 });
    expect((await getProfile(t.app, tokens.accessToken)).statusCode).toBe(200);

    t.clock.set(T0 + 60);
    expectInactive(await introspect(t.app, client, tokens.accessToken));
    expectInvalidToken(await getProfile(t.app, tokens.accessToken), 'the access token is invalid or expired');

    t.clock.set(T0 + 61);
    expectInactive(await introspect(t.app, client, tokens.accessToken));
    expectInvalidToken(await getProfile(t.app, tokens.accessToken), 'the access token is invalid or expired');
  });

  it('refresh token: refreshes at exp - 1; refused at exp and after, and introspects inactive', async () => {
    const { t, client, tokens } = await lifecycle(SHORT);
    t.clock.set(T0 + 299);
    expect(expectIntrospection(await introspect(t.app, client, tokens.refreshToken))).toMatchObject({ active: true, exp: T0 + 300 });
    const last = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken), 60);

    t.clock.set(T0 + 300);
    expectInactive(await introspect(t.app, client, tokens.refreshToken));
    expectInvalidGrant(await refreshAtToken(t.app, client, tokens.refreshToken), INVALID_OR_EXPIRED);
    t.clock.set(T0 + 301);
    expectInvalidGrant(await refreshAtToken(t.app, client, tokens.refreshToken), INVALID_OR_EXPIRED);

    // An access token lives its own lifetime, even past the refresh token that got it.
    expect(await isActive(t.app, client, last.access_token)).toBe(true);
    t.clock.set(T0 + 299 + 60);
    expectInactive(await introspect(t.app, client, last.access_token));
  });

  it('docs/consumer-guide.md, second renewal rule: access token expired, refresh token valid → a refresh gets a working access token', async () => {
    const { t, client, tokens } = await lifecycle(SHORT);
    t.clock.set(T0 + 60);
    expectInvalidToken(await getProfile(t.app, tokens.accessToken));
    const body = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken), 60);
    expect((await getProfile(t.app, body.access_token)).statusCode).toBe(200);
  });

  it('docs/consumer-guide.md, third renewal rule: both expired → the customer authorizes again and the new tokens work', async () => {
    const { t, client, tokens, newSession } = await lifecycle(SHORT);
    t.clock.set(T0 + 300);
    expectInvalidGrant(await refreshAtToken(t.app, client, tokens.refreshToken), INVALID_OR_EXPIRED);
    const fresh = await newSession();
    expect((await getProfile(t.app, fresh.accessToken)).statusCode).toBe(200);
    expectRefreshed(await refreshAtToken(t.app, client, fresh.refreshToken), 60);
  });
});

noticePostgresSkipped('refresh grant on PostgreSQL');

describe.skipIf(!postgresAdminUrl)('refresh grant on PostgreSQL', () => {
  const { open } = usePostgresStorage();

  it('refreshes, retires the previous access token, and keeps the refresh token until its expiry', async () => {
    const { t, client, tokens } = await lifecycle({ storage: open(), accessTokenTtlSeconds: 60, refreshTokenTtlSeconds: 300 });
    t.clock.set(T0 + 299);
    const body = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken), 60);
    expectInactive(await introspect(t.app, client, tokens.accessToken));
    expect(await isActive(t.app, client, body.access_token)).toBe(true);
    t.clock.set(T0 + 300);
    expectInvalidGrant(await refreshAtToken(t.app, client, tokens.refreshToken), INVALID_OR_EXPIRED);
  });

  it('revoked and foreign refresh tokens → invalid_grant', async () => {
    const s = await lifecycle({ storage: open() });
    const other = await s.addClient();
    expectInvalidGrant(await refreshAtToken(s.t.app, other, s.tokens.refreshToken), 'refresh token was issued to another client');
    expectRevoked(await revoke(s.t.app, s.client, s.tokens.refreshToken));
    expectInvalidGrant(await refreshAtToken(s.t.app, s.client, s.tokens.refreshToken), 'refresh token has been revoked');
  });

  it('10 simultaneous refreshes over two instances sharing the database: every one gets the one access token, active on both', async () => {
    const masterKey = randomBytes(32);
    const a = await build({ storage: open(), masterKey });
    const b = await build({ storage: open(), masterKey, clock: a.clock });
    const { client, tokens } = await lifecycle({ t: a });
    const apps = [a.app, b.app];
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => refreshAtToken(apps[i % 2] as FastifyInstance, client, tokens.refreshToken)));
    const minted = responses.map((res) => expectRefreshed(res).access_token);
    expect(new Set(minted).size).toBe(1);
    for (const app of apps) {
      const active = await Promise.all([tokens.accessToken, ...minted].map((token) => isActive(app, client, token)));
      expect(active).toEqual([false, ...minted.map(() => true)]);
    }
  });
});
