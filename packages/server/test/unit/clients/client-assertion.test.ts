import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateClient, type ClientAuthDeps, type ClientAuthInput } from '../../../src/core/clients/client-authenticate.js';
import { JWT_BEARER_ASSERTION_TYPE } from '../../../src/core/clients/client-assertion.js';
import { createClientJwksUriFetcher, type ClientJwksUriFetcher } from '../../../src/core/clients/client-jwks-uri.js';
import { clientJwksProblem } from '../../../src/core/clients/client-keys.js';
import { NO_SECRET_HASH } from '../../../src/core/clients/manage-clients.js';
import { ClientSecretHasher } from '../../../src/core/clients/client-secret.js';
import type { Client } from '../../../src/core/clients/client.js';
import { fixedClock, type FixedClock } from '../../../src/core/clock.js';
import { InvalidClient, InvalidRequest } from '../../../src/core/errors.js';
import type { ReplayKind } from '../../../src/core/replay/replay-store.js';
import { clientRecord } from '../../helpers/client-record.js';

const ISSUER = 'https://auth.example/auth';
const T0 = 1_800_000_000;
const ID = 'cid_sandbox_acme';
const OTHER = 'cid_sandbox_other';
const hasher = new ClientSecretHasher(new Uint8Array(32).fill(7));
const SECRET = 'csk_sandbox_right';

type Pair = Awaited<ReturnType<typeof generateKeyPair>>;
let es: Pair;
let ps: Pair;
let ed: Pair;
let rs: Pair;
let otherKey: Pair;
let esJwk: JWK;

async function pub(pair: Pair, kid: string, alg: string): Promise<JWK> {
  return { ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' };
}

beforeAll(async () => {
  [es, ps, ed, rs, otherKey] = await Promise.all([
    generateKeyPair('ES256'),
    generateKeyPair('PS256'),
    generateKeyPair('EdDSA'),
    generateKeyPair('RS256'),
    generateKeyPair('ES256'),
  ]);
  esJwk = await pub(es, 'es-1', 'ES256');
});

/** An in-memory replay store with the port's rule: the first use of a hash until it expires. */
function memoryReplay() {
  const used = new Map<string, number>();
  return {
    used,
    async useJtiOnce(kind: ReplayKind, hash: string, expiresAt: number, now: number) {
      const key = `${kind}:${hash}`;
      const until = used.get(key);
      if (until !== undefined && until > now) return false;
      used.set(key, expiresAt);
      return true;
    },
  };
}

interface Setup {
  clock: FixedClock;
  deps: ClientAuthDeps;
  replay: ReturnType<typeof memoryReplay>;
}

async function setup(clients: Client[], jwksUri?: ClientJwksUriFetcher, clock = fixedClock(T0)): Promise<Setup> {
  const replay = memoryReplay();
  return {
    clock,
    replay,
    deps: {
      environment: 'sandbox',
      clock,
      secrets: hasher,
      findClient: async (id) => clients.find((c) => c.id === id),
      assertions: {
        issuer: ISSUER,
        usedJtis: replay,
        jwksUri: jwksUri ?? createClientJwksUriFetcher({ clock, allowHttp: true }),
      },
    },
  };
}

async function sign(claims: JWTPayload, options: { key?: Pair['privateKey'] | Uint8Array; alg?: string; kid?: string } = {}): Promise<string> {
  const jwt = new SignJWT({ iss: ID, sub: ID, aud: ISSUER, iat: T0, exp: T0 + 60, jti: crypto.randomUUID(), ...claims });
  jwt.setProtectedHeader({ alg: options.alg ?? 'ES256', kid: options.kid ?? 'es-1' });
  return jwt.sign(options.key ?? es.privateKey);
}

const withAssertion = (assertion: string, extra: Partial<ClientAuthInput> = {}): ClientAuthInput => ({
  clientAssertionType: JWT_BEARER_ASSERTION_TYPE,
  clientAssertion: assertion,
  ...extra,
});

const keyed = (overrides: Partial<Client> = {}) => clientRecord({ id: ID, secretHash: hasher.hash(SECRET), jwks: { keys: [esJwk] }, ...overrides });

/** An unsigned JWT (`alg: none`). */
function unsigned(claims: JWTPayload): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none' })}.${part(claims)}.`;
}

