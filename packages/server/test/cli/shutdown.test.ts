import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { basicAuth, form } from '../helpers/build.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../helpers/postgres.js';
import { cliJson, HttpBrowser, requireBuiltCli, startServe, type ProcessSetting, type ServeProcess } from '../helpers/processes.js';
import { connectOutcome, RawConnection, rawRequest, refusesConnections } from '../helpers/raw-http.js';

/**
 * A `connect-auth serve` process told to stop loses no request it accepted
 * (docs/operator-guide.md, "Readiness and shutdown"): `/readyz` answers 503
 * at once, it goes on serving for `CONNECT_SHUTDOWN_DELAY`, and a request
 * already sent when the listener closes is answered, read or not; the
 * documented start command is the process that gets the signal.
 */

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const REDIRECT_URI = 'https://shop.example/callback';
/** The mobile of the `i`th customer (one each: a mobile's PIN attempts are counted). */
const mobile = (i: number) => `+6391700000${String(i + 10)}`;
const PIN = '3817';

beforeAll(requireBuiltCli);
noticePostgresSkipped('shutdown');

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'connect-shutdown-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A data folder and the configuration of every process; `DATABASE_URL` set for PostgreSQL. */
async function setting(engine: 'sqlite' | 'postgres'): Promise<ProcessSetting> {
  const dataDir = tempDir();
  const env: Record<string, string> = { CONNECT_DATA_DIR: dataDir, CONNECT_MASTER_KEY: randomBytes(32).toString('base64') };
  if (engine === 'postgres') {
    const database = await createTestDatabase();
    onTestFinished(() => database.drop());
    env.DATABASE_URL = database.url;
  }
  return { cwd: dataDir, env };
}

/** A client of the setting's database, with the grants a customer login needs. */
async function createClient(s: ProcessSetting): Promise<{ id: string; secret: string }> {
  await cliJson(s, ['migrate']);
  const created = await cliJson<{ clientId: string; clientSecret: string }>(s, [
    'clients', 'create', '--name', 'Shop', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials,authorization_code',
  ]);
  return { id: created.clientId, secret: created.clientSecret };
}

/** The text of a client-credentials token request to `base`. */
function tokenRequest(base: string, client: { id: string; secret: string }): string {
  return rawRequest(
    'POST',
    `${base}/token`,
    { Authorization: basicAuth(client.id, client.secret), 'Content-Type': 'application/x-www-form-urlencoded' },
    form({ grant_type: 'client_credentials' }),
  );
}

/** Sends `request` on a new connection and returns the response. */
async function onNewConnection(base: string, request: string) {
  const connection = await RawConnection.open(base);
  connection.write(request);
  return connection.response();
}

/** Waits for the process to end, at most `timeoutMs`. */
function exitWithin(server: ServeProcess, timeoutMs: number) {
  return Promise.race([
    server.exited,
    delay(timeoutMs).then(() => {
      throw new Error(`the server did not exit within ${timeoutMs} ms; stdout: ${server.stdout().slice(-2000)}`);
    }),
  ]);
}

/** Polls `/readyz` on new connections until it answers 503; returns how long that took. */
async function readyzTurns503(base: string, since: number, timeoutMs = 5000): Promise<number> {
  for (;;) {
    const answer = await onNewConnection(base, rawRequest('GET', `${base}/readyz`));
    if (answer.status === 503) {
      expect(JSON.parse(answer.body)).toMatchObject({ status: 'unavailable', failed: ['shutting_down'] });
      return performance.now() - since;
    }
    expect(answer.status).toBe(200);
    if (performance.now() - since > timeoutMs) throw new Error(`/readyz still 200 ${timeoutMs} ms after the signal`);
    await delay(10);
  }
}

