import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ClientProfile } from '../../../src/core/clients/client.js';
import { basicAuth, build, form, T0, TEST_AUTH_URL, type TestApp } from '../../helpers/build.js';
import { dpopKey } from '../../helpers/dpop.js';
import { useSqliteInstances, usePostgresInstances, type Instances } from '../../helpers/instances.js';
import { postgresAdminUrl } from '../../helpers/postgres.js';
import { expectNoStore, expectOAuthError, postToken } from '../../helpers/wire.js';

/**
 * `private_key_jwt` (RFC 7523) at `/token`, `/introspect` and `/revoke`
 * (docs/consumer-guide.md, "Authenticating with a private key"): an
 * assertion is accepted once, on every instance.
 */

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
let key: Awaited<ReturnType<typeof generateKeyPair>>;
let jwk: JWK;

beforeAll(async () => {
  key = await generateKeyPair('ES256');
  jwk = { ...(await exportJWK(key.publicKey)), kid: 'k1', alg: 'ES256' };
});

async function keyedClient(t: TestApp, profile: ClientProfile = 'standard'): Promise<{ id: string; secret: string }> {
  const client = await t.createClient({ grants: ['client_credentials'] });
  await t.storage.clients.updateClient(client.id, { jwks: { keys: [jwk] }, profile }, t.clock.nowSeconds());
  return client;
}

