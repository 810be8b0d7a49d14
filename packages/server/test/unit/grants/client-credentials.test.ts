import { randomBytes } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/core/clock.js';
import { clientCredentialsGrant } from '../../../src/core/grants/client-credentials.js';
import type { Client } from '../../../src/core/clients/client.js';
import { KeyRing } from '../../../src/core/keys/key-ring.js';
import { deriveKey } from '../../../src/core/keys/master-key.js';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';

describe('client_credentials grant', () => {
  it('mints a JWT whose lifetime is exactly the configured TTL and which expires to the second', async () => {
    const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
    await storage.migrate();
    const clock = fixedClock(1_800_000_000);
    const keys = await KeyRing.open({ keys: storage.keys, sealKey: deriveKey(randomBytes(32), 'key-sealing'), clock });
    const urls = { authUrl: 'https://auth.example', baseUrl: 'https://api.example' };
    const client = { id: 'cid_sandbox_acme' } as Client;

    const result = await clientCredentialsGrant.handle({ params: {}, client }, { keys, clock, urls, lifetimes: { accessTokenSeconds: 90 } });
    expect(result.expiresIn).toBe(90);
    expect(result.refreshToken).toBeUndefined();
    expect(decodeProtectedHeader(result.accessToken)).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: keys.signingKey().kid });

    const verify = (at: number) =>
      jwtVerify(result.accessToken, createLocalJWKSet(keys.jwks()), {
        issuer: urls.authUrl,
        audience: urls.baseUrl,
        currentDate: new Date(at * 1000),
        clockTolerance: 0,
      });
    const { payload } = await verify(1_800_000_000 + 89);
    expect(payload.exp! - payload.iat!).toBe(90);
    expect(payload).toMatchObject({ sub: client.id, client_id: client.id });
    await expect(verify(1_800_000_000 + 90)).rejects.toThrow(/exp/);
    await storage.close();
  });
});
