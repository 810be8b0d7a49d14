import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixedClock } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from '../../../packages/client/test/support/browser-session.js';
import { freePort, readmeBlock, readmeClientsCreate, runNode, waitForListening, type NodeProcess } from '../../../packages/client/test/support/readme.js';
import { startConnect, type TestConnect } from '../../../packages/client/test/support/test-connect.js';

/*
 * The whole consumer of the SDK's README, run as it stands there: its code
 * block is written to a file beside this package and started with node,
 * against a sandbox Connect where its client is registered with the README's
 * own `clients create` line. A customer (JavaScript off) follows the link it
 * gives, logs in, and comes back to a page that called an API with their
 * token. Connect's clock is the test's, so the hours after the login pass
 * without waiting.
 */

const here = dirname(fileURLToPath(import.meta.url));
const ACCESS_TOKEN_TTL = 3600; // CONNECT_ACCESS_TOKEN_TTL's default
const clock = fixedClock(Math.floor(Date.now() / 1000));

describe("the README's whole consumer", () => {
  let connect: TestConnect | undefined;
  let file: string | undefined;
  let consumer: NodeProcess | undefined;
  let consumerUrl = '';
  let clientId = '';

  beforeAll(async () => {
    file = join(here, `../.readme-consumer-${process.pid}.mjs`);
    await writeFile(file, await readmeBlock('minimal consumer'));
    const port = await freePort();
    consumerUrl = `http://127.0.0.1:${port}`;
    connect = await startConnect({ clock });
    const client = (await connect.cli(await readmeClientsCreate(`${consumerUrl}/callback`))) as { clientId: string; clientSecret: string; grants: string[] };
    clientId = client.clientId;
    consumer = runNode(file, here, { CONNECT_AUTH_URL: connect.authUrl, CONNECT_CLIENT_ID: client.clientId, CONNECT_CLIENT_SECRET: client.clientSecret, PORT: String(port) });
    await waitForListening(consumerUrl, consumer);
  }, 40_000);

  afterAll(async () => {
    consumer?.child.kill();
    await connect?.close();
    if (file) await rm(file, { force: true });
  });

  it('is shorter than 30 lines', async () => {
    expect((await readmeBlock('minimal consumer')).split('\n').length).toBeLessThan(30);
  });

  it('registers its client with the refresh grant', async () => {
    const args = await readmeClientsCreate('http://127.0.0.1:4000/callback');
    expect(args[args.indexOf('--grants') + 1]?.split(',')).toContain('refresh_token');
  });

  it('links a customer through the hosted login and calls an API with their token, then again without a login', async () => {
    if (!connect || !consumer) throw new Error('set-up failed');
    const first = await fetch(consumerUrl, { redirect: 'manual' });
    expect(first.status).toBe(303);
    const authorize = new URL(first.headers.get('location') ?? '');
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${connect.authUrl}/authorize`);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');

    const callback = await new BrowserSession(connect.authUrl).authorize(authorize.href, connect.demo.customer);
    expect(callback.startsWith(`${consumerUrl}/callback?`)).toBe(true);
    const linked = await fetch(callback, { redirect: 'manual' });
    expect({ status: linked.status, output: consumer.output() }).toEqual({ status: 200, output: '' });
    expect(await linked.json()).toMatchObject({ profileId: connect.demo.customer.profileId, clientId });

    const again = await fetch(consumerUrl, { redirect: 'manual' });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ profileId: connect.demo.customer.profileId });
  });

  it('refuses a callback it did not start, and keeps the linked tokens', async () => {
    const forged = await fetch(`${consumerUrl}/callback?code=abc&state=forged&iss=${encodeURIComponent(connect?.authUrl ?? '')}`, { redirect: 'manual' });
    expect(forged.status).toBe(400);
    const after = await fetch(consumerUrl, { redirect: 'manual' });
    expect(after.status).toBe(200);
  });

  it("keeps the customer linked past the access token's expiry: it refreshes instead of sending them to log in", async () => {
    // The consumer's own clock stays at the login, so its token still looks
    // valid to it: Connect refuses it with 401, and customers.fetch refreshes
    // and sends the call again. A 303 here would be a new login.
    for (let hour = 1; hour <= 3; hour += 1) {
      clock.advance(ACCESS_TOKEN_TTL + 1);
      const later = await fetch(consumerUrl, { redirect: 'manual' });
      expect({ hour, status: later.status, output: consumer?.output() }).toEqual({ hour, status: 200, output: '' });
      expect(await later.json()).toMatchObject({ profileId: connect?.demo.customer.profileId, clientId });
    }
  });
});

/*
 * The README's FAPI 2.0 variant of the same consumer: its keys made by the
 * README's own block, its client registered by the README's `--profile
 * fapi2 --jwks` line, and the consumer run with the private JWK instead of
 * a secret. The customer is sent to a pushed request's short URL, and the
 * API call carries a DPoP-bound token with its proof.
 */
describe("the README's whole consumer as a FAPI 2.0 client", () => {
  let connect: TestConnect | undefined;
  let keysDir: string | undefined;
  let files: string[] = [];
  let consumer: NodeProcess | undefined;
  let consumerUrl = '';
  let clientId = '';

  beforeAll(async () => {
    keysDir = await mkdtemp(join(tmpdir(), 'connect-readme-fapi-'));
    const keys = join(here, `../.readme-fapi-keys-${process.pid}.mjs`);
    const file = join(here, `../.readme-fapi-consumer-${process.pid}.mjs`);
    files = [keys, file];
    await writeFile(keys, await readmeBlock('fapi keys'));
    await writeFile(file, await readmeBlock('minimal fapi consumer'));
    const made = runNode(keys, keysDir, {});
    expect({ code: await made.exited, output: made.output() }).toEqual({ code: 0, output: '' });
    const port = await freePort();
    consumerUrl = `http://127.0.0.1:${port}`;
    connect = await startConnect();
    const args = await readmeClientsCreate(`${consumerUrl}/callback`, 'fapi consumer client');
    args[args.indexOf('--jwks') + 1] = join(keysDir, 'shop-jwks.json');
    const client = (await connect.cli(args)) as { clientId: string; clientSecret?: string };
    expect(client.clientSecret).toBeUndefined();
    clientId = client.clientId;
    const privateJwk = await readFile(join(keysDir, 'shop-private-jwk.json'), 'utf8');
    consumer = runNode(file, here, { CONNECT_AUTH_URL: connect.authUrl, CONNECT_CLIENT_ID: clientId, CONNECT_PRIVATE_JWK: privateJwk, PORT: String(port) });
    await waitForListening(consumerUrl, consumer);
  }, 40_000);

  afterAll(async () => {
    consumer?.child.kill();
    await connect?.close();
    await Promise.all(files.map((f) => rm(f, { force: true })));
    if (keysDir) await rm(keysDir, { recursive: true, force: true });
  });

  it('is the plain one with two lines changed: the private key and dpop instead of the secret', async () => {
    const plain = (await readmeBlock('minimal consumer')).split('\n');
    const fapi = (await readmeBlock('minimal fapi consumer')).split('\n');
    expect(fapi.length).toBe(plain.length);
    const changed = fapi.filter((line, i) => line !== plain[i]);
    expect(changed).toHaveLength(2);
    expect(changed.join('\n')).toMatch(/privateKey: JSON\.parse\(privateJwk\), dpop: true/);
  });

  it('links a customer through a pushed request and calls the API with a DPoP-bound token', async () => {
    if (!connect || !consumer) throw new Error('set-up failed');
    const first = await fetch(consumerUrl, { redirect: 'manual' });
    expect(first.status).toBe(303);
    const authorize = new URL(first.headers.get('location') ?? '');
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${connect.authUrl}/authorize`);
    expect([...authorize.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);

    const callback = await new BrowserSession(connect.authUrl).authorize(authorize.href, connect.demo.customer);
    const linked = await fetch(callback, { redirect: 'manual' });
    expect({ status: linked.status, output: consumer.output() }).toEqual({ status: 200, output: '' });
    expect(await linked.json()).toMatchObject({ profileId: connect.demo.customer.profileId, clientId });

    const again = await fetch(consumerUrl, { redirect: 'manual' });
    expect(again.status).toBe(200);
  });
});
