import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/core/clock.js';
import { KeyRing } from '../../src/core/keys/key-ring.js';
import { deriveKey } from '../../src/core/keys/master-key.js';
import { basicAuth, build, form, T0 } from '../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../helpers/postgres.js';

noticePostgresSkipped('token endpoint on PostgreSQL');

describe.skipIf(!postgresAdminUrl)('token endpoint on PostgreSQL', () => {
  const { open } = usePostgresStorage();

  it('two instances starting at once on an empty database agree on one signing key', async () => {
    const a = open();
    const b = open();
    await Promise.all([a.migrate(), b.migrate()]);
    const sealKey = deriveKey(randomBytes(32), 'key-sealing');
    const clock = fixedClock(T0);
    const [ringA, ringB] = await Promise.all([
      KeyRing.open({ keys: a.keys, sealKey, clock }),
      KeyRing.open({ keys: b.keys, sealKey, clock }),
    ]);
    await Promise.all([ringA.reload(), ringB.reload()]);
    expect(ringA.signingKey().kid).toBe(ringB.signingKey().kid);
    expect(ringA.jwks()).toEqual(ringB.jwks());
  });

  it('issues a token that an app on another connection verifies', async () => {
    const masterKey = randomBytes(32);
    const storageA = open();
    const storageB = open();
    const a = await build({ storage: storageA, masterKey });
    const b = await build({ storage: storageB, masterKey, clock: a.clock });
    const client = await a.createClient();
    const res = await b.app.inject({
      method: 'POST',
      url: '/token',
      headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ grant_type: 'client_credentials' }),
    });
    expect(res.statusCode).toBe(200);
    await a.keyRing.reload();
    const { payload } = await a.verifyAccessToken(res.json().access_token);
    expect(payload.client_id).toBe(client.id);
  });
});
