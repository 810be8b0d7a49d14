import Fastify from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { registerErrorHandling } from '../../../src/http/plugins/oauth-errors.js';
import { refreshCustomerToken } from '../../../src/core/grants/refresh-token.js';
import { InsufficientScope, InsufficientUserAuthentication, InvalidToken } from '../../../src/core/errors.js';
import { ACR_PIN_SMS } from '../../../src/core/authentication.js';
import { requireAuthentication } from '../../../src/core/tokens/customer-access-check.js';
import type { TokenSessionRecord } from '../../../src/core/tokens/records.js';
import { createCustomerAccessCheck } from '../../../src/core/tokens/customer-access-check.js';
import { issueClientAccessToken } from '../../../src/core/grants/client-credentials.js';
import { ACME, OTHER, PROFILE_ID, rejectionOf, SIGN_IN, T0, tokenSetup, URLS } from './token-fixtures.js';
import { dpopDeps } from './token-fixtures.js';
import { localChangeFeed } from '../../../src/core/changes/change-feed.js';

/** A check over the setup's database whose session reads are counted. */
async function setup(change: (record: TokenSessionRecord) => TokenSessionRecord = (r) => r) {
  const s = await tokenSetup();
  const reads: string[] = [];
  const changes = s.storage.openChangeFeed();
  onTestFinished(() => changes.close());
  const check = createCustomerAccessCheck({
    changes,
    dpop: dpopDeps(s.clock, s.storage),
    keys: s.keys,
    clock: s.clock,
    urls: URLS,
    tokenSessions: {
      async findTokenSession(sid) {
        reads.push(sid);
        const record = await s.storage.tokenSessions.findTokenSession(sid);
        return record && change(record);
      },
    },
  });
  return { ...s, reads, check };
}

async function refused(promise: Promise<unknown>, description: string): Promise<void> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(InvalidToken);
  expect(error).toMatchObject({ error: 'invalid_token', status: 401, description });
}

const REPLACED = 'the access token has been replaced or revoked';
const INVALID = 'the access token is invalid or expired';