function assertion(t: TestApp, clientId: string, claims: JWTPayload = {}): Promise<string> {
  const now = t.clock.nowSeconds();
  return new SignJWT({ iss: clientId, sub: clientId, aud: TEST_AUTH_URL, iat: now, exp: now + 60, jti: crypto.randomUUID(), ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .sign(key.privateKey);
}

const assertionFields = (jwt: string) => ({ client_assertion_type: ASSERTION_TYPE, client_assertion: jwt });

function clientCredentials(app: FastifyInstance, jwt: string, extra: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return postToken(app, { body: form({ grant_type: 'client_credentials', ...assertionFields(jwt), ...extra }) });
}

describe('private_key_jwt at /token', () => {
  it('client_credentials with an assertion: a token for the client', async () => {
    const t = await build();
    const client = await keyedClient(t);
    const res = await clientCredentials(t.app, await assertion(t, client.id));
    expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
    expectNoStore(res);
    const { payload } = await t.verifyAccessToken(res.json<{ access_token: string }>().access_token);
    expect(payload).toMatchObject({ sub: client.id, client_id: client.id });
  });

  it('refuses a replay, a wrong aud and an expired assertion with 401 invalid_client, audited without the assertion', async () => {
    const t = await build({ captureLogs: true });
    const client = await keyedClient(t);
    const jwt = await assertion(t, client.id);
    expect((await clientCredentials(t.app, jwt)).statusCode).toBe(200);
    expectOAuthError(await clientCredentials(t.app, jwt), {
      status: 401,
      error: 'invalid_client',
      description: 'client_assertion was used already: each jti is accepted once',
      challenge: 'basic',
    });
    const wrongAud = await assertion(t, client.id, { aud: 'https://elsewhere.example' });
    expectOAuthError(await clientCredentials(t.app, wrongAud), {
      status: 401,
      error: 'invalid_client',
      description: 'client_assertion aud must be the issuer identifier (or the token endpoint URL)',
    });
    const expired = await assertion(t, client.id, { iat: T0 - 300, exp: T0 - 120 });
    expectOAuthError(await clientCredentials(t.app, expired), { status: 401, error: 'invalid_client', description: 'client_assertion has expired' });

    const events = await t.storage.audit.listAuditEvents({ limit: 100, type: 'client.authentication_failed' });
    expect(events.map((e) => [e.subject, e.details])).toEqual(
      expect.arrayContaining([
        [client.id, { method: 'private_key_jwt', reason: 'client_assertion was used already: each jti is accepted once', count: 1 }],
        [client.id, { method: 'private_key_jwt', reason: 'client_assertion has expired', count: 1 }],
      ]),
    );
    const recorded = JSON.stringify(events) + t.logs.join('');
    for (const sent of [jwt, wrongAud, expired]) {
      expect(recorded).not.toContain(sent);
      expect(recorded).not.toContain(sent.split('.')[2]);
    }
  });

  it('refuses an assertion together with Basic or a secret (invalid_request), and a client_id of another client', async () => {
    const t = await build();
    const client = await keyedClient(t);
    expectOAuthError(await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: form({ grant_type: 'client_credentials', ...assertionFields(await assertion(t, client.id)) }) }), {
      status: 400,
      error: 'invalid_request',
      description: 'client authenticated with both a client assertion and a client secret; use one method',
    });
    expectOAuthError(await clientCredentials(t.app, await assertion(t, client.id), { client_id: client.id, client_secret: client.secret }), { status: 400, error: 'invalid_request' });
    expectOAuthError(await clientCredentials(t.app, await assertion(t, client.id), { client_id: 'cid_sandbox_someone' }), {
      status: 401,
      error: 'invalid_client',
      description: 'client_id does not match the sub of client_assertion',
    });
  });

  it('a fapi2 client: its secret is refused, its assertion with aud the issuer accepted', async () => {
    const t = await build();
    const client = await keyedClient(t, 'fapi2');
    expectOAuthError(await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: form({ grant_type: 'client_credentials' }) }), {
      status: 401,
      error: 'invalid_client',
      description: 'this client authenticates only with private_key_jwt',
    });
    expectOAuthError(await clientCredentials(t.app, await assertion(t, client.id, { aud: `${TEST_AUTH_URL}/token` })), {
      status: 401,
      error: 'invalid_client',
      description: 'client_assertion aud must be the issuer identifier, as a single string',
    });
    // Authenticated, it must still bind its token with a DPoP proof (answering Connect's nonce).
    expectOAuthError(await clientCredentials(t.app, await assertion(t, client.id)), { status: 400, error: 'invalid_dpop_proof' });
    const key = await dpopKey();
    const proofFor = (nonce?: string) => key.proof({ htm: 'POST', htu: `${TEST_AUTH_URL}/token`, iat: t.clock.nowSeconds(), ...(nonce === undefined ? {} : { nonce }) });
    const asked = await postToken(t.app, { body: form({ grant_type: 'client_credentials', ...assertionFields(await assertion(t, client.id)) }), headers: { dpop: await proofFor() } });
    expectOAuthError(asked, { status: 400, error: 'use_dpop_nonce' });
    const bound = await postToken(t.app, {
      body: form({ grant_type: 'client_credentials', ...assertionFields(await assertion(t, client.id)) }),
      headers: { dpop: await proofFor(String(asked.headers['dpop-nonce'])) },
    });
    expect({ status: bound.statusCode, type: bound.json<{ token_type?: string }>().token_type }).toEqual({ status: 200, type: 'DPoP' });
  });
});

