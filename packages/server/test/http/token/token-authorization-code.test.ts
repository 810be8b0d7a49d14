import { createLocalJWKSet, decodeProtectedHeader, jwtDecrypt, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { s256Challenge } from '../../../src/core/authorize/pkce.js';
import { build, form, T0, TEST_AUTH_URL, TEST_BASE_URL, type TestApp } from '../../helpers/build.js';
import { REFRESH_GRANTS, signedIn } from '../../helpers/builders.js';
import {
  addCustomer,
  authorizeParams,
  Browser,
  enterOtp,
  exchangeCode,
  expectPage,
  logIn,
  MOBILE,
  pageText,
  PIN,
  pkcePair,
  REDIRECT_URI,
  startLogin,
  submitCredentials,
  type Response,
} from '../../helpers/customer-flow.js';
import { hashCode } from '../../../src/core/codes/authorization-code.js';
import { expectJson, expectNoStore, expectOAuthError, fetchJwks, postToken } from '../../helpers/wire.js';

async function decryptAccessToken(t: TestApp, token: string) {
  return jwtDecrypt(token, t.keyRing.encryptionKey().key, {
    issuer: TEST_AUTH_URL,
    audience: TEST_BASE_URL,
    currentDate: new Date(t.clock.nowSeconds() * 1000),
  });
}

async function verifyRefreshToken(t: TestApp, token: string) {
  return jwtVerify(token, createLocalJWKSet(await fetchJwks(t.app)), {
    issuer: TEST_AUTH_URL,
    typ: 'rt+jwt',
    algorithms: ['ES256'],
    currentDate: new Date(t.clock.nowSeconds() * 1000),
  });
}

interface TokenBody {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
}

function expectTokens(res: Response): TokenBody {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
  expectJson(res);
  expectNoStore(res);
  const body = res.json<TokenBody>();
  expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
  return body;
}

/** The `sid` of a customer access token. */
async function sidOf(t: TestApp, accessToken: string): Promise<string> {
  const { payload } = await decryptAccessToken(t, accessToken);
  expect(payload.sid).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  return payload.sid as string;
}

describe('POST /token grant_type=authorization_code', () => {
  it('exchanges a code for a JWE access token and a JWT refresh token', async () => {
    const { t, client, profileId, code } = await signedIn();
    const granted = await code();
    t.clock.advance(7);
    const body = expectTokens(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI }));
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(3600);

    expect(body.access_token.split('.')).toHaveLength(5);
    expect(decodeProtectedHeader(body.access_token)).toMatchObject({ alg: 'dir', enc: 'A256GCM', typ: 'at+jwt', kid: t.keyRing.encryptionKey().kid });
    const { payload: access } = await decryptAccessToken(t, body.access_token);
    const now = T0 + 7;
    expect(access).toEqual({
      iss: TEST_AUTH_URL,
      aud: TEST_BASE_URL,
      sub: profileId,
      client_id: client.id,
      sid: expect.stringMatching(/^[A-Za-z0-9_-]{20,}$/),
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      iat: now,
      exp: now + 3600,
      // How the customer signed in: PIN + SMS, completed when the code was issued (T0), not at the exchange.
      acr: 'urn:connect:acr:pin-sms',
      amr: ['pin', 'sms', 'mfa'],
      auth_time: T0,
    });

    expect(body.refresh_token.split('.')).toHaveLength(3);
    const { payload: refresh, protectedHeader } = await verifyRefreshToken(t, body.refresh_token);
    expect(protectedHeader).toMatchObject({ typ: 'rt+jwt', alg: 'ES256', kid: t.keyRing.signingKey().kid });
    expect(refresh).toMatchObject({ iss: TEST_AUTH_URL, sub: profileId, client_id: client.id, sid: access.sid, iat: now, exp: now + 604_800 });
    expect(refresh).toMatchObject({ acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], auth_time: T0 });
    expect(refresh.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(refresh.jti).not.toBe(access.jti);

    const session = await t.storage.tokenSessions.findTokenSession(access.sid as string);
    expect(session).toMatchObject({ clientId: client.id, profileId, accessJti: access.jti, refreshJti: refresh.jti, revokedAt: null, createdAt: now });
    expect(session?.authentication).toEqual({ acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], authTime: T0 });
  });

  it('a client without the refresh_token grant gets no refresh token: access_token, token_type and expires_in only', async () => {
    const { t, client, code } = await signedIn({ grants: ['client_credentials', 'authorization_code'] });
    const res = await exchangeCode(t.app, client, { code: await code(), redirect_uri: REDIRECT_URI });
    expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
    expectNoStore(res);
    const body = res.json<Record<string, unknown>>();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    // The access token works, its session ends with it, and nothing can refresh it.
    const { payload: access } = await decryptAccessToken(t, body.access_token as string);
    const session = await t.storage.tokenSessions.findTokenSession(access.sid as string);
    expect(session).toMatchObject({ clientId: client.id, accessJti: access.jti, refreshJti: '', refreshExpiresAt: access.exp, revokedAt: null });
    expect((await t.app.inject({ method: 'GET', url: '/customer/profile', headers: { authorization: `Bearer ${body.access_token}` } })).statusCode).toBe(200);
  });

  it('exp - iat is the configured lifetime exactly; expires_in says the same', async () => {
    const { t, client, code } = await signedIn({ accessTokenTtlSeconds: 120, refreshTokenTtlSeconds: 1000 });
    const body = expectTokens(await exchangeCode(t.app, client, { code: await code(), redirect_uri: REDIRECT_URI }));
    expect(body.expires_in).toBe(120);
    const { payload: access } = await decryptAccessToken(t, body.access_token);
    expect((access.exp ?? 0) - (access.iat ?? 0)).toBe(120);
    const { payload: refresh } = await verifyRefreshToken(t, body.refresh_token);
    expect((refresh.exp ?? 0) - (refresh.iat ?? 0)).toBe(1000);
  });

  it('accepts client_secret_post as well as HTTP Basic', async () => {
    const { t, client, code } = await signedIn();
    const res = await postToken(t.app, {
      body: form({ grant_type: 'authorization_code', code: await code(), redirect_uri: REDIRECT_URI, client_id: client.id, client_secret: client.secret }),
    });
    expectTokens(res);
  });

  it('the access token cannot be read without the server key, and is not a JWS', async () => {
    const { t, client, code } = await signedIn();
    const body = expectTokens(await exchangeCode(t.app, client, { code: await code(), redirect_uri: REDIRECT_URI }));
    await expect(jwtDecrypt(body.access_token, new Uint8Array(32))).rejects.toThrow();
    await expect(jwtVerify(body.access_token, createLocalJWKSet(await fetchJwks(t.app)))).rejects.toThrow();
    // The refresh token cannot pass for a client access token.
    await expect(t.verifyAccessToken(body.refresh_token)).rejects.toThrow();
  });

  it.each([
    ['no code', 'invalid_request', 'code is required', () => ({ redirect_uri: REDIRECT_URI })],
    ['an empty code', 'invalid_request', 'code is required', () => ({ redirect_uri: REDIRECT_URI, code: '' })],
    ['no redirect_uri', 'invalid_request', 'redirect_uri is required', (c: string) => ({ code: c })],
    ['an empty redirect_uri', 'invalid_request', 'redirect_uri is required', (c: string) => ({ code: c, redirect_uri: '' })],
    ['an unknown code', 'invalid_grant', 'authorization code is invalid', () => ({ code: 'A'.repeat(43), redirect_uri: REDIRECT_URI })],
    ['a 10 KB code', 'invalid_grant', 'authorization code is invalid', () => ({ code: 'A'.repeat(10_240), redirect_uri: REDIRECT_URI })],
    ['a redirect_uri with a trailing slash', 'invalid_grant', 'redirect_uri does not match the authorization request', (c: string) => ({ code: c, redirect_uri: `${REDIRECT_URI}/` })],
    ['an upper-case redirect_uri', 'invalid_grant', 'redirect_uri does not match the authorization request', (c: string) => ({ code: c, redirect_uri: REDIRECT_URI.toUpperCase() })],
    ['a code_verifier for a code granted without a challenge', 'invalid_grant', 'code_verifier given, but the authorization request had no code_challenge', (c: string) => ({ code: c, redirect_uri: REDIRECT_URI, code_verifier: pkcePair().verifier })],
  ] as ReadonlyArray<[string, string, string, (code: string) => Record<string, string>]>)('%s → %s, and the code stays good for the right request', async (_name, error, description, params) => {
    const { t, client, code } = await signedIn();
    const granted = await code();
    expectOAuthError(await exchangeCode(t.app, client, params(granted)), { status: 400, error, description, challenge: 'none' });
    expectTokens(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI }));
  });

  it('a code of another client → invalid_grant; the rightful client can still redeem it', async () => {
    const { t, client, code } = await signedIn();
    const other = await t.createClient({ name: 'Other', redirectUri: REDIRECT_URI, grants: REFRESH_GRANTS });
    const granted = await code();
    expectOAuthError(await exchangeCode(t.app, other, { code: granted, redirect_uri: REDIRECT_URI }), {
      status: 400,
      error: 'invalid_grant',
      description: 'authorization code is invalid',
    });
    const body = expectTokens(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI }));
    expect((await decryptAccessToken(t, body.access_token)).payload.client_id).toBe(client.id);
    // And the other client's own code is its own.
    const own = await code({}, other);
    const otherBody = expectTokens(await exchangeCode(t.app, other, { code: own, redirect_uri: REDIRECT_URI }));
    expect((await decryptAccessToken(t, otherBody.access_token)).payload.client_id).toBe(other.id);
  });

  it('the code lives 300 s: at 299 s it works, at 300 s invalid_grant', async () => {
    const { t, client, code } = await signedIn();
    const early = await code();
    t.clock.advance(299);
    expectTokens(await exchangeCode(t.app, client, { code: early, redirect_uri: REDIRECT_URI }));

    const late = await code();
    t.clock.advance(300);
    expectOAuthError(await exchangeCode(t.app, client, { code: late, redirect_uri: REDIRECT_URI }), {
      status: 400,
      error: 'invalid_grant',
      description: 'authorization code has expired or was ended',
    });
  });

  it('a configured code lifetime is kept to the second', async () => {
    const { t, client, code } = await signedIn({ codeTtlSeconds: 30 });
    const early = await code();
    const late = await code();
    t.clock.advance(29);
    expectTokens(await exchangeCode(t.app, client, { code: early, redirect_uri: REDIRECT_URI }));
    t.clock.advance(1);
    expectOAuthError(await exchangeCode(t.app, client, { code: late, redirect_uri: REDIRECT_URI }), { status: 400, error: 'invalid_grant' });
  });

  it('a second exchange of a code → invalid_grant, and the tokens of the first are revoked', async () => {
    const { t, client, code } = await signedIn();
    const granted = await code();
    const first = expectTokens(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI }));
    const sid = await sidOf(t, first.access_token);
    expect((await t.storage.tokenSessions.findTokenSession(sid))?.revokedAt).toBeNull();

    t.clock.advance(5);
    expectOAuthError(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI }), {
      status: 400,
      error: 'invalid_grant',
      description: 'authorization code was already used; the tokens issued for it are revoked',
    });
    expect((await t.storage.tokenSessions.findTokenSession(sid))?.revokedAt).toBe(T0 + 5);

    // Another code's session is untouched.
    const next = expectTokens(await exchangeCode(t.app, client, { code: await code(), redirect_uri: REDIRECT_URI }));
    expect((await t.storage.tokenSessions.findTokenSession(await sidOf(t, next.access_token)))?.revokedAt).toBeNull();
  });

  it('a code used after expiry is refused, and a used code stays used after it expires', async () => {
    const { t, client, code } = await signedIn();
    const granted = await code();
    const first = expectTokens(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI }));
    t.clock.advance(600);
    expectOAuthError(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI }), { status: 400, error: 'invalid_grant' });
    expect((await t.storage.tokenSessions.findTokenSession(await sidOf(t, first.access_token)))?.revokedAt).toBe(T0 + 600);
  });
});

