import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, form } from '../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl } from '../helpers/postgres.js';
import { logIn, cliJson, processSetting, requireBuiltCli, onEveryServerWithin, serve, type ProcessSetting } from '../helpers/processes.js';

/**
 * Two `connect-auth serve` processes on one database, as behind a load
 * balancer, and operator commands run beside them: every change must be
 * visible on both within a second of the command's return (polled, never
 * slept for), and nothing of the old state may be accepted after that
 * (docs/operator-guide.md, "Changes reach every instance").
 */

const REDIRECT_URI = 'https://shop.example/callback';
const PIN = '3817';
const MOBILE = '+639170000001';

beforeAll(requireBuiltCli);

/** A data folder and the configuration every process gets; `DATABASE_URL` set for PostgreSQL. */
function setting(engine: 'sqlite' | 'postgres'): Promise<ProcessSetting> {
  return processSetting(engine, { prefix: 'connect-two-' });
}

const cli = cliJson;

async function clientToken(base: string, client: { id: string; secret: string }): Promise<{ status: number; token?: string }> {
  const res = await fetch(new URL('/token', base), {
    method: 'POST',
    headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ grant_type: 'client_credentials' }),
  });
  const body = (await res.json()) as { access_token?: string };
  return { status: res.status, ...(body.access_token ? { token: body.access_token } : {}) };
}

async function profileStatus(base: string, accessToken: string): Promise<number> {
  const res = await fetch(new URL('/customer/profile', base), { headers: { authorization: `Bearer ${accessToken}` } });
  await res.arrayBuffer();
  return res.status;
}

async function refresh(base: string, client: { id: string; secret: string }, refreshToken: string): Promise<{ status: number; accessToken?: string }> {
  const res = await fetch(new URL('/token', base), {
    method: 'POST',
    headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ grant_type: 'refresh_token', refresh_token: refreshToken }),
  });
  const body = (await res.json()) as { access_token?: string };
  return { status: res.status, ...(body.access_token ? { accessToken: body.access_token } : {}) };
}

/** RFC 7662 introspection by the client: whether Connect says the token is active. */
async function introspect(base: string, client: { id: string; secret: string }, token: string): Promise<boolean> {
  const res = await fetch(new URL('/introspect', base), {
    method: 'POST',
    headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ token }),
  });
  return ((await res.json()) as { active: boolean }).active;
}

/** `POST /tokens` with a client access token and a new reference: its status and the access token it gave. */
async function refreshAtTokens(base: string, bearer: string, refreshToken: string): Promise<{ status: number; accessToken?: string }> {
  const res = await fetch(new URL('/tokens', base), {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'request-reference-no': crypto.randomUUID() },
    body: JSON.stringify({ refreshToken }),
  });
  const body = (await res.json()) as { accessToken?: string };
  return { status: res.status, ...(body.accessToken ? { accessToken: body.accessToken } : {}) };
}

/** `POST /tokens` with a client access token: the consumer's refresh endpoint. */
async function tokensStatus(base: string, bearer: string, refreshToken: string): Promise<number> {
  const res = await fetch(new URL('/tokens', base), {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'request-reference-no': crypto.randomUUID() },
    body: JSON.stringify({ refreshToken }),
  });
  await res.arrayBuffer();
  return res.status;
}

