import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { basicAuth, form } from '../helpers/build.js';
import { attribute, csrfToken, formAction } from '../http/customer-flow.js';

/**
 * A `connect-auth` command beside a busy server on the same SQLite file: the
 * server (a real `connect-auth serve` process) logs customers in over HTTP,
 * as a browser does, while 100 write commands run as separate processes.
 * Every command must succeed and every login too (docs/operator-guide.md).
 */

const BIN = fileURLToPath(new URL('../../bin/connect-auth.js', import.meta.url));
const BUILT_CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const REDIRECT_URI = 'https://shop.example/callback';
const PIN = '2468';
/** Logins per customer: under the sandbox budget of one-time PINs per mobile. */
const LOGINS_PER_CUSTOMER = 4;

const dataDir = mkdtempSync(join(tmpdir(), 'connect-beside-'));
const env = { CONNECT_DATA_DIR: dataDir, CONNECT_ENVIRONMENT: 'sandbox' };

beforeAll(() => {
  if (!existsSync(BUILT_CLI)) throw new Error('connect-auth is not built: run `npm run build` first (the root `npm test` does)');
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Runs `connect-auth ...args` as its own process; resolves with its exit status and output. */
function runProcess(args: readonly string[], extraEnv: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dataDir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => void (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Starts `connect-auth serve` on the data folder; resolves with its address once it listens. Killed when the test ends. */
async function serve(): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: dataDir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env, PORT: '0', CONNECT_TRUST_PROXY: 'true', CONNECT_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exited = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => void (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  void closed.then(() => (exited = true));
  onTestFinished(async () => {
    if (!exited) {
      child.kill('SIGKILL');
      await closed;
    }
  });
  const deadline = performance.now() + 15_000;
  for (;;) {
    const address = /"msg":"Connect is listening"/.test(stdout) ? /"address":"(http:\/\/[^"]+)"/.exec(stdout)?.[1] : undefined;
    if (address) return address;
    if (exited) throw new Error(`connect-auth serve exited before listening; stderr: ${stderr}`);
    if (performance.now() > deadline) throw new Error(`connect-auth serve did not listen within 15 s; stdout: ${stdout}`);
    await delay(25);
  }
}

/** A browser with JavaScript off, over real HTTP: a cookie jar, redirects not followed, one client address. */
class HttpBrowser {
  readonly #cookies = new Map<string, string>();

  constructor(
    readonly base: string,
    readonly forwardedFor: string,
  ) {}

  async request(method: 'GET' | 'POST', path: string, body?: Record<string, string>) {
    const headers: Record<string, string> = { 'x-forwarded-for': this.forwardedFor };
    const cookie = [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (cookie) headers.cookie = cookie;
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(new URL(path, this.base), {
      method,
      headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(20_000),
      ...(body ? { body: form(body) } : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      const expired = value === '' || attributes.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
    return { status: res.status, location: res.headers.get('location') ?? '', body: await res.text() };
  }

  /** Submits the page's form with its `csrf_token`, `fields` and the button that goes on (not cancel, not resend). */
  submit(page: string, fields: Record<string, string>) {
    const button = (page.match(/<button\b[^>]*>/g) ?? []).find((tag) => {
      const value = attribute(tag, 'value');
      return attribute(tag, 'name') !== undefined && value !== 'cancel' && value !== 'resend';
    });
    const pressed = button ? { [attribute(button, 'name') as string]: attribute(button, 'value') ?? '' } : {};
    return this.request('POST', formAction(page), { csrf_token: csrfToken(page), ...fields, ...pressed });
  }
}

/**
 * One customer login, start to end: `/authorize`, mobile + PIN, the one-time
 * PIN from the sandbox outbox, the 303 back with a code, which the client
 * then exchanges at `/token`. Throws, saying where, when any step fails.
 */
async function logIn(base: string, address: string, client: { id: string; secret: string }, mobile: string): Promise<void> {
  const browser = new HttpBrowser(base, address);
  const step = (name: string, res: { status: number; location: string; body: string }, status: number) => {
    if (res.status !== status) throw new Error(`${name}: ${res.status} instead of ${status}: ${res.body.slice(0, 300)}`);
  };
  const query = new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: REDIRECT_URI, state: address });
  const started = await browser.request('GET', `/authorize?${query}`);
  step('authorize', started, 303);
  const loginPage = await browser.request('GET', started.location);
  step('login page', loginPage, 200);
  const credentials = await browser.submit(loginPage.body, { mobile, pin: PIN });
  step('login', credentials, 303);
  const otpPage = await browser.request('GET', credentials.location);
  step('one-time PIN page', otpPage, 200);
  const messages = await browser.request('GET', `/sandbox/messages?to=${encodeURIComponent(mobile)}`);
  step('sandbox messages', messages, 200);
  const [newest] = (JSON.parse(messages.body) as { messages: Array<{ body: string }> }).messages;
  const otp = /\b(\d{6})\b/.exec(newest?.body ?? '')?.[1];
  if (!otp) throw new Error(`no one-time PIN for ${mobile}`);
  const verified = await browser.submit(otpPage.body, { otp });
  step('one-time PIN', verified, 303);
  const back = new URL(verified.location);
  if (`${back.origin}${back.pathname}` !== REDIRECT_URI || back.searchParams.get('state') !== address) {
    throw new Error(`redirected to ${back.origin}${back.pathname} with state ${back.searchParams.get('state')}`);
  }
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code: ${verified.location}`);
  const token = await fetch(new URL('/token', base), {
    method: 'POST',
    headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }),
    signal: AbortSignal.timeout(20_000),
  });
  if (token.status !== 200) throw new Error(`token: ${token.status}: ${await token.text()}`);
}

/** The n-th test mobile number (Philippine mobile range). */
function mobileNumber(n: number): string {
  return `+63917${String(n).padStart(7, '0')}`;
}

describe('connect-auth beside a running server on SQLite', () => {
  it('100 write commands all succeed while the server logs customers in, and every login succeeds', { timeout: 90_000 }, async () => {
    // The client the logins go through, and the first customers, before the server starts.
    let created = '';
    expect(
      await runCli(['clients', 'create', '--name', 'Shop', '--redirect-uri', REDIRECT_URI, '--json'], { env, stdout: (text) => void (created += text) }),
    ).toBe(0);
    const { clientId, clientSecret } = JSON.parse(created) as { clientId: string; clientSecret: string };
    const client = { id: clientId, secret: clientSecret };
    const customers: Array<{ mobile: string; logins: number }> = [];
    for (let n = 1; n <= 4; n++) {
      expect(await runCli(['customers', 'create', '--mobile', mobileNumber(n), '--pin', PIN], { env, stdout: () => {} })).toBe(0);
      customers.push({ mobile: mobileNumber(n), logins: 0 });
    }

    const base = await serve();

    // Logins one after another until the commands are done, each from its own client address.
    let commandsDone = false;
    let loginsDuringCommands = 0;
    const failures: string[] = [];
    const logInUntilDone = async () => {
      for (let n = 1; !commandsDone; n++) {
        const customer = customers.filter((c) => c.logins < LOGINS_PER_CUSTOMER).sort((a, b) => a.logins - b.logins)[0];
        if (!customer) {
          failures.push('every customer has used up its one-time PINs');
          return;
        }
        customer.logins++;
        try {
          await logIn(base, `10.0.${n >> 8}.${n & 0xff}`, client, customer.mobile);
          if (!commandsDone) loginsDuringCommands++;
        } catch (error) {
          failures.push(`${customer.mobile}: ${(error as Error).message}`);
        }
      }
    };
    const logins = logInUntilDone();

    // 100 write commands as separate processes, in batches of 10 at once.
    const results: Array<{ args: string; code: number | null; stderr: string }> = [];
    try {
      for (let batch = 0; batch < 10; batch++) {
        const runs = Array.from({ length: 10 }, (_, i) => {
          const n = batch * 10 + i;
          const args =
            n % 2 === 0
              ? ['customers', 'create', '--mobile', mobileNumber(100 + n), '--pin', PIN, '--name', `Customer ${n}`]
              : ['clients', 'create', '--name', `Shop ${n}`, '--redirect-uri', `https://shop${n}.example/callback`];
          return runProcess(args).then(({ code, stderr }) => {
            results.push({ args: args.join(' '), code, stderr });
            // A customer the command created joins the logins.
            if (code === 0 && args[0] === 'customers') customers.push({ mobile: mobileNumber(100 + n), logins: 0 });
          });
        });
        await Promise.all(runs);
      }
    } finally {
      commandsDone = true;
      await logins;
    }

    expect(results.filter((r) => r.code !== 0)).toEqual([]);
    expect(results).toHaveLength(100);
    expect(failures).toEqual([]);
    expect(loginsDuringCommands).toBeGreaterThanOrEqual(10);

    // Everything the commands wrote is there.
    let listed = '';
    expect(await runCli(['customers', 'list', '--json'], { env, stdout: (text) => void (listed += text) })).toBe(0);
    expect(JSON.parse(listed)).toHaveLength(4 + 50);
    listed = '';
    expect(await runCli(['clients', 'list', '--json'], { env, stdout: (text) => void (listed += text) })).toBe(0);
    expect(JSON.parse(listed)).toHaveLength(1 + 50);
  });
});
