// Load benchmark of the customer token endpoints (`npm run bench:customer`).
//
// Connect (`connect-auth serve --seed-demo`, request logging at `info` to a
// file) runs pinned to one CPU core, once on the embedded SQLite database and
// once on PostgreSQL (a fresh database, dropped afterwards; skipped with a
// notice when PostgreSQL is not reachable). For each engine:
//
//   1. the demo customer logs in once through the hosted pages (fetch and a
//      cookie jar: /authorize, /login, mobile + PIN, one-time PIN from the
//      sandbox outbox); with that session, every further GET /authorize
//      answers a code at once, so N codes are collected quickly;
//   2. POST /token grant_type=authorization_code: each code is used once,
//      autocannon (load.js, on another core) sends exactly N exchanges;
//   3. POST /token grant_type=refresh_token with one refresh token (a
//      refresh token stays valid until it expires, so it repeats); every
//      refresh mints (CONNECT_REFRESH_REUSE_SECONDS=0), as one refresh per
//      session at a time does, rather than handing out the token of the
//      refresh a moment before;
//   4. POST /tokens: the client's own access token as Bearer, JSON body
//      {refreshToken}, a fresh UUIDv4 Request-Reference-No per request;
//   5. the resource-server check (openCustomerAccessCheck from
//      `@connect-auth/server`, same environment as the server): one valid customer access
//      token verified in a loop, single core, in-process, warm cache.
//
// See bench/README.md, "Customer token endpoints", for the knobs.
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkPinning, cleanEnv, cpuTimeMs, fail, freePort, HOST, killAll, readSettings, run, runMain, spawnTracked, stop, stopAfter, wholeNumberSetting } from './processes.js';
import { authorizePath, browser, formAction, hiddenCsrf } from './hosted-pages.js';
import { fmt, loadAverage, machine, median, progressPrinter, textTable, writeResults } from './report.js';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BENCH = join(ROOT, 'bench');
const CONNECT_BIN = join(ROOT, 'packages/server/bin/connect-auth.js');

// ------------------------------------------------- micro-benchmark (child mode)

// `node bench/customer-bench.js --check <json>`: runs the resource-server check
// in this process (pinned by the parent) and prints one JSON line.
if (process.argv[2] === '--check') {
  const { env, token, seconds, dist } = JSON.parse(process.argv[3]);
  // This build's server package by its public entry, or another build's entry file.
  const { openCustomerAccessCheck } = await import(dist ? pathToFileURL(dist).href : '@connect-auth/server');
  const check = await openCustomerAccessCheck(env);
  try {
    const first = await check.verify(token);
    // Warm-up: JIT and the session cache.
    for (let end = Date.now() + 500; Date.now() < end; ) await check.verify(token);
    let checks = 0;
    const start = process.hrtime.bigint();
    const stopAt = start + BigInt(Math.round(seconds * 1e9));
    let now = start;
    while (now < stopAt) {
      for (let i = 0; i < 256; i++) await check.verify(token);
      checks += 256;
      now = process.hrtime.bigint();
    }
    const elapsed = Number(now - start) / 1e9;
    process.stdout.write(`${JSON.stringify({ checks, seconds: elapsed, checksPerSecond: checks / elapsed, usPerCheck: (elapsed * 1e6) / checks, profileId: first.profileId })}\n`);
  } finally {
    await check.close();
  }
  process.exit(0);
}

// ---------------------------------------------------------------- settings

const config = readSettings(readConfig);

/** `BENCH_CHECK_BASELINE`: another build's server package entry point (`…/packages/server/dist/index.js`) to compare the check with. */
function checkBaselineSetting(value) {
  const path = value?.trim();
  if (!path) return undefined;
  if (!existsSync(path)) fail(`BENCH_CHECK_BASELINE: ${path} does not exist; build that checkout first (npm run build)`);
  return path;
}

function readConfig(env) {
  const int = (name, fallback, min, max) => wholeNumberSetting(env, name, fallback, min, max);
  const engines = (env.BENCH_ENGINES?.trim() || 'sqlite,postgres').split(',').map((s) => s.trim());
  for (const engine of engines) {
    if (!['sqlite', 'postgres'].includes(engine)) fail(`BENCH_ENGINES: unknown engine "${engine}"; known: sqlite, postgres`);
  }
  return {
    codes: int('BENCH_CODES', 3000, 100, 50_000),
    duration: int('BENCH_DURATION', 5, 1, 60),
    warmup: int('BENCH_WARMUP', 1, 0, 30),
    connections: int('BENCH_CONNECTIONS', 16, 1, 1000),
    checkSeconds: int('BENCH_CHECK_SECONDS', 3, 1, 30),
    checkRounds: int('BENCH_CHECK_ROUNDS', 3, 1, 10),
    checkBaseline: checkBaselineSetting(env.BENCH_CHECK_BASELINE),
    engines,
    postgresAdminUrl: env.BENCH_POSTGRES_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/postgres',
    pin: env.BENCH_PIN !== '0',
    serverCpu: env.BENCH_SERVER_CPU?.trim() || '0',
    loadCpu: env.BENCH_LOAD_CPU?.trim() || '1',
    keepTemp: env.BENCH_KEEP_TMP === '1',
  };
}

