import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startBalancer, type Balancer } from '../helpers/balancer.js';
import { basicAuth, form } from '../helpers/build.js';
import { changeReached } from '../helpers/change-reached.js';
import { noticePostgresSkipped, postgresAdminUrl } from '../helpers/postgres.js';
import { usePreviousRelease } from '../helpers/previous-release.js';
import { HttpBrowser, logIn, processSetting, requireBuiltCli, runProcess, startServe, type CustomerTokens, type ProcessSetting, type ServeProcess } from '../helpers/processes.js';

/**
 * The previous release (releases.json) and the current code side by side on
 * one database, as during an upgrade or a rollback one instance at a time
 * (docs/operator-guide.md, "Upgrading and rolling back"). On PostgreSQL:
 * three instances behind a balancer under steady load, upgraded one by one
 * and one rolled back, with no failed request; journeys, codes, tokens,
 * change signals and the PIN lockout shared across the two versions. On
 * SQLite: one server of each version in turn on one file, each beside the
 * other version's commands.
 */

const REDIRECT_URI = 'https://shop.example/callback';
const PIN = '3817';
const WRONG_PIN = '1111';
const WRONG = 'The mobile number or PIN is not right.';
const LOCKED = /Too many wrong PINs/;
/** Seconds a SIGTERMed instance keeps serving while its /readyz says 503: ten of the balancer's checks. */
const SHUTDOWN_DELAY = '1';
/** How long the load runs in a phase that only waits. */
const SETTLE_MS = 1500;

type Version = 'previous' | 'current';
type Client = { id: string; secret: string };

const previous = usePreviousRelease();
beforeAll(requireBuiltCli);

/** A data folder and the configuration every process gets (one master key, one issuer). */
async function setting(engine: 'sqlite' | 'postgres'): Promise<ProcessSetting> {
  const s = await processSetting(engine, { prefix: 'connect-mixed-', env: { CONNECT_SHUTDOWN_DELAY: SHUTDOWN_DELAY } });
  if (engine === 'sqlite') s.env.DATABASE_URL = `sqlite:${join(s.cwd, 'connect.db')}`;
  return s;
}

/** The setting with the `connect-auth` of `version`. */
function of(s: ProcessSetting, version: Version): ProcessSetting {
  return version === 'previous' ? { ...s, bin: previous.release().bin } : s;
}

/** Runs a command of `version`'s `connect-auth` as a process, with `--json`; its output. */
async function cli<T>(s: ProcessSetting, version: Version, args: readonly string[]): Promise<T> {
  const { code, stdout, stderr } = await runProcess(of(s, version), [...args, '--json']);
  if (code !== 0) throw new Error(`${version} connect-auth ${args.join(' ')}: exit ${code}: ${stderr}`);
  return JSON.parse(stdout) as T;
}

function serveVersion(s: ProcessSetting, version: Version): Promise<ServeProcess> {
  return startServe(of(s, version));
}

function tokenRequest(client: Client, params: Record<string, string>): RequestInit {
  return {
    method: 'POST',
    headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: form(params),
    signal: AbortSignal.timeout(10_000),
  };
}

async function clientToken(base: string, client: Client): Promise<{ status: number; token?: string }> {
  const res = await fetch(new URL('/token', base), tokenRequest(client, { grant_type: 'client_credentials' }));
  const body = (await res.json()) as { access_token?: string };
  return { status: res.status, ...(body.access_token ? { token: body.access_token } : {}) };
}

async function refresh(base: string, client: Client, refreshToken: string): Promise<{ status: number; accessToken?: string }> {
  const res = await fetch(new URL('/token', base), tokenRequest(client, { grant_type: 'refresh_token', refresh_token: refreshToken }));
  const body = (await res.json()) as { access_token?: string };
  return { status: res.status, ...(body.access_token ? { accessToken: body.access_token } : {}) };
}

async function redeem(base: string, client: Client, code: string): Promise<{ accessToken: string; refreshToken: string }> {
  const res = await fetch(new URL('/token', base), tokenRequest(client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }));
  const body = (await res.json()) as { access_token: string; refresh_token: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return { accessToken: body.access_token, refreshToken: body.refresh_token };
}

/** RFC 7662 introspection by the client: whether Connect says the token is active. */
async function introspect(base: string, client: Client, token: string): Promise<boolean> {
  const res = await fetch(new URL('/introspect', base), tokenRequest(client, { token }));
  expect(res.status).toBe(200);
  return ((await res.json()) as { active: boolean }).active;
}