function suite(engine: 'sqlite' | 'postgres') {
  describe.skipIf(engine === 'postgres' && !postgresAdminUrl)(`16 logins in flight at SIGTERM, on ${engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`, () => {
    it('every one is answered: on new connections still queued in the kernel, on keep-alive connections, and on connections accepted before the signal but sent only once the listener closed', { timeout: 90_000 }, async () => {
      const s = await setting(engine);
      const client = await createClient(s);
      for (let i = 0; i < 16; i++) await cliJson(s, ['customers', 'create', '--mobile', mobile(i), '--pin', PIN]);
      // The grace leaves 16 PIN checks (about 100 ms of CPU each) all the time a loaded machine needs.
      const server = await startServe(s, { CONNECT_SHUTDOWN_GRACE: '60' });
      const base = server.address;

      // 16 sign-ins at their login page, each in its own browser (cookies, address).
      const logins = await Promise.all(
        Array.from({ length: 16 }, async (_, i) => {
          const browser = new HttpBrowser(base, `10.0.1.${i + 1}`);
          const query = new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: REDIRECT_URI, state: `s${i}` });
          const started = await browser.request('GET', `/authorize?${query}`);
          expect(started.status).toBe(303);
          const page = await browser.request('GET', started.location);
          expect(page.status).toBe(200);
          const { path, body } = browser.formSubmission(page.body, { mobile: mobile(i), pin: PIN });
          return rawRequest('POST', `${base}${path}`, { ...browser.headers(), 'Content-Type': 'application/x-www-form-urlencoded' }, form(body));
        }),
      );
      // 5 keep-alive connections that have served a request, and 5 connections accepted with nothing sent yet.
      const keptAlive = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const connection = await RawConnection.open(base);
          connection.write(rawRequest('GET', `${base}/healthz`));
          expect((await connection.response()).status).toBe(200);
          return connection;
        }),
      );
      const silent = await Promise.all(Array.from({ length: 5 }, () => RawConnection.open(base)));
      await delay(200);

      // While the server is stopped (a busy event loop, taken to the extreme), 6 new connections
      // wait in the kernel's queue with their logins sent, the kept-alive ones send theirs, and
      // the signal comes: when it resumes, it reads the signal before any of these requests.
      server.signal('SIGSTOP');
      const queued = await Promise.all(Array.from({ length: 6 }, () => RawConnection.open(base)));
      queued.forEach((connection, i) => connection.write(logins[i] as string));
      keptAlive.forEach((connection, i) => connection.write(logins[6 + i] as string));
      await delay(200);
      server.signal('SIGTERM');
      server.signal('SIGCONT');
      // The silent ones send theirs only once the listener is closed.
      await refusesConnections(base, 10_000);
      silent.forEach((connection, i) => connection.write(logins[11 + i] as string));

      const connections = [...queued, ...keptAlive, ...silent];
      const answers = await Promise.allSettled(connections.map((connection) => connection.response(60_000)));
      const cut = answers.flatMap((answer, i) => (answer.status === 'rejected' ? [`login ${i}: ${String(answer.reason)}`] : []));
      expect(cut).toEqual([]);
      for (const answer of answers) {
        if (answer.status !== 'fulfilled') continue;
        expect(answer.value.status).toBe(303);
        expect(answer.value.headers).toMatch(/\r\nlocation: \/login\/otp/);
        expect(answer.value.headers).toContain('connection: close');
      }
      expect(await exitWithin(server, 60_000)).toEqual({ code: 0, signal: null });
    });
  });
}

suite('sqlite');
suite('postgres');

describe('a connection that sends nothing', () => {
  it('is closed about 2 seconds after the listener, so it does not hold the shutdown for the whole grace', { timeout: 60_000 }, async () => {
    const s = await setting('sqlite');
    await createClient(s);
    const server = await startServe(s, { CONNECT_SHUTDOWN_GRACE: '60' });
    const silent = await RawConnection.open(server.address);
    await delay(200);
    const signalled = performance.now();
    server.signal('SIGTERM');
    await refusesConnections(server.address, 10_000);
    await silent.closed;
    const closedAfter = performance.now() - signalled;
    expect(closedAfter).toBeGreaterThanOrEqual(1900);
    expect(closedAfter).toBeLessThan(15_000);
    expect(await exitWithin(server, 15_000)).toEqual({ code: 0, signal: null });
  });
});