const startedAt = Date.now();
const progress = progressPrinter(startedAt);
const cleanups = [];


// ---------------------------------------------------------------- processes

function pinned(cpu, command, args) {
  return config.pin ? ['taskset', ['-c', cpu, command, ...args]] : [command, args];
}

// ---------------------------------------------------------------- PostgreSQL

/** Creates a fresh database; returns its URL, or undefined (with the reason) when PostgreSQL is not reachable. */
async function createPostgresDatabase() {
  let pg;
  try {
    pg = (await import('pg')).default;
  } catch (error) {
    return { skipped: `the pg package is not installed (${error.message})` };
  }
  const admin = new pg.Client({ connectionString: config.postgresAdminUrl, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    await admin.end().catch(() => {});
    return { skipped: `PostgreSQL not reachable at ${config.postgresAdminUrl} (${error.message})` };
  }
  const name = `connect_bench_${randomBytes(6).toString('hex')}`;
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(config.postgresAdminUrl);
  url.pathname = `/${name}`;
  cleanups.push(async () => {
    const client = new pg.Client({ connectionString: config.postgresAdminUrl, connectionTimeoutMillis: 3000 });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await client.end().catch(() => {});
    }
    progress(`dropped PostgreSQL database ${name}`);
  });
  return { url: url.toString(), name };
}

// ---------------------------------------------------------------- HTTP bits

function codeOf(location, redirectUri) {
  if (!location?.startsWith(`${redirectUri}?`)) return undefined;
  return new URL(location).searchParams.get('code') ?? undefined;
}

/** The one hosted login of the demo customer; returns the browser (with its session) and the first code. */
async function logIn(base, demo) {
  const b = browser(base);
  const start = await b.request(authorizePath(demo.clientId, demo.redirectUri));
  if (start.status !== 303 || !start.location?.startsWith('/login?')) fail(`GET /authorize: expected 303 to /login, got ${start.status} ${start.location}`);
  const loginPage = await b.request(start.location);
  if (loginPage.status !== 200) fail(`GET ${start.location}: status ${loginPage.status}`);
  const afterPin = await b.request(formAction(loginPage.text), {
    method: 'POST',
    form: { csrf_token: hiddenCsrf(loginPage.text), mobile: demo.mobile, pin: demo.pin, action: 'login' },
  });
  if (afterPin.status !== 303 || !afterPin.location?.startsWith('/login/otp?')) fail(`mobile + PIN: expected 303 to /login/otp, got ${afterPin.status} ${afterPin.text.slice(0, 200)}`);
  const otpPage = await b.request(afterPin.location);
  const outbox = JSON.parse((await b.request(`/sandbox/messages?to=${encodeURIComponent(demo.mobile)}`)).text);
  const otp = /\b(\d{6})\b/.exec(outbox.messages?.[0]?.body ?? '')?.[1];
  if (!otp) fail('no one-time PIN in the sandbox outbox');
  const done = await b.request(formAction(otpPage.text), { method: 'POST', form: { csrf_token: hiddenCsrf(otpPage.text), otp, action: 'verify' } });
  const code = codeOf(done.location, demo.redirectUri);
  if (done.status !== 303 || !code) fail(`one-time PIN: expected 303 to the client with a code, got ${done.status} ${done.location}`);
  return { browser: b, code };
}

/**
 * N codes with the logged-in session: each GET /authorize answers 303 to the
 * client with a fresh code; `parallel` requests in flight.
 */
async function collectCodes(base, b, { clientId, redirectUri }, count, parallel = 8) {
  const path = authorizePath(clientId, redirectUri);
  const cookie = [...b.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const codes = [];
  let started = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (started < count) {
        started += 1;
        const response = await fetch(base + path, { headers: { cookie }, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
        await response.arrayBuffer();
        const code = codeOf(response.headers.get('location'), redirectUri);
        if (response.status !== 303 || !code) fail(`GET /authorize with the session: expected 303 with a code, got ${response.status} ${response.headers.get('location')}`);
        codes.push(code);
      }
    }),
  );
  return codes;
}

