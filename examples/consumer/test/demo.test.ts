import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';

/**
 * `npm run demo` (demo.mjs, built code): each listener takes its port from
 * its own variable, PORT (Connect), SHOP_PORT and API_PORT, and says which
 * it uses; two of them on one port are refused before anything listens.
 */

const DEMO = fileURLToPath(new URL('../demo.mjs', import.meta.url));

/** Ports nothing listens on, all different. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    }),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  return ports;
}

function runDemo(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'connect-demo-'));
  const child = spawn(process.execPath, [DEMO], {
    cwd: dataDir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', CONNECT_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => void (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await closed;
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { child, closed, stdout: () => stdout, stderr: () => stderr };
}

describe('npm run demo: ports', { timeout: 60_000 }, () => {
  it('takes PORT, SHOP_PORT and API_PORT from the environment, says which it uses, and serves the shop there', async () => {
    const [connect, shop, api] = (await freePorts(3)) as [number, number, number];
    const demo = runDemo({ PORT: String(connect), SHOP_PORT: String(shop), API_PORT: String(api) });
    const deadline = Date.now() + 45_000;
    while (!demo.stdout().includes('Ctrl-C stops both.')) {
      if (demo.child.exitCode !== null) throw new Error(`demo exited: ${demo.stderr()}`);
      if (Date.now() > deadline) throw new Error(`demo did not start: ${demo.stdout()} ${demo.stderr()}`);
      await delay(50);
    }
    const out = demo.stdout();
    expect(out).toContain(`Ports: Connect ${connect} (PORT), demo shop ${shop} (SHOP_PORT), platform API ${api} (API_PORT)`);
    expect(out).toContain(`Connect sandbox: http://localhost:${connect}`);
    expect(out).toContain(`Demo shop:       http://127.0.0.1:${shop}`);
    expect(out).toContain(`Platform API:    http://127.0.0.1:${api}/customer/profile`);
    expect((await fetch(`http://127.0.0.1:${shop}/`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${connect}/healthz`)).status).toBe(200);
    demo.child.kill('SIGTERM');
    expect(await demo.closed).toBe(0);
  });

  it("PORT set to the shop's default port: refused at once, naming both variables, instead of EADDRINUSE", async () => {
    const demo = runDemo({ PORT: '4000' });
    expect(await demo.closed).toBe(1);
    expect(demo.stderr()).toBe('PORT and SHOP_PORT are both 4000: Connect and the demo shop need a port each; set one of them to another port\n');
  });

  it('a port that is not a number is refused, naming its variable', async () => {
    const demo = runDemo({ SHOP_PORT: 'shop' });
    expect(await demo.closed).toBe(1);
    expect(demo.stderr()).toBe('SHOP_PORT must be a port number from 1 to 65535, not "shop"\n');
  });
});