describe('CONNECT_SHUTDOWN_DELAY', () => {
  it('after SIGTERM, /readyz answers 503 while new connections are still accepted and served; the listener closes once the delay is over', { timeout: 60_000 }, async () => {
    const s = await setting('sqlite');
    const client = await createClient(s);
    // Long enough that a loaded machine answers the requests below well within it.
    const delaySeconds = 6;
    const server = await startServe(s, { CONNECT_SHUTDOWN_DELAY: String(delaySeconds) });
    const base = server.address;
    expect((await onNewConnection(base, rawRequest('GET', `${base}/readyz`))).status).toBe(200);

    const signalled = performance.now();
    server.signal('SIGTERM');
    const notReadyAfter = await readyzTurns503(base, signalled);
    expect(notReadyAfter).toBeLessThan(delaySeconds * 1000);

    // Still serving, on new connections, each answer closing its connection.
    const token = await onNewConnection(base, tokenRequest(base, client));
    expect(token.status).toBe(200);
    expect(JSON.parse(token.body)).toMatchObject({ token_type: 'Bearer' });
    expect(token.headers).toContain('connection: close');
    const servedAt = performance.now() - signalled;
    expect(servedAt).toBeLessThan(delaySeconds * 1000);
    const readiness = await onNewConnection(base, rawRequest('GET', `${base}/readyz`));
    expect(readiness.status).toBe(503);
    expect(readiness.headers).toContain('connection: close');

    await refusesConnections(base, 10_000);
    const refusedAfter = performance.now() - signalled;
    // Not before the delay (timers may fire a millisecond early); generously bounded after it.
    expect(refusedAfter).toBeGreaterThanOrEqual(delaySeconds * 1000 - 50);
    expect(refusedAfter).toBeLessThan(delaySeconds * 1000 + 5000);
    expect(await exitWithin(server, 10_000)).toEqual({ code: 0, signal: null });
    const lines = server.stdout().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.find((line) => line.msg === 'shutting down')).toMatchObject({ signal: 'SIGTERM', delaySeconds, graceSeconds: 10 });
  });

  it('SIGINT skips it, and a SIGINT during it ends it', { timeout: 60_000 }, async () => {
    const s = await setting('sqlite');
    await createClient(s);
    // A delay far longer than the test's bounds: only skipping it passes.
    const env = { CONNECT_SHUTDOWN_DELAY: '120' };

    const interrupted = await startServe(s, env);
    const interruptedAt = performance.now();
    interrupted.signal('SIGINT');
    await refusesConnections(interrupted.address, 10_000);
    expect(await exitWithin(interrupted, 10_000)).toEqual({ code: 0, signal: null });
    expect(performance.now() - interruptedAt).toBeLessThan(15_000);

    const terminated = await startServe(s, env);
    const terminatedAt = performance.now();
    terminated.signal('SIGTERM');
    await readyzTurns503(terminated.address, terminatedAt);
    await delay(500);
    expect(await connectOutcome(terminated.address)).toBe('connected');
    expect((await onNewConnection(terminated.address, rawRequest('GET', `${terminated.address}/healthz`))).status).toBe(200);
    // A second SIGTERM changes nothing.
    terminated.signal('SIGTERM');
    await delay(300);
    expect(await connectOutcome(terminated.address)).toBe('connected');
    terminated.signal('SIGINT');
    await refusesConnections(terminated.address, 10_000);
    expect(await exitWithin(terminated, 10_000)).toEqual({ code: 0, signal: null });
    expect(performance.now() - terminatedAt).toBeLessThan(30_000);
  });
});

/** The line of a section's first `sh` block that starts the server, without its comment and optional flags. */
function documentedStartCommand(file: string, section: string): string {
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  const start = text.indexOf(`\n## ${section}\n`);
  if (start === -1) throw new Error(`${file} has no section "${section}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(start))?.[1] ?? '';
  const line = block.split('\n').find((candidate) => /connect-auth serve\b/.test(candidate));
  if (!line) throw new Error(`${file}, "${section}", shows no command that starts the server`);
  return line.replace(/\s+#.*$/, '').replace(/\s*\[--seed-demo\]/, '').trim();
}

describe('the documented start command', () => {
  it.each([
    ['docs/operator-guide.md', 'Running it'],
    ['README.md', 'Command line'],
  ])('%s (%s): SIGTERM to it stops the server gracefully: the request in flight answered, exit 0, the port freed', { timeout: 60_000 }, async (file, section) => {
    const command = documentedStartCommand(file, section);
    expect(command).toMatch(/connect-auth serve$/);
    // Run as a start script or a container's shell form runs it.
    const child = spawn('sh', ['-c', command], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', CONNECT_DATA_DIR: tempDir(), PORT: '0', CONNECT_SHUTDOWN_DELAY: '1', CONNECT_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => void (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
    let serverPid: number | undefined;
    onTestFinished(async () => {
      // Whatever the outcome, nothing the test started goes on running.
      for (const pid of [serverPid, child.pid]) {
        try {
          if (pid) process.kill(pid, 'SIGKILL');
        } catch {}
      }
      await exited;
    });

    const deadline = performance.now() + 30_000;
    let listening: Record<string, unknown> | undefined;
    while (!listening) {
      listening = stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((entry) => entry.msg === 'Connect is listening');
      if (performance.now() > deadline) throw new Error(`${command} did not listen within 30 s; stderr: ${stderr}`);
      if (!listening) await delay(25);
    }
    const base = listening.address as string;
    serverPid = Number(listening.pid);
    // The process the supervisor started is the server itself.
    expect(serverPid).toBe(child.pid);

    // A request in flight: its head half sent when the signal comes.
    const inFlight = await RawConnection.open(base);
    inFlight.write(`GET /healthz HTTP/1.1\r\nHost: ${new URL(base).host}\r\n`);
    await delay(100);
    child.kill('SIGTERM');
    await readyzTurns503(base, performance.now());
    inFlight.write('\r\n');
    const answer = await inFlight.response();
    expect(answer.status).toBe(200);
    expect(answer.headers).toContain('connection: close');

    expect(await Promise.race([exited, delay(20_000).then(() => 'still running')])).toEqual({ code: 0, signal: null });
    expect(await connectOutcome(base)).toBe('ECONNREFUSED');
    expect(() => process.kill(serverPid as number, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    expect(stdout).toMatch(/"msg":"shutting down"/);
  });
});
