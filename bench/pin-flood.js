// The PIN check under a wrong-PIN flood (`npm run bench:pin-flood`).
//
// Connect (`connect-auth serve`, sandbox, embedded SQLite in a fresh data
// folder, request logging at `info` to a file, CONNECT_TRUST_PROXY=true so
// that X-Forwarded-For is the client address) runs pinned to one CPU core,
// with one client and the customers created beforehand with the CLI. Then,
// on the same server, two phases of the same length:
//
//   baseline  legit logins at a fixed rate (GET /authorize, the login page,
//             POST /login with the right PIN, answered 303 to /login/otp),
//             each from its own address, and client-credentials POST /token
//             at a fixed rate;
//   flood     the same, while a second process (pinned to the other core,
//             at a lower priority than the legit traffic) POSTs wrong PINs
//             to /login over many connections, each attempt from another
//             address, at a few victims' mobiles and at unregistered ones,
//             and counts the answers by kind.
//
// With BENCH_CONNECT_ROOT=<another built checkout>, the same run follows
// against that checkout's server. See bench/README.md, "PIN checks under a
// wrong-PIN flood".
import { randomInt } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { authorizePath, browser, formAction, hiddenCsrf } from './hosted-pages.js';
import { checkPinning, cleanEnv, cpuTimeMs, fail, freePort, HOST, killAll, readSettings, run, runMain, spawnTracked, stop, stopAfter, wholeNumberSetting } from './processes.js';
import { fmt, loadAverage, machine, progressPrinter, textTable, writeResults } from './report.js';
import { tokenRequest, waitUntilServing } from './token-servers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REDIRECT_URI = 'http://127.0.0.1:4000/callback';
const LEGIT_PIN = '482916';
const VICTIM_PIN = '735194';
/** One-time PINs the server sends one mobile per 15 minutes (CONNECT_SMS_LIMIT_PER_MOBILE's default): a legit customer logs in at most one fewer times. */
const LOGINS_PER_CUSTOMER = 4;
/** A request the benchmark waits for at most this long (the old server took seconds per PIN under a flood). */
const REQUEST_TIMEOUT_MS = 60_000;

// Philippine mobiles: legit customers +63 917 1xx xxxx, victims +63 917 2xx xxxx, unregistered +63 917 3xx xxxx.
const legitMobile = (i) => `+639171${String(i).padStart(6, '0')}`;
const victimMobile = (i) => `+639172${String(i).padStart(6, '0')}`;
const unregisteredMobile = () => `+639173${String(randomInt(1_000_000)).padStart(6, '0')}`;
// Addresses: legit logins from 198.18.0.0/16, the flood from 10.0.0.0/8, one per attempt.
const legitAddress = (i) => `198.18.${(i >> 8) & 255}.${i & 255}`;
const floodAddress = (i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

function wrongPin() {
  for (;;) {
    const pin = String(randomInt(1_000_000)).padStart(6, '0');
    if (pin !== VICTIM_PIN) return pin;
  }
}

/** What a POST /login answered, by kind: the hosted page's wording, old and new (see the README). */
function answerKind(status, location, text) {
  if (status === 303 && location?.startsWith('/login/otp?')) return 'accepted';
  if (status === 503) return 'busy';
  if (/Too many attempts were made from your network/.test(text)) return 'network';
  if (/Too many wrong PINs\. For your security/.test(text)) return 'locked';
  if (/not right\./.test(text)) return 'wrong';
  if (/Too many codes were sent/.test(text)) return 'sms_limited';
  return 'other';
}

/** The q-quantile of `values` (ms), as load.js takes it; null when there are none. */
function quantile(values, q) {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] * 1000) / 1000;
}

const count = (counts, key) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

// ------------------------------------------------------ the flood (child mode)