describe('private_key_jwt', () => {
  it('accepts an assertion signed by a registered ES256, PS256 or EdDSA key, once', async () => {
    const keys = [esJwk, await pub(ps, 'ps-1', 'PS256'), await pub(ed, 'ed-1', 'EdDSA')];
    const { deps } = await setup([keyed({ jwks: { keys } })]);
    for (const [key, alg, kid] of [[es, 'ES256', 'es-1'], [ps, 'PS256', 'ps-1'], [ed, 'EdDSA', 'ed-1']] as const) {
      await expect(authenticateClient(withAssertion(await sign({}, { key: key.privateKey, alg, kid })), deps)).resolves.toMatchObject({ id: ID });
    }
  });

  it('accepts a matching client_id in the body, and aud as the token endpoint URL or in an array for a standard client', async () => {
    const { deps } = await setup([keyed()]);
    await expect(authenticateClient(withAssertion(await sign({}), { clientId: ID }), deps)).resolves.toMatchObject({ id: ID });
    await expect(authenticateClient(withAssertion(await sign({ aud: `${ISSUER}/token` })), deps)).resolves.toMatchObject({ id: ID });
    await expect(authenticateClient(withAssertion(await sign({ aud: ['https://elsewhere.example', ISSUER] })), deps)).resolves.toMatchObject({ id: ID });
  });

  it('accepts exp 300 s after iat, and iat and nbf up to 60 s ahead of the clock', async () => {
    const { deps } = await setup([keyed()]);
    await expect(authenticateClient(withAssertion(await sign({ iat: T0, exp: T0 + 300 })), deps)).resolves.toBeDefined();
    await expect(authenticateClient(withAssertion(await sign({ iat: T0 + 60, nbf: T0 + 60, exp: T0 + 120 })), deps)).resolves.toBeDefined();
    await expect(authenticateClient(withAssertion(await sign({ iat: T0 - 100, exp: T0 - 50 })), deps)).resolves.toBeDefined(); // within the skew
  });

  type Case = [string, () => Promise<ClientAuthInput>, string | RegExp, Partial<Client>?];
  const refused: Case[] = [
    ['wrong aud', async () => withAssertion(await sign({ aud: 'https://other.example' })), 'client_assertion aud must be the issuer identifier (or the token endpoint URL)'],
    ['no aud', async () => withAssertion(await sign({ aud: undefined })), 'client_assertion aud must be the issuer identifier (or the token endpoint URL)'],
    ['missing sub', async () => withAssertion(await sign({ sub: undefined })), 'client_assertion iss and sub must both be the client ID'],
    ['iss other than sub', async () => withAssertion(await sign({ iss: OTHER })), 'client_assertion iss and sub must both be the client ID'],
    ['expired (beyond the skew)', async () => withAssertion(await sign({ iat: T0 - 200, exp: T0 - 61 })), 'client_assertion has expired'],
    ['no exp', async () => withAssertion(await sign({ exp: undefined })), 'client_assertion exp is required'],
    ['exp too far after iat', async () => withAssertion(await sign({ exp: T0 + 301 })), 'client_assertion lives too long: exp must be at most 300 seconds after iat'],
    ['exp too far ahead, no iat', async () => withAssertion(await sign({ iat: undefined, exp: T0 + 3600 })), /lives too long/],
    ['iat in the future beyond the skew', async () => withAssertion(await sign({ iat: T0 + 61, exp: T0 + 120 })), 'client_assertion iat is in the future'],
    ['nbf in the future beyond the skew', async () => withAssertion(await sign({ nbf: T0 + 61 })), 'client_assertion is not valid yet (nbf)'],
    ['no jti', async () => withAssertion(await sign({ jti: undefined })), 'client_assertion jti is required'],
    ['HS256 with the client ID as the key', async () => withAssertion(await sign({}, { alg: 'HS256', key: new TextEncoder().encode(ID) })), 'client_assertion must be signed with ES256, PS256 or EdDSA'],
    ['alg none', async () => withAssertion(unsigned({ iss: ID, sub: ID, aud: ISSUER, exp: T0 + 60, jti: 'x' })), 'client_assertion must be signed with ES256, PS256 or EdDSA'],
    ['RS256', async () => withAssertion(await sign({}, { alg: 'RS256', key: rs.privateKey, kid: 'rs-1' })), 'client_assertion must be signed with ES256, PS256 or EdDSA'],
    ['an unknown kid', async () => withAssertion(await sign({}, { kid: 'nope' })), 'client_assertion is not signed by a key registered for this client'],
    ['the key of another client', async () => withAssertion(await sign({}, { key: otherKey.privateKey })), 'client_assertion is not signed by a key registered for this client'],
    ['a client without keys', async () => withAssertion(await sign({})), 'client_assertion is not signed by a key registered for this client', { jwks: null }],
    // A registered key WebCrypto cannot import (stored before registration checked it): a DOMException, never a 500.
    ['a registered key whose x and y are no point on P-256', async () => withAssertion(await sign({})), 'client_assertion is not signed by a key registered for this client', { jwks: { keys: [{ ...esJwk, x: 'AAAA', y: 'BBBB' }] } }],
    ['a registered key without alg whose x and y are no point on P-256', async () => withAssertion(await sign({}, { kid: 'bad' })), 'client_assertion is not signed by a key registered for this client', { jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'BBBB', kid: 'bad' }] } }],
    ['an unknown client', async () => withAssertion(await sign({ iss: 'cid_sandbox_nobody', sub: 'cid_sandbox_nobody' })), 'client_assertion is not signed by a key registered for this client'],
    ['a disabled client', async () => withAssertion(await sign({})), 'client is disabled', { status: 'disabled' }],
    ['not a JWT', async () => withAssertion('not.a.jwt'), 'client_assertion is not a valid signed JWT'],
    ['another assertion type', async () => ({ clientAssertionType: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer', clientAssertion: await sign({}) }), /client_assertion_type is not supported/],
    ['client_id other than sub', async () => withAssertion(await sign({}), { clientId: OTHER }), 'client_id does not match the sub of client_assertion'],
    ['a fapi2 client: aud as the token endpoint', async () => withAssertion(await sign({ aud: `${ISSUER}/token` })), 'client_assertion aud must be the issuer identifier, as a single string', { profile: 'fapi2' }],
    ['a fapi2 client: aud in an array', async () => withAssertion(await sign({ aud: [ISSUER] })), 'client_assertion aud must be the issuer identifier, as a single string', { profile: 'fapi2' }],
    ['a fapi2 client with its secret (post)', async () => ({ clientId: ID, clientSecret: SECRET }), 'this client authenticates only with private_key_jwt', { profile: 'fapi2' }],
    ['a fapi2 client with its secret (Basic)', async () => ({ authorization: `Basic ${Buffer.from(`${ID}:${SECRET}`).toString('base64')}` }), 'this client authenticates only with private_key_jwt', { profile: 'fapi2' }],
  ];
  it.each(refused)('refuses %s with invalid_client', async (_name, input, description, overrides) => {
    const { deps } = await setup([keyed(overrides), clientRecord({ id: OTHER, jwks: { keys: [await pub(otherKey, 'es-1', 'ES256')] } })]);
    const error = await authenticateClient(await input(), deps).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidClient);
    expect((error as InvalidClient).description).toEqual(typeof description === 'string' ? description : expect.stringMatching(description));
    expect((error as InvalidClient).status).toBe(401);
  });

  it('a fapi2 client authenticates with its assertion (aud the issuer as a string)', async () => {
    const { deps } = await setup([keyed({ profile: 'fapi2' })]);
    await expect(authenticateClient(withAssertion(await sign({})), deps)).resolves.toMatchObject({ id: ID, profile: 'fapi2' });
  });

  it('a client switched back from fapi2 (NO_SECRET_HASH) has no secret that verifies, not even an empty one', async () => {
    const { deps } = await setup([keyed({ secretHash: NO_SECRET_HASH })]);
    for (const secret of [SECRET, '', 'x']) {
      await expect(authenticateClient({ clientId: ID, clientSecret: secret }, deps)).rejects.toMatchObject({ description: 'client authentication failed' });
    }
    await expect(authenticateClient({ authorization: `Basic ${Buffer.from(`${ID}:`).toString('base64')}` }, deps)).rejects.toBeInstanceOf(InvalidClient);
  });

  it('a standard client with keys may still use its secret', async () => {
    const { deps } = await setup([keyed()]);
    await expect(authenticateClient({ clientId: ID, clientSecret: SECRET }, deps)).resolves.toMatchObject({ id: ID });
  });

  it('refuses a replayed jti, and records it until exp plus the skew', async () => {
    const { deps, replay, clock } = await setup([keyed()]);
    const assertion = await sign({ exp: T0 + 60 });
    await authenticateClient(withAssertion(assertion), deps);
    await expect(authenticateClient(withAssertion(assertion), deps)).rejects.toMatchObject({ description: 'client_assertion was used already: each jti is accepted once' });
    expect([...replay.used.values()]).toEqual([T0 + 120]);
    // The same jti from another client is that client's own.
    clock.advance(0);
    expect(replay.used.size).toBe(1);
  });

  it('refuses assertions mixed with a secret or Basic, or without their pair, as invalid_request', async () => {
    const { deps } = await setup([keyed()]);
    const assertion = await sign({});
    for (const input of [
      withAssertion(assertion, { clientSecret: SECRET, clientId: ID }),
      withAssertion(assertion, { authorization: `Basic ${Buffer.from(`${ID}:${SECRET}`).toString('base64')}` }),
      { clientAssertion: assertion },
      { clientAssertionType: JWT_BEARER_ASSERTION_TYPE },
    ]) {
      await expect(authenticateClient(input, deps)).rejects.toBeInstanceOf(InvalidRequest);
    }
  });
});

