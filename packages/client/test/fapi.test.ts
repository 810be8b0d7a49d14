import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, exportJWK, generateKeyPair, jwtVerify, type JWK } from 'jose';
import { fixedClock } from '@connect-auth/server';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ClientCredentialsProvider,
  CustomerTokenManager,
  InvalidRequest,
  InvalidResponse,
  parseStepUpChallenge,
  requestClientToken,
  revokeToken,
  startAuthorization,
  UseDpopNonce,
  type ConnectOptions,
} from '../src/index.js';
import { sendJson, startLocalServer, type LocalHandler, type LocalServer } from './support/local-server.js';

/*
 * The SDK's half of FAPI 2.0 (docs/consumer-guide.md, "FAPI 2.0") against
 * a local server that records what arrives: every client assertion and
 * DPoP proof is verified here with jose, as Connect verifies them.
 */

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const REDIRECT_URI = 'https://shop.example/callback';
const clock = fixedClock(1_800_000_000);
const servers: LocalServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: LocalHandler): Promise<LocalServer> {
  const server = await startLocalServer(handler);
  servers.push(server);
  return server;
}

const signing = await generateKeyPair('ES256');

function fapi(server: LocalServer, extra: Partial<ConnectOptions> = {}): ConnectOptions {
  return { authUrl: server.url, clientId: 'cid_fapi', privateKey: signing.privateKey, keyId: 'k1', dpop: true, clock, retry: { attempts: 1 }, ...extra } as ConnectOptions;
}

/** A token endpoint answering every request with a token of `type`. */
function tokenAnswer(type = 'DPoP', extra: Record<string, unknown> = {}) {
  return { access_token: `at-${Math.random().toString(36).slice(2)}`, token_type: type, expires_in: 300, ...extra };
}

function form(body: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(body));
}

/** Verifies a client assertion as Connect does (RFC 7523 §3) and returns its claims. */
async function verifyAssertion(assertion: string | undefined, publicKey: CryptoKey, audience: string) {
  const { payload, protectedHeader } = await jwtVerify(assertion ?? '', publicKey, { audience, issuer: 'cid_fapi', subject: 'cid_fapi', currentDate: new Date(clock.nowSeconds() * 1000) });
  return { payload, protectedHeader };
}

/** Verifies a DPoP proof's signature and type (RFC 9449 §4.3) and returns claims and thumbprint. */
async function verifyProof(proof: string | string[] | undefined) {
  expect(typeof proof).toBe('string');
  const { payload, protectedHeader } = await jwtVerify(proof as string, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: ['ES256', 'PS256', 'EdDSA'] });
  const jwk = protectedHeader.jwk as JWK;
  expect(jwk.d).toBeUndefined();
  return { payload, protectedHeader, thumbprint: await calculateJwkThumbprint(jwk, 'sha256') };
}

async function ath(token: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token));
  return Buffer.from(digest).toString('base64url');
}