describe('createCustomerAccessCheck', () => {
  it('accepts a current customer access token and says whose it is', async () => {
    const s = await setup();
    const session = await s.openSession();
    expect(await s.check.verify(session.accessToken)).toEqual({
      profileId: PROFILE_ID,
      clientId: ACME.id,
      sid: session.sid,
      jti: session.accessJti,
      expiresAt: T0 + 3600,
      scopes: [],
      authentication: SIGN_IN,
      jkt: null,
    });
  });

  it('says the scopes of a token, and requires those a check names (RFC 6750 §3.1)', async () => {
    const s = await setup();
    const session = await s.openSession(ACME, PROFILE_ID, ['payments:read', 'profile']);
    expect(await s.check.verify(session.accessToken)).toMatchObject({ scopes: ['payments:read', 'profile'] });
    expect(await s.check.verify(session.accessToken, { scopes: [] })).toMatchObject({ sid: session.sid });
    expect(await s.check.verify(session.accessToken, { scopes: ['profile', 'payments:read'] })).toMatchObject({ sid: session.sid });
    for (const required of [['payments:write'], ['profile', 'payments:write', 'admin'], ['Profile']]) {
      const error = await rejectionOf(s.check.verify(session.accessToken, { scopes: required }));
      expect(error).toBeInstanceOf(InsufficientScope);
      expect(error).toMatchObject({ error: 'insufficient_scope', status: 403, scope: required.join(' '), description: 'the access token lacks a scope this request needs' });
    }
  });

  it('refuses an invalid token as invalid before it looks at scopes, and a token without scopes for any required one', async () => {
    const s = await setup();
    const bare = await s.openSession();
    await refused(s.check.verify('not-a-token', { scopes: ['profile'] }), INVALID);
    expect(await rejectionOf(s.check.verify(bare.accessToken, { scopes: ['profile'] }))).toBeInstanceOf(InsufficientScope);
  });

  it('refuses a required scope that is no scope token (a programming mistake) with a TypeError', async () => {
    const s = await setup();
    const session = await s.openSession(ACME, PROFILE_ID, ['profile']);
    for (const bad of ['', 'a b', 'a"b', 'a\\b', 'caf\u00e9']) {
      expect(await rejectionOf(s.check.verify(session.accessToken, { scopes: [bad] }))).toBeInstanceOf(TypeError);
    }
  });

  it('requires an acr (RFC 9470): met by the sign-in of the token, refused with the challenge otherwise', async () => {
    const s = await setup();
    const session = await s.openSession();
    expect(await s.check.verify(session.accessToken, { acr: [ACR_PIN_SMS] })).toMatchObject({ sid: session.sid });
    expect(await s.check.verify(session.accessToken, { acr: ['phr', ACR_PIN_SMS] })).toMatchObject({ sid: session.sid });
    const error = await rejectionOf(s.check.verify(session.accessToken, { acr: ['phr'], maxAge: 300 }));
    expect(error).toBeInstanceOf(InsufficientUserAuthentication);
    expect(error).toMatchObject({ error: 'insufficient_user_authentication', status: 401, acrValues: ['phr'], maxAge: 300 });
    expect((error as InsufficientUserAuthentication).challenge).toBe(
      'Bearer error="insufficient_user_authentication", error_description="this request needs a stronger sign-in than the access token stands for", acr_values="phr", max_age="300"',
    );
  });

  it('requires a max_age by the clock: met up to auth_time + max_age, refused a second after', async () => {
    const s = await setup();
    const session = await s.openSession(); // signed in at T0 - 10
    s.clock.set(T0 - 10 + 299);
    expect(await s.check.verify(session.accessToken, { maxAge: 300 })).toMatchObject({ sid: session.sid });
    s.clock.set(T0 - 10 + 300);
    expect(await s.check.verify(session.accessToken, { maxAge: 300 })).toMatchObject({ sid: session.sid });
    s.clock.set(T0 - 10 + 301);
    const error = await rejectionOf(s.check.verify(session.accessToken, { maxAge: 300 }));
    expect(error).toMatchObject({ error: 'insufficient_user_authentication', acrValues: [], maxAge: 300 });
    expect((error as InsufficientUserAuthentication).challenge).toBe(
      'Bearer error="insufficient_user_authentication", error_description="this request needs a more recent sign-in than the access token stands for", max_age="300"',
    );
  });

  it('a token without a recorded sign-in meets no requirement; an invalid token is refused as invalid first', async () => {
    const access = { authentication: null };
    expect(requireAuthentication(access, {}, T0)).toBe(access);
    const error = (() => {
      try {
        requireAuthentication(access, { maxAge: 300 }, T0);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toMatchObject({ error: 'insufficient_user_authentication', description: 'the access token does not say how the customer signed in; a new sign-in is required', maxAge: 300 });
    const s = await setup();
    await refused(s.check.verify('not-a-token', { acr: ['phr'] }), INVALID);
  });

  it("Connect's error mapping answers the refusal over HTTP: 401, the RFC 9470 challenge, the JSON error", async () => {
    const s = await setup();
    const session = await s.openSession();
    const app = Fastify();
    registerErrorHandling(app);
    app.get('/payouts', async (request) => s.check.verify(request.headers.authorization?.replace(/^Bearer /, ''), { acr: ['phr'], maxAge: 300 }));
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    onTestFinished(() => app.close());
    const response = await fetch(`${url}/payouts`, { headers: { authorization: `Bearer ${session.accessToken}` } });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_user_authentication", error_description="this request needs a stronger sign-in than the access token stands for", acr_values="phr", max_age="300"',
    );
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ error: 'insufficient_user_authentication', error_description: 'this request needs a stronger sign-in than the access token stands for' });
  });

  it('refuses a malformed acr or max_age requirement (a programming mistake) with a TypeError, before any check', async () => {
    const s = await setup();
    for (const bad of [{ acr: ['a b'] }, { acr: ['a"b'] }, { acr: [''] }, { maxAge: -1 }, { maxAge: 1.5 }, { maxAge: Number.NaN }]) {
      expect(await rejectionOf(s.check.verify('not-a-token', bad))).toBeInstanceOf(TypeError);
    }
  });

  it('reads each session from the database once while nothing changes, however much time passes', async () => {
    const s = await setup();
    const a = await s.openSession();
    const b = await s.openSession();
    for (let i = 0; i < 5; i++) {
      await s.check.verify(a.accessToken);
      await s.check.verify(b.accessToken);
    }
    expect(s.reads).toEqual([a.sid, b.sid]);
    s.clock.advance(600);
    for (let i = 0; i < 3; i++) await s.check.verify(a.accessToken);
    expect(s.reads).toEqual([a.sid, b.sid]);
  });

  it('a refresh through the store is heard at once: the old token is refused right after, the new one accepted', async () => {
    const s = await setup();
    const session = await s.openSession();
    await s.check.verify(session.accessToken);
    s.clock.advance(10);
    const refreshed = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    await refused(s.check.verify(session.accessToken), REPLACED);
    await expect(s.check.verify(refreshed.accessToken)).resolves.toMatchObject({ sid: session.sid });
    // One read for the first state, one after the change was heard.
    expect(s.reads).toHaveLength(2);
  });

  it('a token newer than the state held (its signal not heard yet) is read again, not refused', async () => {
    const s = await setup();
    const session = await s.openSession();
    const feed = localChangeFeed();
    const check = createCustomerAccessCheck({ keys: s.keys, clock: s.clock, urls: URLS, tokenSessions: s.storage.tokenSessions, changes: feed, dpop: dpopDeps(s.clock, s.storage) });
    await check.verify(session.accessToken);
    // Refreshed where this feed hears nothing (another instance whose signal is late).
    const refreshed = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    await expect(check.verify(refreshed.accessToken)).resolves.toMatchObject({ sid: session.sid });
    // That read brought the state up to date: the old token is refused from now on.
    await refused(check.verify(session.accessToken), REPLACED);
  });

  it('replaced tokens minted over a second before the state was read cost no database read', async () => {
    const s = await setup();
    const session = await s.openSession();
    s.clock.advance(5);
    const refreshed = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    s.clock.advance(5);
    await s.check.verify(refreshed.accessToken);
    for (let i = 0; i < 5; i++) await refused(s.check.verify(session.accessToken), REPLACED);
    expect(s.reads).toHaveLength(1);
  });

  it('a revocation written to the database by anyone is heard: a held session is refused at the next check', async () => {
    const s = await setup();
    const cached = await s.openSession();
    const uncached = await s.openSession();
    await s.check.verify(cached.accessToken);
    await s.storage.tokenSessions.revokeTokenSession(cached.sid, T0);
    await s.storage.tokenSessions.revokeTokenSession(uncached.sid, T0);
    await refused(s.check.verify(cached.accessToken), REPLACED);
    await refused(s.check.verify(uncached.accessToken), REPLACED);
  });

  it('while the change signal is not current, every check reads the database', async () => {
    const s = await setup();
    const session = await s.openSession();
    let current = true;
    const feed = { ...localChangeFeed(), isCurrent: () => current };
    const check = createCustomerAccessCheck({ keys: s.keys, clock: s.clock, urls: URLS, tokenSessions: { findTokenSession: (sid) => { s.reads.push(sid); return s.storage.tokenSessions.findTokenSession(sid); } }, changes: feed, dpop: dpopDeps(s.clock, s.storage) });
    await check.verify(session.accessToken);
    await check.verify(session.accessToken);
    expect(s.reads).toHaveLength(1);
    current = false;
    await check.verify(session.accessToken);
    await check.verify(session.accessToken);
    expect(s.reads).toHaveLength(3);
  });

  it('a revoked session is not read again while nothing changes, whatever tokens are presented', async () => {
    const s = await setup();
    const session = await s.openSession();
    await s.storage.tokenSessions.revokeTokenSession(session.sid, T0);
    await refused(s.check.verify(session.accessToken), REPLACED);
    await refused(s.check.verify(session.accessToken), REPLACED);
    expect(s.reads).toHaveLength(1);
  });

  it('a revoked access token (the refresh token kept) is refused; the next refresh’s token is accepted', async () => {
    const s = await setup();
    const session = await s.openSession();
    await s.storage.tokenSessions.revokeAccessToken(session.sid, session.accessJti);
    await refused(s.check.verify(session.accessToken), REPLACED);
    const refreshed = await refreshCustomerToken(session.refreshToken, ACME, s.deps);
    await expect(s.check.verify(refreshed.accessToken)).resolves.toMatchObject({ sid: session.sid });
  });

  it('expiry to the second: accepted at exp - 1, refused at exp without reading the database', async () => {
    const s = await setup();
    const session = await s.openSession();
    s.clock.set(T0 + 3599);
    await s.check.verify(session.accessToken);
    s.clock.set(T0 + 3600);
    await refused(s.check.verify(session.accessToken), INVALID);
    expect(s.reads).toHaveLength(1);
  });

  it.each<[string, string | undefined]>([
    ['no token', undefined],
    ['an empty token', ''],
  ])('%s → invalid_token marked credentialsMissing (RFC 6750 §3.1: no error code in the challenge), without reading the database', async (_name, token) => {
    const s = await setup();
    const error = await rejectionOf(s.check.verify(token));
    expect(error).toBeInstanceOf(InvalidToken);
    expect(error).toMatchObject({ error: 'invalid_token', status: 401, credentialsMissing: true });
    expect(s.reads).toEqual([]);
  });

  it.each<[string, (s: Awaited<ReturnType<typeof setup>>) => Promise<string | undefined>]>([
    ['garbage', async () => 'not-a-token'],
    ['five empty segments', async () => '....'],
    ['a refresh token', async (s) => (await s.openSession()).refreshToken],
    ['a client access token', async (s) => (await issueClientAccessToken(ACME, { ...s.deps, urls: URLS })).token],
    ['an oversized token', async (s) => `${(await s.openSession()).accessToken}${'A'.repeat(5000)}`],
  ])('%s → invalid_token, without reading the database', async (_name, token) => {
    const s = await setup();
    const presented = await token(s);
    await refused(s.check.verify(presented), INVALID);
    await expect(s.check.verify(presented)).rejects.toMatchObject({ credentialsMissing: false });
    expect(s.reads).toEqual([]);
  });

  it.each<[string, (record: TokenSessionRecord) => TokenSessionRecord]>([
    ['another client', (record) => ({ ...record, clientId: OTHER.id })],
    ['another customer', (record) => ({ ...record, profileId: '999999999999' })],
  ])('a session stored for %s than the token names → refused', async (_name, change) => {
    const s = await setup(change);
    const session = await s.openSession();
    await refused(s.check.verify(session.accessToken), REPLACED);
  });

  it('a session that does not exist → refused', async () => {
    const s = await setup();
    const session = await s.openSession();
    await s.storage.tokenSessions.revokeTokenSession(session.sid, T0);
    const check = createCustomerAccessCheck({ keys: s.keys, clock: s.clock, urls: URLS, tokenSessions: { findTokenSession: async () => undefined }, changes: localChangeFeed(), dpop: dpopDeps(s.clock, s.storage) });
    await refused(check.verify(session.accessToken), REPLACED);
  });
});