describe('private_key_jwt with a jwks_uri (a real HTTP server)', () => {
  let server: Server;
  let base: string;
  let answer: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits += 1;
      answer(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const serve = (keys: JWK[], headers: Record<string, string> = {}) => {
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ keys }));
  };

  async function uriSetup(options: { timeoutMs?: number; maxBytes?: number } = {}) {
    const clock = fixedClock(T0);
    const fetcher = createClientJwksUriFetcher({ clock, allowHttp: true, ...options });
    hits = 0;
    return setup([keyed({ jwks: null, jwksUri: `${base}/jwks` })], fetcher, clock);
  }

  it('fetches the keys, caches them for their max-age, and fetches again after it', async () => {
    serve([esJwk], { 'cache-control': 'public, max-age=120' });
    const { deps, clock } = await uriSetup();
    await expect(authenticateClient(withAssertion(await sign({})), deps)).resolves.toMatchObject({ id: ID });
    await authenticateClient(withAssertion(await sign({})), deps);
    expect(hits).toBe(1);
    clock.advance(119);
    await authenticateClient(withAssertion(await sign({ iat: T0 + 119, exp: T0 + 150 })), deps);
    expect(hits).toBe(1);
    clock.advance(1);
    await authenticateClient(withAssertion(await sign({ iat: T0 + 120, exp: T0 + 150 })), deps);
    expect(hits).toBe(2);
  });

  it('fetches again for an unknown kid (a key the client just added), at most once per 30 s', async () => {
    serve([esJwk], { 'cache-control': 'max-age=3600' });
    const { deps, clock } = await uriSetup();
    await authenticateClient(withAssertion(await sign({})), deps);
    expect(hits).toBe(1);
    // An unknown kid within 30 s of the fetch: no new fetch, refused.
    await expect(authenticateClient(withAssertion(await sign({}, { key: ps.privateKey, alg: 'PS256', kid: 'ps-1' })), deps)).rejects.toMatchObject({
      description: 'client_assertion is not signed by a key registered for this client',
    });
    expect(hits).toBe(1);
    serve([esJwk, await pub(ps, 'ps-1', 'PS256')], { 'cache-control': 'max-age=3600' });
    clock.advance(30);
    const withNewKey = () => sign({ iat: T0 + 30, exp: T0 + 90 }, { key: ps.privateKey, alg: 'PS256', kid: 'ps-1' });
    await expect(authenticateClient(withAssertion(await withNewKey()), deps)).resolves.toMatchObject({ id: ID });
    expect(hits).toBe(2);
    // A flood of unknown kids makes no further fetch.
    for (let i = 0; i < 20; i += 1) {
      await expect(authenticateClient(withAssertion(await sign({ iat: T0 + 30, exp: T0 + 90 }, { kid: `made-up-${i}` })), deps)).rejects.toBeInstanceOf(InvalidClient);
    }
    expect(hits).toBe(2);
  });

  it('a jwks_uri serving a key WebCrypto cannot import gives invalid_client, never a 500', async () => {
    serve([{ ...esJwk, x: 'AAAA', y: 'BBBB' }]);
    const { deps } = await uriSetup();
    await expect(authenticateClient(withAssertion(await sign({})), deps)).rejects.toMatchObject({
      error: 'invalid_client',
      description: 'client_assertion is not signed by a key registered for this client',
    });
  });

  const failing: Array<[string, () => void, { timeoutMs?: number; maxBytes?: number }]> = [
    ['answers 500', () => (answer = (_req, res) => res.writeHead(500).end('oops')), {}],
    ['does not answer in time', () => (answer = () => {}), { timeoutMs: 200 }],
    ['sends more than the cap', () => (answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [esJwk], pad: 'x'.repeat(5000) }))), { maxBytes: 4096 }],
    ['sends more than the cap, chunked', () => (answer = (_req, res) => { res.writeHead(200); res.write(`{"keys":[],"pad":"${'x'.repeat(3000)}`); res.end(`${'x'.repeat(3000)}"}`); }), { maxBytes: 4096 }],
    ['sends no JWK Set', () => (answer = (_req, res) => res.writeHead(200).end('[1,2]')), {}],
    ['redirects', () => (answer = (_req, res) => res.writeHead(302, { location: `${base}/elsewhere` }).end()), {}],
  ];
  it.each(failing)('a jwks_uri that %s gives invalid_client, and is not fetched again within 30 s', async (_name, arrange, options) => {
    arrange();
    const { deps } = await uriSetup(options);
    for (let i = 0; i < 3; i += 1) {
      await expect(authenticateClient(withAssertion(await sign({})), deps)).rejects.toMatchObject({
        error: 'invalid_client',
        description: 'the keys of this client could not be fetched from its jwks_uri; try again later',
      });
    }
    expect(hits).toBe(1);
  });
});

