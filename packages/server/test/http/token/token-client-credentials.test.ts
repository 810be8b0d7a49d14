import { decodeJwt, decodeProtectedHeader, errors as joseErrors } from 'jose';
import { describe, expect, it } from 'vitest';
import { basicAuth, build, form, T0, TEST_AUTH_URL, TEST_BASE_URL } from '../../helpers/build.js';
import { expectJson, expectNoStore, expectOAuthError, fetchJwks, obtainToken, postToken, verifyWithPublishedKeys } from '../../helpers/wire.js';

const FORM = 'application/x-www-form-urlencoded';
const GRANT = form({ grant_type: 'client_credentials' });

/** Every character percent-encoded: still a valid form encoding (RFC 6749 §2.3.1, appendix B). */
function percentEncodeAll(value: string): string {
  return [...Buffer.from(value, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`).join('');
}

describe('POST /token, grant_type=client_credentials', () => {
  it('issues an RFC 9068 JWT access token to a client using HTTP Basic', async () => {
    const t = await build();
    const client = await t.createClient();
    const res = await t.app.inject({
      method: 'POST',
      url: '/token',
      headers: { authorization: basicAuth(client.id, client.secret), 'content-type': FORM },
      payload: form({ grant_type: 'client_credentials' }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.pragma).toBe('no-cache');
    expectJson(res);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(3600);
    const { payload, protectedHeader } = await t.verifyAccessToken(body.access_token);
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: t.keyRing.signingKey().kid });
    expect(payload).toMatchObject({ iss: TEST_AUTH_URL, aud: TEST_BASE_URL, sub: client.id, client_id: client.id, iat: T0, exp: T0 + 3600 });
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('grants a token to a client sending client_id and client_secret in the body (client_secret_post)', async () => {
    const t = await build();
    const client = await t.createClient();
    const res = await postToken(t.app, {
      body: form({ grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret }),
    });
    expect(res.statusCode).toBe(200);
    expectNoStore(res);
    expectJson(res);
    const body = res.json<Record<string, unknown>>();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    const { payload } = await verifyWithPublishedKeys(t, body.access_token as string);
    expect(payload).toMatchObject({ sub: client.id, client_id: client.id });
  });

  it('accepts HTTP Basic with a client_id in the body naming the same client', async () => {
    const t = await build();
    const client = await t.createClient();
    const res = await postToken(t.app, {
      authorization: basicAuth(client.id, client.secret),
      body: form({ grant_type: 'client_credentials', client_id: client.id }),
    });
    expect(res.statusCode).toBe(200);
    expect(decodeJwt(res.json<{ access_token: string }>().access_token).client_id).toBe(client.id);
  });

  it('treats an empty client_secret next to HTTP Basic as omitted (RFC 6749 §3.2)', async () => {
    const t = await build();
    const client = await t.createClient();
    const res = await postToken(t.app, {
      authorization: basicAuth(client.id, client.secret),
      body: form({ grant_type: 'client_credentials', client_secret: '' }),
    });
    expect(res.statusCode).toBe(200);
  });

  it('form-decodes both parts of HTTP Basic credentials (RFC 6749 §2.3.1)', async () => {
    const t = await build();
    const client = await t.createClient();
    // A secret with every character that form encoding changes: space, +, :, %, /, non-ASCII.
    const secret = 'p@ss w+rd:50%/é€';
    await t.storage.clients.updateClient(client.id, { secretHash: t.hasher.hash(secret) }, t.clock.nowSeconds());

    const encoded = await postToken(t.app, { authorization: basicAuth(client.id, secret), body: GRANT });
    expect(encoded.statusCode).toBe(200);
    expect(decodeJwt(encoded.json<{ access_token: string }>().access_token).sub).toBe(client.id);

    // The same credentials over-encoded (every byte as %XX) are the same credentials.
    const overEncoded = `Basic ${Buffer.from(`${percentEncodeAll(client.id)}:${percentEncodeAll(secret)}`).toString('base64')}`;
    expect((await postToken(t.app, { authorization: overEncoded, body: GRANT })).statusCode).toBe(200);

    // Sent without form encoding, '+' means a space and '%/' is no escape: not these credentials.
    const raw = `Basic ${Buffer.from(`${client.id}:${secret}`).toString('base64')}`;
    expectOAuthError(await postToken(t.app, { authorization: raw, body: GRANT }), {
      status: 401,
      error: 'invalid_client',
      challenge: 'basic',
    });

    // client_secret_post with the same secret (form() encodes it).
    const post = await postToken(t.app, {
      body: form({ grant_type: 'client_credentials', client_id: client.id, client_secret: secret }),
    });
    expect(post.statusCode).toBe(200);
  });

  it('accepts a form Content-Type with parameters and in any letter case', async () => {
    const t = await build();
    const client = await t.createClient();
    for (const contentType of [`${FORM};charset=UTF-8`, `${FORM}; charset=utf-8`, 'Application/X-WWW-Form-URLEncoded']) {
      const res = await postToken(t.app, { contentType, authorization: basicAuth(client.id, client.secret), body: GRANT });
      expect({ contentType, status: res.statusCode }).toEqual({ contentType, status: 200 });
    }
  });

  it('ignores unknown parameters, including names of Object.prototype members', async () => {
    const t = await build();
    const client = await t.createClient();
    const res = await postToken(t.app, {
      authorization: basicAuth(client.id, client.secret),
      body: 'grant_type=client_credentials&nonce=anything&__proto__=x&constructor=y&toString=z&hasOwnProperty=w',
    });
    expect(res.statusCode).toBe(200);
  });

  it('makes exp - iat exactly the configured lifetime, from the injected clock', async () => {
    const t = await build({ accessTokenTtlSeconds: 7 });
    const client = await t.createClient();
    t.clock.advance(123);
    const res = await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: GRANT });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ access_token: string; expires_in: number }>();
    expect(body.expires_in).toBe(7);
    const claims = decodeJwt(body.access_token);
    expect(claims.iat).toBe(T0 + 123);
    expect(claims.exp).toBe(T0 + 123 + 7);

    // Valid in its last second, expired from `exp` on.
    await expect(verifyWithPublishedKeys(t, body.access_token, T0 + 123 + 6)).resolves.toBeDefined();
    await expect(verifyWithPublishedKeys(t, body.access_token, T0 + 123 + 7)).rejects.toBeInstanceOf(joseErrors.JWTExpired);
  });

  it('gives every token its own jti', async () => {
    const t = await build();
    const client = await t.createClient();
    const tokens = [];
    for (let i = 0; i < 5; i++) tokens.push(await obtainToken(t, client));
    const jtis = tokens.map((token) => decodeJwt(token).jti);
    expect(jtis.every((jti) => typeof jti === 'string' && jti.length >= 16)).toBe(true);
    expect(new Set(jtis).size).toBe(tokens.length);
  });

  it('signs a token that verifies against GET /.well-known/jwks.json, with the claims of docs/tokens.md', async () => {
    const t = await build();
    const client = await t.createClient();
    const token = await obtainToken(t, client);
    const jwks = await fetchJwks(t.app);

    const header = decodeProtectedHeader(token);
    expect(header).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) });
    expect(jwks.keys.map((key) => key.kid)).toContain(header.kid);

    const { payload } = await verifyWithPublishedKeys(t, token);
    expect(payload).toEqual({
      iss: TEST_AUTH_URL,
      aud: TEST_BASE_URL,
      sub: client.id,
      client_id: client.id,
      iat: T0,
      exp: T0 + 3600,
      jti: expect.any(String),
    });
    // RFC 9700 §4.15: a client's sub can never collide with a customer's numeric profile ID.
    expect(payload.sub).not.toMatch(/^\d+$/);
  });
});