describe('POST /token authorization_code with PKCE', () => {
  it('a challenge was sent: the verifier is required and must match; a failed attempt leaves the code for the rightful client', async () => {
    const { t, client, code } = await signedIn();
    const { verifier, challenge } = pkcePair();
    const granted = await code({ code_challenge: challenge, code_challenge_method: 'S256' });
    const attempts: ReadonlyArray<[string | undefined, string, string]> = [
      [undefined, 'invalid_grant', 'code_verifier is required: the authorization request had a code_challenge'],
      [pkcePair().verifier, 'invalid_grant', 'code_verifier does not match the code_challenge'],
      [challenge, 'invalid_grant', 'code_verifier does not match the code_challenge'],
      [`${verifier.slice(0, -1)}${verifier.endsWith('A') ? 'B' : 'A'}`, 'invalid_grant', 'code_verifier does not match the code_challenge'],
      [verifier.slice(0, 42), 'invalid_request', 'code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~'],
      ['a'.repeat(129), 'invalid_request', 'code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~'],
      [`${verifier.slice(0, 50)}+/=`, 'invalid_request', 'code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~'],
      [`${verifier} `, 'invalid_request', 'code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~'],
    ];
    for (const [attempt, error, description] of attempts) {
      const res = await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI, code_verifier: attempt });
      expectOAuthError(res, { status: 400, error, description });
    }
    expectTokens(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI, code_verifier: verifier }));
  });

  it.each([43, 128])('a verifier of %i characters works', async (length) => {
    const { t, client, code } = await signedIn();
    const { verifier, challenge } = pkcePair(length);
    expect(verifier).toHaveLength(length);
    const granted = await code({ code_challenge: challenge, code_challenge_method: 'S256' });
    expectTokens(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI, code_verifier: verifier }));
  });

  it('a verifier with every allowed character (RFC 7636 unreserved) works', async () => {
    const { t, client, code } = await signedIn();
    const verifier = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';
    const granted = await code({ code_challenge: s256Challenge(verifier), code_challenge_method: 'S256' });
    expectTokens(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI, code_verifier: verifier }));
  });

  it('a client created with requirePkce redeems with its verifier', async () => {
    const t = await build();
    const client = await t.createClient({ requirePkce: true, grants: REFRESH_GRANTS });
    await addCustomer(t);
    const { verifier, challenge } = pkcePair();
    const params = await logIn(new Browser(t.app), authorizeParams(client, { code_challenge: challenge, code_challenge_method: 'S256' }));
    const granted = params.get('code') ?? '';
    expectOAuthError(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI }), { status: 400, error: 'invalid_grant' });
    expectTokens(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI, code_verifier: verifier }));
  });
});

