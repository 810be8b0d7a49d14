import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { expect, onTestFinished } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { basicAuth, form } from './build.js';
import { createTestDatabase } from './postgres.js';
import { attribute, csrfToken, formAction } from './customer-flow.js';

/**
 * Real `connect-auth` processes for tests: a command, or `serve` on a port
 * of its own, and a customer login over real HTTP against one.
 */

const BIN = fileURLToPath(new URL('../../bin/connect-auth.js', import.meta.url));
const BUILT_CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** Throws unless `connect-auth` is built (the root `npm test` builds it first). */
export function requireBuiltCli(): void {
  if (!existsSync(BUILT_CLI)) throw new Error('connect-auth is not built: run `npm run build` first (the root `npm test` does)');
}

/** Where and with what configuration processes run. */
export interface ProcessSetting {
  readonly cwd: string;
  readonly env: Record<string, string>;
  /** The `connect-auth` that runs: this checkout's by default, another release's (test/helpers/previous-release.ts) when set. */
  readonly bin?: string;
}

/**
 * A fresh data folder and the configuration every process of one test
 * gets: the sandbox, one master key and one issuer for all (as behind a
 * load balancer), plus `env`; on PostgreSQL a database of its own in
 * `DATABASE_URL`. Both are removed when the test ends.
 */
export async function processSetting(engine: 'sqlite' | 'postgres', options: { prefix: string; env?: Record<string, string> }): Promise<ProcessSetting> {
  const dataDir = mkdtempSync(join(tmpdir(), options.prefix));
  onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    CONNECT_DATA_DIR: dataDir,
    CONNECT_ENVIRONMENT: 'sandbox',
    CONNECT_MASTER_KEY: randomBytes(32).toString('base64'),
    CONNECT_AUTH_URL: 'http://connect.test',
    ...options.env,
  };
  if (engine === 'postgres') {
    const database = await createTestDatabase();
    onTestFinished(() => database.drop());
    env.DATABASE_URL = database.url;
  }
  return { cwd: dataDir, env };
}

/** Runs a `connect-auth` command in-process with `--json` on the setting's configuration; its JSON output, or throws with its stderr. */
export async function cliJson<T>(s: ProcessSetting, args: readonly string[]): Promise<T> {
  let out = '';
  let err = '';
  const code = await runCli([...args, '--json'], { env: s.env, stdout: (t) => void (out += t), stderr: (t) => void (err += t) });
  if (code !== 0) throw new Error(`connect-auth ${args.join(' ')}: exit ${code}: ${err}`);
  return JSON.parse(out) as T;
}

