import { jwtDecrypt } from 'jose';
import { describe, expect, it } from 'vitest';
import { STILL_RUNNING } from '../../../src/core/customer-tokens/idempotent-refresh.js';
import { checkReplayedTokens } from '../../../src/core/customer-tokens/check-replayed-tokens.js';
import { prepareRefresh, refreshCustomerToken, type RefreshDeps } from '../../../src/core/grants/refresh-token.js';
import { InvalidGrant, InvalidRequest, InvalidScope } from '../../../src/core/errors.js';
import { mintRefreshToken } from '../../../src/core/tokens/customer-tokens.js';
import type { TokenSessionRecord } from '../../../src/core/tokens/records.js';
import { ACME, OTHER, PROFILE_ID, rejectionOf, SIGN_IN, T0, tokenSetup, URLS, type SessionTokens } from '../tokens/token-fixtures.js';

type Setup = Awaited<ReturnType<typeof tokenSetup>>;

interface RefusalCase {
  readonly description: string;
  /** Arranges the refusal; returns the refresh token to present (default: the session's). */
  readonly setup: (s: Setup, session: SessionTokens) => Promise<{ token?: string | undefined; deps?: RefreshDeps } | void>;
  readonly client?: typeof ACME;
  readonly error: typeof InvalidGrant | typeof InvalidRequest;
  readonly message: string;
}

const CASES: readonly RefusalCase[] = [
  { description: 'no refresh token', setup: async () => ({ token: undefined }), error: InvalidRequest, message: 'refresh_token is required' },
  { description: 'an empty refresh token', setup: async () => ({ token: '' }), error: InvalidRequest, message: 'refresh_token is required' },
  { description: 'garbage', setup: async () => ({ token: 'not-a-token' }), error: InvalidGrant, message: 'refresh token is invalid or expired' },
  { description: 'the access token', setup: async (_s, session) => ({ token: session.accessToken }), error: InvalidGrant, message: 'refresh token is invalid or expired' },
  { description: 'another client’s refresh token', setup: async () => {}, client: OTHER, error: InvalidGrant, message: 'refresh token was issued to another client' },
  {
    description: 'at the token’s exp',
    setup: async (s) => {
      s.clock.set(T0 + 86_400);
    },
    error: InvalidGrant,
    message: 'refresh token is invalid or expired',
  },
  {
    description: 'a session that does not exist',
    setup: async (s) => ({ token: (await mintRefreshToken({ profileId: PROFILE_ID, clientId: ACME.id, sid: 'no-such-session' }, s.deps)).token }),
    error: InvalidGrant,
    message: 'refresh token is invalid',
  },
  {
    description: 'a refresh token of the session that is not its current one',
    setup: async (s, session) => ({ token: (await mintRefreshToken({ profileId: PROFILE_ID, clientId: ACME.id, sid: session.sid }, s.deps)).token }),
    error: InvalidGrant,
    message: 'refresh token is invalid',
  },
  {
    description: 'a stored session of another client than the token names',
    setup: async (s) => ({ token: await storedSession(s, { clientId: OTHER.id }) }),
    error: InvalidGrant,
    message: 'refresh token is invalid',
  },
  {
    description: 'a revoked session',
    setup: async (s, session) => {
      await s.storage.tokenSessions.revokeTokenSession(session.sid, T0);
    },
    error: InvalidGrant,
    message: 'refresh token has been revoked',
  },
  {
    description: 'a stored refresh expiry that has passed before the token’s exp',
    setup: async (s) => {
      const token = await storedSession(s, { refreshExpiresAt: T0 + 100 });
      s.clock.set(T0 + 100);
      return { token };
    },
    error: InvalidGrant,
    message: 'refresh token has expired',
  },
  {
    description: 'a session revoked between the read and the update',
    setup: async (s) => ({
      deps: { ...s.deps, tokenSessions: { findTokenSession: (sid) => s.storage.tokenSessions.findTokenSession(sid), replaceAccessToken: async () => undefined } },
    }),
    error: InvalidGrant,
    message: 'refresh token has been revoked',
  },
];

