import {
  calculateJwkThumbprint,
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTVerifyOptions,
} from 'jose';
import { describe, expect, it } from 'vitest';
import { sharedConnect, type ConformanceClient, type RunningConnect } from './connect.js';

/**
 * jose, as a resource server uses it: the JWKS at the `jwks_uri` of
 * Connect's metadata (`createRemoteJWKSet`) and `jwtVerify` of a client
 * access token (RFC 9068) with the issuer, the audience (the base URL) and
 * `typ: at+jwt`. The token is obtained the way the README's curl line
 * does, with fetch.
 */

async function clientAccessToken(connect: RunningConnect, registered: ConformanceClient): Promise<string> {
  const res = await fetch(`${connect.issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${registered.id}:${registered.secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** The JWKS of Connect, found the way a resource server configured with the issuer finds it. */
async function remoteKeys(connect: RunningConnect) {
  const metadata = (await (await fetch(`${connect.issuer}/.well-known/oauth-authorization-server`)).json()) as { jwks_uri: string };
  return { jwksUri: metadata.jwks_uri, keys: createRemoteJWKSet(new URL(metadata.jwks_uri)) };
}

describe('jose', () => {
  const connect = sharedConnect();
  const expected = (): JWTVerifyOptions => ({ issuer: connect().issuer, audience: connect().issuer, typ: 'at+jwt', algorithms: ['ES256'] });

  it('verifies a client-credentials access token against the remote JWKS: RFC 9068 claims', async () => {
    const registered = await connect().createClient();
    const token = await clientAccessToken(connect(), registered);
    const { jwksUri, keys } = await remoteKeys(connect());
    expect(jwksUri).toBe(`${connect().issuer}/.well-known/jwks.json`);
    const { payload, protectedHeader } = await jwtVerify(token, keys, expected());
    expect(payload).toMatchObject({ iss: connect().issuer, aud: connect().issuer, sub: registered.id, client_id: registered.id });
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect((payload.exp as number) - (payload.iat as number)).toBe(3600);
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
  });

  it('the token names its key by kid, the RFC 7638 thumbprint of a key the JWKS publishes', async () => {
    const token = await clientAccessToken(connect(), await connect().createClient());
    const { kid } = decodeProtectedHeader(token);
    const jwks = (await (await fetch(`${connect().issuer}/.well-known/jwks.json`)).json()) as { keys: Array<Record<string, string>> };
    const key = jwks.keys.find((candidate) => candidate.kid === kid);
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(await calculateJwkThumbprint(key as { kty: string; crv: string; x: string; y: string })).toBe(kid);
    expect(key).not.toHaveProperty('d');
  });

  it('refuses another audience, another issuer, an expired token, a changed signature and a refresh token', async () => {
    const registered = await connect().createClient();
    const token = await clientAccessToken(connect(), registered);
    const { keys } = await remoteKeys(connect());
    const { payload } = await jwtVerify(token, keys, expected());
    const [header, body, signature] = token.split('.') as [string, string, string];
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;

    // Each attempt starts only when awaited, so none rejects unobserved.
    const refusals: Array<[string, () => Promise<unknown>, new (...args: never[]) => Error]> = [
      ['another audience', () => jwtVerify(token, keys, { ...expected(), audience: 'https://elsewhere.example' }), errors.JWTClaimValidationFailed],
      ['another issuer', () => jwtVerify(token, keys, { ...expected(), issuer: 'https://elsewhere.example' }), errors.JWTClaimValidationFailed],
      ['at exp', () => jwtVerify(token, keys, { ...expected(), currentDate: new Date((payload.exp as number) * 1000) }), errors.JWTExpired],
      ['a changed signature', () => jwtVerify(`${header}.${body}.${flipped}`, keys, expected()), errors.JWSSignatureVerificationFailed],
    ];
    for (const [name, attempt, errorClass] of refusals) {
      const error = await attempt().catch((e: unknown) => e);
      expect({ name, refused: error instanceof errorClass }).toEqual({ name, refused: true });
    }

    // A customer's refresh token is signed by the same keys but is no access token (typ rt+jwt).
    const link = await connect().authorize(
      `${connect().issuer}/authorize?${new URLSearchParams({ response_type: 'code', client_id: registered.id, redirect_uri: registered.redirectUri })}`,
    );
    const exchanged = await fetch(`${connect().issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: link.searchParams.get('code') as string,
        redirect_uri: registered.redirectUri,
        client_id: registered.id,
        client_secret: registered.secret,
      }),
    });
    const { refresh_token: refreshToken } = (await exchanged.json()) as { refresh_token: string };
    const asAccess = await jwtVerify(refreshToken, keys, expected()).catch((e: unknown) => e);
    expect(asAccess).toBeInstanceOf(errors.JWTClaimValidationFailed);
    expect((asAccess as errors.JWTClaimValidationFailed).claim).toBe('typ');
  });
});
