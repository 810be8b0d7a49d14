import { calculateJwkThumbprint, exportJWK, generateKeyPair, generateSecret, SignJWT, type JWK } from 'jose';
import { fixedClock } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenVerifier, dpopChallenge, InvalidToken, type PresentedRequest } from '../../src/index.js';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-server.js';

/*
 * The verifier's DPoP checks (RFC 9449 §4.3, §7; docs/resource-servers.md,
 * "DPoP in the SDK's verifier") against a local introspection endpoint that reports one bound
 * and one unbound token. Each proof is made here with jose, one fault at a time.
 */

const clock = fixedClock(1_800_000_000);
const API_URL = 'https://api.example/payments';
const BOUND = 'aaaa.bbbb.cccc';
const UNBOUND = 'dddd.eeee.ffff';

let server: LocalServer;
let key: CryptoKeyPair;
let publicJwk: JWK;
let jkt: string;

beforeAll(async () => {
  key = await generateKeyPair('ES256');
  publicJwk = await exportJWK(key.publicKey);
  jkt = await calculateJwkThumbprint(publicJwk, 'sha256');
  server = await startLocalServer((request, response) => {
    const token = new URLSearchParams(request.body).get('token');
    const now = clock.nowSeconds();
    const claims = { active: true, client_id: 'cid_shop', sub: 'cid_shop', iss: 'https://auth.example', jti: `j-${token}`, iat: now, exp: now + 300 };
    if (token === BOUND) return sendJson(response, 200, { ...claims, token_type: 'DPoP', cnf: { jkt } });
    if (token === UNBOUND) return sendJson(response, 200, { ...claims, token_type: 'Bearer' });
    sendJson(response, 200, { active: false });
  });
});

afterAll(async () => {
  await server?.close();
});

function verifier() {
  return createTokenVerifier({ authUrl: server.url, clientId: 'cid_api', clientSecret: 'csk_api', clock, cacheSeconds: 0 });
}

async function ath(token: string): Promise<string> {
  return Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token))).toString('base64url');
}

interface ProofParts {
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
  signWith?: CryptoKey | Uint8Array;
  alg?: string;
}

let counter = 0;
async function proof(parts: ProofParts = {}): Promise<string> {
  const alg = parts.alg ?? 'ES256';
  const claims = { htm: 'POST', htu: API_URL, iat: clock.nowSeconds(), jti: `proof-${++counter}`, ath: await ath(BOUND), ...parts.claims };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete (claims as Record<string, unknown>)[name];
  return new SignJWT(claims).setProtectedHeader({ typ: 'dpop+jwt', alg, jwk: publicJwk, ...parts.header } as never).sign(parts.signWith ?? key.privateKey);
}

function request(dpop: PresentedRequest['dpop'], extra: Partial<PresentedRequest> = {}): PresentedRequest {
  return { authorization: `DPoP ${BOUND}`, dpop, method: 'POST', url: `${API_URL}?page=2`, ...extra };
}