/** A refresh token of Acme for a new session stored as `overrides` say; returns the token. */
async function storedSession(s: Setup, overrides: Partial<TokenSessionRecord>): Promise<string> {
  const refresh = await mintRefreshToken({ profileId: PROFILE_ID, clientId: ACME.id, sid: 'stored-session' }, s.deps);
  await s.storage.tokenSessions.insertTokenSession({
    sid: 'stored-session',
    clientId: ACME.id,
    profileId: PROFILE_ID,
    codeHash: null,
    refreshJti: refresh.jti,
    accessJti: 'stored-access',
    createdAt: T0,
    refreshExpiresAt: refresh.expiresAt,
    accessExpiresAt: T0 + 3600,
    revokedAt: null,
    authentication: null,
    ...overrides,
  });
  return refresh.token;
}

/** Deps whose store answers reads with `change(stored record)`. */
function withSession(deps: RefreshDeps, change: (record: TokenSessionRecord) => TokenSessionRecord): RefreshDeps {
  return {
    ...deps,
    tokenSessions: {
      async findTokenSession(sid) {
        const record = await deps.tokenSessions.findTokenSession(sid);
        return record && change(record);
      },
      replaceAccessToken: (sid, update) => deps.tokenSessions.replaceAccessToken(sid, update),
    },
  };
}

describe('refreshCustomerToken: scopes', () => {
  const SCOPED = { ...ACME, scopes: ['payments:read', 'payments:write', 'profile'] };

  it('keeps the session\'s scopes, or narrows them to scope (RFC 6749 §6), in the new access token', async () => {
    const s = await tokenSetup();
    const session = await s.openSession(SCOPED, PROFILE_ID, ['payments:read', 'profile']);
    const kept = await refreshCustomerToken(session.refreshToken, SCOPED, s.deps);
    expect(kept.scopes).toEqual(['payments:read', 'profile']);
    const decrypt = async (token: string) => (await jwtDecrypt(token, s.keys.encryptionKey().key, { currentDate: new Date(T0 * 1000) })).payload;
    expect((await decrypt(kept.accessToken)).scope).toBe('payments:read profile');
    const narrowed = await refreshCustomerToken(session.refreshToken, SCOPED, s.deps, { scope: 'profile' });
    expect(narrowed.scopes).toEqual(['profile']);
    expect((await decrypt(narrowed.accessToken)).scope).toBe('profile');
  });

  it('drops a scope the client lost since; refuses one beyond the session with invalid_scope, changing nothing', async () => {
    const s = await tokenSetup();
    const session = await s.openSession(SCOPED, PROFILE_ID, ['payments:read', 'profile']);
    expect((await refreshCustomerToken(session.refreshToken, { ...SCOPED, scopes: ['profile'] }, s.deps)).scopes).toEqual(['profile']);
    const before = await s.storage.tokenSessions.findTokenSession(session.sid);
    for (const scope of ['payments:write', 'payments:read admin', '"']) {
      const error = await rejectionOf(refreshCustomerToken(session.refreshToken, SCOPED, s.deps, { scope }));
      expect(error).toBeInstanceOf(InvalidScope);
    }
    // The session lost payments:read with the client: it cannot be asked for either.
    expect(await rejectionOf(refreshCustomerToken(session.refreshToken, { ...SCOPED, scopes: ['profile'] }, s.deps, { scope: 'payments:read' }))).toBeInstanceOf(InvalidScope);
    expect(await s.storage.tokenSessions.findTokenSession(session.sid)).toEqual(before);
  });
});