/** `POST /tokens` with a client access token: status and the access token it gave. */
async function refreshAtTokens(base: string, bearer: string, refreshToken: string): Promise<{ status: number; accessToken?: string }> {
  const res = await fetch(new URL('/tokens', base), {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'request-reference-no': randomUUID() },
    body: JSON.stringify({ refreshToken }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as { accessToken?: string };
  return { status: res.status, ...(body.accessToken ? { accessToken: body.accessToken } : {}) };
}

function expectStatus(name: string, res: { status: number; body: string }, status: number): void {
  expect(res.status, `${name}: ${res.body.slice(0, 300)}`).toBe(status);
}

/** `/authorize`, then mobile and PIN on `base`: the browser and the answer to the login form. */
async function signIn(base: string, address: string, client: Client, mobile: string, pin: string) {
  const browser = new HttpBrowser(base, address);
  const query = new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: REDIRECT_URI, state: address });
  const started = await browser.request('GET', `/authorize?${query}`);
  expectStatus('authorize', started, 303);
  const page = await browser.request('GET', started.location);
  expectStatus('login page', page, 200);
  return { browser, answer: await browser.submit(page.body, { mobile, pin }) };
}

/** The code in a redirect back to the client. */
function codeIn(res: { status: number; location: string; body: string }): string {
  expectStatus('back to the client', res, 303);
  const back = new URL(res.location);
  expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
  return back.searchParams.get('code') as string;
}

/**
 * A customer journey started on `first` (mobile and PIN, which sends the
 * one-time PIN) and finished on `second` (the one-time PIN page, the
 * outbox, the code); the code is redeemed on `first`. Then the session
 * `second` started signs the customer in on `first` at once (no page, no
 * SMS), and that code is redeemed on `second`.
 */
async function journeyAcross(first: string, second: string, address: string, client: Client, mobile: string) {
  const { browser, answer } = await signIn(first, address, client, mobile, PIN);
  expectStatus('login', answer, 303);
  const there = browser.via(second);
  const otpPage = await there.request('GET', answer.location);
  expectStatus('one-time PIN page', otpPage, 200);
  const messages = await there.request('GET', `/sandbox/messages?to=${encodeURIComponent(mobile)}`);
  const [newest] = (JSON.parse(messages.body) as { messages: Array<{ body: string }> }).messages;
  const otp = /\b(\d{6})\b/.exec(newest?.body ?? '')?.[1] as string;
  const tokens = await redeem(first, client, codeIn(await there.submit(otpPage.body, { otp })));
  const query = new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: REDIRECT_URI, state: 'again' });
  await redeem(second, client, codeIn(await there.via(first).request('GET', `/authorize?${query}`)));
  return tokens;
}

/** Every instance says each token is inactive within a second (polled). */
async function endedEverywhere(bases: readonly string[], client: Client, tokens: readonly string[]): Promise<number> {
  const took = await Promise.all(bases.flatMap((base) => tokens.map((token) => changeReached(async () => !(await introspect(base, client, token))))));
  return Math.max(...took);
}

/**
 * Steady load through the balancer, in turn: a client token, a refresh of a
 * customer token at `/token` and at `POST /tokens`, an introspection.
 * Counted per phase: a request counts in the phase it started in.
 */