function suite(engine: 'sqlite' | 'postgres') {
  describe(`two servers on one ${engine === 'sqlite' ? 'SQLite file' : 'PostgreSQL database'}`, () => {
    /** Two servers, a client with every grant, a customer logged in through server A. */
    async function twoServers(extraEnv: Record<string, string> = {}) {
      const s = await setting(engine);
      await cli(s, ['migrate']);
      const created = await cli<{ clientId: string; clientSecret: string }>(s, [
        'clients', 'create', '--name', 'Shop', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials,authorization_code,refresh_token',
      ]);
      const client = { id: created.clientId, secret: created.clientSecret };
      await cli(s, ['customers', 'create', '--mobile', MOBILE, '--pin', PIN]);
      const [a, b] = await Promise.all([serve(s, extraEnv), serve(s, extraEnv)]);
      const tokens = await logIn(a, '10.0.0.1', client, { mobile: MOBILE, pin: PIN, redirectUri: REDIRECT_URI });
      // Both servers have read (and hold) the client and the session.
      for (const base of [a, b]) {
        expect((await clientToken(base, client)).status).toBe(200);
        expect(await profileStatus(base, tokens.accessToken)).toBe(200);
      }
      return { s, a, b, servers: [a, b] as const, client, tokens };
    }

    it('a refresh on one server ends the old access token on the other within a second; the new one works on both at once', { timeout: 60_000 }, async () => {
      const { a, b, servers, client, tokens } = await twoServers();
      const refreshed = await refresh(b, client, tokens.refreshToken as string);
      expect(refreshed.status).toBe(200);
      // At once on the server that refreshed.
      expect(await profileStatus(b, tokens.accessToken)).toBe(401);
      for (const base of [a, b]) expect(await profileStatus(base, refreshed.accessToken as string)).toBe(200);
      await onEveryServerWithin(servers, 'the old access token refused', async (base) => (await profileStatus(base, tokens.accessToken)) === 401);
    });

    it('clients rotate-secret --grace 0: the new secret works on both at once, the old one is refused on both within a second', { timeout: 60_000 }, async () => {
      const { s, servers, client } = await twoServers();
      const rotated = await cli<{ clientSecret: string }>(s, ['clients', 'rotate-secret', client.id, '--grace', '0']);
      const fresh = { id: client.id, secret: rotated.clientSecret };
      await onEveryServerWithin(servers, 'the new secret accepted', async (base) => (await clientToken(base, fresh)).status === 200);
      await onEveryServerWithin(servers, 'the old secret refused', async (base) => (await clientToken(base, client)).status === 401);
    });

    it('clients disable: refused on both within a second, with the client tokens it holds; enable brings back no old token', { timeout: 60_000 }, async () => {
      const { s, a, servers, client, tokens } = await twoServers();
      const bearer = (await clientToken(a, client)).token as string;
      expect(await tokensStatus(a, bearer, tokens.refreshToken as string)).toBe(200);
      await cli(s, ['clients', 'disable', client.id]);
      await onEveryServerWithin(servers, 'the client refused', async (base) => (await clientToken(base, client)).status === 401);
      await onEveryServerWithin(servers, 'its client token refused', async (base) => (await tokensStatus(base, bearer, tokens.refreshToken as string)) === 401);
      await cli(s, ['clients', 'enable', client.id]);
      await onEveryServerWithin(servers, 'the client accepted again', async (base) => (await clientToken(base, client)).status === 200);
      // Nothing the disable ended comes back: the old client token, the customer's tokens.
      for (const base of servers) {
        expect(await tokensStatus(base, (await clientToken(base, client)).token as string, tokens.refreshToken as string)).toBe(400);
        expect(await tokensStatus(base, bearer, tokens.refreshToken as string)).toBe(401);
        expect(await profileStatus(base, tokens.accessToken)).toBe(401);
      }
    });

    it('customers lock: every token of the customer refused on both within a second; unlock revives none', { timeout: 60_000 }, async () => {
      const { s, servers, client, tokens } = await twoServers();
      const locked = await cli<{ ended: { tokenSessions: number } }>(s, ['customers', 'lock', MOBILE]);
      expect(locked.ended.tokenSessions).toBe(1);
      await onEveryServerWithin(servers, 'the access token refused', async (base) => (await profileStatus(base, tokens.accessToken)) === 401);
      await onEveryServerWithin(servers, 'the refresh token refused', async (base) => (await refresh(base, client, tokens.refreshToken as string)).status === 400);
      await onEveryServerWithin(servers, 'the access token inactive', async (base) => !(await introspect(base, client, tokens.accessToken)));
      await cli(s, ['customers', 'unlock', MOBILE]);
      for (const base of servers) {
        expect(await profileStatus(base, tokens.accessToken)).toBe(401);
        expect((await refresh(base, client, tokens.refreshToken as string)).status).toBe(400);
      }
    });

    it('keys rotate --now: both sign with the new key within a second; keys revoke: the old key’s tokens refused on both', { timeout: 60_000 }, async () => {
      const { s, a, servers, client, tokens } = await twoServers();
      const oldBearer = (await clientToken(a, client)).token as string;
      const oldKid = decodeProtectedHeader(oldBearer).kid;
      const rotated = await cli<{ kid: string }>(s, ['keys', 'rotate', '--now']);
      expect(rotated.kid).not.toBe(oldKid);
      await onEveryServerWithin(servers, 'signing with the new key', async (base) => decodeProtectedHeader((await clientToken(base, client)).token as string).kid === rotated.kid);
      // The old key still verifies what it signed until it is revoked.
      for (const base of servers) expect(await tokensStatus(base, oldBearer, tokens.refreshToken as string)).not.toBe(401);

      await cli(s, ['keys', 'revoke', oldKid as string]);
      await onEveryServerWithin(servers, 'the old key out of the JWKS', async (base) => {
        const jwks = (await (await fetch(new URL('/.well-known/jwks.json', base))).json()) as { keys: Array<{ kid: string }> };
        return !jwks.keys.some((k) => k.kid === oldKid);
      });
      await onEveryServerWithin(servers, "the old key's client token refused", async (base) => (await tokensStatus(base, oldBearer, tokens.refreshToken as string)) === 401);
    });

    it('10 simultaneous refreshes over both servers, at /token and at POST /tokens: every returned access token is accepted on both', { timeout: 60_000 }, async () => {
      // The longest reuse interval, so that a slow machine still sends all 20 within it.
      const { servers, client, tokens } = await twoServers({ CONNECT_REFRESH_REUSE_SECONDS: '60' });
      const bearers = await Promise.all(servers.map(async (base) => (await clientToken(base, client)).token as string));
      const refreshToken = tokens.refreshToken as string;
      const viaGrant = await Promise.all(Array.from({ length: 10 }, (_, i) => refresh(servers[i % 2] as string, client, refreshToken)));
      const viaTokens = await Promise.all(Array.from({ length: 10 }, (_, i) => refreshAtTokens(servers[i % 2] as string, bearers[i % 2] as string, refreshToken)));
      const returned = [...viaGrant.map((r) => r.accessToken), ...viaTokens.map((r) => r.accessToken)];
      expect([...viaGrant, ...viaTokens].map((r) => r.status)).toEqual(returned.map(() => 200));
      // Within the reuse interval of the refresh that minted it: one token for all.
      expect(new Set(returned).size).toBe(1);
      for (const base of servers) {
        for (const token of returned) {
          expect(await profileStatus(base, token as string)).toBe(200);
          expect(await introspect(base, client, token as string)).toBe(true);
        }
        // The access token from before the refreshes is retired.
        expect(await profileStatus(base, tokens.accessToken)).toBe(401);
      }
    });
  });
}

