import { spawn, spawnSync, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startServer } from '../../src/http/server.js';
import { basicAuth, form } from '../helpers/build.js';
import { createTestDatabase, postgresAdminUrl } from '../helpers/postgres.js';
import { RawConnection, refusesConnections } from '../helpers/raw-http.js';
import { startTcpProxy, throughProxy } from '../helpers/tcp-proxy.js';

const BIN = fileURLToPath(new URL('../../bin/connect-auth.js', import.meta.url));
const BUILT_CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const HAS_CURL = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;

const tempDirs: string[] = [];
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

beforeAll(() => {
  if (!existsSync(BUILT_CLI)) throw new Error('connect-auth is not built: run `npm run build` first (the root `npm test` does)');
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'connect-serve-'));
  tempDirs.push(dir);
  return dir;
}

/** A `connect-auth` process and everything it wrote so far. */
interface Spawned {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Set once the process exited and its output streams closed. */
  readonly exit: () => { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs `node bin/connect-auth.js ...args` with only the given variables (plus
 * PATH), in `cwd`, and kills it when the test ends if it is still running.
 */
function spawnCli(args: readonly string[], env: Record<string, string>, cwd: string): Spawned {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => void (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    });
  });
  onTestFinished(async () => {
    if (!exit) {
      child.kill('SIGKILL');
      await closed;
    }
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exit: () => exit, closed };
}

/** Waits until stdout matches `pattern`; fails fast when the process exits first. */
async function waitForStdout(spawned: Spawned, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(spawned.stdout());
    if (match) return match;
    const exit = spawned.exit();
    if (exit) throw new Error(`connect-auth exited (${exit.code ?? exit.signal}) before printing ${pattern}; stderr: ${spawned.stderr()}`);
    if (Date.now() > deadline) throw new Error(`connect-auth printed no ${pattern} within ${timeoutMs} ms; stdout: ${spawned.stdout()}`);
    await delay(25);
  }
}

/** Waits for the process to end, at most `timeoutMs`. */
async function waitForExit(spawned: Spawned, timeoutMs = 5000) {
  const timeout = delay(timeoutMs).then(() => {
    throw new Error(`connect-auth did not exit within ${timeoutMs} ms; stdout: ${spawned.stdout()}`);
  });
  return Promise.race([spawned.closed, timeout]);
}

/** What the seeded start printed. */
interface Banner {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly curlLine: string;
}