describe('clientJwksProblem (registration)', () => {
  it('accepts public ES256, PS256 and EdDSA keys with distinct kids', async () => {
    expect(clientJwksProblem({ keys: [esJwk, await pub(ps, 'ps-1', 'PS256'), await pub(ed, 'ed-1', 'EdDSA')] })).toBeUndefined();
    const { kid: _kid, alg: _alg, use: _use, ...bare } = esJwk;
    expect(clientJwksProblem({ keys: [bare] })).toBeUndefined();
  });
  const refused: Array<[string, () => Promise<unknown>, RegExp]> = [
    ['a private key (d)', async () => ({ keys: [{ ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey)), kid: 'k' }] }), /private key material \("d"\)/],
    ['a symmetric key', async () => ({ keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'k' }] }), /symmetric/],
    ['an RS256 alg', async () => ({ keys: [{ ...(await exportJWK(rs.publicKey)), alg: 'RS256', kid: 'k' }] }), /"alg" must be one of ES256, PS256, EdDSA/],
    ['an EC key with PS256', async () => ({ keys: [{ ...esJwk, alg: 'PS256' }] }), /EC key verifies ES256 only/],
    ['a P-384 key', async () => ({ keys: [{ ...(await exportJWK((await generateKeyPair('ES384')).publicKey)), kid: 'k' }] }), /P-256/],
    ['two keys with one kid', async () => ({ keys: [esJwk, { ...(await pub(ps, 'es-1', 'PS256')) }] }), /used by another key/],
    ['two keys, one without a kid', async () => ({ keys: [esJwk, { ...(await exportJWK(ps.publicKey)) }] }), /no "kid"/],
    ['no keys', async () => ({ keys: [] }), /non-empty/],
    ['not an object', async () => [esJwk], /JSON object/],
    ['use enc', async () => ({ keys: [{ ...esJwk, use: 'enc' }] }), /"use" must be "sig"/],
    ['an EC key whose x and y are no point on P-256', async () => ({ keys: [{ ...esJwk, x: 'AAAA', y: 'BBBB' }] }), /not a usable EC public key: "x" and "y" are not a point on P-256/],
    ['an Ed25519 key with a short x', async () => ({ keys: [{ ...(await pub(ed, 'ed-1', 'EdDSA')), x: 'AAAA' }] }), /not a usable OKP public key/],
  ];
  it.each(refused)('refuses %s', async (_name, jwks, message) => {
    expect(clientJwksProblem(await jwks())).toMatch(message);
  });
});