/** Runs `connect-auth ...args` as its own process; resolves with its exit status and output. */
export function runProcess(setting: ProcessSetting, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [setting.bin ?? BIN, ...args], {
    cwd: setting.cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...setting.env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => void (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Starts `connect-auth serve` on the data folder; resolves with its address once it listens. Killed when the test ends. */
export async function serve(setting: ProcessSetting, extraEnv: Record<string, string> = {}): Promise<string> {
  return (await startServe(setting, extraEnv)).address;
}

/** A running `connect-auth serve`: its address, what it printed so far, and a way to stop it. */
export interface ServeProcess {
  readonly address: string;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** Sends the process a signal. */
  signal(name: NodeJS.Signals): void;
  /** Resolves when the process has exited and its output is closed. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Stops it with SIGTERM and waits for it to exit. */
  stop(): Promise<void>;
  /** Kills it with SIGKILL (`kill -9`: no shutdown at all, as in a crash) and waits for it to exit. */
  kill(): Promise<void>;
}

/** Starts `connect-auth serve ...args` on the data folder; resolves once it listens. Killed when the test ends. */
export async function startServe(setting: ProcessSetting, extraEnv: Record<string, string> = {}, args: readonly string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [setting.bin ?? BIN, 'serve', ...args], {
    cwd: setting.cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...setting.env, PORT: '0', CONNECT_TRUST_PROXY: 'true', CONNECT_LOG_LEVEL: 'info', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exited = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => void (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  void closed.then(() => (exited = true));
  onTestFinished(async () => {
    if (!exited) {
      child.kill('SIGKILL');
      await closed;
    }
  });
  const deadline = performance.now() + 30_000;
  for (;;) {
    const address = /"msg":"Connect is listening"/.test(stdout) ? /"address":"(http:\/\/[^"]+)"/.exec(stdout)?.[1] : undefined;
    if (address) {
      return {
        address,
        pid: child.pid as number,
        stdout: () => stdout,
        stderr: () => stderr,
        signal: (name) => void (exited || child.kill(name)),
        exited: closed,
        async stop() {
          if (!exited) child.kill('SIGTERM');
          await closed;
        },
        async kill() {
          if (!exited) child.kill('SIGKILL');
          await closed;
        },
      };
    }
    if (exited) throw new Error(`connect-auth serve exited before listening; stderr: ${stderr}`);
    if (performance.now() > deadline) throw new Error(`connect-auth serve did not listen within 30 s; stdout: ${stdout}`);
    await delay(25);
  }
}

/** A browser with JavaScript off, over real HTTP: a cookie jar, redirects not followed, one client address. */
export class HttpBrowser {
  readonly #cookies = new Map<string, string>();

  constructor(
    readonly base: string,
    readonly forwardedFor: string,
  ) {}

  /** The same browser (a copy of its cookies, the same address) talking to another instance, as behind a load balancer. */
  via(base: string): HttpBrowser {
    const other = new HttpBrowser(base, this.forwardedFor);
    for (const [name, value] of this.#cookies) other.#cookies.set(name, value);
    return other;
  }

  /** The headers it sends with every request: its address and its cookies. */
  headers(): Record<string, string> {
    const headers: Record<string, string> = { 'x-forwarded-for': this.forwardedFor };
    const cookie = [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (cookie) headers.cookie = cookie;
    return headers;
  }

  async request(method: 'GET' | 'POST', path: string, body?: Record<string, string>) {
    const headers = this.headers();
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

  /** What submitting the page's form sends: its action, and its `csrf_token`, `fields` and the button that goes on (not cancel, not resend). */
  formSubmission(page: string, fields: Record<string, string>): { path: string; body: Record<string, string> } {
    const button = (page.match(/<button\b[^>]*>/g) ?? []).find((tag) => {
      const value = attribute(tag, 'value');
      return attribute(tag, 'name') !== undefined && value !== 'cancel' && value !== 'resend';
    });
    const pressed = button ? { [attribute(button, 'name') as string]: attribute(button, 'value') ?? '' } : {};
    return { path: formAction(page), body: { csrf_token: csrfToken(page), ...fields, ...pressed } };
  }

  /** Submits the page's form (see {@link HttpBrowser.formSubmission}). */
  submit(page: string, fields: Record<string, string>) {
    const { path, body } = this.formSubmission(page, fields);
    return this.request('POST', path, body);
  }
}

/**
 * One customer login, start to end: `/authorize`, mobile + PIN, the one-time
 * PIN from the sandbox outbox, the 303 back with a code, which the client
 * then exchanges at `/token`. Throws, saying where, when any step fails.
 */
export async function logIn(
  base: string,
  address: string,
  client: { id: string; secret: string },
  customer: { mobile: string; pin: string; redirectUri: string },
): Promise<CustomerTokens> {
  const browser = new HttpBrowser(base, address);
  const step = (name: string, res: { status: number; location: string; body: string }, status: number) => {
    if (res.status !== status) throw new Error(`${name}: ${res.status} instead of ${status}: ${res.body.slice(0, 300)}`);
  };
  const REDIRECT_URI = customer.redirectUri;
  const mobile = customer.mobile;
  const query = new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: REDIRECT_URI, state: address });
  const started = await browser.request('GET', `/authorize?${query}`);
  step('authorize', started, 303);
  const loginPage = await browser.request('GET', started.location);
  step('login page', loginPage, 200);
  const credentials = await browser.submit(loginPage.body, { mobile, pin: customer.pin });
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
  const tokens = (await token.json()) as { access_token: string; refresh_token?: string };
  return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token };
}

/** What a customer login gave the client. */
export interface CustomerTokens {
  readonly accessToken: string;
  /** Only for a client with the refresh grant. */
  readonly refreshToken: string | undefined;
}

/**
 * Polls `holds` on every server until it holds on all of them; fails past
 * `withinMs` (the one second an operator action has to reach every
 * instance). Then asks each server five more times: it must go on holding
 * (nothing of the old state comes back). Resolves with the milliseconds it took.
 */
export async function onEveryServerWithin(
  servers: readonly string[],
  what: string,
  holds: (base: string) => Promise<boolean>,
  withinMs = 1000,
): Promise<number> {
  const started = performance.now();
  const pending = new Set(servers);
  while (pending.size > 0) {
    for (const base of [...pending]) if (await holds(base)) pending.delete(base);
    const elapsed = performance.now() - started;
    if (pending.size > 0 && elapsed > withinMs) throw new Error(`${what}: not on ${[...pending].join(', ')} after ${Math.round(elapsed)} ms`);
    if (pending.size > 0) await delay(10);
  }
  const took = performance.now() - started;
  for (const base of servers) for (let i = 0; i < 5; i++) expect(await holds(base), `${what} on ${base}, again`).toBe(true);
  return took;
}
