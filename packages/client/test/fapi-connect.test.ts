import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { fixedClock } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClientCredentialsProvider,
  createTokenVerifier,
  CustomerTokenManager,
  dpopChallenge,
  discover,
  InvalidToken,
  MemoryTokenStore,
  type ConnectOptions,
  type TokenVerifier,
} from '../src/index.js';
import { BrowserSession } from './support/browser-session.js';
import { recordingFetch } from './support/recording-fetch.js';
import { startConnect, type TestConnect } from './support/test-connect.js';

/*
 * A FAPI 2.0 client (CONTRACT.md section 13) built on the SDK alone,
 * against a real sandbox Connect: registered with `clients create
 * --profile fapi2 --jwks`, it gets DPoP-bound client tokens, links a
 * customer through a pushed authorization request and the hosted pages,
 * refreshes at /token and at POST /tokens, and calls an API that checks
 * every request with the SDK's verifier (introspection + the DPoP proof).
 */

const REDIRECT_URI = 'http://127.0.0.1:4000/callback';
const clock = fixedClock(Math.floor(Date.now() / 1000));
let connect: TestConnect;
let dir: string;
let fapi: ConnectOptions;
let api: { url: string; server: Server; verifier: TokenVerifier };
let browser: BrowserSession;

beforeAll(async () => {
  connect = await startConnect({ clock });
  dir = await mkdtemp(join(tmpdir(), 'connect-sdk-fapi-'));
  const signing = await generateKeyPair('ES256');
  const jwks = join(dir, 'jwks.json');
  await writeFile(jwks, JSON.stringify({ keys: [{ ...(await exportJWK(signing.publicKey)), kid: 'shop-1', alg: 'ES256', use: 'sig' }] }));
  const created = (await connect.cli([
    'clients', 'create', '--name', 'FAPI Shop', '--redirect-uri', REDIRECT_URI,
    '--grants', 'client_credentials,authorization_code,refresh_token', '--profile', 'fapi2', '--jwks', jwks,
  ])) as { clientId: string; clientSecret?: string };
  expect(created.clientSecret).toBeUndefined();
  // discover() says whether Connect requires pushed requests; spread, it sets the SDK's default.
  const metadata = await discover(connect.authUrl);
  fapi = { ...metadata, baseUrl: connect.baseUrl, clientId: created.clientId, privateKey: signing.privateKey, keyId: 'shop-1', dpop: { key: await generateKeyPair('ES256') }, clock };

  // The platform's API: every request checked by verifyRequest, bearer or DPoP.
  const resourceServer = await connect.createResourceServer('FAPI API');
  const verifier = createTokenVerifier({ authUrl: connect.authUrl, ...resourceServer, clock, cacheSeconds: 0 });
  const server = createServer((request, response) => {
    const send = (status: number, body: object, headers: Record<string, string> = {}) =>
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    verifier
      .verifyRequest({ authorization: request.headers.authorization, dpop: request.headers.dpop, method: request.method ?? 'GET', url: `${address}${request.url}` })
      .then((token) => send(200, { kind: token.kind, clientId: token.clientId, jkt: token.jkt, ...(token.kind === 'customer' ? { profileId: token.profileId } : {}) }))
      .catch((error: unknown) =>
        error instanceof InvalidToken
          ? send(401, { error: error.error, error_description: error.description }, { 'www-authenticate': dpopChallenge(error) })
          : send(503, { error: 'temporarily_unavailable' }),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, verifier };
  browser = new BrowserSession(connect.authUrl);
}, 60_000);

afterAll(async () => {
  api?.server.closeAllConnections();
  await new Promise<void>((resolve) => (api ? api.server.close(() => resolve()) : resolve()));
  await connect?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a FAPI 2.0 client on the SDK against Connect', () => {
  it('gets a DPoP-bound client token with private_key_jwt and calls an API with it', async () => {
    const recorder = recordingFetch();
    const provider = new ClientCredentialsProvider({ ...fapi, fetch: recorder.fetch });
    const token = await provider.getToken();
    expect(token.tokenType).toBe('DPoP');
    // Connect requires a nonce at /token for a fapi2 client: the first proof is answered use_dpop_nonce, the second carries it.
    expect(recorder.count('/token')).toBe(2);
    const nonces = recorder.requests.map((r) => JSON.parse(Buffer.from(r.headers.get('dpop')?.split('.')[1] ?? '', 'base64url').toString()).nonce);
    expect(nonces).toEqual([undefined, expect.any(String)]);
    const answer = await provider.fetch(`${api.url}/payments`, { method: 'POST', body: '{}' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ kind: 'client', clientId: fapi.clientId, jkt: expect.any(String) });
    // The same token without its proof is worth nothing.
    const stolen = await fetch(`${api.url}/payments`, { headers: { authorization: `Bearer ${token.accessToken}` } });
    expect(stolen.status).toBe(401);
  });

  it('links a customer through a pushed authorization request, refreshes at /token and at POST /tokens, and calls APIs with proofs', async () => {
    const store = new MemoryTokenStore();
    const customers = new CustomerTokenManager({ ...fapi, redirectUri: REDIRECT_URI, store });
    const pending = await customers.startAuthorization();
    const pushed = new URL(pending.url);
    expect([...pushed.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);

    const callback = await browser.authorize(pending.url, connect.demo.customer);
    const linked = await customers.completeAuthorization('alice', callback, pending);
    expect(linked.tokens.tokenType).toBe('DPoP');
    expect(linked.profileId).toBe(connect.demo.customer.profileId);

    const call = async (manager: CustomerTokenManager) => {
      const answer = await manager.fetch('alice', `${api.url}/accounts?page=1`);
      expect(answer.status).toBe(200);
      return (await answer.json()) as { kind: string; profileId: string; clientId: string };
    };
    expect(await call(customers)).toMatchObject({ kind: 'customer', profileId: connect.demo.customer.profileId, clientId: fapi.clientId });

    const atToken = await customers.refresh('alice');
    expect(atToken.tokenType).toBe('DPoP');
    expect(atToken.accessToken).not.toBe(linked.tokens.accessToken);
    expect(await call(customers)).toMatchObject({ profileId: connect.demo.customer.profileId });

    // Past CONNECT_REFRESH_REUSE_SECONDS (10), so the next refresh mints a new token.
    clock.advance(11);
    const viaTokens = new CustomerTokenManager({ ...fapi, redirectUri: REDIRECT_URI, store, refreshVia: 'tokens' });
    const atTokens = await viaTokens.refresh('alice');
    expect(atTokens.tokenType).toBe('DPoP');
    expect(atTokens.accessToken).not.toBe(atToken.accessToken);
    expect(await call(viaTokens)).toMatchObject({ profileId: connect.demo.customer.profileId });

    // Connect's own example endpoint takes the DPoP-bound token with its proof too.
    const profile = await viaTokens.fetch('alice', `${connect.baseUrl}/customer/profile`);
    expect(profile.status).toBe(200);

    await viaTokens.unlink('alice');
    expect(await store.get('alice')).toBeUndefined();
  }, 30_000);
});