suite('sqlite');
if (postgresAdminUrl) suite('postgres');
else noticePostgresSkipped('two servers on one PostgreSQL database');

/**
 * A FAPI 2.0 client (`clients create --profile fapi2 --jwks FILE`) against
 * two server processes on one PostgreSQL database: an assertion or a proof
 * accepted by one is refused by the other (the replay store), and a DPoP
 * nonce one issued is accepted by the other (docs/operator-guide.md, "The
 * replay store"; docs/resource-servers.md, "DPoP-bound tokens").
 */
describe.skipIf(!postgresAdminUrl)('FAPI 2.0 on two servers on one PostgreSQL database', () => {
  const ISSUER = 'http://connect.test';

  it('a replayed assertion jti and a replayed proof jti are refused on the other server; a nonce of one is accepted by the other', { timeout: 60_000 }, async () => {
    const s = await setting('postgres');
    await cli(s, ['migrate']);
    const signing = await generateKeyPair('ES256');
    const kid = 'fapi-key-1';
    const jwksFile = join(s.cwd, 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(signing.publicKey)), kid, alg: 'ES256' }] }));
    const created = await cli<{ clientId: string }>(s, ['clients', 'create', '--name', 'Fapi', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials', '--profile', 'fapi2', '--jwks', jwksFile]);
    const clientId = created.clientId;
    const dpop = await generateKeyPair('ES256');
    const dpopJwk = await exportJWK(dpop.publicKey);

    const now = () => Math.floor(Date.now() / 1000);
    const assertion = () =>
      new SignJWT({ iss: clientId, sub: clientId, aud: ISSUER, jti: randomUUID(), iat: now(), exp: now() + 60 }).setProtectedHeader({ alg: 'ES256', kid }).sign(signing.privateKey);
    const proof = (nonce?: string) =>
      new SignJWT({ jti: randomUUID(), htm: 'POST', htu: `${ISSUER}/token`, iat: now(), ...(nonce === undefined ? {} : { nonce }) })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: dpopJwk })
        .sign(dpop.privateKey);
    const token = async (base: string, clientAssertion: string, dpopProof: string) => {
      const res = await fetch(new URL('/token', base), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: dpopProof },
        body: form({ grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: clientAssertion }),
      });
      const body = (await res.json()) as { error?: string; token_type?: string };
      return { status: res.status, error: body.error, tokenType: body.token_type, nonce: res.headers.get('dpop-nonce') ?? undefined };
    };

    const [a, b] = await Promise.all([serve(s), serve(s)]);
    const asked = await token(a, await assertion(), await proof());
    expect(asked).toMatchObject({ status: 400, error: 'use_dpop_nonce' });
    // A's nonce at B.
    const usedAssertion = await assertion();
    const usedProof = await proof(asked.nonce);
    expect(await token(b, usedAssertion, usedProof)).toMatchObject({ status: 200, tokenType: 'DPoP' });
    // B's assertion and B's proof, each again at A with a new other half.
    expect(await token(a, usedAssertion, await proof(asked.nonce))).toMatchObject({ status: 401, error: 'invalid_client' });
    expect(await token(a, await assertion(), usedProof)).toMatchObject({ status: 400, error: 'invalid_dpop_proof' });
  });
});