describe('private_key_jwt with a jwks_uri, through the composed server', () => {
  it('fetches the keys from a real HTTP server; when it fails, invalid_client and a warning naming the URI, never the assertion', async () => {
    let status = 200;
    const server = createServer((_req, res) => {
      if (status !== 200) return void res.writeHead(status).end();
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=0' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
    try {
      const t = await build({ captureLogs: true });
      const client = await t.createClient({ grants: ['client_credentials'] });
      await t.storage.clients.updateClient(client.id, { jwksUri: uri }, t.clock.nowSeconds());
      expect((await clientCredentials(t.app, await assertion(t, client.id))).statusCode).toBe(200);

      status = 500;
      t.clock.advance(30);
      const jwt = await assertion(t, client.id, { kid: undefined });
      const signedWithUnknownKid = await new SignJWT({ iss: client.id, sub: client.id, aud: TEST_AUTH_URL, iat: t.clock.nowSeconds(), exp: t.clock.nowSeconds() + 60, jti: 'j-2' })
        .setProtectedHeader({ alg: 'ES256', kid: 'k2' })
        .sign(key.privateKey);
      // The kept keys serve while the URI fails; an unknown kid is refused, and makes no new fetch within 30 s.
      expect((await clientCredentials(t.app, jwt)).statusCode).toBe(200);
      expectOAuthError(await clientCredentials(t.app, signedWithUnknownKid), {
        status: 401,
        error: 'invalid_client',
        description: 'client_assertion is not signed by a key registered for this client',
      });
      // A client whose keys were never fetched gets the fetch failure.
      const other = await t.createClient({ grants: ['client_credentials'] });
      await t.storage.clients.updateClient(other.id, { jwksUri: uri }, t.clock.nowSeconds());
      expectOAuthError(await clientCredentials(t.app, await assertion(t, other.id)), {
        status: 401,
        error: 'invalid_client',
        description: 'the keys of this client could not be fetched from its jwks_uri; try again later',
      });
      const logged = t.logs.join('');
      expect(logged).toContain('fetching the keys of a client from its jwks_uri failed');
      expect(logged).toContain(uri);
      expect(logged).toContain('answered 500');
      expect(logged).not.toContain(signedWithUnknownKid);
      expect(logged).not.toContain(jwt);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('private_key_jwt at /introspect and /revoke', () => {
  it('introspects and revokes with an assertion; a replayed one is refused', async () => {
    const t = await build();
    const client = await keyedClient(t);
    const token = (await clientCredentials(t.app, await assertion(t, client.id))).json<{ access_token: string }>().access_token;
    const introspection = await t.app.inject({ method: 'POST', url: '/introspect', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form({ token, ...assertionFields(await assertion(t, client.id)) }) });
    expect({ status: introspection.statusCode, body: introspection.json() }).toMatchObject({ status: 200, body: { active: true, client_id: client.id } });

    const revokeWith = await assertion(t, client.id);
    const revoked = await t.app.inject({ method: 'POST', url: '/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form({ token, ...assertionFields(revokeWith) }) });
    expect(revoked.statusCode).toBe(200);
    const replayed = await t.app.inject({ method: 'POST', url: '/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form({ token, ...assertionFields(revokeWith) }) });
    expectOAuthError(replayed, { status: 401, error: 'invalid_client', description: 'client_assertion was used already: each jti is accepted once' });

    const after = await t.app.inject({ method: 'POST', url: '/introspect', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form({ token, ...assertionFields(await assertion(t, client.id)) }) });
    expect(after.json()).toEqual({ active: false });
  });
});

/** Sends the same assertion 10 times at once across `instances`; exactly one is accepted. */
async function expectAcceptedOnce({ apps, t }: Instances): Promise<void> {
  const client = await keyedClient(t);
  const jwt = await assertion(t, client.id);
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => clientCredentials(apps[i % apps.length] as FastifyInstance, jwt)));
  const statuses = answers.map((res) => res.statusCode).sort();
  expect(statuses).toEqual([200, ...Array<number>(9).fill(401)]);
  for (const res of answers.filter((r) => r.statusCode === 401)) {
    expectOAuthError(res, { status: 401, error: 'invalid_client', description: 'client_assertion was used already: each jti is accepted once' });
  }
}

describe('one assertion sent 10 times at once, on SQLite', () => {
  const instances = useSqliteInstances('connect-pkjwt-');
  it('is accepted exactly once', async () => {
    await expectAcceptedOnce(await instances());
  });
});

describe.skipIf(!postgresAdminUrl)('one assertion on two instances sharing PostgreSQL', () => {
  const instances = usePostgresInstances();
  it('10 at once, across two instances with their own connections: accepted exactly once', async () => {
    await expectAcceptedOnce(await instances.two());
  });
  it('accepted on one instance, refused on the other', async () => {
    const { apps, t } = await instances.two();
    const client = await keyedClient(t);
    const jwt = await assertion(t, client.id);
    expect((await clientCredentials(apps[0] as FastifyInstance, jwt)).statusCode).toBe(200);
    expectOAuthError(await clientCredentials(apps[1] as FastifyInstance, jwt), {
      status: 401,
      error: 'invalid_client',
      description: 'client_assertion was used already: each jti is accepted once',
    });
  });
});