async function startLoad(url: string, client: Client, customer: CustomerTokens, firstPhase: string) {
  type Count = { name: string; requests: number; failed: number; failures: Record<string, number>; started: number; ms: number };
  const phases: Count[] = [];
  let current: Count | undefined;
  const phase = (name: string) => {
    const now = performance.now();
    if (current) current.ms = now - current.started;
    current = { name, requests: 0, failed: 0, failures: {}, started: now, ms: 0 };
    phases.push(current);
  };
  let bearer = (await clientToken(url, client)).token as string;
  const status = ({ status }: { status: number }) => (status === 200 ? undefined : `status ${status}`);
  /** Each request: its name, and what was wrong with its answer (undefined: nothing). */
  const requests: Array<[string, () => Promise<string | undefined>]> = [
    ['client token', async () => {
      const answer = await clientToken(url, client);
      bearer = answer.token ?? bearer;
      return status(answer);
    }],
    ['refresh', async () => status(await refresh(url, client, customer.refreshToken as string))],
    ['POST /tokens', async () => status(await refreshAtTokens(url, bearer, customer.refreshToken as string))],
    // A client token is never retired: active, whichever instance issued it.
    ['introspection', async () => ((await introspect(url, client, bearer)) ? undefined : 'inactive')],
  ];
  let running = true;
  const loop = async (offset: number) => {
    for (let i = offset; running; i++) {
      const [name, send] = requests[i % requests.length] as [string, () => Promise<string | undefined>];
      const count = current as Count;
      count.requests += 1;
      let failure: string | undefined;
      try {
        const wrong = await send();
        if (wrong) failure = `${name}: ${wrong}`;
      } catch (error) {
        failure = `${name}: ${(error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message}`;
      }
      if (failure) {
        count.failed += 1;
        count.failures[failure] = (count.failures[failure] ?? 0) + 1;
      }
      await delay(20);
    }
  };
  phase(firstPhase);
  const loops = [0, 1, 2].map(loop);
  return {
    phase,
    phases,
    async stop() {
      running = false;
      await Promise.all(loops);
      phase('stopped');
      phases.pop();
    },
  };
}

