import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type RunningServer } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from '../../../packages/client/test/support/browser-session.js';

/*
 * The whole consumer of the SDK's README, run as it stands there: its code
 * block is written to a file beside this package and started with node,
 * against a sandbox Connect whose demo client is registered with the
 * consumer's redirect URI. A customer (JavaScript off) follows the link it
 * gives, logs in, and comes back to a page that called an API with their token.
 */

const here = dirname(fileURLToPath(import.meta.url));
const README = join(here, '../../../packages/client/README.md');

/** The code block after the README's "minimal consumer" marker. */
async function readmeConsumer(): Promise<string> {
  const text = await readFile(README, 'utf8');
  const block = /<!-- minimal consumer:[^>]*-->\n```js\n([\s\S]*?)\n```/.exec(text)?.[1];
  if (!block) throw new Error('packages/client/README.md has no minimal consumer block');
  return block;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("the README's whole consumer", () => {
  let dataDir: string | undefined;
  let file: string | undefined;
  let connect: RunningServer | undefined;
  let consumer: ChildProcess | undefined;
  let consumerUrl = '';
  let output = '';

  beforeAll(async () => {
    const code = await readmeConsumer();
    file = join(here, `../.readme-consumer-${process.pid}.mjs`);
    await writeFile(file, code);
    const port = await freePort();
    consumerUrl = `http://127.0.0.1:${port}`;
    dataDir = await mkdtemp(join(tmpdir(), 'connect-readme-consumer-'));
    connect = await startServer({
      env: { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent' },
      seedDemo: true,
      demoRedirectUri: `${consumerUrl}/callback`,
      print: () => {},
    });
    const demo = connect.demo;
    if (!demo) throw new Error('the demo data was not seeded');
    consumer = spawn(process.execPath, [file], {
      env: { PATH: process.env.PATH, CONNECT_AUTH_URL: connect.urls.authUrl, CONNECT_CLIENT_ID: demo.clientId, CONNECT_CLIENT_SECRET: demo.clientSecret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    consumer.stdout?.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    consumer.stderr?.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    for (const deadline = Date.now() + 15_000; ; ) {
      const up = await fetch(consumerUrl, { method: 'HEAD', redirect: 'manual' }).then(
        () => true,
        () => false,
      );
      if (up) break;
      if (consumer.exitCode !== null || Date.now() > deadline) throw new Error(`the README consumer did not listen: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, 40_000);

  afterAll(async () => {
    consumer?.kill();
    await connect?.close();
    if (file) await rm(file, { force: true });
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('is shorter than 30 lines', async () => {
    expect((await readmeConsumer()).split('\n').length).toBeLessThan(30);
  });

  it('links a customer through the hosted login and calls an API with their token, then again without a login', async () => {
    const demo = connect?.demo;
    if (!connect || !demo) throw new Error('set-up failed');
    const first = await fetch(consumerUrl, { redirect: 'manual' });
    expect(first.status).toBe(303);
    const authorize = new URL(first.headers.get('location') ?? '');
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${connect.urls.authUrl}/authorize`);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');

    const callback = await new BrowserSession(connect.urls.authUrl).authorize(authorize.href, demo.customer);
    expect(callback.startsWith(`${consumerUrl}/callback?`)).toBe(true);
    const linked = await fetch(callback, { redirect: 'manual' });
    expect({ status: linked.status, output }).toEqual({ status: 200, output: '' });
    expect(await linked.json()).toMatchObject({ profileId: demo.customer.profileId, clientId: demo.clientId });

    const again = await fetch(consumerUrl, { redirect: 'manual' });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ profileId: demo.customer.profileId });
  });

  it('refuses a callback it did not start, and keeps the linked tokens', async () => {
    const forged = await fetch(`${consumerUrl}/callback?code=abc&state=forged&iss=${encodeURIComponent(connect?.urls.authUrl ?? '')}`, { redirect: 'manual' });
    expect(forged.status).toBe(400);
    const after = await fetch(consumerUrl, { redirect: 'manual' });
    expect(after.status).toBe(200);
  });
});