// `node bench/pin-flood.js --flood <json>`: opens one journey per connection,
// prints {"ready":true}, then POSTs wrong PINs until its stdin closes, and
// prints one JSON line with what was answered.
async function flood({ base, clientId, connections, victims, unregisteredPercent, addresses }) {
  const workers = await Promise.all(
    Array.from({ length: connections }, async () => {
      const b = browser(base, { timeoutMs: REQUEST_TIMEOUT_MS });
      const start = await b.request(authorizePath(clientId, REDIRECT_URI));
      if (start.status !== 303 || !start.location?.startsWith('/login?')) fail(`flood: GET /authorize answered ${start.status} ${start.location}`);
      const page = await b.request(start.location);
      if (page.status !== 200) fail(`flood: the login page answered ${page.status}`);
      return { b, action: formAction(page.text), csrf: hiddenCsrf(page.text) };
    }),
  );
  let stopping = false;
  process.stdin.on('end', () => (stopping = true)).resume();
  const byKind = {};
  const byTarget = { victim: {}, unregistered: {} };
  const statuses = {};
  const others = [];
  const latencies = [];
  // Answers by kind in each second of the flood.
  const timeline = [];
  let sent = 0;
  const cpuAtStart = process.cpuUsage();
  const startMs = performance.now();
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  await Promise.all(
    workers.map(async (w) => {
      while (!stopping) {
        const i = sent++;
        const atVictim = randomInt(100) >= unregisteredPercent;
        const mobile = atVictim ? victims[i % victims.length] : unregisteredMobile();
        const address = floodAddress(1 + (addresses > 0 ? i % addresses : i));
        const t0 = performance.now();
        let kind;
        try {
          const answer = await w.b.request(w.action, { method: 'POST', form: { csrf_token: w.csrf, mobile, pin: wrongPin(), action: 'login' }, headers: { 'x-forwarded-for': address } });
          latencies.push(performance.now() - t0);
          count(statuses, answer.status);
          kind = answerKind(answer.status, answer.location, answer.text);
          if (kind === 'other' && others.length < 5) others.push(`${answer.status} ${answer.text.replace(/\s+/g, ' ').slice(0, 200)}`);
        } catch (error) {
          kind = 'error';
          if (others.length < 5) others.push(error.message);
        }
        count(byKind, kind);
        count((timeline[Math.floor((performance.now() - startMs) / 1000)] ??= {}), kind);
        count(byTarget[atVictim ? 'victim' : 'unregistered'], kind);
      }
    }),
  );
  const seconds = (performance.now() - startMs) / 1000;
  const { user, system } = process.cpuUsage(cpuAtStart);
  const answered = latencies.length;
  process.stdout.write(
    `${JSON.stringify({
      connections,
      seconds: Math.round(seconds * 1000) / 1000,
      attempts: sent,
      answered,
      attemptsPerSecond: answered / seconds,
      byKind,
      byTarget,
      statuses,
      others,
      timeline: Array.from(timeline, (second) => second ?? {}),
      latencyMs: { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) },
      loadGeneratorCpuPercent: Math.round((user + system) / 1e4 / seconds),
    })}\n`,
  );
}

if (process.argv[2] === '--flood') {
  await flood(JSON.parse(process.argv[3])).catch((error) => {
    process.stderr.write(`pin-flood --flood: ${error.message}\n`);
    process.exit(1);
  });
  process.exit(0);
}

// ---------------------------------------------------------------- settings

const config = readSettings(readConfig);

function readConfig(env) {
  const int = (name, fallback, min, max) => wholeNumberSetting(env, name, fallback, min, max);
  const other = env.BENCH_CONNECT_ROOT?.trim() ? resolve(env.BENCH_CONNECT_ROOT.trim()) : undefined;
  if (other && !['packages/server/bin/connect-auth.js', 'packages/server/dist/index.js'].every((file) => existsSync(join(other, file)))) {
    fail(`BENCH_CONNECT_ROOT: no built Connect in ${other} (run npm ci and npm run build there)`);
  }
  return {
    duration: int('BENCH_DURATION', 20, 5, 300),
    warmup: int('BENCH_WARMUP', 3, 0, 30),
    loginRate: int('BENCH_LOGIN_RATE', 2, 1, 20),
    tokenRate: int('BENCH_TOKEN_RATE', 20, 1, 1000),
    connections: int('BENCH_CONNECTIONS', 64, 1, 1000),
    victims: int('BENCH_VICTIMS', 8, 1, 100),
    unregisteredPercent: int('BENCH_FLOOD_UNREGISTERED', 50, 0, 100),
    addresses: int('BENCH_FLOOD_ADDRESSES', 0, 0, 1_000_000),
    roots: [ROOT, ...(other ? [other] : [])],
    pin: env.BENCH_PIN !== '0',
    serverCpu: env.BENCH_SERVER_CPU?.trim() || '0',
    loadCpu: env.BENCH_LOAD_CPU?.trim() || '1',
    keepTemp: env.BENCH_KEEP_TMP === '1',
  };
}

