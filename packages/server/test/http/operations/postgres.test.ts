import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/core/clock.js';
import { KeyRing } from '../../../src/core/keys/key-ring.js';
import { deriveKey } from '../../../src/core/keys/master-key.js';
import { basicAuth, build, form, T0 } from '../../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import { addCustomer, approveIfAsked, authorizeParams, authorizeUrl, Browser, exchangeCode, logIn, REDIRECT_URI } from '../../helpers/customer-flow.js';

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

  it('the code exchange gives a refresh token only to a client with the refresh_token grant', async () => {
    const t = await build({ storage: open() });
    await addCustomer(t);
    const browser = new Browser(t.app);
    const fields = async (grants: string[]) => {
      const client = await t.createClient({ name: grants.join(' '), grants });
      const code = (await approveIfAsked(browser, await browser.get(authorizeUrl(authorizeParams(client))))).headers.location ?? '';
      const res = await exchangeCode(t.app, client, { code: new URL(code).searchParams.get('code') ?? '', redirect_uri: REDIRECT_URI });
      expect(res.statusCode).toBe(200);
      return Object.keys(res.json<object>()).sort();
    };
    await logIn(browser, authorizeParams(await t.createClient({ name: 'First' })));
    expect(await fields(['client_credentials', 'authorization_code'])).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(await fields(['client_credentials', 'authorization_code', 'refresh_token'])).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
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