describe.skipIf(!postgresAdminUrl)('the previous release and the current code on one PostgreSQL database, behind a balancer', () => {
  it('three instances upgraded one at a time and one rolled back under load: no failed request; everything issued by one version holds on the other', { timeout: 300_000 }, async () => {
    const testStarted = performance.now();
    const s = await setting('postgres');
    const balancer: Balancer = await startBalancer();
    onTestFinished(() => balancer.close());

    type Instance = { version: Version; label: string; process: ServeProcess };
    let started = 0;
    const launch = async (version: Version): Promise<Instance> => {
      const instance = { version, label: `${version} #${++started}`, process: await serveVersion(s, version) };
      await balancer.add(instance.process.address, instance.label);
      return instance;
    };
    // A fresh database: three instances of the previous release start on it at once (and migrate it).
    const instances = await Promise.all([launch('previous'), launch('previous'), launch('previous')]);
    const mobiles = { load: '+639170000001', across: '+639170000002', lockout: '+639170000003', back: '+639170000004' };
    const [created] = await Promise.all([
      cli<{ clientId: string; clientSecret: string }>(s, 'previous', ['clients', 'create', '--name', 'Shop', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials,authorization_code,refresh_token']),
      ...Object.values(mobiles).map((mobile) => cli(s, 'previous', ['customers', 'create', '--mobile', mobile, '--pin', PIN])),
    ]);
    const client = { id: created.clientId, secret: created.clientSecret };

    const customer = await logIn(balancer.url, '10.0.0.1', client, { mobile: mobiles.load, pin: PIN, redirectUri: REDIRECT_URI });

    const load = await startLoad(balancer.url, client, customer, '3 previous');
    /** SIGTERM the instance at `at` and start one of `version` in its place: it must exit 0 on its own. */
    const replace = async (at: number, version: Version) => {
      const old = instances[at] as Instance;
      old.process.signal('SIGTERM');
      const [exit, fresh] = await Promise.all([old.process.exited, launch(version)]);
      expect(exit, `${old.label} exits 0 after SIGTERM`).toEqual({ code: 0, signal: null });
      balancer.remove(old.process.address);
      instances[at] = fresh;
    };
    const one = (version: Version) => (instances.find((i) => i.version === version) as Instance).process.address;

    await delay(SETTLE_MS);
    load.phase('upgrade 1 (the first current instance migrates)');
    await replace(0, 'current');

    load.phase('2 previous + 1 current');
    const [p, c] = [one('previous'), one('current')];
    // A journey started on one version finishes on the other, both ways, and its session signs in on the first;
    // each code redeemed on the version that did not issue it.
    const fromPrevious = await journeyAcross(p, c, '10.0.1.1', client, mobiles.across);
    const fromCurrent = await journeyAcross(c, p, '10.0.1.2', client, mobiles.across);
    // A refresh token from one version refreshed on the other; every access token active on both.
    expect((await refresh(c, client, fromPrevious.refreshToken)).status).toBe(200);
    expect((await refresh(p, client, fromCurrent.refreshToken)).status).toBe(200);
    // A client token of one version accepted at POST /tokens of the other; the access tokens it gives active on both.
    const [bearerOfPrevious, bearerOfCurrent] = [(await clientToken(p, client)).token as string, (await clientToken(c, client)).token as string];
    const atTokens = [await refreshAtTokens(c, bearerOfPrevious, fromPrevious.refreshToken), await refreshAtTokens(p, bearerOfCurrent, fromCurrent.refreshToken)];
    expect(atTokens.map((answer) => answer.status)).toEqual([200, 200]);
    const customerTokens = atTokens.map((answer) => answer.accessToken as string);
    for (const base of [p, c]) {
      for (const token of [...customerTokens, bearerOfPrevious, bearerOfCurrent]) expect(await introspect(base, client, token), `active on ${base}`).toBe(true);
    }
    // A change made with the previous version's command reaches both versions within a second.
    await cli(s, 'previous', ['customers', 'lock', mobiles.across]);
    const lockReachedMs = await endedEverywhere([p, c], client, customerTokens);
    // Wrong PINs count across versions: 2 on each, and the 5th, on either, locks the number on both, even against the right PIN.
    for (const [i, base] of [p, c, p, c].entries()) {
      const { answer } = await signIn(base, `10.0.2.${i + 1}`, client, mobiles.lockout, WRONG_PIN);
      expectStatus('wrong PIN', answer, 400);
      expect(answer.body.includes(WRONG), `wrong PIN ${i + 1}: told the PIN is not right`).toBe(true);
    }
    for (const [i, [base, pin]] of [[p, WRONG_PIN], [c, PIN], [p, PIN]].entries()) {
      const { answer } = await signIn(base as string, `10.0.3.${i + 1}`, client, mobiles.lockout, pin as string);
      expectStatus('locked', answer, 400);
      expect(LOCKED.test(answer.body), `attempt ${i + 5}: told PIN login is locked`).toBe(true);
    }

    load.phase('upgrade 2');
    await replace(1, 'current');
    load.phase('upgrade 3');
    await replace(2, 'current');
    load.phase('3 current');
    await delay(SETTLE_MS);

    load.phase('rollback of one');
    await replace(0, 'previous');
    load.phase('2 current + 1 previous');
    const [p2, c2] = [one('previous'), one('current')];
    const backFromCurrent = await journeyAcross(c2, p2, '10.0.4.1', client, mobiles.back);
    const backFromPrevious = await journeyAcross(p2, c2, '10.0.4.2', client, mobiles.back);
    const rolledBackTokens = [(await refresh(p2, client, backFromCurrent.refreshToken)).accessToken as string, (await refresh(c2, client, backFromPrevious.refreshToken)).accessToken as string];
    for (const base of [p2, c2]) for (const token of rolledBackTokens) expect(await introspect(base, client, token)).toBe(true);
    // The tokens issued before the rollback still hold on the previous release.
    expect(await introspect(p2, client, bearerOfCurrent)).toBe(true);
    expect((await refresh(p2, client, customer.refreshToken as string)).status).toBe(200);
    // A change made with the current version's command reaches both within a second.
    await cli(s, 'current', ['customers', 'lock', mobiles.back]);
    const lockBackReachedMs = await endedEverywhere([p2, c2], client, rolledBackTokens);
    await delay(SETTLE_MS);
    await load.stop();

    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const total = load.phases.reduce((sum, ph) => ({ requests: sum.requests + ph.requests, failed: sum.failed + ph.failed }), { requests: 0, failed: 0 });
    const release = previous.release();
    console.log(
      `mixed versions on PostgreSQL: previous release ${release.version} (${release.commit.slice(0, 7)}) built in ${seconds(release.buildMs)}` +
        `${release.sharedModules ? ' (node_modules shared)' : ' (npm ci)'}; ` +
        load.phases.map((ph) => `${ph.name}: ${ph.requests} requests, ${ph.failed} failed, ${seconds(ph.ms)}`).join('; ') +
        `; in all ${total.requests} requests, ${total.failed} failed; customers lock reached both versions in ${Math.round(lockReachedMs)} ms (previous CLI) and ${Math.round(lockBackReachedMs)} ms (current CLI); test ${seconds(performance.now() - testStarted)}`,
    );
    expect(load.phases.map((ph) => ({ phase: ph.name, failures: ph.failures }))).toEqual(load.phases.map((ph) => ({ phase: ph.name, failures: {} })));
    for (const ph of load.phases) expect(ph.requests, `requests in ${ph.name}`).toBeGreaterThan(0);
  });
});
noticePostgresSkipped('the previous release and the current code on one PostgreSQL database');

describe('the previous release and the current code in turn on one SQLite file', () => {
  it('previous → current → previous, each beside the other version’s commands: what one issued the other accepts', { timeout: 120_000 }, async () => {
    const testStarted = performance.now();
    const s = await setting('sqlite');
    const stopped = async (server: ServeProcess) => {
      server.signal('SIGINT');
      expect(await server.exited).toEqual({ code: 0, signal: null });
    };
    const mobile = '+639170000001';
    // Two releases indeed: each command says its own version.
    const [previousVersion, currentVersion] = await Promise.all((['previous', 'current'] as const).map(async (version) => (await cli<{ version: string }>(s, version, ['--version'])).version));
    expect(previousVersion).toBe(previous.release().version);
    expect(currentVersion).not.toBe(previousVersion);

    // The previous release serves (and creates the database) and its commands set it up.
    const first = await serveVersion(s, 'previous');
    const created = await cli<{ clientId: string; clientSecret: string }>(s, 'previous', ['clients', 'create', '--name', 'Shop', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials,authorization_code,refresh_token']);
    const client = { id: created.clientId, secret: created.clientSecret };
    await cli(s, 'previous', ['customers', 'create', '--mobile', mobile, '--pin', PIN]);
    await changeReached(async () => (await clientToken(first.address, client)).status === 200);
    const tokensOfPrevious = await logIn(first.address, '10.0.0.1', client, { mobile, pin: PIN, redirectUri: REDIRECT_URI });
    const bearerOfPrevious = (await clientToken(first.address, client)).token as string;
    await stopped(first);

    // The current code serves (migrating what it needs); the previous release's commands work beside it.
    const second = await serveVersion(s, 'current');
    expect(await introspect(second.address, client, bearerOfPrevious)).toBe(true);
    expect(await introspect(second.address, client, tokensOfPrevious.accessToken)).toBe(true);
    const refreshed = await refresh(second.address, client, tokensOfPrevious.refreshToken as string);
    expect(refreshed.status).toBe(200);
    expect((await refreshAtTokens(second.address, bearerOfPrevious, tokensOfPrevious.refreshToken as string)).status).toBe(200);
    const other = await cli<{ clientId: string; clientSecret: string }>(s, 'previous', ['clients', 'create', '--name', 'Other', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials']);
    const otherClient = { id: other.clientId, secret: other.clientSecret };
    await changeReached(async () => (await clientToken(second.address, otherClient)).status === 200);
    const tokensOfCurrent = await logIn(second.address, '10.0.0.2', client, { mobile, pin: PIN, redirectUri: REDIRECT_URI });
    const bearerOfCurrent = (await clientToken(second.address, client)).token as string;
    await stopped(second);

    // Rolled back: the previous release accepts what the current code issued; the current commands work beside it.
    const third = await serveVersion(s, 'previous');
    for (const token of [bearerOfCurrent, tokensOfCurrent.accessToken, refreshed.accessToken as string]) expect(await introspect(third.address, client, token)).toBe(true);
    expect((await refresh(third.address, client, tokensOfCurrent.refreshToken as string)).status).toBe(200);
    expect((await refreshAtTokens(third.address, bearerOfCurrent, tokensOfCurrent.refreshToken as string)).status).toBe(200);
    expect((await clientToken(third.address, otherClient)).status).toBe(200);
    const created3 = await cli<{ clientId: string; clientSecret: string }>(s, 'current', ['clients', 'create', '--name', 'Third', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials']);
    await changeReached(async () => (await clientToken(third.address, { id: created3.clientId, secret: created3.clientSecret })).status === 200);
    const customerTokens = [(await refresh(third.address, client, tokensOfCurrent.refreshToken as string)).accessToken as string];
    await cli(s, 'current', ['customers', 'lock', mobile]);
    const lockReachedMs = await endedEverywhere([third.address], client, customerTokens);
    await stopped(third);
    const release = previous.release();
    console.log(`mixed versions on SQLite: previous release ${release.version} (${release.commit.slice(0, 7)}) built in ${(release.buildMs / 1000).toFixed(1)} s; previous → current → previous on one file; customers lock (current CLI) reached the previous server in ${Math.round(lockReachedMs)} ms; test ${((performance.now() - testStarted) / 1000).toFixed(1)} s`);
  });
});