const startedAt = Date.now();
const progress = progressPrinter(startedAt);

function pinned(cpu, command, args) {
  return config.pin ? ['taskset', ['-c', cpu, command, ...args]] : [command, args];
}

// ---------------------------------------------------------------- the probes

/** One legit login with the right PIN, from its own address; times the PIN POST. */
async function legitLogin(base, clientId, mobile, address) {
  const b = browser(base, { headers: { 'x-forwarded-for': address }, timeoutMs: REQUEST_TIMEOUT_MS });
  try {
    const start = await b.request(authorizePath(clientId, REDIRECT_URI));
    if (start.status !== 303 || !start.location?.startsWith('/login?')) return { kind: `authorize ${start.status}` };
    const page = await b.request(start.location);
    if (page.status !== 200) return { kind: `login page ${page.status}` };
    const t0 = performance.now();
    const answer = await b.request(formAction(page.text), { method: 'POST', form: { csrf_token: hiddenCsrf(page.text), mobile, pin: LEGIT_PIN, action: 'login' } });
    return { kind: answerKind(answer.status, answer.location, answer.text), ms: performance.now() - t0 };
  } catch (error) {
    return { kind: 'error', error: error.message };
  }
}

async function tokenCall(url, request) {
  const t0 = performance.now();
  try {
    const response = await fetch(url, { ...request, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - t0 };
  } catch (error) {
    return { status: 'error', error: error.message };
  }
}

/**
 * Legit logins and token requests at their fixed rates for `seconds`, each
 * started on schedule whether or not the ones before were answered; waits for
 * every answer. `nextLogin()` names the customer and address of the next login.
 */
async function probes(server, seconds, nextLogin) {
  const logins = [];
  const tokens = [];
  const pending = [];
  const loginEveryMs = 1000 / config.loginRate;
  const tokenEveryMs = 1000 / config.tokenRate;
  const request = tokenRequest(server.client);
  const startMs = performance.now();
  for (let l = 0, t = 0; ; ) {
    const dueLogin = l * loginEveryMs;
    const dueToken = t * tokenEveryMs;
    const due = Math.min(dueLogin, dueToken);
    if (due >= seconds * 1000) break;
    const wait = due - (performance.now() - startMs);
    if (wait > 0) await sleep(wait);
    if (dueLogin <= dueToken) {
      const { mobile, address } = nextLogin();
      const at = Math.round(dueLogin) / 1000;
      pending.push(legitLogin(server.base, server.client.id, mobile, address).then((r) => logins.push({ at, ...r })));
      l += 1;
    } else {
      pending.push(tokenCall(`${server.base}/token`, request).then((r) => tokens.push(r)));
      t += 1;
    }
  }
  await Promise.all(pending);
  const ok = logins.filter((r) => r.kind === 'accepted');
  const tokensOk = tokens.filter((r) => r.status === 200);
  const kinds = {};
  for (const r of logins) count(kinds, r.kind);
  const tokenStatuses = {};
  for (const r of tokens) count(tokenStatuses, r.status);
  return {
    logins: {
      sent: logins.length,
      accepted: ok.length,
      successPercent: logins.length === 0 ? null : (100 * ok.length) / logins.length,
      kinds,
      pinPostMs: { p50: quantile(ok.map((r) => r.ms), 0.5), p99: quantile(ok.map((r) => r.ms), 0.99), max: quantile(ok.map((r) => r.ms), 1) },
      // Each login: seconds into the phase, what the PIN POST answered, how long it took.
      each: logins.sort((a, b) => a.at - b.at).map((r) => ({ at: r.at, kind: r.kind, ms: r.ms === undefined ? undefined : Math.round(r.ms), ...(r.error ? { error: r.error } : {}) })),
    },
    tokens: {
      sent: tokens.length,
      ok: tokensOk.length,
      statuses: tokenStatuses,
      ms: { p50: quantile(tokensOk.map((r) => r.ms), 0.5), p99: quantile(tokensOk.map((r) => r.ms), 0.99), max: quantile(tokensOk.map((r) => r.ms), 1) },
    },
  };
}

/** Starts the flood process (pinned to the load CPU, at nice 10) and waits until its journeys are open. */
async function startFlood(server, victims) {
  const input = { base: server.base, clientId: server.client.id, connections: config.connections, victims, unregisteredPercent: config.unregisteredPercent, addresses: config.addresses };
  const [command, args] = pinned(config.loadCpu, 'nice', ['-n', '10', process.execPath, fileURLToPath(import.meta.url), '--flood', JSON.stringify(input)]);
  const child = spawnTracked(command, args, { cwd: ROOT, env: cleanEnv(), stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await Promise.race([lines.next(), sleep(60_000, undefined, { ref: false }).then(() => ({ timeout: true }))]);
  if (first.timeout || first.done || !JSON.parse(first.value).ready) fail(`the flood process did not start (${JSON.stringify(child.exited ?? 'no answer in 60 s')})`);
  return {
    async stop() {
      child.stdin.end();
      const last = await Promise.race([lines.next(), sleep(REQUEST_TIMEOUT_MS + 10_000, undefined, { ref: false }).then(() => ({ timeout: true }))]);
      if (last.timeout || last.done) fail(`the flood process gave no summary (${JSON.stringify(child.exited ?? 'no answer')})`);
      await stop(child);
      return JSON.parse(last.value);
    },
  };
}

// ---------------------------------------------------------------- one server

async function version(root) {
  return (await run('git', ['-C', root, 'rev-parse', '--short', 'HEAD']).catch(() => 'unknown')).trim();
}

async function benchServer(root) {
  const bin = join(root, 'packages/server/bin/connect-auth.js');
  const label = `${root === ROOT ? 'this checkout' : 'BENCH_CONNECT_ROOT'} (${await version(root)})`;
  const workDir = mkdtempSync(join(tmpdir(), 'connect-pin-flood-'));
  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  const env = {
    ...cleanEnv(),
    CONNECT_DATA_DIR: workDir,
    DATABASE_URL: `sqlite:${join(workDir, 'connect.db')}`,
    CONNECT_LOG_LEVEL: 'info',
    CONNECT_AUTH_URL: base,
    CONNECT_TRUST_PROXY: 'true',
    HOST,
  };
  // An older CLI may find the SQLite database locked by another command or the server: it tries again.
  const cli = async (args, tries = 10) => {
    try {
      return JSON.parse(await run(process.execPath, [bin, ...args, '--json'], { cwd: root, env, timeout: 60_000, killSignal: 'SIGKILL' }));
    } catch (error) {
      if (tries === 1 || !/database is locked/.test(error.message)) throw error;
      await sleep(randomInt(50, 250));
      return cli(args, tries - 1);
    }
  };
  let ok = false;
  let child;
  try {
    progress(`${label}: creating a client and the customers with the CLI, data in ${workDir}`);
    const created = await cli(['clients', 'create', '--name', 'Bench', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials,authorization_code']);
    if (!created.clientId || !created.clientSecret) fail(`${label}: clients create printed no credentials`);
    const client = { id: created.clientId, secret: created.clientSecret };
    const logins = config.loginRate * (config.warmup + 2 * config.duration);
    const legit = Array.from({ length: Math.ceil(logins / LOGINS_PER_CUSTOMER) }, (_, i) => legitMobile(i));
    const victims = Array.from({ length: config.victims }, (_, i) => victimMobile(i));
    const todo = [...legit.map((mobile) => [mobile, LEGIT_PIN]), ...victims.map((mobile) => [mobile, VICTIM_PIN])];
    const createStart = Date.now();
    // Two at a time: each starts Node and hashes its PIN (about 0.1 s).
    await Promise.all(
      [0, 1].map(async () => {
        for (let next = todo.shift(); next; next = todo.shift()) await cli(['customers', 'create', '--mobile', next[0], '--pin', next[1]]);
      }),
    );
    progress(`${label}: ${legit.length} legit customers and ${victims.length} victims in ${((Date.now() - createStart) / 1000).toFixed(1)} s`);

    const logFile = join(workDir, 'connect.log');
    const out = openSync(logFile, 'a');
    const [command, args] = pinned(config.serverCpu, process.execPath, [bin, 'serve']);
    progress(`${label}: starting Connect on ${base}${config.pin ? ` (CPU ${config.serverCpu})` : ''}`);
    child = spawnTracked(command, args, { cwd: root, env: { ...env, PORT: String(port) }, stdio: ['ignore', out, out] });
    closeSync(out);
    const server = { base, client, child };
    await waitUntilServing(label, { child, logFile }, `${base}/token`, tokenRequest(client), client, 30_000);

    let used = 0;
    const nextLogin = () => {
      const k = used++;
      return { mobile: legit[k % legit.length], address: legitAddress(1 + k) };
    };
    const measure = async (phase, during) => {
      const cpuBefore = cpuTimeMs(child.pid);
      const t0 = performance.now();
      const result = await probes(server, config.duration, nextLogin);
      const floodResult = await during?.stop();
      const seconds = (performance.now() - t0) / 1000;
      const cpuMs = cpuBefore === undefined ? undefined : cpuTimeMs(child.pid) - cpuBefore;
      if (child.exited) fail(`${label}: Connect exited during the ${phase} phase; see ${logFile}`);
      const row = { phase, seconds, ...result, flood: floodResult, serverCpuPercent: cpuMs === undefined ? undefined : cpuMs / 10 / seconds };
      const l = row.logins;
      progress(
        `${label}, ${phase}: legit ${l.accepted}/${l.sent} ${JSON.stringify(l.kinds)}, PIN POST p50 ${fmt(l.pinPostMs.p50, 1)} ms p99 ${fmt(l.pinPostMs.p99, 1)} ms; ` +
          `/token ${row.tokens.ok}/${row.tokens.sent} p50 ${fmt(row.tokens.ms.p50, 2)} ms p99 ${fmt(row.tokens.ms.p99, 2)} ms; server CPU ${fmt(row.serverCpuPercent, 0)}%` +
          (floodResult ? `; flood ${fmt(floodResult.attemptsPerSecond, 0)}/s ${JSON.stringify(floodResult.byKind)}, flood process CPU ${floodResult.loadGeneratorCpuPercent}%` : ''),
      );
      return row;
    };

    if (config.warmup > 0) {
      progress(`${label}: warming up ${config.warmup} s (legit logins and token requests)`);
      await probes(server, config.warmup, nextLogin);
    }
    progress(`${label}: baseline, ${config.duration} s: ${config.loginRate} legit logins/s, ${config.tokenRate} token requests/s`);
    const baseline = await measure('baseline');
    progress(`${label}: flood: opening ${config.connections} journeys`);
    const running = await startFlood(server, victims);
    progress(`${label}: flood, ${config.duration} s: the same, and wrong PINs over ${config.connections} connections`);
    const flooded = await measure('flood', running);
    // A PIN compared at a victim answers "wrong", or "locked" when the count it
    // added locked the account: each of those is a pin_lockout in the audit log.
    const lockouts = await cli(['audit', '--type', 'customer.pin_lockout', '--limit', '100000']);
    flooded.flood.pinLockoutEvents = lockouts.length;
    flooded.flood.pinsComparedPerVictim = ((flooded.flood.byTarget.victim.wrong ?? 0) + lockouts.length) / victims.length;
    ok = true;
    return { label, root, legitCustomers: legit.length, victims: victims.length, phases: [baseline, flooded] };
  } finally {
    if (child) await stop(child);
    if (ok && !config.keepTemp) rmSync(workDir, { recursive: true, force: true });
    else process.stderr.write(`bench: data and server log kept in ${workDir}\n`);
  }
}

// --------------------------------------------------------------------- main

const KINDS = ['wrong', 'locked', 'network', 'busy'];

async function main() {
  stopAfter(120 + config.roots.length * (180 + config.warmup + 2 * config.duration + 2 * REQUEST_TIMEOUT_MS / 1000), 'process');
  if (config.pin) {
    await checkPinning(config.serverCpu, config.loadCpu);
    // This process sends the legit logins and token requests: it shares the load core with the flood.
    await run('taskset', ['-a', '-p', '-c', config.loadCpu, String(process.pid)]);
  }
  const host = await machine();
  progress(`${host.cpus} CPUs (${host.model}), Node ${host.node}, load average ${host.loadAverage.join(' ')}`);
  progress(
    `phases of ${config.duration} s (warm-up ${config.warmup} s); ${config.loginRate} legit logins/s, ${config.tokenRate} token requests/s; flood over ${config.connections} connections, ` +
      `${config.victims} victims, ${config.unregisteredPercent}% at unregistered mobiles, ${config.addresses ? `${config.addresses} addresses` : 'a new address per attempt'}; ` +
      (config.pin ? `Connect on CPU ${config.serverCpu}, this script and the flood on CPU ${config.loadCpu}` : 'not pinned'),
  );
  try {
    const servers = [];
    for (const root of config.roots) servers.push(await benchServer(root));

    const rows = [['server', 'phase', 'legit ok', 'PIN POST p50', 'p99', '/token p50', 'p99', 'flood/s', 'wrong', 'locked', 'network', '503', 'other', 'PINs/victim', 'server CPU']];
    const ms = (value) => (value === null ? '-' : `${fmt(value, value < 100 ? 1 : 0)} ms`);
    for (const s of servers) {
      for (const p of s.phases) {
        const f = p.flood;
        const other = f ? Object.entries(f.byKind).reduce((sum, [kind, n]) => sum + (KINDS.includes(kind) ? 0 : n), 0) : undefined;
        rows.push([
          s.label,
          p.phase,
          `${fmt(p.logins.successPercent, 1)}%`,
          ms(p.logins.pinPostMs.p50),
          ms(p.logins.pinPostMs.p99),
          ms(p.tokens.ms.p50),
          ms(p.tokens.ms.p99),
          f ? fmt(f.attemptsPerSecond, 0) : '-',
          ...KINDS.map((kind) => (f ? fmt(f.byKind[kind] ?? 0, 0) : '-')),
          f ? fmt(other, 0) : '-',
          f ? fmt(f.pinsComparedPerVictim, 1) : '-',
          `${fmt(p.serverCpuPercent, 0)}%`,
        ]);
      }
    }
    process.stdout.write(`\n${textTable(rows, 2)}\n\n`);
    for (const s of servers) {
      const [b, f] = s.phases;
      const refused = f.logins.each.filter((l) => l.kind !== 'accepted');
      const ratio = (after, before) => (after === null || before === null ? '-' : `${fmt(after / before, 1)}x`);
      process.stdout.write(
        `${s.label}: flood / baseline: PIN POST p50 ${ratio(f.logins.pinPostMs.p50, b.logins.pinPostMs.p50)}, p99 ${ratio(f.logins.pinPostMs.p99, b.logins.pinPostMs.p99)}; ` +
          `/token p50 ${ratio(f.tokens.ms.p50, b.tokens.ms.p50)}, p99 ${ratio(f.tokens.ms.p99, b.tokens.ms.p99)}; ` +
          `PINs compared per victim ${fmt(f.flood.pinsComparedPerVictim, 1)} ("wrong" answers at the victims and pin_lockout audit events)` +
          (refused.length > 0 ? `; legit logins not accepted in the flood: ${refused.length}, the last one started ${fmt(refused.at(-1).at, 1)} s into it` : '') +
          '\n',
      );
    }

    const report = {
      benchmark: 'PIN checks under a wrong-PIN flood: legit logins and POST /token, without and with the flood',
      startedAt: new Date(startedAt).toISOString(),
      machine: { ...host, loadAverageAfter: loadAverage() },
      config: { ...config, legitPinAndVictimPin: 'fixed, 6 digits', connectRequestLogging: 'info, to a file', floodProcess: 'nice 10' },
      servers,
    };
    const file = writeResults('pin-flood', startedAt, report);
    process.stdout.write(`\nraw results: ${file}\n`);
  } finally {
    killAll();
  }
}

runMain(main);
