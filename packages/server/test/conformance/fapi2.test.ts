import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT, base64url, type CryptoKey, type JWK } from 'jose';
import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { sharedConnect, type RunningConnect } from './connect.js';

/**
 * The FAPI 2.0 Security Profile (docs/operator-guide.md, "FAPI 2.0
 * clients"), with oauth4webapi as the independent client: it implements
 * pushed authorization requests, DPoP and `private_key_jwt` itself, as
 * its users call them. What the library will not send (a malformed
 * assertion or proof) is built here with jose, one fault at a time, from a
 * request the library would send. The cases follow what the OpenID
 * Foundation's FAPI 2.0 test plan checks.
 */

type KeyPair = Awaited<ReturnType<typeof oauth.generateKeyPair>>;

const HTTP = { [oauth.allowInsecureRequests]: true } as const;

/** A FAPI 2.0 client as the library sees it, with the keys it signs with. */
interface FapiClient {
  readonly as: oauth.AuthorizationServer;
  readonly client: oauth.Client;
  readonly auth: oauth.ClientAuth;
  readonly id: string;
  readonly redirectUri: string;
  readonly signingKey: CryptoKey;
  readonly kid: string;
  readonly dpopKeys: KeyPair;
  readonly dpop: oauth.DPoPHandle;
}

async function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer);
  return oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, { algorithm: 'oauth2', ...HTTP }));
}

/** Registers a `fapi2` client with one ES256 public key; the library signs its assertions with the private half. */
async function fapiClient(connect: RunningConnect): Promise<FapiClient> {
  const registered = await connect.createClient();
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = randomUUID();
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  // What `clients update --profile fapi2 --jwks FILE` stores: the key, no secret, PKCE required.
  await connect.t.storage.clients.updateClient(
    registered.id,
    { profile: 'fapi2', jwks: { keys: [jwk] }, requirePkce: true, secretHash: '', previousSecretHash: null, previousSecretExpiresAt: null },
    connect.t.clock.nowSeconds(),
  );
  const dpopKeys = await oauth.generateKeyPair('ES256');
  const client: oauth.Client = { client_id: registered.id };
  return {
    as: await discover(connect.issuer),
    client,
    auth: oauth.PrivateKeyJwt({ key: privateKey, kid }),
    id: registered.id,
    redirectUri: registered.redirectUri,
    signingKey: privateKey,
    kid,
    dpopKeys,
    dpop: oauth.DPoP(client, dpopKeys),
  };
}

/** Calls `request` again once when Connect asks for a DPoP nonce (the handle has kept it). */
async function withNonce<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (!oauth.isDPoPNonceError(error)) throw error;
    return request();
  }
}

/** Pushes an authorization request as the library does (PKCE S256, DPoP-bound); returns the `request_uri` and the verifier. */
async function push(side: FapiClient, extra: Record<string, string> = {}): Promise<{ requestUri: string; verifier: string; state: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const parameters = {
    response_type: 'code',
    redirect_uri: side.redirectUri,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...extra,
  };
  const pushed = await withNonce(async () =>
    oauth.processPushedAuthorizationResponse(
      side.as,
      side.client,
      await oauth.pushedAuthorizationRequest(side.as, side.client, side.auth, parameters, { ...HTTP, DPoP: side.dpop }),
    ),
  );
  return { requestUri: pushed.request_uri, verifier, state };
}

function authorizationUrl(side: FapiClient, requestUri: string): URL {
  const url = new URL(side.as.authorization_endpoint as string);
  url.search = new URLSearchParams({ client_id: side.id, request_uri: requestUri }).toString();
  return url;
}

/** The whole FAPI 2.0 authorization: push, the customer at /authorize, the callback checked, the code exchanged with a proof. */
async function linkCustomer(connect: RunningConnect, side: FapiClient): Promise<oauth.TokenEndpointResponse> {
  const { requestUri, verifier, state } = await push(side);
  const callback = await connect.authorize(authorizationUrl(side, requestUri));
  const params = oauth.validateAuthResponse(side.as, side.client, callback, state);
  return withNonce(async () =>
    oauth.processAuthorizationCodeResponse(
      side.as,
      side.client,
      await oauth.authorizationCodeGrantRequest(side.as, side.client, side.auth, params, side.redirectUri, verifier, { ...HTTP, DPoP: side.dpop }),
    ),
  );
}