describe('refreshCustomerToken', () => {
  it('mints a new access token of the same session, echoes the refresh token, and makes the new token the session’s only one', async () => {
    const s = await tokenSetup();
    const session = await s.openSession();
    s.clock.advance(120);
    const result = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    expect(result).toEqual({
      accessToken: expect.any(String),
      refreshToken: session.refreshToken,
      expiresIn: 3600,
      expiresAt: T0 + 120 + 3600,
      sid: session.sid,
      accessJti: expect.any(String),
      scopes: [],
      tokenType: 'Bearer',
    });

    const { payload } = await jwtDecrypt(result.accessToken, s.keys.encryptionKey().key, { currentDate: new Date((T0 + 120) * 1000) });
    expect(payload).toEqual({
      iss: URLS.authUrl,
      aud: URLS.baseUrl,
      sub: PROFILE_ID,
      client_id: ACME.id,
      sid: session.sid,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      iat: T0 + 120,
      exp: T0 + 120 + 3600,
      // The sign-in's, as the refresh token carries them: unchanged by the refresh.
      acr: SIGN_IN.acr,
      amr: SIGN_IN.amr,
      auth_time: SIGN_IN.authTime,
    });
    expect(payload.jti).not.toBe(session.accessJti);
    expect(payload.jti).toBe(result.accessJti);
    expect(await s.storage.tokenSessions.findTokenSession(session.sid)).toMatchObject({
      accessJti: payload.jti,
      accessExpiresAt: T0 + 120 + 3600,
      refreshJti: session.refreshJti,
      refreshExpiresAt: T0 + 86_400,
      revokedAt: null,
    });
  });

  it('works one second before the refresh token expires, and again with the same token', async () => {
    const s = await tokenSetup();
    const session = await s.openSession();
    s.clock.set(T0 + 86_399);
    const first = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    const second = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    expect(first.accessToken).not.toBe(second.accessToken);
    const stored = await s.storage.tokenSessions.findTokenSession(session.sid);
    expect(stored?.accessJti).toBe(await jtiOf(s, second.accessToken));
  });

  it.each(CASES.map((c) => [c.description, c] as const))('refuses %s', async (_name, c) => {
    const s = await tokenSetup();
    const session = await s.openSession();
    const arranged = (await c.setup(s, session)) ?? {};
    const token = 'token' in arranged ? arranged.token : session.refreshToken;
    const error = await rejectionOf(refreshCustomerToken(token, c.client ?? ACME, arranged.deps ?? s.deps));
    expect(error).toBeInstanceOf(c.error);
    expect((error as InvalidGrant).description).toBe(c.message);
    // Nothing was replaced.
    expect((await s.storage.tokenSessions.findTokenSession(session.sid))?.accessJti).toBe(session.accessJti);
  });

  it('records the use of a revoked refresh token in the audit log', async () => {
    const s = await tokenSetup();
    const session = await s.openSession();
    await s.storage.tokenSessions.revokeTokenSession(session.sid, T0);
    s.clock.advance(30);
    await rejectionOf(refreshCustomerToken(session.refreshToken, ACME, s.deps));
    const events = await s.storage.audit.listAuditEvents({ type: 'refresh_token.revoked_use', limit: 10 });
    expect(events).toEqual([
      expect.objectContaining({ actor: `client:${ACME.id}`, subject: PROFILE_ID, outcome: 'failure', details: { sid: session.sid }, at: T0 + 30 }),
    ]);
  });

  it('does not touch other sessions', async () => {
    const s = await tokenSetup();
    const a = await s.openSession();
    const b = await s.openSession();
    await refreshCustomerToken(a.refreshToken, ACME, s.deps);
    expect((await s.storage.tokenSessions.findTokenSession(b.sid))?.accessJti).toBe(b.accessJti);
  });

  it('of simultaneous refreshes with one token, the session ends with one of their access tokens', async () => {
    const s = await tokenSetup();
    const session = await s.openSession();
    const results = await Promise.all(Array.from({ length: 5 }, () => refreshCustomerToken(session.refreshToken, ACME, s.deps)));
    const jtis = await Promise.all(results.map((r) => jtiOf(s, r.accessToken)));
    expect(new Set(jtis).size).toBe(5);
    expect(jtis).toContain((await s.storage.tokenSessions.findTokenSession(session.sid))?.accessJti);
  });
});

/** The `jti` of a customer access token, decrypted with the setup's key. */
async function jtiOf(s: Setup, accessToken: string): Promise<string> {
  const { payload } = await jwtDecrypt(accessToken, s.keys.encryptionKey().key, { currentDate: new Date(s.clock.nowSeconds() * 1000) });
  return String(payload.jti);
}