const CURL_LINE = /^ {2}(curl -s -u '([^':]+):([^']+)' -d grant_type=client_credentials (\S+)\/token)$/m;

/** Starts `serve --seed-demo` on `dataDir` and waits for the banner. */
async function serveSeeded(dataDir: string, extraEnv: Record<string, string> = {}): Promise<{ server: Spawned; banner: Banner }> {
  const server = spawnCli(['serve', '--seed-demo'], { CONNECT_DATA_DIR: dataDir, PORT: '0', CONNECT_LOG_LEVEL: 'info', ...extraEnv }, dataDir);
  const [, curlLine, curlId, curlSecret, curlUrl] = await waitForStdout(server, CURL_LINE);
  const out = server.stdout();
  const url = /Connect sandbox is running at (\S+)/.exec(out)?.[1];
  const clientId = /client ID:\s+(\S+)/.exec(out)?.[1];
  const clientSecret = /client secret:\s+(\S+)/.exec(out)?.[1];
  // localhost, not 127.0.0.1: browsers accept passkeys for localhost, never for an IP address.
  expect(url).toMatch(/^http:\/\/localhost:\d+$/);
  expect(url).not.toBe('http://localhost:0');
  expect(clientId).toMatch(/^cid_sandbox_/);
  expect(clientSecret).toMatch(/^csk_sandbox_/);
  // The curl line carries the same credentials and URL as the lines above it.
  expect([curlId, curlSecret, curlUrl]).toEqual([clientId, clientSecret, url]);
  return { server, banner: { url: url as string, clientId: clientId as string, clientSecret: clientSecret as string, curlLine: curlLine as string } };
}

/** Does what the printed curl line does: with curl itself when installed, else with fetch. */
async function runCurlLine(banner: Banner): Promise<Record<string, unknown>> {
  if (HAS_CURL) {
    const { stdout } = await promisify(execFile)('sh', ['-c', banner.curlLine], { timeout: 10_000 });
    return JSON.parse(stdout) as Record<string, unknown>;
  }
  const response = await fetch(`${banner.url}/token`, {
    method: 'POST',
    headers: { authorization: basicAuth(banner.clientId, banner.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ grant_type: 'client_credentials' }),
    signal: AbortSignal.timeout(10_000),
  });
  return (await response.json()) as Record<string, unknown>;
}

function requestToken(url: string, clientId: string, clientSecret: string): Promise<Response> {
  return fetch(`${url}/token`, {
    method: 'POST',
    headers: { authorization: basicAuth(clientId, clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ grant_type: 'client_credentials' }),
    signal: AbortSignal.timeout(10_000),
  });
}

/** The JSON log lines among stdout (the banner lines are not JSON). */
function logLines(stdout: string): Array<{ raw: string; entry: Record<string, unknown> }> {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((raw) => ({ raw, entry: JSON.parse(raw) as Record<string, unknown> }));
}

/** Stops the server with SIGTERM and expects a clean exit. */
async function stopCleanly(server: Spawned): Promise<void> {
  server.child.kill('SIGTERM');
  const exit = await waitForExit(server);
  expect(exit).toEqual({ code: 0, signal: null });
}

describe('connect-auth serve: SIGTERM', () => {
  it.skipIf(!postgresAdminUrl)(
    'a SIGTERM while it is still starting (its first lines out, the database not yet answering) is kept and stops it gracefully once started: exit 0, never killed by the signal',
    { timeout: 60_000 },
    async () => {
      const dataDir = tempDir();
      const database = await createTestDatabase();
      const target = new URL(database.url);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      try {
        // The database is silent from the start: start-up waits for it, after its first log line (a warning).
        proxy.silence();
        const server = spawnCli(
          ['serve', '--seed-demo'],
          {
            CONNECT_DATA_DIR: dataDir,
            PORT: '0',
            CONNECT_LOG_LEVEL: 'info',
            DATABASE_URL: throughProxy(database.url, proxy),
            CONNECT_DB_TIMEOUT_MS: '20000',
            CONNECT_NOT_A_SETTING: '1',
          },
          dataDir,
        );
        await waitForStdout(server, /CONNECT_NOT_A_SETTING/, 30_000);
        server.child.kill('SIGTERM');
        await delay(300);
        expect(server.exit()).toBeUndefined();
        await proxy.restore();
        const exit = await waitForExit(server, 30_000);
        expect(exit).toEqual({ code: 0, signal: null });
        expect(server.stdout()).toMatch(/"signal":"SIGTERM"[^\n]*shutting down/);
      } finally {
        await proxy.close();
        await database.drop();
      }
    },
  );

  it('readyz turns 503, new connections are refused, idle ones closed, every request in flight is answered in full, and it exits 0 within the grace', { timeout: 30_000 }, async () => {
    const dataDir = tempDir();
    const grace = 5;
    const { server, banner } = await serveSeeded(dataDir, { CONNECT_SHUTDOWN_GRACE: String(grace) });
    const host = new URL(banner.url).host;
    const tokenBody = form({ grant_type: 'client_credentials' });
    const tokenHead = (connection: string) =>
      `POST /token HTTP/1.1\r\nHost: ${host}\r\nConnection: ${connection}\r\nAuthorization: ${basicAuth(banner.clientId, banner.clientSecret)}\r\n` +
      `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${tokenBody.length}\r\n\r\n`;

    // Many connections, each served once (so the server accepted it) and then holding a token request half sent.
    const held = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const connection = await RawConnection.open(banner.url);
        connection.write(tokenHead('keep-alive') + tokenBody);
        expect((await connection.response()).status).toBe(200);
        connection.write(tokenHead('keep-alive') + tokenBody.slice(0, 5));
        return connection;
      }),
    );
    // One more holds a /readyz request half sent; one is idle between requests.
    const readiness = await RawConnection.open(banner.url);
    readiness.write(`GET /readyz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    expect((await readiness.response()).status).toBe(200);
    readiness.write(`GET /readyz HTTP/1.1\r\nHost: ${host}\r\n`);
    const idle = await RawConnection.open(banner.url);
    idle.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    expect((await idle.response()).status).toBe(200);
    // Lets the half-sent requests reach the server before the signal.
    await delay(200);

    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await refusesConnections(banner.url);
    // A second signal changes nothing.
    server.child.kill('SIGTERM');
    await Promise.race([idle.closed, delay(2000).then(() => Promise.reject(new Error('the idle keep-alive connection was not closed')))]);
    expect(server.exit()).toBeUndefined();

    readiness.write('\r\n');
    const ready = await readiness.response();
    expect(ready.status).toBe(503);
    expect(ready.headers).toContain('connection: close');
    expect(JSON.parse(ready.body)).toMatchObject({ status: 'unavailable', failed: ['shutting_down'] });

    for (const connection of held) connection.write(tokenBody.slice(5));
    const answers = await Promise.all(held.map((connection) => connection.response()));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.headers).toContain('connection: close');
      expect(JSON.parse(answer.body)).toMatchObject({ token_type: 'Bearer' });
    }
    await Promise.all(held.map((connection) => connection.closed));

    const exit = await waitForExit(server, grace * 1000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(grace * 1000);
  });

  it('a request still unfinished when CONNECT_SHUTDOWN_GRACE runs out does not keep the process: it exits 0 within the grace', { timeout: 30_000 }, async () => {
    const dataDir = tempDir();
    const { server, banner } = await serveSeeded(dataDir, { CONNECT_SHUTDOWN_GRACE: '2' });
    const stuck = await RawConnection.open(banner.url);
    stuck.write(`GET /healthz HTTP/1.1\r\nHost: ${new URL(banner.url).host}\r\n`);
    await delay(200);
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    const exit = await waitForExit(server, 3000);
    expect(exit).toEqual({ code: 0, signal: null });
    const took = Date.now() - signalled;
    expect(took).toBeGreaterThanOrEqual(1000);
    expect(took).toBeLessThan(2000);
    await stuck.closed;
  });

  it('CONNECT_SHUTDOWN_GRACE must be a whole number of seconds from 1 to 3600', { timeout: 40_000 }, async () => {
    for (const value of ['0', '3601', '1.5', 'ten', '-1']) {
      const dataDir = tempDir();
      const run = spawnCli(['serve'], { CONNECT_DATA_DIR: dataDir, PORT: '0', CONNECT_SHUTDOWN_GRACE: value }, dataDir);
      const exit = await waitForExit(run, 10_000);
      expect(exit.code).not.toBe(0);
      expect(run.stderr()).toContain('CONNECT_SHUTDOWN_GRACE');
    }
  });
});

describe('connect-auth serve --seed-demo', () => {
  it('prints demo credentials that get a verifiable token, keeps secrets out of the logs and stops on SIGTERM', { timeout: 30_000 }, async () => {
    const dataDir = tempDir();
    const { server, banner } = await serveSeeded(dataDir);

    const body = await runCurlLine(banner);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    const token = body.access_token as string;
    expect(token.split('.')).toHaveLength(3);

    const jwks = createRemoteJWKSet(new URL(`${banner.url}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer: banner.url,
      audience: banner.url,
      typ: 'at+jwt',
      algorithms: ['ES256'],
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    expect(payload).toMatchObject({ sub: banner.clientId, client_id: banner.clientId });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(3600);

    await stopCleanly(server);

    const logs = logLines(server.stdout());
    expect(logs.find(({ entry }) => entry.msg === 'Connect is listening')?.entry).toMatchObject({
      environment: 'sandbox',
      address: banner.url.replace('//localhost:', '//127.0.0.1:'),
      authUrl: banner.url,
      engine: 'sqlite',
    });
    // The token request was logged, so the checks below look at real request logs.
    expect(logs.some(({ entry }) => entry.path === '/token')).toBe(true);
    expect(logs.some(({ entry }) => entry.msg === 'shutting down')).toBe(true);
    for (const { raw } of logs) {
      expect(raw).not.toContain(banner.clientSecret);
      expect(raw).not.toContain(token);
    }
    expect(server.stdout()).not.toContain(token);
    expect(server.stderr()).not.toContain(banner.clientSecret);
    expect(server.stderr()).not.toContain(token);
  });

  it('a second seeded start on the same data prints the same client, secret and PIN; a saved configuration keeps working', { timeout: 30_000 }, async () => {
    const dataDir = tempDir();
    const first = await serveSeeded(dataDir);
    const firstToken = (await runCurlLine(first.banner)).access_token as string;
    await stopCleanly(first.server);

    expect(first.server.stdout()).toContain('\nDemo client created (its ID and secret stay the same for this data folder):\n');
    const second = await serveSeeded(dataDir);
    expect(second.server.stdout()).toContain('\nDemo client (its ID and secret stay the same for this data folder):\n');
    expect(second.banner.clientId).toBe(first.banner.clientId);
    expect(second.banner.clientSecret).toBe(first.banner.clientSecret);
    expect(/PIN:\s+(\d+)/.exec(second.server.stdout())?.[1]).toBe(/PIN:\s+(\d+)/.exec(first.server.stdout())?.[1]);

    const saved = await requestToken(second.banner.url, first.banner.clientId, first.banner.clientSecret);
    expect(saved.status).toBe(200);

    // Another data folder (another master key): other credentials.
    const elsewhere = await serveSeeded(tempDir());
    expect(elsewhere.banner.clientSecret).not.toBe(first.banner.clientSecret);
    await stopCleanly(elsewhere.server);

    // The signing key survived the restart: the first run's token still verifies.
    const jwks = (await (await fetch(`${second.banner.url}/.well-known/jwks.json`)).json()) as Parameters<typeof createLocalJWKSet>[0];
    await expect(jwtVerify(firstToken, createLocalJWKSet(jwks), { issuer: first.banner.url, typ: 'at+jwt' })).resolves.toBeDefined();

    await stopCleanly(second.server);
    for (const { raw } of logLines(second.server.stdout())) expect(raw).not.toContain(first.banner.clientSecret);
  });
});