function basic(id, secret) {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

async function postJson(url, init) {
  const response = await fetch(url, { method: 'POST', ...init, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

/** One autocannon run in its own (pinned) process. */
async function load(options, timeoutSeconds) {
  const all = { connections: config.connections, pipelining: 1, ...options };
  const [command, args] = pinned(config.loadCpu, process.execPath, [join(BENCH, 'load.js'), JSON.stringify(all)]);
  const stdout = await run(command, args, { cwd: ROOT, timeout: timeoutSeconds * 1000, killSignal: 'SIGKILL' });
  return JSON.parse(stdout.trim().split('\n').pop());
}

// ---------------------------------------------------------------- one engine

async function benchEngine(engine, databaseUrl) {
  const workDir = mkdtempSync(join(tmpdir(), `connect-customer-bench-${engine}-`));
  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  const env = {
    ...cleanEnv(),
    CONNECT_DATA_DIR: workDir,
    DATABASE_URL: databaseUrl ?? `sqlite:${join(workDir, 'connect.db')}`,
    CONNECT_LOG_LEVEL: 'info',
    CONNECT_AUTH_URL: base,
    // One refresh token repeated: measure minting, not reuse (docs/tokens.md, "Concurrent refreshes").
    CONNECT_REFRESH_REUSE_SECONDS: '0',
    HOST,
    PORT: String(port),
  };
  const logFile = join(workDir, 'connect.log');
  const out = openSync(logFile, 'a');
  const [command, args] = pinned(config.serverCpu, process.execPath, [CONNECT_BIN, 'serve', '--seed-demo']);
  progress(`${engine}: starting Connect on ${base}${config.pin ? ` (CPU ${config.serverCpu})` : ''}, data in ${workDir}`);
  const child = spawnTracked(command, args, { cwd: ROOT, env, stdio: ['ignore', out, out] });
  closeSync(out);
  let ok = false;
  try {
    // The demo banner (client credentials, customer PIN) is printed once listening.
    let demo;
    for (const deadline = Date.now() + 30_000; !demo; await sleep(100)) {
      if (child.exited) fail(`${engine}: Connect exited during start-up (${JSON.stringify(child.exited)}); see ${logFile}`);
      if (Date.now() > deadline) fail(`${engine}: Connect did not start within 30 s; see ${logFile}`);
      const text = readFileSync(logFile, 'utf8');
      const field = (label) => new RegExp(`^\\s*${label}:\\s*(\\S+)\\s*$`, 'm').exec(text)?.[1];
      if (field('PIN') && field('client secret')) demo = { clientId: field('client ID'), clientSecret: field('client secret'), redirectUri: field('redirect URI'), mobile: field('mobile'), pin: field('PIN') };
    }
    const clientBasic = basic(demo.clientId, demo.clientSecret);

    progress(`${engine}: logging the demo customer in through the hosted pages`);
    const login = await logIn(base, demo);
    const firstTokens = await postJson(`${base}/token`, {
      headers: { authorization: clientBasic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: login.code, redirect_uri: demo.redirectUri }).toString(),
    });
    if (firstTokens.status !== 200 || !firstTokens.body?.refresh_token) fail(`${engine}: code exchange failed: ${firstTokens.status} ${firstTokens.text.slice(0, 300)}`);
    const refreshToken = firstTokens.body.refresh_token;

    // Codes for the exchange run, plus slack for requests autocannon builds but does not send.
    const wanted = config.codes + 4 * config.connections;
    progress(`${engine}: collecting ${wanted} codes with the customer's session (GET /authorize)`);
    const collectStart = Date.now();
    const codes = await collectCodes(base, login.browser, demo, wanted);
    if (new Set(codes).size !== codes.length) fail(`${engine}: GET /authorize returned a code twice`);
    progress(`${engine}: ${codes.length} codes in ${((Date.now() - collectStart) / 1000).toFixed(1)} s`);
    const bodiesFile = join(workDir, 'code-bodies.json');
    writeFileSync(bodiesFile, JSON.stringify(codes.map((code) => new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: demo.redirectUri }).toString())));

    const clientToken = await postJson(`${base}/token`, {
      headers: { authorization: clientBasic, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    if (clientToken.status !== 200) fail(`${engine}: client_credentials failed: ${clientToken.status}`);

    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const endpoints = [
      {
        name: 'authorization_code',
        label: 'POST /token authorization_code',
        request: { url: `${base}/token`, method: 'POST', headers: { authorization: clientBasic, ...form }, bodiesFile, amount: config.codes },
        warm: false,
      },
      {
        name: 'refresh_token',
        label: 'POST /token refresh_token',
        request: {
          url: `${base}/token`,
          method: 'POST',
          headers: { authorization: clientBasic, ...form },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
        },
        warm: true,
      },
      {
        name: 'tokens',
        label: 'POST /tokens',
        request: {
          url: `${base}/tokens`,
          method: 'POST',
          headers: { authorization: `Bearer ${clientToken.body.access_token}`, 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ refreshToken }),
          uuidHeader: 'request-reference-no',
        },
        warm: true,
      },
    ];

    // Warm the server before the single-use run (the code exchange cannot be repeated).
    if (config.warmup > 0) {
      progress(`${engine}: warming up ${config.warmup} s (refresh grant)`);
      await load({ ...endpoints[1].request, duration: config.warmup }, config.warmup + 30);
    }

    const results = [];
    for (const endpoint of endpoints) {
      if (endpoint.warm && endpoint.name !== 'refresh_token' && config.warmup > 0) await load({ ...endpoint.request, duration: config.warmup }, config.warmup + 30);
      const cpuBefore = cpuTimeMs(child.pid);
      const what = endpoint.request.amount ? `${endpoint.request.amount} requests` : `${config.duration} s`;
      progress(`${engine}: measuring ${endpoint.label}, ${what}, ${config.connections} connections`);
      const result = await load(endpoint.request.amount ? endpoint.request : { ...endpoint.request, duration: config.duration }, config.duration + 60);
      const cpuMs = cpuBefore === undefined ? undefined : cpuTimeMs(child.pid) - cpuBefore;
      if (child.exited) fail(`${engine}: Connect exited during the run; see ${logFile}`);
      // Counted runs: every request from start to the last response; timed runs: autocannon's mean of per-second counts.
      const rps = endpoint.request.amount ? result.requestsPerSecondOverall : result.requestsPerSecond;
      const row = {
        engine,
        endpoint: endpoint.name,
        label: endpoint.label,
        reqPerSecond: rps,
        ...result,
        serverCpuUsPerRequest: cpuMs === undefined ? undefined : Math.round((cpuMs * 1000) / result.requestsTotal),
        serverCpuPercent: cpuMs === undefined ? undefined : Math.round(cpuMs / 10 / (endpoint.request.amount ? result.secondsToLastResponse : result.duration)),
      };
      progress(
        `${engine}: ${endpoint.label}: ${fmt(rps, 0)} req/s, p50 ${fmt(result.latencyMs.p50, 2)} ms, p99 ${fmt(result.latencyMs.p99, 2)} ms, ` +
          `non-2xx ${result.non2xx} ${JSON.stringify(result.statusCodes)}, server CPU ${fmt(row.serverCpuUsPerRequest, 0)} µs/req (${fmt(row.serverCpuPercent, 0)}% of a core)`,
      );
      results.push(row);
    }

    // A current access token for the check: the newest refresh replaces the session's access token.
    const current = await postJson(`${base}/token`, {
      headers: { authorization: clientBasic, ...form },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
    });
    if (current.status !== 200) fail(`${engine}: refresh after the load failed: ${current.status} ${current.text.slice(0, 300)}`);
    await stop(child);

    const checkEnv = { ...env };
    delete checkEnv.PORT;
    const runCheck = async (dist) => {
      const [checkCommand, checkArgs] = pinned(config.serverCpu, process.execPath, [
        fileURLToPath(import.meta.url),
        '--check',
        JSON.stringify({ env: checkEnv, token: current.body.access_token, seconds: config.checkSeconds, dist }),
      ]);
      return JSON.parse((await run(checkCommand, checkArgs, { cwd: ROOT, env: cleanEnv(), timeout: (config.checkSeconds + 30) * 1000, killSignal: 'SIGKILL' })).trim().split('\n').pop());
    };
    let check;
    if (config.checkBaseline) {
      // Baseline and this build in turns, one process at a time on the same core, so the host's drift hits both alike.
      const rounds = { baseline: [], current: [] };
      for (let round = 1; round <= config.checkRounds; round++) {
        for (const side of ['baseline', 'current']) {
          progress(`${engine}: resource-server check, ${side}, round ${round}/${config.checkRounds}, ${config.checkSeconds} s${config.pin ? ` (CPU ${config.serverCpu})` : ''}, Connect stopped`);
          const result = await runCheck(side === 'baseline' ? config.checkBaseline : undefined);
          rounds[side].push(result.checksPerSecond);
          progress(`${engine}: ${side}: ${fmt(result.checksPerSecond, 0)} checks/s (${fmt(result.usPerCheck, 1)} µs per check)`);
        }
      }
      const baseline = median(rounds.baseline);
      const currentRate = median(rounds.current);
      check = { checksPerSecond: currentRate, usPerCheck: 1e6 / currentRate, baseline: { dist: config.checkBaseline, checksPerSecond: baseline, rounds: rounds.baseline }, rounds: rounds.current, ratio: currentRate / baseline };
      progress(`${engine}: median ${fmt(currentRate, 0)} checks/s against ${fmt(baseline, 0)} for the baseline (${fmt((currentRate / baseline) * 100, 1)}%)`);
    } else {
      progress(`${engine}: resource-server check, ${config.checkSeconds} s in one process${config.pin ? ` (CPU ${config.serverCpu})` : ''}, Connect stopped`);
      check = await runCheck(undefined);
      progress(`${engine}: ${fmt(check.checksPerSecond, 0)} checks/s (${fmt(check.usPerCheck, 1)} µs per check)`);
    }
    ok = true;
    return { engine, results, check, codesCollected: codes.length };
  } finally {
    await stop(child);
    if (ok && !config.keepTemp) rmSync(workDir, { recursive: true, force: true });
    else process.stderr.write(`bench: ${engine} data and server log kept in ${workDir}\n`);
  }
}

// --------------------------------------------------------------------- main

async function main() {
  const checkRuns = config.checkBaseline ? 2 * config.checkRounds : 1;
  const deadlineSeconds = 60 + config.engines.length * (3 * (config.warmup + config.duration) + checkRuns * (config.checkSeconds + 5) + 90);
  stopAfter(deadlineSeconds, 'process');

  if (config.pin) await checkPinning(config.serverCpu, config.loadCpu);
  const host = await machine();
  progress(`${host.cpus} CPUs (${host.model}), Node ${host.node}, load average ${host.loadAverage.join(' ')}`);
  progress(
    `engines ${config.engines.join(', ')}; ${config.codes} code exchanges, warm-up ${config.warmup} s, measure ${config.duration} s, ${config.connections} connections; ` +
      (config.pin ? `Connect on CPU ${config.serverCpu}, load generator on CPU ${config.loadCpu}` : 'not pinned'),
  );

  const engines = [];
  const skipped = {};
  try {
    for (const engine of config.engines) {
      let databaseUrl;
      if (engine === 'postgres') {
        const db = await createPostgresDatabase();
        if (db.skipped) {
          skipped.postgres = db.skipped;
          process.stdout.write(`NOTICE: skipping PostgreSQL: ${db.skipped}\n`);
          continue;
        }
        progress(`postgres: created database ${db.name}`);
        databaseUrl = db.url;
      }
      engines.push(await benchEngine(engine, databaseUrl));
    }

    const engineLabel = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
    const rows = [['endpoint', 'engine', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'CPU µs/req']];
    for (const e of engines) {
      for (const r of e.results) {
        rows.push([r.label, engineLabel[e.engine], fmt(r.reqPerSecond, 0), fmt(r.latencyMs.p50, 2), fmt(r.latencyMs.p99, 2), String(r.non2xx + r.errors + r.timeouts), fmt(r.serverCpuUsPerRequest, 0)]);
      }
    }
    process.stdout.write(`\n${textTable(rows, 2)}\n\n`);
    for (const e of engines) {
      process.stdout.write(`resource-server check (${engineLabel[e.engine]}): ${fmt(e.check.checksPerSecond, 0)} checks/s, ${fmt(e.check.usPerCheck, 1)} µs per check`);
      process.stdout.write(e.check.baseline ? `; baseline ${fmt(e.check.baseline.checksPerSecond, 0)} checks/s (this build ${fmt(e.check.ratio * 100, 1)}% of it)\n` : '\n');
    }
    for (const [engine, reason] of Object.entries(skipped)) process.stdout.write(`${engine}: skipped (${reason})\n`);

    const report = {
      benchmark: 'customer token endpoints: POST /token authorization_code and refresh_token, POST /tokens, resource-server check',
      startedAt: new Date(startedAt).toISOString(),
      machine: { ...host, loadAverageAfter: loadAverage() },
      config: { ...config, connectRequestLogging: 'info, to a file' },
      engines,
      skipped,
    };
    const file = writeResults('customer-bench', startedAt, report);
    process.stdout.write(`\nraw results: ${file}\n`);
  } finally {
    killAll();
    for (const cleanup of cleanups) await cleanup().catch((error) => process.stderr.write(`bench: cleanup failed: ${error.message}\n`));
  }
}

runMain(main);