describe('checkReplayedTokens', () => {
  const REFUSED = 'the tokens of the first answer to this Request-Reference-No are no longer valid; refresh with a new Request-Reference-No';

  it('lets a stored answer be replayed while its session is live and its access token the current one, also once that token expired', async () => {
    const s = await tokenSetup();
    const session = await s.openSession();
    const answer = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    await expect(checkReplayedTokens(answer, ACME, s.deps)).resolves.toBeUndefined();
    s.clock.set(answer.expiresAt + 60);
    await expect(checkReplayedTokens(answer, ACME, s.deps)).resolves.toBeUndefined();
    // Until the session's refresh token expires.
    s.clock.set(T0 + 86_400);
    expect(await rejectionOf(checkReplayedTokens(answer, ACME, s.deps))).toMatchObject({ error: 'invalid_grant', description: REFUSED });
  });

  it('refuses once a later refresh replaced the access token, the session was revoked, or the client is disabled', async () => {
    const s = await tokenSetup();
    const session = await s.openSession();
    const answer = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    expect(await rejectionOf(checkReplayedTokens(answer, { ...ACME, status: 'disabled' }, s.deps))).toMatchObject({ error: 'invalid_grant' });
    expect(await rejectionOf(checkReplayedTokens(answer, OTHER, s.deps))).toMatchObject({ error: 'invalid_grant' });
    await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    expect(await rejectionOf(checkReplayedTokens(answer, ACME, s.deps))).toMatchObject({ error: 'invalid_grant', description: REFUSED });

    const other = await s.openSession();
    const otherAnswer = await refreshCustomerToken(other.refreshToken, ACME, s.deps);
    await s.storage.tokenSessions.revokeTokenSession(other.sid, T0);
    expect(await rejectionOf(checkReplayedTokens(otherAnswer, ACME, s.deps))).toBeInstanceOf(InvalidGrant);
  });

  it('an answer not yet applied is 409 while its first request may still run, refused after; a superseded one is refused at once', async () => {
    const s = await tokenSetup();
    const session = await s.openSession();
    s.clock.advance(10);
    // Prepared (and stored) but not yet the session's access token.
    const pending = await prepareRefresh(session.refreshToken, ACME, s.deps);
    expect(await rejectionOf(checkReplayedTokens(pending.refreshed, ACME, s.deps, true))).toMatchObject({ status: 409, description: STILL_RUNNING });
    expect(await rejectionOf(checkReplayedTokens(pending.refreshed, ACME, s.deps, false))).toMatchObject({ error: 'invalid_grant', description: REFUSED });
    await pending.apply();
    await expect(checkReplayedTokens(pending.refreshed, ACME, s.deps, true)).resolves.toBeUndefined();
    // Prepared in the same second as the session's current access token: not plainly later, so still 409.
    const sameSecond = await prepareRefresh(session.refreshToken, ACME, s.deps);
    expect(await rejectionOf(checkReplayedTokens(sameSecond.refreshed, ACME, s.deps, true))).toMatchObject({ status: 409, description: STILL_RUNNING });
    // A later refresh: the answer's token is replaced, not pending.
    s.clock.advance(10);
    await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    expect(await rejectionOf(checkReplayedTokens(pending.refreshed, ACME, s.deps, true))).toMatchObject({ error: 'invalid_grant', description: REFUSED });
  });

  it('an answer stored without its session (by an earlier version) is identified by its access token', async () => {
    const s = await tokenSetup();
    const session = await s.openSession();
    const { accessToken } = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    await expect(checkReplayedTokens({ accessToken }, ACME, s.deps)).resolves.toBeUndefined();
    await s.storage.tokenSessions.revokeTokenSession(session.sid, T0);
    expect(await rejectionOf(checkReplayedTokens({ accessToken }, ACME, s.deps))).toBeInstanceOf(InvalidGrant);
    expect(await rejectionOf(checkReplayedTokens({ accessToken: 'garbage' }, ACME, s.deps))).toBeInstanceOf(InvalidGrant);
  });
});