describe('private_key_jwt', () => {
  it('authenticates each request with a fresh assertion: iss = sub = client ID, aud = the issuer, unique jti, exp = iat + 60', async () => {
    const server = await serve((_request, response) => sendJson(response, 200, tokenAnswer('Bearer')));
    const options = fapi(server, { dpop: false });
    await requestClientToken(options);
    await requestClientToken(options);
    const claims = [];
    for (const request of server.requests) {
      expect(request.headers.authorization).toBeUndefined();
      const body = form(request.body);
      expect(body).toMatchObject({ grant_type: 'client_credentials', client_id: 'cid_fapi', client_assertion_type: ASSERTION_TYPE });
      expect(body.client_secret).toBeUndefined();
      const { payload, protectedHeader } = await verifyAssertion(body.client_assertion, signing.publicKey, server.url);
      expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: 'k1' });
      expect(payload.exp).toBe((payload.iat as number) + 60);
      expect(payload.iat).toBe(clock.nowSeconds());
      claims.push(payload);
    }
    expect(claims[0]?.jti).toEqual(expect.any(String));
    expect(claims[0]?.jti).not.toBe(claims[1]?.jti);
  });

  it('takes a private JWK and infers the algorithm from it: RSA is PS256, Ed25519 EdDSA; its kid is the default keyId', async () => {
    for (const alg of ['PS256', 'EdDSA'] as const) {
      const pair = await generateKeyPair(alg, { extractable: true });
      const jwk = { ...(await exportJWK(pair.privateKey)), kid: `jwk-${alg}` };
      const server = await serve((_request, response) => sendJson(response, 200, tokenAnswer('Bearer')));
      await requestClientToken({ authUrl: server.url, clientId: 'cid_fapi', privateKey: jwk as ConnectOptions['privateKey'] & object, clock } as ConnectOptions);
      const assertion = form(server.requests[0]?.body ?? '').client_assertion;
      expect(decodeProtectedHeader(assertion ?? '')).toMatchObject({ alg, kid: `jwk-${alg}` });
      await verifyAssertion(assertion, pair.publicKey, server.url);
    }
  });

  it('authenticates revocation the same way, without a DPoP proof', async () => {
    const server = await serve((_request, response) => sendJson(response, 200, {}));
    await revokeToken(fapi(server), 'some-refresh-token');
    const [request] = server.requests;
    expect(request?.path).toBe('/revoke');
    expect(request?.headers.dpop).toBeUndefined();
    expect(form(request?.body ?? '')).toMatchObject({ token: 'some-refresh-token', client_assertion_type: ASSERTION_TYPE });
    await verifyAssertion(form(request?.body ?? '').client_assertion, signing.publicKey, server.url);
  });

  it('refuses options with both a secret and a key, or neither, and a public JWK', async () => {
    const base = { authUrl: 'https://auth.example', clientId: 'cid' };
    expect(() => new ClientCredentialsProvider({ ...base, clientSecret: 's', privateKey: signing.privateKey } as unknown as ConnectOptions)).toThrow(/exactly one of clientSecret and privateKey/);
    expect(() => new ClientCredentialsProvider(base as unknown as ConnectOptions)).toThrow(/exactly one of clientSecret and privateKey/);
    const publicJwk = await exportJWK(signing.publicKey);
    expect(() => new ClientCredentialsProvider({ ...base, privateKey: publicJwk } as unknown as ConnectOptions)).toThrow(/private JWK/);
    expect(() => new ClientCredentialsProvider({ ...base, privateKey: signing.publicKey } as unknown as ConnectOptions)).toThrow(/private key/);
    expect(() => new ClientCredentialsProvider({ ...base, clientSecret: 's', dpop: { key: signing.privateKey } } as unknown as ConnectOptions)).toThrow(/CryptoKeyPair/);
  });
});