async function clientCredentials(side: FapiClient): Promise<oauth.TokenEndpointResponse> {
  return withNonce(async () =>
    oauth.processClientCredentialsResponse(
      side.as,
      side.client,
      await oauth.clientCredentialsGrantRequest(side.as, side.client, side.auth, new URLSearchParams(), { ...HTTP, DPoP: side.dpop }),
    ),
  );
}

/** A client assertion as the library makes it, with `changes` to its claims or header. */
async function assertion(
  connect: RunningConnect,
  side: FapiClient,
  changes: { claims?: Record<string, unknown>; header?: Record<string, unknown>; key?: CryptoKey | Uint8Array } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: side.id, sub: side.id, aud: connect.issuer, jti: randomUUID(), iat: now, exp: now + 60, ...changes.claims };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete (claims as Record<string, unknown>)[name];
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: side.kid, ...changes.header } as never).sign(changes.key ?? side.signingKey);
}

/** A DPoP proof for `method` `url` with `changes` (RFC 9449 §4.2). */
async function proof(
  keys: KeyPair,
  method: string,
  url: string,
  changes: { claims?: Record<string, unknown>; header?: Record<string, unknown>; accessToken?: string; nonce?: string } = {},
): Promise<string> {
  const jwk = await exportJWK(keys.publicKey);
  const claims: Record<string, unknown> = { jti: randomUUID(), htm: method, htu: url, iat: Math.floor(Date.now() / 1000) };
  if (changes.accessToken !== undefined) claims.ath = base64url.encode(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(changes.accessToken))));
  if (changes.nonce !== undefined) claims.nonce = changes.nonce;
  Object.assign(claims, changes.claims);
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  const header: Record<string, unknown> = { typ: 'dpop+jwt', alg: 'ES256', jwk, ...changes.header };
  for (const [name, value] of Object.entries(header)) if (value === undefined) delete header[name];
  return new SignJWT(claims).setProtectedHeader(header as never).sign(keys.privateKey);
}

/**
 * `POST {issuer}/token` with a form (made anew for each attempt: a client
 * assertion is used once) and the given `DPoP` headers; retried once with
 * the nonce Connect asks for.
 */
async function tokenRequest(
  connect: RunningConnect,
  form: Record<string, string> | (() => Promise<Record<string, string>>),
  dpop: (nonce?: string) => Promise<string[] | string | undefined>,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const send = async (nonce?: string) => {
    const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded' });
    const proofs = await dpop(nonce);
    for (const value of proofs === undefined ? [] : Array.isArray(proofs) ? proofs : [proofs]) headers.append('dpop', value);
    const body = new URLSearchParams(typeof form === 'function' ? await form() : form);
    const res = await fetch(`${connect.issuer}/token`, { method: 'POST', headers, body });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
  };
  const first = await send();
  const nonce = first.headers.get('dpop-nonce');
  return first.body.error === 'use_dpop_nonce' && nonce ? send(nonce) : first;
}

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