describe('POST /token authorization_code: the client', () => {
  it('a client whose authorization_code grant was removed after the code was granted → unauthorized_client', async () => {
    const { t, client, code } = await signedIn();
    const granted = await code();
    await t.storage.clients.updateClient(client.id, { grants: ['client_credentials'] }, t.clock.nowSeconds());
    t.clock.advance(6); // past the client cache
    expectOAuthError(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI }), {
      status: 400,
      error: 'unauthorized_client',
      description: 'this client is not allowed the authorization_code grant',
    });
  });

  it('a client whose redirect URI an operator replaced: its code → invalid_grant, left unused; a sign-in under way ends on a page, nothing sent to the old address', async () => {
    const { t, client, code } = await signedIn();
    const granted = await code();
    const tablet = new Browser(t.app);
    const otpPage = await submitCredentials(tablet, (await startLogin(tablet, authorizeParams(client))).page, MOBILE, PIN);
    await t.storage.clients.updateClient(client.id, { redirectUri: 'https://acme.example/new-callback' }, t.clock.nowSeconds());
    expectOAuthError(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI }), {
      status: 400,
      error: 'invalid_grant',
      description: 'the redirect_uri of this code is no longer registered for the client',
    });
    expect((await t.storage.codes.findAuthorizationCode(hashCode(granted)))?.consumedAt).toBeNull();
    const ended = await enterOtp(tablet, otpPage, MOBILE);
    expectPage(ended, 400);
    expect(ended.headers.location).toBeUndefined();
    expect(pageText(ended.body)).toContain('cannot sign customers in right now');
  });

  it('a wrong secret or a disabled client → invalid_client, and the code is not spent', async () => {
    const { t, client, code } = await signedIn();
    const granted = await code();
    expectOAuthError(await exchangeCode(t.app, { id: client.id, secret: `${client.secret}x` }, { code: granted, redirect_uri: REDIRECT_URI }), {
      status: 401,
      error: 'invalid_client',
      challenge: 'basic',
    });
    expectTokens(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI }));

    const another = await code();
    await t.storage.clients.updateClient(client.id, { status: 'disabled' }, t.clock.nowSeconds());
    t.clock.advance(6);
    expectOAuthError(await exchangeCode(t.app, client, { code: another, redirect_uri: REDIRECT_URI }), { status: 401, error: 'invalid_client' });
  });

  it('code twice in the body → invalid_request', async () => {
    const { t, client, code } = await signedIn();
    const granted = await code();
    const res = await postToken(t.app, {
      authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
      body: form([
        ['grant_type', 'authorization_code'],
        ['code', granted],
        ['code', granted],
        ['redirect_uri', REDIRECT_URI],
      ]),
    });
    expectOAuthError(res, { status: 400, error: 'invalid_request' });
    expectTokens(await exchangeCode(t.app, client, { code: granted, redirect_uri: REDIRECT_URI }));
  });
});