describe('DPoP at the token endpoint', () => {
  it('sends a proof with every request (htm, htu, iat, unique jti), one generated key per client in the process, and keeps the DPoP token type', async () => {
    const server = await serve((_request, response) => sendJson(response, 200, tokenAnswer('DPoP')));
    const options = fapi(server);
    const first = await requestClientToken(options);
    const second = await new ClientCredentialsProvider(options).getToken();
    expect([first.tokenType, second.tokenType]).toEqual(['DPoP', 'DPoP']);
    const proofs = await Promise.all(server.requests.map((r) => verifyProof(r.headers.dpop)));
    for (const { payload, protectedHeader } of proofs) {
      expect(protectedHeader.alg).toBe('ES256');
      expect(payload).toEqual({ htm: 'POST', htu: `${server.url}/token`, iat: clock.nowSeconds(), jti: expect.any(String) });
    }
    expect(proofs[0]?.thumbprint).toBe(proofs[1]?.thumbprint);
    expect(proofs[0]?.payload.jti).not.toBe(proofs[1]?.payload.jti);
    // Another options object of the same client: the same key; another client: another key.
    await requestClientToken(fapi(server));
    expect((await verifyProof(server.requests[2]?.headers.dpop)).thumbprint).toBe(proofs[0]?.thumbprint);
    await requestClientToken(fapi(server, { clientId: 'cid_other' }));
    expect((await verifyProof(server.requests[3]?.headers.dpop)).thumbprint).not.toBe(proofs[0]?.thumbprint);
  });

  it('signs with a given key pair', async () => {
    const key = await generateKeyPair('EdDSA');
    const server = await serve((_request, response) => sendJson(response, 200, tokenAnswer('DPoP')));
    await requestClientToken(fapi(server, { dpop: { key } }));
    const { protectedHeader, thumbprint } = await verifyProof(server.requests[0]?.headers.dpop);
    expect(protectedHeader.alg).toBe('EdDSA');
    expect(thumbprint).toBe(await calculateJwkThumbprint(await exportJWK(key.publicKey), 'sha256'));
  });

  it('answers use_dpop_nonce once with the DPoP-Nonce it brought, and sends the latest nonce from then on', async () => {
    const server = await serve((_request, response, n) => {
      if (n === 1) return sendJson(response, 400, { error: 'use_dpop_nonce', error_description: 'a nonce is required' }, { 'dpop-nonce': 'nonce-1' });
      sendJson(response, 200, tokenAnswer('DPoP'), n === 2 ? { 'dpop-nonce': 'nonce-2' } : {});
    });
    const options = fapi(server);
    await requestClientToken(options);
    await requestClientToken(options);
    const nonces = await Promise.all(server.requests.map(async (r) => (await verifyProof(r.headers.dpop)).payload.nonce));
    expect(nonces).toEqual([undefined, 'nonce-1', 'nonce-2']);
    // A fresh client assertion for the second attempt: Connect accepts each jti once.
    const jtis = server.requests.map((r) => JSON.parse(Buffer.from(form(r.body).client_assertion?.split('.')[1] ?? '', 'base64url').toString()).jti);
    expect(new Set(jtis).size).toBe(3);
  });

  it('retries a nonce challenge only once, and not at all without a new nonce', async () => {
    const always = await serve((_request, response, n) => sendJson(response, 400, { error: 'use_dpop_nonce', error_description: 'a nonce is required' }, { 'dpop-nonce': `nonce-${n}` }));
    await expect(requestClientToken(fapi(always))).rejects.toBeInstanceOf(UseDpopNonce);
    expect(always.requests).toHaveLength(2);
    const without = await serve((_request, response) => sendJson(response, 400, { error: 'use_dpop_nonce', error_description: 'a nonce is required' }));
    await expect(requestClientToken(fapi(without))).rejects.toBeInstanceOf(UseDpopNonce);
    expect(without.requests).toHaveLength(1);
  });

  it('takes a Bearer answer to a proof as a bearer token (RFC 9449 §5), and refuses a DPoP answer without a proof', async () => {
    const bearer = await serve((request, response) =>
      request.url === '/token' ? sendJson(response, 200, tokenAnswer('Bearer')) : sendJson(response, 200, { ok: true }),
    );
    const provider = new ClientCredentialsProvider(fapi(bearer));
    const token = await provider.getToken();
    expect(token.tokenType).toBe('Bearer');
    await provider.fetch(`${bearer.url}/api`);
    expect(bearer.requests[1]?.headers).toMatchObject({ authorization: `Bearer ${token.accessToken}` });
    expect(bearer.requests[1]?.headers.dpop).toBeUndefined();

    const dpop = await serve((_request, response) => sendJson(response, 200, tokenAnswer('DPoP')));
    const error = await requestClientToken(fapi(dpop, { dpop: false })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidResponse);
    expect(dpop.requests[0]?.headers.dpop).toBeUndefined();
  });
});

