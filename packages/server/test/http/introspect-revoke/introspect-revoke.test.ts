import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { basicAuth, form, T0, TEST_AUTH_URL, TEST_BASE_URL } from '../../helpers/build.js';
import { authorizeParams, authorizeUrl, exchangeCode, expectClientRedirect, REDIRECT_URI } from '../../helpers/customer-flow.js';
import {
  accessClaims,
  expectInactive,
  expectIntrospection,
  expectInvalidToken,
  expectRefreshed,
  expectRevoked,
  expectTokensBody,
  getProfile,
  introspect,
  isActive,
  lifecycle,
  postTokens,
  refreshAtToken,
  revoke,
  type Lifecycle,
} from '../../helpers/token-session.js';
import { expectOAuthError, obtainToken, type Credentials } from '../../helpers/wire.js';

/** The three kinds of token a client holds. */
type Kind = 'client access token' | 'customer access token' | 'refresh token';
const KINDS: readonly Kind[] = ['client access token', 'customer access token', 'refresh token'];

async function tokenOf(s: Lifecycle, kind: Kind): Promise<string> {
  if (kind === 'client access token') return obtainToken(s.t, s.client);
  return kind === 'customer access token' ? s.tokens.accessToken : s.tokens.refreshToken;
}

describe('POST /introspect (RFC 7662)', () => {
  it('a client access token: active, with its claims', async () => {
    const s = await lifecycle();
    s.t.clock.advance(5);
    const token = await obtainToken(s.t, s.client);
    const body = expectIntrospection(await introspect(s.t.app, s.client, token));
    expect(body).toEqual({
      active: true,
      token_type: 'Bearer',
      client_id: s.client.id,
      sub: s.client.id,
      iss: TEST_AUTH_URL,
      aud: TEST_BASE_URL,
      iat: T0 + 5,
      exp: T0 + 5 + 3600,
      jti: decodeJwt(token).jti,
    });
  });

  it('a customer access token: active, with its claims and session', async () => {
    const s = await lifecycle();
    const claims = await accessClaims(s.t, s.tokens.accessToken);
    const body = expectIntrospection(await introspect(s.t.app, s.client, s.tokens.accessToken));
    expect(body).toEqual({
      active: true,
      token_type: 'Bearer',
      client_id: s.client.id,
      sub: s.profileId,
      iss: TEST_AUTH_URL,
      aud: TEST_BASE_URL,
      iat: T0,
      exp: T0 + 3600,
      jti: claims.jti,
      sid: claims.sid,
      acr: 'urn:connect:acr:pin-sms',
      amr: ['pin', 'sms', 'mfa'],
      auth_time: T0,
    });
  });

  it('a refresh token: active, with its claims and session, and no token_type (it has no RFC 6749 §7.1 type)', async () => {
    const s = await lifecycle();
    const claims = decodeJwt(s.tokens.refreshToken);
    const body = expectIntrospection(await introspect(s.t.app, s.client, s.tokens.refreshToken));
    expect(body).toEqual({
      active: true,
      client_id: s.client.id,
      sub: s.profileId,
      iss: TEST_AUTH_URL,
      aud: TEST_AUTH_URL,
      iat: T0,
      exp: T0 + 604_800,
      jti: claims.jti,
      sid: claims.sid,
      acr: 'urn:connect:acr:pin-sms',
      amr: ['pin', 'sms', 'mfa'],
      auth_time: T0,
    });
  });

  it.each(KINDS)('%s: the same answer with client_secret_post, and whatever token_type_hint says', async (kind) => {
    const s = await lifecycle();
    const token = await tokenOf(s, kind);
    const basic = expectIntrospection(await introspect(s.t.app, s.client, token));
    expect(basic.active).toBe(true);
    expect(expectIntrospection(await introspect(s.t.app, s.client, token, 'post'))).toEqual(basic);
    for (const hint of ['access_token', 'refresh_token', 'nonsense']) {
      expect(expectIntrospection(await introspect(s.t.app, s.client, token, 'basic', { token_type_hint: hint }))).toEqual(basic);
    }
  });

  it.each(KINDS)('%s of another client → exactly {"active":false}; its owner still sees it active', async (kind) => {
    const s = await lifecycle();
    const other = await s.addClient();
    const token = await tokenOf(s, kind);
    expectInactive(await introspect(s.t.app, other, token));
    expectInactive(await introspect(s.t.app, other, token, 'post'));
    expect(await isActive(s.t.app, s.client, token)).toBe(true);
  });

  it('expired tokens → {"active":false}, each at its own exp (active one second before)', async () => {
    const s = await lifecycle({ accessTokenTtlSeconds: 60, refreshTokenTtlSeconds: 300 });
    const clientToken = await obtainToken(s.t, s.client);
    s.t.clock.set(T0 + 59);
    expect(await isActive(s.t.app, s.client, clientToken)).toBe(true);
    expect(await isActive(s.t.app, s.client, s.tokens.accessToken)).toBe(true);
    s.t.clock.set(T0 + 60);
    expectInactive(await introspect(s.t.app, s.client, clientToken));
    expectInactive(await introspect(s.t.app, s.client, s.tokens.accessToken));
    expect(await isActive(s.t.app, s.client, s.tokens.refreshToken)).toBe(true);
    s.t.clock.set(T0 + 299);
    expect(await isActive(s.t.app, s.client, s.tokens.refreshToken)).toBe(true);
    s.t.clock.set(T0 + 300);
    expectInactive(await introspect(s.t.app, s.client, s.tokens.refreshToken));
  });

  it.each(KINDS)('a revoked %s → {"active":false}', async (kind) => {
    const s = await lifecycle();
    const token = await tokenOf(s, kind);
    expectRevoked(await revoke(s.t.app, s.client, token));
    expectInactive(await introspect(s.t.app, s.client, token));
  });

  it('a customer access token replaced by a refresh → {"active":false}', async () => {
    const s = await lifecycle();
    expectRefreshed(await refreshAtToken(s.t.app, s.client, s.tokens.refreshToken));
    expectInactive(await introspect(s.t.app, s.client, s.tokens.accessToken));
  });

  it('a refresh token of a client that lost the refresh_token grant → {"active":false}, as /token refuses it; its access token stays active', async () => {
    const s = await lifecycle();
    await s.t.storage.clients.updateClient(s.client.id, { grants: ['client_credentials', 'authorization_code'] }, s.t.clock.nowSeconds());
    expectInactive(await introspect(s.t.app, s.client, s.tokens.refreshToken));
    expect(await isActive(s.t.app, s.client, s.tokens.accessToken)).toBe(true);
    expect((await refreshAtToken(s.t.app, s.client, s.tokens.refreshToken)).statusCode).toBe(400);
  });

  it('a session revoked by a code replay → its tokens {"active":false}', async () => {
    const s = await lifecycle();
    // A second exchange of a code revokes the session the first one created.
    const code = await codeOfNextLogin(s);
    const first = await exchangeCode(s.t.app, s.client, { code, redirect_uri: REDIRECT_URI });
    const tokens = first.json<{ access_token: string; refresh_token: string }>();
    expect((await exchangeCode(s.t.app, s.client, { code, redirect_uri: REDIRECT_URI })).statusCode).toBe(400);
    expectInactive(await introspect(s.t.app, s.client, tokens.access_token));
    expectInactive(await introspect(s.t.app, s.client, tokens.refresh_token));
    expect(await isActive(s.t.app, s.client, s.tokens.accessToken)).toBe(true);
  });

  it.each([
    ['garbage', 'not-a-token'],
    ['three dots', 'a.b.c'],
    ['five dots', 'a.b.c.d.e'],
    ['an 8 KB token', 'A'.repeat(8192)],
  ])('%s → {"active":false}', async (_name, token) => {
    const s = await lifecycle();
    expectInactive(await introspect(s.t.app, s.client, token));
  });

  it('a token with a NUL byte → 400 invalid_request, as a control character in any parameter', async () => {
    const s = await lifecycle();
    const res = await introspect(s.t.app, s.client, 'abc\u0000def');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('no token parameter (or an empty one, which counts as none) → 400 invalid_request', async () => {
    const s = await lifecycle();
    for (const method of ['basic', 'post'] as const) {
      expectOAuthError(await introspect(s.t.app, s.client, undefined, method), { status: 400, error: 'invalid_request', description: 'token is required', challenge: 'none' });
      expectOAuthError(await introspect(s.t.app, s.client, '', method), { status: 400, error: 'invalid_request', description: 'token is required', challenge: 'none' });
    }
  });

  it('no token and bad client credentials → 401 invalid_client: the client is authenticated first', async () => {
    const s = await lifecycle();
    const wrong: Credentials = { id: s.client.id, secret: `${s.client.secret}x` };
    expectOAuthError(await introspect(s.t.app, wrong, undefined), { status: 401, error: 'invalid_client', challenge: 'basic' });
  });

  it('bad client credentials → 401 invalid_client with the Basic challenge (Basic, post or none), and nothing is said about the token', async () => {
    const s = await lifecycle();
    const wrong: Credentials = { id: s.client.id, secret: `${s.client.secret}x` };
    expectOAuthError(await introspect(s.t.app, wrong, s.tokens.accessToken), { status: 401, error: 'invalid_client', challenge: 'basic', description: 'client authentication failed' });
    expectOAuthError(await introspect(s.t.app, wrong, s.tokens.accessToken, 'post'), { status: 401, error: 'invalid_client', challenge: 'basic', description: 'client authentication failed' });
    const anonymous = await s.t.app.inject({
      method: 'POST',
      url: '/introspect',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ token: s.tokens.accessToken }),
    });
    expectOAuthError(anonymous, { status: 401, error: 'invalid_client', challenge: 'basic' });
    const bearer = await s.t.app.inject({
      method: 'POST',
      url: '/introspect',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${await obtainToken(s.t, s.client)}` },
      payload: form({ token: s.tokens.accessToken }),
    });
    expectOAuthError(bearer, { status: 401, error: 'invalid_client' });
  });

  it('a disabled client → 401 invalid_client', async () => {
    const s = await lifecycle();
    await s.t.storage.clients.updateClient(s.client.id, { status: 'disabled' }, s.t.clock.nowSeconds());
    s.t.clock.advance(5);
    expectOAuthError(await introspect(s.t.app, s.client, s.tokens.accessToken), { status: 401, error: 'invalid_client', description: 'client is disabled' });
  });
});

describe('POST /revoke (RFC 7009)', () => {
  it.each([
    ['a garbage token', 'not-a-token'],
    ['an unknown well-formed token', 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'],
    ['an 8 KB token', 'A'.repeat(8192)],
  ])('%s → 200 with the body {}', async (_name, token) => {
    const s = await lifecycle();
    expectRevoked(await revoke(s.t.app, s.client, token));
    expectRevoked(await revoke(s.t.app, s.client, token, 'post'));
    expect(await isActive(s.t.app, s.client, s.tokens.accessToken)).toBe(true);
  });

  it('no token → 400 invalid_request (RFC 7009 §2.1: token is required), nothing revoked', async () => {
    const s = await lifecycle();
    const res = await revoke(s.t.app, s.client, undefined);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: 'token is required' });
    expect(await isActive(s.t.app, s.client, s.tokens.refreshToken)).toBe(true);
  });

  it.each(KINDS)('another client’s %s → 200, and it is NOT revoked', async (kind) => {
    const s = await lifecycle();
    const other = await s.addClient();
    const token = await tokenOf(s, kind);
    expectRevoked(await revoke(s.t.app, other, token));
    expect(await isActive(s.t.app, s.client, token)).toBe(true);
    expect(await isActive(s.t.app, s.client, s.tokens.accessToken)).toBe(true);
  });

  it.each(KINDS)('a %s, revoked twice → 200 both times', async (kind) => {
    const s = await lifecycle();
    const token = await tokenOf(s, kind);
    expectRevoked(await revoke(s.t.app, s.client, token));
    expectRevoked(await revoke(s.t.app, s.client, token, 'post'));
    expectInactive(await introspect(s.t.app, s.client, token));
  });

  it('bad client credentials → 401 invalid_client, and the token is not revoked', async () => {
    const s = await lifecycle();
    const wrong: Credentials = { id: s.client.id, secret: `${s.client.secret}x` };
    expectOAuthError(await revoke(s.t.app, wrong, s.tokens.refreshToken), { status: 401, error: 'invalid_client', challenge: 'basic' });
    expectOAuthError(await revoke(s.t.app, wrong, s.tokens.refreshToken, 'post'), { status: 401, error: 'invalid_client', challenge: 'basic' });
    expect(await isActive(s.t.app, s.client, s.tokens.refreshToken)).toBe(true);
  });

  it('revoking a refresh token ends the session: access token inactive at once, refused by the API at once, refresh refused', async () => {
    const s = await lifecycle();
    s.t.clock.advance(10);
    expect((await getProfile(s.t.app, s.tokens.accessToken)).statusCode).toBe(200);
    expectRevoked(await revoke(s.t.app, s.client, s.tokens.refreshToken));

    expectInactive(await introspect(s.t.app, s.client, s.tokens.accessToken));
    expectInactive(await introspect(s.t.app, s.client, s.tokens.refreshToken));
    // The API held the session's state; the revocation made it forget it.
    expectInvalidToken(await getProfile(s.t.app, s.tokens.accessToken), 'the access token has been replaced or revoked');

    expectOAuthError(await refreshAtToken(s.t.app, s.client, s.tokens.refreshToken), { status: 400, error: 'invalid_grant', description: 'refresh token has been revoked' });
    const bearer = await obtainToken(s.t, s.client);
    expectOAuthError(await postTokens(s.t.app, { bearer, body: { refreshToken: s.tokens.refreshToken } }), {
      status: 400,
      error: 'invalid_grant',
      description: 'refresh token has been revoked',
    });
    const { sid } = await accessClaims(s.t, s.tokens.accessToken);
    expect((await s.t.storage.tokenSessions.findTokenSession(sid))?.revokedAt).toBe(T0 + 10);
  });

  it('revoking a refresh token: an API that had not read the session refuses at once', async () => {
    const s = await lifecycle();
    expectRevoked(await revoke(s.t.app, s.client, s.tokens.refreshToken));
    expectInvalidToken(await getProfile(s.t.app, s.tokens.accessToken), 'the access token has been replaced or revoked');
  });

  it('revoking a refresh token leaves the customer’s other sessions alone', async () => {
    const s = await lifecycle();
    const second = await s.newSession();
    expectRevoked(await revoke(s.t.app, s.client, s.tokens.refreshToken));
    expect(await isActive(s.t.app, s.client, second.accessToken)).toBe(true);
    expect(await isActive(s.t.app, s.client, second.refreshToken)).toBe(true);
    expectRefreshed(await refreshAtToken(s.t.app, s.client, second.refreshToken));
  });

  it('revoking a customer access token leaves the refresh token working: a refresh gets a new valid access token', async () => {
    const s = await lifecycle();
    expectRevoked(await revoke(s.t.app, s.client, s.tokens.accessToken));
    expectInactive(await introspect(s.t.app, s.client, s.tokens.accessToken));
    expectInvalidToken(await getProfile(s.t.app, s.tokens.accessToken), 'the access token has been replaced or revoked');
    expect(await isActive(s.t.app, s.client, s.tokens.refreshToken)).toBe(true);

    const body = expectRefreshed(await refreshAtToken(s.t.app, s.client, s.tokens.refreshToken));
    expect(await isActive(s.t.app, s.client, body.access_token)).toBe(true);
    expect((await getProfile(s.t.app, body.access_token)).statusCode).toBe(200);
    expectInactive(await introspect(s.t.app, s.client, s.tokens.accessToken));
  });

  it('revoking a customer access token already replaced by a refresh leaves the current one alone', async () => {
    const s = await lifecycle();
    const body = expectRefreshed(await refreshAtToken(s.t.app, s.client, s.tokens.refreshToken));
    expectRevoked(await revoke(s.t.app, s.client, s.tokens.accessToken));
    expect(await isActive(s.t.app, s.client, body.access_token)).toBe(true);
  });

  it('revoking a client access token: refused at POST /tokens (401) and inactive at introspection; the client’s other tokens work', async () => {
    const s = await lifecycle();
    const revoked = await obtainToken(s.t, s.client);
    const kept = await obtainToken(s.t, s.client);
    expectRevoked(await revoke(s.t.app, s.client, revoked));
    expectInactive(await introspect(s.t.app, s.client, revoked));
    const res = await postTokens(s.t.app, { bearer: revoked, body: { refreshToken: s.tokens.refreshToken } });
    expectInvalidToken(res, 'the access token has been revoked');
    expect(await isActive(s.t.app, s.client, kept)).toBe(true);
    expectTokensBody(await postTokens(s.t.app, { bearer: kept, body: { refreshToken: s.tokens.refreshToken } }));
  });

  it('revocation is authenticated with client_secret_post too', async () => {
    const s = await lifecycle();
    expectRevoked(await revoke(s.t.app, s.client, s.tokens.refreshToken, 'post'));
    expectInactive(await introspect(s.t.app, s.client, s.tokens.refreshToken));
  });

  it('Basic and client_secret together → 400 invalid_request, nothing revoked', async () => {
    const s = await lifecycle();
    const res = await s.t.app.inject({
      method: 'POST',
      url: '/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(s.client.id, s.client.secret) },
      payload: form({ token: s.tokens.refreshToken, client_secret: s.client.secret }),
    });
    expectOAuthError(res, { status: 400, error: 'invalid_request' });
    expect(await isActive(s.t.app, s.client, s.tokens.refreshToken)).toBe(true);
  });
});

describe('POST /introspect and POST /revoke with hostile input', () => {
  /** Quotes, a backslash, non-ASCII, and a marker no description may repeat. */
  const HOSTILE = 'x"HOSTILE\\\u00e9\u{1F600}';
  const HOSTILE_10K = `${HOSTILE}${'h'.repeat(10_000)}`;

  it.each(['/introspect', '/revoke'])('%s: repeated, hostile and 10 kB parameters → 400 or 401 with a conformant description, never a 500', async (url) => {
    const s = await lifecycle();
    const token = s.tokens.refreshToken;
    const send = (headers: Record<string, string>, body: string) =>
      s.t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: body });
    const auth = { authorization: basicAuth(s.client.id, s.client.secret) };
    const cases: ReadonlyArray<[string, Record<string, string>, string, number, string]> = [
      ['token twice', auth, form([['token', token], ['token', token]]), 400, 'invalid_request'],
      ['a hostile made-up parameter twice', auth, form([['token', token], [HOSTILE, '1'], [HOSTILE, '2']]), 400, 'invalid_request'],
      ['a hostile 10 kB client_id (post)', {}, form({ token, client_id: HOSTILE_10K, client_secret: s.client.secret }), 401, 'invalid_client'],
      ['a hostile client ID and secret (Basic)', { authorization: basicAuth(HOSTILE, HOSTILE) }, form({ token }), 401, 'invalid_client'],
      ['Basic and a hostile client_secret in the body', auth, form({ token, client_secret: HOSTILE }), 400, 'invalid_request'],
      ['bAsIc and client_id + client_secret in the body', { authorization: auth.authorization.replace('Basic', 'bAsIc') }, form({ token, client_id: s.client.id, client_secret: s.client.secret }), 400, 'invalid_request'],
    ];
    for (const [name, headers, body, status, error] of cases) {
      const description = expectOAuthError(await send(headers, body), { status, error });
      expect({ name, echoes: /HOSTILE|hhhhh/i.test(description) }).toEqual({ name, echoes: false });
    }
    // A 10 kB hostile token is no token of this client: inactive, or revoked as nothing.
    const res = await send(auth, form({ token: HOSTILE_10K, token_type_hint: HOSTILE }));
    if (url === '/introspect') expectInactive(res);
    else expectRevoked(res);
    expect(await isActive(s.t.app, s.client, token)).toBe(true);
  });
});

/** A code for the client from the customer's live session. */
async function codeOfNextLogin(s: Lifecycle): Promise<string> {
  return expectClientRedirect(await s.browser.get(authorizeUrl(authorizeParams(s.client)))).get('code') ?? '';
}
