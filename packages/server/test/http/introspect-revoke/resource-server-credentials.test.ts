import { createHash, createHmac, randomUUID } from 'node:crypto';
import { EncryptJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { TEST_AUTH_URL, TEST_BASE_URL, basicAuth, form } from '../../helpers/build.js';
import { authorizeParams, authorizeUrl, Browser, expectPage, pageText, REDIRECT_URI } from '../../helpers/customer-flow.js';
import {
  accessClaims,
  expectInactive,
  expectIntrospection,
  expectInvalidToken,
  expectMissingToken,
  getProfile,
  introspect,
  lifecycle,
  postTokens,
  redeem,
  revoke,
  expectRevoked,
  type Lifecycle,
} from '../../helpers/token-session.js';
import { expectOAuthError, obtainToken, postToken, type Credentials } from '../../helpers/wire.js';

/*
 * A resource server (docs/resource-servers.md) checks tokens at
 * `/introspect` with its own credentials, and those credentials can
 * obtain no token: not at /token with any grant, not at /authorize, not at
 * POST /tokens, and not offline, since they hold no key material.
 */

const UNAUTHORIZED = 'a resource server obtains no tokens: it checks them at /introspect';

async function setup(): Promise<Lifecycle & { api: Credentials }> {
  const s = await lifecycle();
  return { ...s, api: await s.t.createResourceServer() };
}

/** A code the consumer has not redeemed yet, for the consumer's client, through the live customer session. */
async function unredeemedCode(s: Lifecycle): Promise<string> {
  const res = await s.browser.get(authorizeUrl(authorizeParams(s.client)));
  expect(res.statusCode).toBe(303);
  return new URL(String(res.headers.location)).searchParams.get('code') as string;
}

describe('a resource server checks tokens at /introspect', () => {
  it("sees a consumer's customer access token with its claims, and not its refresh token", async () => {
    const s = await setup();
    const body = expectIntrospection(await introspect(s.t.app, s.api, s.tokens.accessToken));
    const claims = await accessClaims(s.t, s.tokens.accessToken);
    expect(body).toEqual({
      active: true,
      token_type: 'Bearer',
      client_id: s.client.id,
      sub: s.profileId,
      sid: claims.sid,
      jti: claims.jti,
      iss: TEST_AUTH_URL,
      aud: TEST_BASE_URL,
      iat: claims.iat,
      exp: claims.exp,
      // How the customer signed in: PIN + SMS one-time PIN (docs/tokens.md).
      acr: 'urn:connect:acr:pin-sms',
      amr: ['pin', 'sms', 'mfa'],
      auth_time: claims.auth_time,
    });
    expect(body.auth_time).toEqual(expect.any(Number));
    expectInactive(await introspect(s.t.app, s.api, s.tokens.refreshToken));
    // By client_secret_post too.
    expect(expectIntrospection(await introspect(s.t.app, s.api, s.tokens.accessToken, 'post')).active).toBe(true);
  });

  it('sees the customer tokens of every consumer, and a client access token', async () => {
    const s = await setup();
    const other = await s.addClient();
    const otherTokens = await s.newSession(other);
    expect(expectIntrospection(await introspect(s.t.app, s.api, otherTokens.accessToken))).toMatchObject({ active: true, client_id: other.id });
    // The other consumer still sees only its own.
    expectInactive(await introspect(s.t.app, other, s.tokens.accessToken));
    const clientToken = await obtainToken(s.t, s.client);
    expect(expectIntrospection(await introspect(s.t.app, s.api, clientToken))).toMatchObject({ active: true, client_id: s.client.id, sub: s.client.id });
  });

  it('a revoked or replaced token is inactive at once', async () => {
    const s = await setup();
    expectRevoked(await revoke(s.t.app, s.client, s.tokens.refreshToken));
    expectInactive(await introspect(s.t.app, s.api, s.tokens.accessToken));
  });

  it("revokes nothing: another client's token stays active", async () => {
    const s = await setup();
    for (const token of [s.tokens.accessToken, s.tokens.refreshToken]) expectRevoked(await revoke(s.t.app, s.api, token));
    expect(expectIntrospection(await introspect(s.t.app, s.client, s.tokens.refreshToken)).active).toBe(true);
    expect(expectIntrospection(await introspect(s.t.app, s.api, s.tokens.accessToken)).active).toBe(true);
  });

  it('a disabled resource server is refused: 401 invalid_client', async () => {
    const s = await setup();
    await s.t.storage.clients.updateClient(s.api.id, { status: 'disabled' }, s.t.clock.nowSeconds());
    s.t.clock.advance(5);
    expectOAuthError(await introspect(s.t.app, s.api, s.tokens.accessToken), { status: 401, error: 'invalid_client', description: 'client is disabled' });
  });
});

describe("a resource server's credentials obtain no token", () => {
  it('at /token: unauthorized_client for every grant, by either authentication, and nothing is spent', async () => {
    const s = await setup();
    const code = await unredeemedCode(s);
    const attempts: Array<Record<string, string>> = [
      { grant_type: 'client_credentials' },
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI },
      { grant_type: 'refresh_token', refresh_token: s.tokens.refreshToken },
    ];
    for (const params of attempts) {
      const basic = await postToken(s.t.app, { authorization: basicAuth(s.api.id, s.api.secret), body: form(params) });
      expectOAuthError(basic, { status: 400, error: 'unauthorized_client', description: UNAUTHORIZED });
      const post = await postToken(s.t.app, { body: form({ ...params, client_id: s.api.id, client_secret: s.api.secret }) });
      expectOAuthError(post, { status: 400, error: 'unauthorized_client', description: UNAUTHORIZED });
    }
    // The attempts consumed nothing: the code and the refresh token still work for their client.
    const redeemed = await redeem(s.t.app, s.client, code);
    expect(redeemed.accessToken.split('.')).toHaveLength(5);
    expect(expectIntrospection(await introspect(s.t.app, s.client, s.tokens.refreshToken)).active).toBe(true);
  });

  it('at /token: grants Connect does not have are unsupported, for it as for anyone', async () => {
    const s = await setup();
    for (const grantType of ['password', 'implicit', 'urn:ietf:params:oauth:grant-type:token-exchange', 'urn:ietf:params:oauth:grant-type:jwt-bearer']) {
      const res = await postToken(s.t.app, { authorization: basicAuth(s.api.id, s.api.secret), body: form({ grant_type: grantType, subject_token: s.tokens.accessToken }) });
      expectOAuthError(res, { status: 400, error: 'unsupported_grant_type' });
    }
  });

  it('at /authorize: an error page, never a redirect, whatever redirect_uri it names', async () => {
    const s = await setup();
    const browser = new Browser(s.t.app);
    for (const redirectUri of [REDIRECT_URI, '', undefined]) {
      const res = await browser.get(authorizeUrl({ response_type: 'code', client_id: s.api.id, redirect_uri: redirectUri, state: 'x' }));
      expectPage(res, 400);
      expect(pageText(res.body)).toContain('Payments API is not an application customers sign in to.');
    }
  });

  it('at POST /tokens: its secret is no bearer token', async () => {
    const s = await setup();
    const body = { refreshToken: s.tokens.refreshToken };
    expectMissingToken(await postTokens(s.t.app, { authorization: basicAuth(s.api.id, s.api.secret), body }));
    expectInvalidToken(await postTokens(s.t.app, { bearer: s.api.secret, body }));
  });

  it('offline: its credentials are an ID and a random secret, and tokens made with them are refused everywhere', async () => {
    const s = await setup();
    // The secret is 256 random bits behind the environment's prefix: no key, no key reference.
    expect(s.api.id).toMatch(/^cid_sandbox_[A-Za-z0-9_-]+$/);
    expect(s.api.secret).toMatch(/^csk_sandbox_[A-Za-z0-9_-]{43}$/);
    const stored = await s.t.storage.clients.findClient(s.api.id);
    expect(stored).toMatchObject({ kind: 'resource_server', redirectUri: null, grants: [] });
    expect(stored?.secretHash).not.toContain(s.api.secret);

    const now = s.t.clock.nowSeconds();
    const real = await accessClaims(s.t, s.tokens.accessToken);
    const customerClaims = { iss: TEST_AUTH_URL, sub: s.profileId, client_id: s.client.id, sid: real.sid, jti: randomUUID(), iat: now, exp: now + 3600 };
    const clientClaims = { iss: TEST_AUTH_URL, aud: TEST_BASE_URL, sub: s.client.id, client_id: s.client.id, jti: randomUUID(), iat: now, exp: now + 3600 };
    const random = Buffer.from(s.api.secret.slice('csk_sandbox_'.length), 'base64url');
    const keysFromSecret = [createHash('sha256').update(s.api.secret).digest(), random, createHmac('sha256', s.api.secret).update('encryption').digest()];
    expect(keysFromSecret.every((key) => key.length === 32)).toBe(true);
    const kid = s.t.keyRing.encryptionKey().kid;
    const forged: string[] = [];
    for (const key of keysFromSecret) {
      forged.push(await new EncryptJWT(customerClaims).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid }).encrypt(key));
      forged.push(hs256(key, { alg: 'HS256', typ: 'at+jwt', kid: s.t.keyRing.signingKey().kid }, clientClaims));
    }
    forged.push(hs256(Buffer.from(s.api.secret), { alg: 'HS256', typ: 'at+jwt' }, clientClaims));

    for (const token of forged) {
      expectInactive(await introspect(s.t.app, s.api, token));
      expectInvalidToken(await getProfile(s.t.app, token));
      expectInvalidToken(await postTokens(s.t.app, { bearer: token, body: { refreshToken: s.tokens.refreshToken } }));
    }
    // The genuine token next to them is fine.
    expect((await getProfile(s.t.app, s.tokens.accessToken)).statusCode).toBe(200);
  });
});

function hs256(key: Buffer, header: object, payload: object): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${encode(header)}.${encode(payload)}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}