describe('verifyRequest with a DPoP-bound token', () => {
  it('accepts the DPoP scheme with a valid proof, and reports the binding', async () => {
    const token = await verifier().verifyRequest(request(await proof()), { kind: 'client' });
    expect(token).toMatchObject({ kind: 'client', clientId: 'cid_shop', jkt });
  });

  it('accepts a proof whose iat is just within 60 seconds either way', async () => {
    const v = verifier();
    await expect(v.verifyRequest(request(await proof({ claims: { iat: clock.nowSeconds() - 60 } })))).resolves.toMatchObject({ jkt });
    await expect(v.verifyRequest(request(await proof({ claims: { iat: clock.nowSeconds() + 60 } })))).resolves.toMatchObject({ jkt });
  });

  const other = generateKeyPair('ES256');
  const refusals: Array<[string, () => Promise<PresentedRequest>, RegExp]> = [
    ['no proof', async () => request(undefined), /exactly one/],
    ['two proofs', async () => request([await proof(), await proof()]), /exactly one/],
    ['a proof that is no JWS', async () => request('not-a-proof'), /exactly one/],
    ['typ other than dpop+jwt', async () => request(await proof({ header: { typ: 'JWT' } })), /not a valid dpop\+jwt/],
    ['an HS256 proof', async () => request(await proof({ alg: 'HS256', signWith: await generateSecret('HS256') })), /not a valid dpop\+jwt/],
    ['a signature by another key than the header jwk', async () => request(await proof({ signWith: (await other).privateKey })), /not a valid dpop\+jwt/],
    ['a private key in the header', async () => {
      const pair = await generateKeyPair('ES256', { extractable: true });
      return request(await proof({ header: { jwk: await exportJWK(pair.privateKey) }, signWith: pair.privateKey }));
    }, /not a valid dpop\+jwt/],
    ['a key other than the bound one', async () => {
      const pair = await other;
      return request(await proof({ header: { jwk: await exportJWK(pair.publicKey) }, signWith: pair.privateKey }));
    }, /another key/],
    ['another method', async () => request(await proof({ claims: { htm: 'GET' } })), /htm/],
    ['another path', async () => request(await proof({ claims: { htu: 'https://api.example/payouts' } })), /htu/],
    ['another host', async () => request(await proof({ claims: { htu: 'https://evil.example/payments' } })), /htu/],
    ['an iat 61 seconds old', async () => request(await proof({ claims: { iat: clock.nowSeconds() - 61 } })), /iat/],
    ['an iat 61 seconds ahead', async () => request(await proof({ claims: { iat: clock.nowSeconds() + 61 } })), /iat/],
    ['no ath', async () => request(await proof({ claims: { ath: undefined } })), /ath/],
    ['the ath of another token', async () => request(await proof({ claims: { ath: await ath(UNBOUND) } })), /ath/],
    ['no jti', async () => request(await proof({ claims: { jti: undefined } })), /jti/],
    ['the Bearer scheme', async () => request(await proof(), { authorization: `Bearer ${BOUND}` }), /DPoP-bound/],
    ['an unbound token as DPoP', async () => request(await proof({ claims: { ath: await ath(UNBOUND) } }), { authorization: `DPoP ${UNBOUND}` }), /not DPoP-bound/],
  ];

  it.each(refusals)('refuses %s with InvalidToken', async (_name, build, description) => {
    const error = await verifier().verifyRequest(await build()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidToken);
    expect((error as InvalidToken).description).toMatch(description);
  });

  it('refuses a proof sent a second time (jti), within the window, and only then', async () => {
    const v = verifier();
    const once = await proof();
    await v.verifyRequest(request(once));
    const again = await v.verifyRequest(request(once)).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(InvalidToken);
    expect((again as InvalidToken).description).toMatch(/used before/);
    // Another verifier (another process) has not seen it.
    await expect(verifier().verifyRequest(request(once))).resolves.toMatchObject({ jkt });
  });

  it('verify(token) refuses a bound token, which needs its proof', async () => {
    await expect(verifier().verify(BOUND)).rejects.toThrow(/this access token is DPoP-bound: present it as Authorization: DPoP/);
    await expect(verifier().verify(UNBOUND)).resolves.toMatchObject({ jkt: undefined });
  });

  it('takes Bearer requests for unbound tokens as verify does', async () => {
    await expect(verifier().verifyRequest({ authorization: `Bearer ${UNBOUND}`, method: 'GET', url: API_URL })).resolves.toMatchObject({ clientId: 'cid_shop', jkt: undefined });
    await expect(verifier().verifyRequest({ authorization: undefined, method: 'GET', url: API_URL })).rejects.toBeInstanceOf(InvalidToken);
  });
});

describe('dpopChallenge', () => {
  it('builds the WWW-Authenticate value of a DPoP API, with the error when given', () => {
    expect(dpopChallenge()).toBe('DPoP algs="ES256 PS256 EdDSA"');
    expect(dpopChallenge(new InvalidToken('the DPoP proof is for another URL (htu) "x"'))).toBe(
      `DPoP algs="ES256 PS256 EdDSA", error="invalid_token", error_description="the DPoP proof is for another URL (htu) 'x'"`,
    );
  });
});
