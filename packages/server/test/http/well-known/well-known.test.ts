import { calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import { revokeKey, rotateKeys } from '../../../src/core/keys/key-rotation.js';
import { deriveKey } from '../../../src/core/keys/master-key.js';
import { build, TEST_AUTH_URL } from '../../helpers/build.js';
import { expectJson, fetchJwks, obtainToken } from '../../helpers/wire.js';

describe('GET /.well-known/oauth-authorization-server (RFC 8414)', () => {
  it('describes this server: its URL, endpoints, and exactly the grants it serves', async () => {
    const t = await build();
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(res.statusCode).toBe(200);
    expectJson(res);
    const metadata = res.json<Record<string, unknown>>();
    expect(metadata).toMatchObject({
      issuer: TEST_AUTH_URL,
      authorization_endpoint: `${TEST_AUTH_URL}/authorize`,
      token_endpoint: `${TEST_AUTH_URL}/token`,
      jwks_uri: `${TEST_AUTH_URL}/.well-known/jwks.json`,
      // RFC 9126 §5: optional server-wide; fapi2 clients must push all the same.
      pushed_authorization_request_endpoint: `${TEST_AUTH_URL}/par`,
      require_pushed_authorization_requests: false,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(metadata.grant_types_supported).toEqual(['client_credentials', 'authorization_code', 'refresh_token']);
    expect(metadata).toMatchObject({
      introspection_endpoint: `${TEST_AUTH_URL}/introspect`,
      revocation_endpoint: `${TEST_AUTH_URL}/revoke`,
    });
    for (const endpoint of ['token', 'introspection', 'revocation']) {
      expect([...(metadata[`${endpoint}_endpoint_auth_methods_supported`] as string[])].sort()).toEqual([
        'client_secret_basic',
        'client_secret_post',
        'private_key_jwt',
      ]);
      expect(metadata[`${endpoint}_endpoint_auth_signing_alg_values_supported`]).toEqual(['ES256', 'PS256', 'EdDSA']);
    }
  });

  it('announces the iss claim of the tokens it signs (RFC 8414 §3.3)', async () => {
    const t = await build();
    const client = await t.createClient();
    const { payload } = await t.verifyAccessToken(await obtainToken(t, client));
    const metadata = (await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json<{ issuer: string }>();
    expect(payload.iss).toBe(metadata.issuer);
  });
});

describe('RFC 8414 §3.1: an auth URL with a path', () => {
  const metadataAt = async (t: Awaited<ReturnType<typeof build>>, url: string) => t.app.inject({ method: 'GET', url });

  it.each([
    ['https://h.connect.test/auth', '/auth'],
    ['https://h.connect.test/tenants/acme/auth', '/tenants/acme/auth'],
  ])('%s: the metadata is also at /.well-known/oauth-authorization-server%s, the same document', async (authUrl, path) => {
    const t = await build({ env: { CONNECT_AUTH_URL: authUrl } });
    const suffixed = await metadataAt(t, `/.well-known/oauth-authorization-server${path}`);
    expect(suffixed.statusCode).toBe(200);
    expectJson(suffixed);
    expect(suffixed.headers['cache-control']).toBe('public, max-age=300');
    const metadata = suffixed.json<Record<string, unknown>>();
    expect(metadata).toMatchObject({
      issuer: authUrl,
      authorization_endpoint: `${authUrl}/authorize`,
      token_endpoint: `${authUrl}/token`,
      jwks_uri: `${authUrl}/.well-known/jwks.json`,
      introspection_endpoint: `${authUrl}/introspect`,
      revocation_endpoint: `${authUrl}/revoke`,
    });
    // {auth_url}/.well-known/… reaches Connect as /.well-known/… behind a proxy that maps the path.
    expect((await metadataAt(t, '/.well-known/oauth-authorization-server')).json()).toEqual(metadata);
    expect((await metadataAt(t, `/.well-known/oauth-authorization-server${path}?x=1`)).json()).toEqual(metadata);
    for (const other of ['/other', `${path}/more`, `${path}x`, '/', path.toUpperCase()]) {
      const res = await metadataAt(t, `/.well-known/oauth-authorization-server${other}`);
      expect({ other, status: res.statusCode, error: res.json<{ error: string }>().error }).toEqual({ other, status: 404, error: 'not_found' });
    }
  });

  it('an auth URL without a path has nothing under /.well-known/oauth-authorization-server/', async () => {
    const t = await build();
    for (const url of ['/.well-known/oauth-authorization-server/', '/.well-known/oauth-authorization-server/auth']) {
      expect((await metadataAt(t, url)).statusCode).toBe(404);
    }
    expect((await metadataAt(t, '/.well-known/oauth-authorization-server')).json<{ issuer: string }>().issuer).toBe(TEST_AUTH_URL);
  });
});

describe('GET /.well-known/jwks.json', () => {
  it('publishes the public half of the signing key only, with kid, alg and use', async () => {
    const t = await build();
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(res.statusCode).toBe(200);
    expectJson(res);
    const jwks = res.json<{ keys: Record<string, unknown>[] }>();
    expect(Object.keys(jwks)).toEqual(['keys']);
    expect(jwks.keys).toHaveLength(1);
    for (const key of jwks.keys) {
      // Exactly the public members of an EC key (RFC 7518 §6.2.1) plus kid/alg/use: no d, no private parts.
      expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
      expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: t.keyRing.signingKey().kid });
      expect(key).not.toHaveProperty('d');
    }
    expect(res.body).not.toMatch(/"d"\s*:/);
  });

  it('may be cached for CONNECT_JWKS_MAX_AGE seconds: 300 by default', async () => {
    for (const [env, maxAge] of [[{}, 300], [{ CONNECT_JWKS_MAX_AGE: '1' }, 1], [{ CONNECT_JWKS_MAX_AGE: '86400' }, 86_400]] as const) {
      const t = await build({ env });
      const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
      expect(res.headers['cache-control']).toBe(`public, max-age=${maxAge}`);
    }
  });

  it('publishes a rotated-in key before it signs, and never a revoked one', async () => {
    const t = await build();
    const deps = { storage: t.storage, sealKey: deriveKey(t.masterKey, 'key-sealing'), clock: t.clock };
    const current = t.keyRing.signingKey().kid;
    const rotated = await rotateKeys(deps, { maxTokenTtlSeconds: 3600, publicationDelaySeconds: 330 });
    const next = rotated.keys.find((k) => k.use === 'sig')?.kid;
    await t.keyRing.reload();
    expect((await fetchJwks(t.app)).keys.map((k) => k.kid).sort()).toEqual([current, next].sort());
    await revokeKey(deps, next ?? '');
    await t.keyRing.reload();
    expect((await fetchJwks(t.app)).keys.map((k) => k.kid)).toEqual([current]);
  });

  it('uses the RFC 7638 thumbprint of each key as its kid', async () => {
    const t = await build();
    const jwks = await fetchJwks(t.app);
    for (const key of jwks.keys) {
      expect(key.kid).toBe(await calculateJwkThumbprint({ kty: key.kty, crv: key.crv, x: key.x, y: key.y }));
    }
  });
});