describe('calling APIs with DPoP-bound tokens', () => {
  it('ClientCredentialsProvider.fetch sends Authorization: DPoP and a proof with htm, htu and ath, and answers an API nonce challenge once', async () => {
    const server = await serve((request, response, n) => {
      if (request.url === '/token') return sendJson(response, 200, tokenAnswer('DPoP'));
      if (n === 2) {
        return sendJson(response, 401, { error: 'use_dpop_nonce' }, { 'www-authenticate': 'DPoP error="use_dpop_nonce", error_description="nonce"', 'dpop-nonce': 'api-nonce' });
      }
      sendJson(response, 200, { ok: true });
    });
    const provider = new ClientCredentialsProvider(fapi(server));
    const response = await provider.fetch(`${server.url}/payments?page=2`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(200);
    const { accessToken } = await provider.getToken();
    const calls = server.requests.slice(1);
    expect(calls.map((c) => c.body)).toEqual(['{}', '{}']);
    const proofs = [];
    for (const call of calls) {
      expect(call.headers.authorization).toBe(`DPoP ${accessToken}`);
      proofs.push((await verifyProof(call.headers.dpop)).payload);
    }
    expect(proofs[0]).toEqual({ htm: 'POST', htu: `${server.url}/payments`, iat: clock.nowSeconds(), jti: expect.any(String), ath: await ath(accessToken) });
    expect(proofs[1]).toMatchObject({ nonce: 'api-nonce', ath: await ath(accessToken) });
    expect(proofs[1]?.jti).not.toBe(proofs[0]?.jti);
  });

  it('CustomerTokenManager.fetch sends the customer token as DPoP with a proof bound to it', async () => {
    const server = await serve((request, response) => {
      if (request.url === '/token') return sendJson(response, 200, tokenAnswer('DPoP', { refresh_token: 'rt' }));
      sendJson(response, 200, { ok: true });
    });
    const manager = new CustomerTokenManager({ ...fapi(server, { pushedAuthorization: false }), redirectUri: REDIRECT_URI });
    const pending = await manager.startAuthorization();
    const linked = await manager.completeAuthorization('u1', `${REDIRECT_URI}?code=c1&state=${pending.state}&iss=${encodeURIComponent(server.url)}&userId=x&profileId=1`, pending);
    expect(linked.tokens.tokenType).toBe('DPoP');
    await manager.fetch('u1', `${server.url}/profile`);
    const call = server.requests[1];
    expect(call?.headers.authorization).toBe(`DPoP ${linked.tokens.accessToken}`);
    expect((await verifyProof(call?.headers.dpop)).payload).toMatchObject({ htm: 'GET', htu: `${server.url}/profile`, ath: await ath(linked.tokens.accessToken) });
  });

  it('refreshes at POST /tokens with the DPoP-bound client token and a proof, answering the nonce challenge once', async () => {
    let clientToken = '';
    const server = await serve((request, response, n) => {
      if (request.url === '/token') {
        const body = form(request.body);
        const answer = tokenAnswer('DPoP', body.grant_type === 'authorization_code' ? { refresh_token: 'rt', expires_in: 2 } : {});
        if (body.grant_type === 'client_credentials') clientToken = answer.access_token;
        return sendJson(response, 200, answer);
      }
      if (request.url === '/tokens' && n === 3) {
        return sendJson(response, 401, { error: 'use_dpop_nonce', error_description: 'nonce' }, { 'www-authenticate': 'DPoP error="use_dpop_nonce"', 'dpop-nonce': 'rs-nonce' });
      }
      sendJson(response, 200, { accessToken: 'at-refreshed', refreshToken: 'rt', expiresAt: clock.nowSeconds() + 300 });
    });
    const manager = new CustomerTokenManager({ ...fapi(server, { pushedAuthorization: false }), redirectUri: REDIRECT_URI, refreshVia: 'tokens' });
    const pending = await manager.startAuthorization();
    await manager.completeAuthorization('u1', `${REDIRECT_URI}?code=c1&state=${pending.state}&iss=${encodeURIComponent(server.url)}&userId=x&profileId=1`, pending);
    const fresh = await manager.refresh('u1');
    expect(fresh).toMatchObject({ accessToken: 'at-refreshed', tokenType: 'DPoP' });
    expect(server.requests.map((r) => r.path)).toEqual(['/token', '/token', '/tokens', '/tokens']);
    const [first, second] = server.requests.slice(2);
    expect(first?.headers['request-reference-no']).toBe(second?.headers['request-reference-no']);
    for (const call of [first, second]) expect(call?.headers.authorization).toBe(`DPoP ${clientToken}`);
    expect((await verifyProof(first?.headers.dpop)).payload).toMatchObject({ htm: 'POST', htu: `${server.url}/tokens`, ath: await ath(clientToken) });
    expect((await verifyProof(second?.headers.dpop)).payload).toMatchObject({ nonce: 'rs-nonce', ath: await ath(clientToken) });
  });
});

describe('step-up challenges of a DPoP API', () => {
  it('are read under the DPoP scheme as under Bearer', () => {
    expect(parseStepUpChallenge('DPoP algs="ES256", error="insufficient_user_authentication", acr_values="phr", max_age="300"')).toMatchObject({ acrValues: ['phr'], maxAge: 300 });
    expect(parseStepUpChallenge('Basic error="insufficient_user_authentication", acr_values="phr"')).toBeUndefined();
  });
});

describe('pushed authorization requests', () => {
  it('pushes the parameters, authenticated and with dpop_jkt, and returns the short /authorize URL; the code is exchanged with that key', async () => {
    const server = await serve((request, response) => {
      if (request.url === '/par') return sendJson(response, 201, { request_uri: 'urn:ietf:params:oauth:request_uri:abc', expires_in: 60 });
      sendJson(response, 200, tokenAnswer('DPoP', { refresh_token: 'rt' }));
    });
    const manager = new CustomerTokenManager({ ...fapi(server), redirectUri: REDIRECT_URI });
    const pending = await manager.startAuthorization({ scope: ['payments:read'], prompt: 'login' });
    expect(pending.url).toBe(`${server.url}/authorize?client_id=cid_fapi&request_uri=${encodeURIComponent('urn:ietf:params:oauth:request_uri:abc')}`);
    const [push] = server.requests;
    expect(push?.method).toBe('POST');
    expect(push?.headers.dpop).toBeUndefined();
    const body = form(push?.body ?? '');
    const { client_assertion: assertion, ...rest } = body;
    expect(rest).toEqual({
      response_type: 'code',
      client_id: 'cid_fapi',
      redirect_uri: REDIRECT_URI,
      state: pending.state,
      prompt: 'login',
      scope: 'payments:read',
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: 'S256',
      dpop_jkt: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      client_assertion_type: ASSERTION_TYPE,
    });
    await verifyAssertion(assertion, signing.publicKey, server.url);
    const callback = `${REDIRECT_URI}?code=c1&state=${pending.state}&iss=${encodeURIComponent(server.url)}&userId=x&profileId=1`;
    await manager.completeAuthorization('u1', callback, pending);
    const exchange = server.requests[1];
    expect(form(exchange?.body ?? '')).toMatchObject({ grant_type: 'authorization_code', code: 'c1', code_verifier: pending.codeVerifier });
    expect((await verifyProof(exchange?.headers.dpop)).thumbprint).toBe(body.dpop_jkt);
  });

  it('is off by default for a client secret, and can be turned off: the plain URL then carries dpop_jkt', async () => {
    const server = await serve((_request, response) => sendJson(response, 500, {}));
    const plain = await startAuthorization({ authUrl: server.url, clientId: 'cid', clientSecret: 's', redirectUri: REDIRECT_URI });
    expect(new URL(plain.url).searchParams.get('response_type')).toBe('code');
    const unpushed = await startAuthorization({ ...fapi(server, { pushedAuthorization: false }), redirectUri: REDIRECT_URI });
    expect(new URL(unpushed.url).searchParams.get('dpop_jkt')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(server.requests).toHaveLength(0);
    await expect(startAuthorization({ authUrl: server.url, clientId: 'cid', redirectUri: REDIRECT_URI, pushedAuthorization: true } as never)).rejects.toThrow(TypeError);
  });

  it('pushes for a client secret when asked, and maps errors like the token endpoint', async () => {
    const server = await serve((_request, response) => sendJson(response, 400, { error: 'invalid_request', error_description: 'redirect_uri is not registered' }));
    const error = await startAuthorization({ authUrl: server.url, clientId: 'cid', clientSecret: 's', redirectUri: REDIRECT_URI, pushedAuthorization: true, retry: { attempts: 1 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequest);
    expect((error as InvalidRequest).description).toBe('redirect_uri is not registered');
    expect(server.requests[0]?.headers.authorization).toBe(`Basic ${btoa('cid:s')}`);
    const wrong = await serve((_request, response) => sendJson(response, 200, { request_uri: 'urn:x' }));
    await expect(startAuthorization({ ...fapi(wrong), redirectUri: REDIRECT_URI })).rejects.toBeInstanceOf(InvalidResponse);
  });
});