describe('FAPI 2.0 with oauth4webapi', () => {
  const connect = sharedConnect();

  it('discovery lists the pushed request endpoint, private_key_jwt, its algorithms and DPoP\'s', async () => {
    const as = await discover(connect().issuer);
    expect(as.pushed_authorization_request_endpoint).toBe(`${connect().issuer}/par`);
    expect(as.token_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(as.token_endpoint_auth_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'PS256', 'EdDSA']));
    expect(as.token_endpoint_auth_signing_alg_values_supported).not.toContain('HS256');
    expect(as.dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'PS256', 'EdDSA']));
  });

  it('the whole profile: a pushed request, the customer, a DPoP-bound code exchange and refresh, with private_key_jwt throughout', async () => {
    const side = await fapiClient(connect());
    const tokens = await linkCustomer(connect(), side);
    expect(tokens.token_type).toBe('dpop');
    const jkt = await calculateJwkThumbprint((await exportJWK(side.dpopKeys.publicKey)) as JWK);
    // A customer access token is encrypted (JWE): its binding is read at introspection below.
    expect(tokens.access_token.split('.')).toHaveLength(5);

    const refreshed = await withNonce(async () =>
      oauth.processRefreshTokenResponse(
        side.as,
        side.client,
        await oauth.refreshTokenGrantRequest(side.as, side.client, side.auth, tokens.refresh_token as string, { ...HTTP, DPoP: side.dpop }),
      ),
    );
    expect(refreshed.token_type).toBe('dpop');
    const introspected = await oauth.processIntrospectionResponse(
      side.as,
      side.client,
      await oauth.introspectionRequest(side.as, side.client, side.auth, refreshed.access_token, HTTP),
    );
    expect(introspected).toMatchObject({ active: true, cnf: { jkt } });

    // The customer's API at Connect, with a proof of the same key.
    const response = await withNonce(async () => {
      const res = await oauth.protectedResourceRequest(refreshed.access_token, 'GET', new URL(`${connect().issuer}/customer/profile`), new Headers(), null, { ...HTTP, DPoP: side.dpop });
      return res;
    });
    expect(response.status).toBe(200);
  });

  it('client credentials: a DPoP-bound client token with cnf.jkt in the JWT', async () => {
    const side = await fapiClient(connect());
    const tokens = await clientCredentials(side);
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt: await calculateJwkThumbprint((await exportJWK(side.dpopKeys.publicKey)) as JWK) });
  });

  describe('pushed authorization requests', () => {
    it('without client authentication: 401 invalid_client', async () => {
      const side = await fapiClient(connect());
      const res = await fetch(`${connect().issuer}/par`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: side.id, response_type: 'code', redirect_uri: side.redirectUri, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' }),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'invalid_client' });
    });

    it('a FAPI client\'s /authorize without a pushed request is refused', async () => {
      const side = await fapiClient(connect());
      const url = new URL(side.as.authorization_endpoint as string);
      const verifier = oauth.generateRandomCodeVerifier();
      url.search = new URLSearchParams({
        client_id: side.id,
        response_type: 'code',
        redirect_uri: side.redirectUri,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).toString();
      const callback = await connect().authorize(url).catch(() => undefined);
      if (callback) expect(callback.searchParams.get('error')).toBe('invalid_request');
      else {
        const res = await fetch(url, { redirect: 'manual' });
        expect(res.status).toBe(400);
      }
    });

    it('a request_uri starts one authorization: its reuse, its expiry and another client\'s are refused', async () => {
      const side = await fapiClient(connect());
      const other = await fapiClient(connect());
      const { requestUri } = await push(side);
      const first = await fetch(authorizationUrl(side, requestUri), { redirect: 'manual' });
      expect(first.status).toBe(303);
      const again = await fetch(authorizationUrl(side, requestUri), { redirect: 'manual' });
      expect(again.status).toBe(400);
      expect(await again.text()).toMatch(/request_uri|request/i);

      const foreign = await push(other);
      const stolen = await fetch(authorizationUrl(side, foreign.requestUri), { redirect: 'manual' });
      expect(stolen.status).toBe(400);

      const late = await push(side);
      connect().t.clock.advance(61);
      const expired = await fetch(authorizationUrl(side, late.requestUri), { redirect: 'manual' });
      expect(expired.status).toBe(400);
      // The foreign request_uri was not spent by the attempt: its own client can still use it.
      connect().t.clock.advance(-61);
      const own = await fetch(authorizationUrl(other, foreign.requestUri), { redirect: 'manual' });
      expect(own.status).toBe(303);
    });

    it.each([
      ['PKCE missing', { code_challenge: undefined, code_challenge_method: undefined }],
      ['PKCE plain', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }],
      ['response_type token', { response_type: 'token' }],
    ])('%s: refused at /par with invalid_request', async (_name, changes) => {
      const side = await fapiClient(connect());
      const verifier = oauth.generateRandomCodeVerifier();
      const parameters: Record<string, string | undefined> = {
        response_type: 'code',
        redirect_uri: side.redirectUri,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        ...changes,
      };
      const form = Object.fromEntries(Object.entries(parameters).filter(([, value]) => value !== undefined)) as Record<string, string>;
      const res = await fetch(`${connect().issuer}/par`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...form, client_id: side.id, client_assertion_type: ASSERTION_TYPE, client_assertion: await assertion(connect(), side) }),
      });
      expect(res.status).toBe(400);
      expect((await res.json()) as Record<string, unknown>).toMatchObject({ error: expect.stringMatching(/^(invalid_request|unsupported_response_type)$/) });
    });

    it('a wrong PKCE verifier at the exchange: invalid_grant', async () => {
      const side = await fapiClient(connect());
      const { requestUri, state } = await push(side);
      const callback = await connect().authorize(authorizationUrl(side, requestUri));
      const params = oauth.validateAuthResponse(side.as, side.client, callback, state);
      const error = await withNonce(async () =>
        oauth.processAuthorizationCodeResponse(
          side.as,
          side.client,
          await oauth.authorizationCodeGrantRequest(side.as, side.client, side.auth, params, side.redirectUri, oauth.generateRandomCodeVerifier(), { ...HTTP, DPoP: side.dpop }),
        ),
      ).catch((e: unknown) => e);
      expect(error).toMatchObject({ error: 'invalid_grant' });
    });

    it('a code redeemed 61 seconds after it was issued: invalid_grant', async () => {
      const side = await fapiClient(connect());
      const { requestUri, verifier, state } = await push(side);
      const callback = await connect().authorize(authorizationUrl(side, requestUri));
      const params = oauth.validateAuthResponse(side.as, side.client, callback, state);
      connect().t.clock.advance(61);
      // The library's clock follows Connect's, so its assertion and proof are current: only the code is old.
      const skewed: oauth.Client = { ...side.client, [oauth.clockSkew]: connect().t.clock.nowSeconds() - Math.floor(Date.now() / 1000) };
      const dpop = oauth.DPoP(skewed, side.dpopKeys);
      try {
        const error = await withNonce(async () =>
          oauth.processAuthorizationCodeResponse(
            side.as,
            skewed,
            await oauth.authorizationCodeGrantRequest(side.as, skewed, side.auth, params, side.redirectUri, verifier, { ...HTTP, DPoP: dpop }),
          ),
        ).catch((e: unknown) => e);
        expect(error).toMatchObject({ error: 'invalid_grant' });
      } finally {
        connect().t.clock.advance(-61);
      }
    });
  });

  describe('private_key_jwt', () => {
    const cases: [string, (c: RunningConnect, side: FapiClient) => Promise<string>][] = [
      ['aud another server', (c, side) => assertion(c, side, { claims: { aud: 'https://elsewhere.example' } })],
      ['aud the token endpoint only (FAPI 2.0: the issuer)', (c, side) => assertion(c, side, { claims: { aud: `${c.issuer}/token` } })],
      ['sub missing', (c, side) => assertion(c, side, { claims: { sub: undefined } })],
      ['iss another client', (c, side) => assertion(c, side, { claims: { iss: 'cid_sandbox_other' } })],
      ['expired', (c, side) => assertion(c, side, { claims: { iat: Math.floor(Date.now() / 1000) - 300, exp: Math.floor(Date.now() / 1000) - 120 } })],
      ['iat in the future beyond the skew', (c, side) => assertion(c, side, { claims: { iat: Math.floor(Date.now() / 1000) + 600, exp: Math.floor(Date.now() / 1000) + 660 } })],
      ['jti missing', (c, side) => assertion(c, side, { claims: { jti: undefined } })],
      ['signed with HS256 and the client ID', (c, side) => assertion(c, side, { header: { alg: 'HS256' }, key: new TextEncoder().encode(side.id.padEnd(32, '-')) })],
      ['signed with another key', async (c, side) => assertion(c, side, { key: (await generateKeyPair('ES256')).privateKey })],
    ];

    it.each(cases)('%s: 401 invalid_client', async (_name, make) => {
      const side = await fapiClient(connect());
      const jwt = await make(connect(), side);
      const res = await tokenRequest(connect(), { grant_type: 'client_credentials', client_assertion_type: ASSERTION_TYPE, client_assertion: jwt }, (nonce) =>
        proof(side.dpopKeys, 'POST', `${connect().issuer}/token`, { nonce }),
      );
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: 'invalid_client' });
      expect(res.body).not.toHaveProperty('access_token');
    });

    it('an unsigned assertion (alg none): 401 invalid_client', async () => {
      const side = await fapiClient(connect());
      const now = Math.floor(Date.now() / 1000);
      const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const jwt = `${encode({ alg: 'none' })}.${encode({ iss: side.id, sub: side.id, aud: connect().issuer, jti: randomUUID(), iat: now, exp: now + 60 })}.`;
      const res = await tokenRequest(connect(), { grant_type: 'client_credentials', client_assertion_type: ASSERTION_TYPE, client_assertion: jwt }, (nonce) =>
        proof(side.dpopKeys, 'POST', `${connect().issuer}/token`, { nonce }),
      );
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    });

    it('a replayed assertion: the second use is refused', async () => {
      const side = await fapiClient(connect());
      const jwt = await assertion(connect(), side);
      const send = () =>
        tokenRequest(connect(), { grant_type: 'client_credentials', client_assertion_type: ASSERTION_TYPE, client_assertion: jwt }, (nonce) =>
          proof(side.dpopKeys, 'POST', `${connect().issuer}/token`, { nonce }),
        );
      const first = await send();
      // The first may have been asked for a nonce and retried with the same assertion: then that retry is the replay.
      if (first.status === 200) {
        const second = await send();
        expect({ status: second.status, error: second.body.error }).toEqual({ status: 401, error: 'invalid_client' });
      } else {
        expect({ status: first.status, error: first.body.error }).toEqual({ status: 401, error: 'invalid_client' });
      }
    });

    it('a FAPI client\'s secret-based authentication is refused', async () => {
      const side = await fapiClient(connect());
      const res = await fetch(`${connect().issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${side.id}:anything`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials' }),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'invalid_client' });
    });
  });

  describe('DPoP proofs at /token', () => {
    const tokenUrl = () => `${connect().issuer}/token`;
    type Fault = (keys: KeyPair, nonce?: string) => Promise<string[] | string | undefined>;
    const faults: [string, Fault][] = [
      ['no proof (a FAPI client must send one)', async () => undefined],
      ['typ missing', (keys, nonce) => proof(keys, 'POST', tokenUrl(), { nonce, header: { typ: undefined } })],
      ['typ JWT', (keys, nonce) => proof(keys, 'POST', tokenUrl(), { nonce, header: { typ: 'JWT' } })],
      ['jwk missing', (keys, nonce) => proof(keys, 'POST', tokenUrl(), { nonce, header: { jwk: undefined } })],
      ['jti missing', (keys, nonce) => proof(keys, 'POST', tokenUrl(), { nonce, claims: { jti: undefined } })],
      ['htm GET', (keys, nonce) => proof(keys, 'GET', tokenUrl(), { nonce })],
      ['htu another endpoint', (keys, nonce) => proof(keys, 'POST', `${connect().issuer}/revoke`, { nonce })],
      ['iat ten minutes old', (keys, nonce) => proof(keys, 'POST', tokenUrl(), { nonce, claims: { iat: Math.floor(Date.now() / 1000) - 600 } })],
      ['iat ten minutes ahead', (keys, nonce) => proof(keys, 'POST', tokenUrl(), { nonce, claims: { iat: Math.floor(Date.now() / 1000) + 600 } })],
      [
        'a private key in the header',
        async (keys, nonce) => {
          const pair = await generateKeyPair('ES256', { extractable: true });
          const jwk = await exportJWK(pair.privateKey);
          return proof(pair, 'POST', tokenUrl(), { nonce, header: { jwk } });
        },
      ],
      [
        'alg none',
        async (keys, nonce) => {
          const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
          const jwk = await exportJWK(keys.publicKey);
          return `${encode({ typ: 'dpop+jwt', alg: 'none', jwk })}.${encode({ jti: randomUUID(), htm: 'POST', htu: tokenUrl(), iat: Math.floor(Date.now() / 1000), nonce })}.`;
        },
      ],
      ['two DPoP headers', async (keys, nonce) => [await proof(keys, 'POST', tokenUrl(), { nonce }), await proof(keys, 'POST', tokenUrl(), { nonce })]],
    ];

    it.each(faults)('%s: 400 and no token', async (_name, fault) => {
      const side = await fapiClient(connect());
      const res = await tokenRequest(connect(), { grant_type: 'client_credentials', client_assertion_type: ASSERTION_TYPE, client_assertion: await assertion(connect(), side) }, (nonce) =>
        fault(side.dpopKeys, nonce),
      );
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^(invalid_dpop_proof|invalid_request)$/);
      expect(res.body).not.toHaveProperty('access_token');
    });

    it('a replayed proof: refused the second time', async () => {
      const side = await fapiClient(connect());
      const form = async () => ({ grant_type: 'client_credentials', client_assertion_type: ASSERTION_TYPE, client_assertion: await assertion(connect(), side) });
      const first = await tokenRequest(connect(), form, (nonce) => proof(side.dpopKeys, 'POST', tokenUrl(), { nonce }));
      expect(first.status).toBe(200);
      const replayed = await proof(side.dpopKeys, 'POST', tokenUrl(), { nonce: first.headers.get('dpop-nonce') ?? undefined });
      expect((await tokenRequest(connect(), form, async () => replayed)).status).toBe(200);
      const again = await tokenRequest(connect(), form, async () => replayed);
      expect({ status: again.status, error: again.body.error }).toEqual({ status: 400, error: 'invalid_dpop_proof' });
    });
  });

  describe('bound tokens at the resource server', () => {
    const profileUrl = () => `${connect().issuer}/customer/profile`;

    async function call(token: string, scheme: string, dpop?: string): Promise<{ status: number; challenge: string | null }> {
      const headers = new Headers({ authorization: `${scheme} ${token}` });
      if (dpop) headers.set('dpop', dpop);
      const res = await fetch(profileUrl(), { headers });
      await res.arrayBuffer();
      return { status: res.status, challenge: res.headers.get('www-authenticate') };
    }

    it('a bound token as Bearer, with another key\'s proof, without ath or with a wrong one: 401; with its own proof: 200', async () => {
      const side = await fapiClient(connect());
      const { access_token: token } = await linkCustomer(connect(), side);
      const other = await oauth.generateKeyPair('ES256');
      const withNonceProof = async (keys: KeyPair, changes: Parameters<typeof proof>[3] = {}) => {
        const probe = await fetch(profileUrl(), { headers: { authorization: `DPoP ${token}`, dpop: await proof(keys, 'GET', profileUrl(), { accessToken: token, ...changes }) } });
        await probe.arrayBuffer();
        const nonce = probe.headers.get('dpop-nonce') ?? undefined;
        return proof(keys, 'GET', profileUrl(), { accessToken: token, nonce, ...changes });
      };

      expect((await call(token, 'Bearer')).status).toBe(401);
      expect(await call(token, 'DPoP', await withNonceProof(other))).toMatchObject({ status: 401, challenge: expect.stringMatching(/^DPoP /) });
      expect((await call(token, 'DPoP', await withNonceProof(side.dpopKeys, { claims: { ath: undefined } }))).status).toBe(401);
      expect((await call(token, 'DPoP', await withNonceProof(side.dpopKeys, { claims: { ath: 'A'.repeat(43) } }))).status).toBe(401);
      expect((await call(token, 'DPoP', await withNonceProof(side.dpopKeys))).status).toBe(200);
    });
  });
});