describe("connect-auth serve: libuv's thread pool", () => {
  /** How many threads a seeded server runs once it has signed a token (the pool starts all its threads at its first use). */
  async function threadsOf(extraEnv: Record<string, string>): Promise<number> {
    const { server, banner } = await serveSeeded(tempDir(), extraEnv);
    expect((await requestToken(banner.url, banner.clientId, banner.clientSecret)).status).toBe(200);
    const threads = readdirSync(`/proc/${server.child.pid}/task`).length;
    server.child.kill('SIGTERM');
    await waitForExit(server);
    return threads;
  }

  it.skipIf(process.platform !== 'linux')(
    'has 2 threads unless UV_THREADPOOL_SIZE sets another number (docs/operator-guide.md, "Threads")',
    { timeout: 40_000 },
    async () => {
      const [byDefault, four, three] = [await threadsOf({}), await threadsOf({ UV_THREADPOOL_SIZE: '4' }), await threadsOf({ UV_THREADPOOL_SIZE: '3' })];
      expect(four - byDefault).toBe(2);
      expect(three - byDefault).toBe(1);
    },
  );
});

describe('connect-auth serve refuses to start', () => {
  const production = () => ({
    CONNECT_ENVIRONMENT: 'production',
    CONNECT_MASTER_KEY: randomBytes(32).toString('base64'),
    CONNECT_AUTH_URL: 'https://auth.connect.example',
    CONNECT_SMS_WEBHOOK_URL: 'https://sms.gateway.example/send',
    CONNECT_SMS_WEBHOOK_SECRET: 'webhook-secret',
    PORT: '0',
  });

  async function expectRefusal(args: readonly string[], env: Record<string, string>): Promise<string> {
    const dataDir = tempDir();
    const run = spawnCli(args, { CONNECT_DATA_DIR: dataDir, ...env }, dataDir);
    const exit = await waitForExit(run, 10_000);
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(run.stdout()).toBe('');
    expect(run.stderr()).toMatch(/^connect-auth: [^\n]+\n$/);
    // Nothing was set up: no database, no generated master key.
    expect(readdirSync(dataDir)).toEqual([]);
    return run.stderr();
  }

  it('--seed-demo in production, even with otherwise valid production settings', { timeout: 15_000 }, async () => {
    const line = await expectRefusal(['serve', '--seed-demo'], production());
    expect(line).toMatch(/sandbox/);
  });

  it('--seed-demo in production with another problem: both listed, the flag too', { timeout: 15_000 }, async () => {
    const dataDir = tempDir();
    const { CONNECT_MASTER_KEY: _unused, ...env } = production();
    const run = spawnCli(['serve', '--seed-demo'], { CONNECT_DATA_DIR: dataDir, ...env }, dataDir);
    const exit = await waitForExit(run, 10_000);
    expect(exit.code).toBe(1);
    expect(run.stdout()).toBe('');
    expect(run.stderr()).toBe(
      [
        'connect-auth: the configuration has 2 problems:',
        '  CONNECT_MASTER_KEY is required in production (32 random bytes, base64)',
        '  --seed-demo is for the sandbox only; production starts without demo data',
        '',
      ].join('\n'),
    );
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('bad configuration, with one line naming the variable', { timeout: 15_000 }, async () => {
    const line = await expectRefusal(['serve'], { PORT: '0', CONNECT_ACCESS_TOKEN_TTL: '0' });
    expect(line).toContain('CONNECT_ACCESS_TOKEN_TTL');
  });

  it('production with nothing else set, listing every variable it requires, one line each', { timeout: 15_000 }, async () => {
    const dataDir = tempDir();
    const run = spawnCli(['serve'], { CONNECT_DATA_DIR: dataDir, CONNECT_ENVIRONMENT: 'production', PORT: 'none' }, dataDir);
    const exit = await waitForExit(run, 10_000);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(run.stdout()).toBe('');
    expect(run.stderr()).toBe(
      [
        'connect-auth: the configuration has 4 problems:',
        '  PORT must be a whole number, not "none"',
        '  CONNECT_AUTH_URL is required in production (an https:// URL)',
        '  CONNECT_MASTER_KEY is required in production (32 random bytes, base64)',
        '  CONNECT_SMS_WEBHOOK_URL is required in production (one-time PINs go to the SMS gateway)',
        '',
      ].join('\n'),
    );
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('production without its master key', { timeout: 15_000 }, async () => {
    const { CONNECT_MASTER_KEY: _unused, ...env } = production();
    const line = await expectRefusal(['serve'], env);
    expect(line).toContain('CONNECT_MASTER_KEY');
  });
});

describe('startServer: public URLs', () => {
  /** Starts a seeded sandbox server in-process on a free port; closed when the test ends. */
  async function start(env: Record<string, string>) {
    const dataDir = tempDir();
    const logs: string[] = [];
    const server = await startServer({
      env: { CONNECT_DATA_DIR: dataDir, PORT: '0', ...env },
      seedDemo: true,
      print: () => {},
      logDestination: new Writable({
        write(chunk, _encoding, done) {
          logs.push(String(chunk));
          done();
        },
      }),
    });
    onTestFinished(() => server.close());
    return { server, logs };
  }

  /** The claims of a token the demo client gets from the running server. */
  async function demoTokenClaims(server: Awaited<ReturnType<typeof startServer>>) {
    const demo = server.demo;
    if (!demo) throw new Error('the server was not seeded');
    const response = await requestToken(server.address, demo.clientId, demo.clientSecret);
    expect(response.status).toBe(200);
    const { access_token: token } = (await response.json()) as { access_token: string };
    const jwks = (await (await fetch(`${server.address}/.well-known/jwks.json`)).json()) as Parameters<typeof createLocalJWKSet>[0];
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { typ: 'at+jwt', algorithms: ['ES256'] });
    return payload;
  }

  it('with PORT=0, the auth and base URLs are localhost on the port actually bound (passkeys need a host name), and both are logged', async () => {
    const { server, logs } = await start({});
    expect(server.address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.address).not.toMatch(/:0$/);
    const local = server.address.replace('//127.0.0.1:', '//localhost:');
    expect(server.urls).toEqual({ authUrl: local, baseUrl: local });
    expect(await demoTokenClaims(server)).toMatchObject({ iss: local, aud: local });
    const listening = logs.map((line) => JSON.parse(line) as Record<string, unknown>).find((entry) => entry.msg === 'Connect is listening');
    expect(listening).toMatchObject({ address: server.address, authUrl: local });
  });


  it('the base URL (the aud of client tokens) defaults to CONNECT_AUTH_URL', async () => {
    const { server } = await start({ CONNECT_AUTH_URL: 'https://auth.connect.example/' });
    expect(server.urls).toEqual({ authUrl: 'https://auth.connect.example', baseUrl: 'https://auth.connect.example' });
    expect(await demoTokenClaims(server)).toMatchObject({ iss: 'https://auth.connect.example', aud: 'https://auth.connect.example' });
  });

  it('CONNECT_BASE_URL is the aud when set', async () => {
    const { server } = await start({ CONNECT_AUTH_URL: 'https://auth.connect.example', CONNECT_BASE_URL: 'https://api.connect.example' });
    expect(server.urls).toEqual({ authUrl: 'https://auth.connect.example', baseUrl: 'https://api.connect.example' });
    expect(await demoTokenClaims(server)).toMatchObject({ iss: 'https://auth.connect.example', aud: 'https://api.connect.example' });
  });

  it('refuses --seed-demo in production before touching the data folder', async () => {
    const dataDir = tempDir();
    await expect(
      startServer({
        env: {
          CONNECT_DATA_DIR: dataDir,
          PORT: '0',
          CONNECT_ENVIRONMENT: 'production',
          CONNECT_MASTER_KEY: randomBytes(32).toString('base64'),
          CONNECT_AUTH_URL: 'https://auth.connect.example',
          CONNECT_SMS_WEBHOOK_URL: 'https://sms.gateway.example/send',
          CONNECT_SMS_WEBHOOK_SECRET: 'webhook-secret',
        },
        seedDemo: true,
        print: () => {},
      }),
    ).rejects.toThrow(/sandbox only/);
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
