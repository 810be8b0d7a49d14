// Load benchmark of the client_credentials token request (`npm run bench`).
//
// Three servers answer the same `POST /token` (grant_type=client_credentials,
// HTTP Basic client authentication, form body), one after the other, in one
// run on one machine:
//
//   connect        Connect itself (`connect-auth serve`): embedded SQLite on a
//                  fresh data folder, request logging on at `info`, logs to a
//                  file in that folder;
//   oidc-provider  panva's oidc-provider 9, JWT access tokens (oidc-provider-server.js);
//   ceiling        a bare Fastify route doing the same work with nothing else
//                  (ceiling-server.js): the practical upper bound.
//
// Each server is pinned to one CPU core and the load generator (autocannon,
// in load.js) to another, so neither steals the other's CPU. Every server is
// checked with one real token request before it is loaded, warmed up, then
// measured. The servers take turns for several rounds (BENCH_ROUNDS), and the
// verdicts use the median of the rounds, so that one disturbed measurement
// does not decide them. See bench/README.md for the knobs (BENCH_* variables).
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkPinning, cleanEnv, cpuTimeMs, fail, freePort, HOST, killAll, run, spawnTracked, stop, stopAfter } from './processes.js';
import { fmt, loadAverage, machine, textTable, writeResults } from './report.js';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BENCH = join(ROOT, 'bench');
const CONNECT_BIN = join(ROOT, 'packages/server/bin/connect-auth.js');
/** USER_HZ of /proc/<pid>/stat (100 on Linux everywhere in practice). */

const SERVERS = {
  connect: { label: 'Connect' },
  'oidc-provider': { label: 'oidc-provider 9' },
  ceiling: { label: 'ceiling (bare Fastify)' },
};

/** The targets the token endpoint is held to (with request logging on). */
const TARGETS = { vsOidcProvider: 2, vsCeiling: 0.9, p99Ms: 10 };

const config = (() => {
  try {
    return readConfig(process.env);
  } catch (error) {
    process.stderr.write(`bench: ${error.message}\n`);
    process.exit(2);
  }
})();
const startedAt = Date.now();

function readConfig(env) {
  const int = (name, fallback, min, max) => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) fail(`${name} must be a whole number from ${min} to ${max}, not "${raw}"`);
    return value;
  };
  const servers = (env.BENCH_SERVERS?.trim() || 'ceiling,oidc-provider,connect').split(',').map((s) => s.trim());
  for (const name of servers) {
    if (!SERVERS[name]) fail(`BENCH_SERVERS: unknown server "${name}"; known: ${Object.keys(SERVERS).join(', ')}`);
  }
  if (!['jose', 'node'].includes(env.BENCH_CEILING_SIGNER?.trim() || 'jose')) fail('BENCH_CEILING_SIGNER must be jose or node');
  const ceilingWith = (env.BENCH_CEILING_WITH?.trim() || '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const part of ceilingWith) if (!['log', 'headers'].includes(part)) fail(`BENCH_CEILING_WITH: unknown part "${part}"; known: log, headers`);
  return {
    rounds: int('BENCH_ROUNDS', 3, 1, 10),
    duration: int('BENCH_DURATION', 10, 1, 60),
    warmup: int('BENCH_WARMUP', 3, 0, 30),
    connections: int('BENCH_CONNECTIONS', 16, 1, 1000),
    pipelining: int('BENCH_PIPELINING', 1, 1, 100),
    servers,
    pin: env.BENCH_PIN !== '0',
    serverCpu: env.BENCH_SERVER_CPU?.trim() || '0',
    loadCpu: env.BENCH_LOAD_CPU?.trim() || '1',
    ceilingSigner: env.BENCH_CEILING_SIGNER?.trim() || 'jose',
    ceilingWith,
    cpuProfile: env.BENCH_CPU_PROF === '1',
    keepTemp: env.BENCH_KEEP_TMP === '1',
    enforceTargets: env.BENCH_ENFORCE_TARGETS === '1',
  };
}

function progress(message) {
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1).padStart(5);
  process.stdout.write(`[bench ${seconds}s] ${message}\n`);
}

// ---------------------------------------------------------------- processes

/** Runs `command` under `taskset -c <cpu>` when pinning is on. */
function pinned(cpu, command, args) {
  return config.pin ? ['taskset', ['-c', cpu, command, ...args]] : [command, args];
}

// ------------------------------------------------------------------ servers

/** Connect's environment: fresh data folder, embedded SQLite, logging at info. */
function connectEnv(workDir) {
  return {
    ...cleanEnv(),
    CONNECT_DATA_DIR: workDir,
    DATABASE_URL: `sqlite:${join(workDir, 'connect.db')}`,
    CONNECT_LOG_LEVEL: process.env.BENCH_CONNECT_LOG_LEVEL ?? 'info',
    HOST,
  };
}

async function createConnectClient(workDir) {
  const stdout = await run(
    process.execPath,
    [CONNECT_BIN, 'clients', 'create', '--name', 'Bench', '--redirect-uri', 'https://b.example/cb', '--grants', 'client_credentials', '--json'],
    { cwd: ROOT, env: connectEnv(workDir) },
  );
  const created = JSON.parse(stdout);
  if (!created.clientId || !created.clientSecret) fail(`clients create printed no credentials: ${stdout}`);
  return { id: created.clientId, secret: created.clientSecret };
}

/** Starts one server on `port`, its output going to a file in `workDir`. */
function startServer(name, port, workDir, client) {
  const logFile = join(workDir, `${name}.log`);
  const out = openSync(logFile, 'a');
  const nodeArgs = config.cpuProfile ? ['--cpu-prof', '--cpu-prof-dir', join(BENCH, 'results', 'profiles'), '--cpu-prof-name', `${name}-${process.pid}.cpuprofile`] : [];
  let script;
  let env;
  if (name === 'connect') {
    script = [CONNECT_BIN, 'serve'];
    env = { ...connectEnv(workDir), PORT: String(port) };
  } else {
    script = [join(BENCH, name === 'ceiling' ? 'ceiling-server.js' : 'oidc-provider-server.js')];
    env = { ...cleanEnv(), PORT: String(port), HOST, BENCH_CLIENT_ID: client.id, BENCH_CLIENT_SECRET: client.secret, CEILING_SIGNER: config.ceilingSigner, CEILING_WITH: config.ceilingWith.join(',') };
  }
  const [command, args] = pinned(config.serverCpu, process.execPath, [...nodeArgs, ...script]);
  const child = spawnTracked(command, args, { cwd: ROOT, env, stdio: ['ignore', out, out] });
  closeSync(out);
  return { child, logFile };
}

// ----------------------------------------------------------------- requests

function tokenRequest(client) {
  const basic = Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64');
  return {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  };
}

/** Sends one token request and checks that a real JWT access token came back. */
async function checkTokenResponse(url, request, client) {
  const response = await fetch(url, { ...request, signal: AbortSignal.timeout(5000) });
  const text = await response.text();
  const problem = (what) => fail(`${url}: ${what}; status ${response.status}, body ${text.slice(0, 300)}`);
  if (response.status !== 200) problem('token request did not succeed');
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    problem('response is not JSON');
  }
  const parts = typeof body.access_token === 'string' ? body.access_token.split('.') : [];
  if (parts.length !== 3 || parts.some((p) => p === '')) problem('access_token is not a compact JWS (3 dot-separated parts)');
  if (String(body.token_type).toLowerCase() !== 'bearer') problem('token_type is not Bearer');
  if (!/no-store/.test(response.headers.get('cache-control') ?? '')) problem('response lacks Cache-Control: no-store');
  const decode = (part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  const header = decode(parts[0]);
  const claims = decode(parts[1]);
  if (header.alg !== 'ES256' || String(header.typ).toLowerCase() !== 'at+jwt' || !header.kid) {
    problem(`JWT header is ${JSON.stringify(header)}, expected alg ES256, typ at+jwt and a kid`);
  }
  const missing = ['iss', 'sub', 'client_id', 'aud', 'iat', 'exp', 'jti'].filter((claim) => claims[claim] === undefined);
  if (missing.length > 0) problem(`JWT lacks the claims ${missing.join(', ')}`);
  if (claims.sub !== client.id || claims.client_id !== client.id) problem('JWT sub/client_id is not the client');
  return { header, claims: Object.keys(claims).sort() };
}

/** Waits until the server answers a token request (or dies, or `timeoutMs` passes). */
async function waitUntilServing(name, server, url, request, client, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (server.child.exited) fail(`${name} exited during start-up (${JSON.stringify(server.child.exited)}); see ${server.logFile}`);
    try {
      return await checkTokenResponse(url, request, client);
    } catch (error) {
      const refused = error.cause?.code === 'ECONNREFUSED';
      if (!refused) throw error;
      if (Date.now() > deadline) fail(`${name} did not start listening within ${timeoutMs / 1000} s; see ${server.logFile}`);
      await sleep(100);
    }
  }
}

/** One autocannon run in its own (pinned) process; returns load.js's summary. */
async function load(url, request, duration) {
  const options = { url, ...request, duration, connections: config.connections, pipelining: config.pipelining };
  const [command, args] = pinned(config.loadCpu, process.execPath, [join(BENCH, 'load.js'), JSON.stringify(options)]);
  const stdout = await run(command, args, { cwd: ROOT, timeout: (duration + 30) * 1000, killSignal: 'SIGKILL' });
  return JSON.parse(stdout.trim().split('\n').pop());
}

function countLines(file) {
  let lines = 0;
  for (const byte of readFileSync(file)) if (byte === 10) lines += 1;
  return lines;
}

// -------------------------------------------------------------- one server

/** Whether the ceiling runs as defined: jose signing, nothing of Connect added. */
function ceilingIsBare() {
  return config.ceilingSigner === 'jose' && config.ceilingWith.length === 0;
}

/** The ceiling's label, naming what a run changed in it. */
function ceilingLabel() {
  const signer = config.ceilingSigner === 'node' ? ', node:crypto' : '';
  const added = config.ceilingWith.length > 0 ? ` + Connect ${config.ceilingWith.join(' + ')}` : '';
  return signer || added ? `ceiling (bare Fastify${signer}${added})` : SERVERS.ceiling.label;
}

async function benchServer(name, workDir, client) {
  const label = name === 'ceiling' ? ceilingLabel() : SERVERS[name].label;
  const port = await freePort();
  const url = `http://${HOST}:${port}/token`;
  const request = tokenRequest(client);
  progress(`${label}: starting on ${HOST}:${port}${config.pin ? ` (CPU ${config.serverCpu})` : ''}`);
  const server = startServer(name, port, workDir, client);
  try {
    const checked = await waitUntilServing(name, server, url, request, client);
    progress(`${label}: serving; JWT ${checked.header.alg}/${checked.header.typ} with ${checked.claims.join(', ')}`);
    if (config.warmup > 0) {
      progress(`${label}: warming up ${config.warmup} s`);
      await load(url, request, config.warmup);
    }
    const linesBefore = countLines(server.logFile);
    const cpuBefore = cpuTimeMs(server.child.pid);
    progress(`${label}: measuring ${config.duration} s, ${config.connections} connections, pipelining ${config.pipelining}`);
    const result = await load(url, request, config.duration);
    const cpuMs = cpuBefore === undefined ? undefined : cpuTimeMs(server.child.pid) - cpuBefore;
    const cpuUsPerRequest = cpuMs === undefined ? undefined : Math.round((cpuMs * 1000) / result.requestsTotal);
    const serverCpuPercent = cpuMs === undefined ? undefined : Math.round(cpuMs / 10 / result.duration);
    await checkTokenResponse(url, request, client);
    if (server.child.exited) fail(`${name} exited during the run; see ${server.logFile}`);
    const logLines = countLines(server.logFile) - linesBefore;
    progress(
      `${label}: ${fmt(result.requestsPerSecond, 0)} req/s, p50 ${fmt(result.latencyMs.p50, 2)} ms, p99 ${fmt(result.latencyMs.p99, 2)} ms, ` +
        `non-2xx ${result.non2xx}, server CPU ${fmt(cpuUsPerRequest, 0)} µs/request (${fmt(serverCpuPercent, 0)}% of a core), ` +
        `load generator ${result.loadGeneratorCpuPercent}% of a core` +
        (name === 'connect' ? `, ${logLines} log lines written` : ''),
    );
    return {
      name,
      label,
      ...result,
      serverCpuMs: cpuMs,
      serverCpuUsPerRequest: cpuUsPerRequest,
      serverCpuPercent,
      logLines: name === 'connect' ? logLines : undefined,
    };
  } finally {
    await stop(server.child);
  }
}

// ------------------------------------------------------------------- report

function table(summaries) {
  const rows = [
    ['server', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'CPU µs/req'],
    ...summaries.map((r) => [
      r.label,
      fmt(r.requestsPerSecond, 0),
      fmt(r.p50Ms, 2),
      fmt(r.p99Ms, 2),
      String(r.non2xx),
      String(r.errors),
      fmt(r.serverCpuUsPerRequest, 0),
    ]),
  ];
  return textTable(rows);
}

/** The middle value (the mean of the two middle ones for an even count); undefined if any is unknown. */
function median(values) {
  if (values.length === 0 || values.some((v) => v === undefined)) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * One server over all rounds: the median of its req/s, p50 and CPU per
 * request, the highest of its p99s, and every non-2xx response and error.
 */
function summarize(runs) {
  return {
    name: runs[0].name,
    label: runs[0].label,
    rounds: runs.length,
    requestsPerSecond: median(runs.map((r) => r.requestsPerSecond)),
    p50Ms: median(runs.map((r) => r.latencyMs.p50)),
    p99Ms: Math.max(...runs.map((r) => r.latencyMs.p99)),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    errors: runs.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
    serverCpuUsPerRequest: median(runs.map((r) => r.serverCpuUsPerRequest)),
  };
}

/** `a`'s requests per second over `b`'s in each round (servers measured minutes apart at most). */
function roundRatios(rounds, a, b) {
  return rounds.flatMap((results) => {
    const first = results.find((r) => r.name === a);
    const second = results.find((r) => r.name === b);
    return first && second ? [first.requestsPerSecond / second.requestsPerSecond] : [];
  });
}

// --------------------------------------------------------------------- main

async function main() {
  // Whatever happens, the run ends: every step has its own timeout, and this is the last resort.
  const deadlineSeconds = 60 + config.rounds * config.servers.length * (config.warmup + config.duration + 45);
  stopAfter(deadlineSeconds, 'server');

  if (config.pin) await checkPinning(config.serverCpu, config.loadCpu);
  const host = await machine();
  progress(`${host.cpus} CPUs (${host.model}), Node ${host.node}, load average ${host.loadAverage.join(' ')}`);
  progress(
    `servers ${config.servers.join(', ')}, ${config.rounds} round${config.rounds === 1 ? '' : 's'}; warm-up ${config.warmup} s, measure ${config.duration} s, ${config.connections} connections, pipelining ${config.pipelining}; ` +
      (config.pin ? `servers on CPU ${config.serverCpu}, load generator on CPU ${config.loadCpu}` : 'not pinned'),
  );

  const workDir = mkdtempSync(join(tmpdir(), 'connect-bench-'));
  let ok = false;
  try {
    progress(`creating a Connect client in ${workDir}`);
    const client = await createConnectClient(workDir);
    const rounds = [];
    for (let round = 1; round <= config.rounds; round += 1) {
      if (config.rounds > 1) progress(`round ${round} of ${config.rounds}`);
      const results = [];
      for (const name of config.servers) results.push({ round, ...(await benchServer(name, workDir, client)) });
      rounds.push(results);
    }

    const summaries = config.servers.map((name) => summarize(rounds.map((results) => results.find((r) => r.name === name))));
    const connect = summaries.find((s) => s.name === 'connect');
    const perRound = { connectVsOidcProvider: roundRatios(rounds, 'connect', 'oidc-provider'), connectVsCeiling: roundRatios(rounds, 'connect', 'ceiling') };
    const ratios = { connectVsOidcProvider: median(perRound.connectVsOidcProvider), connectVsCeiling: median(perRound.connectVsCeiling) };
    const targets = {
      connectVsOidcProvider: ratios.connectVsOidcProvider === undefined ? undefined : ratios.connectVsOidcProvider >= TARGETS.vsOidcProvider,
      // The target is about the bare ceiling; a changed one (BENCH_CEILING_SIGNER, BENCH_CEILING_WITH) only measures.
      connectVsCeiling: ratios.connectVsCeiling === undefined || !ceilingIsBare() ? undefined : ratios.connectVsCeiling >= TARGETS.vsCeiling,
      connectP99: connect ? connect.p99Ms < TARGETS.p99Ms && connect.non2xx === 0 : undefined,
    };

    const mark = (met) => (met === undefined ? 'n/a' : met ? 'met' : 'MISSED');
    const several = config.rounds > 1;
    if (several) process.stdout.write(`\nmedians of ${config.rounds} rounds; p99 is the highest of them, non-2xx and errors their sum`);
    process.stdout.write(`\n${table(summaries)}\n\n`);
    // A server that did not use (nearly) all of its core was held back by something else.
    const heldBack = rounds.flat().filter((r) => r.serverCpuPercent !== undefined && r.serverCpuPercent < 90);
    for (const r of heldBack) {
      process.stdout.write(`note: ${r.label} used only ${r.serverCpuPercent}% of its core in round ${r.round}; other work on the machine held it back, so that round's ratios are unreliable\n`);
    }
    const eachRound = (values, digits, unit) => (several ? `; rounds ${values.map((v) => fmt(v, digits) + unit).join(', ')}` : '');
    if (ratios.connectVsOidcProvider !== undefined) {
      process.stdout.write(
        `Connect / oidc-provider: ${fmt(ratios.connectVsOidcProvider, 2)}x  (target >= ${TARGETS.vsOidcProvider}x: ${mark(targets.connectVsOidcProvider)}` +
          `${eachRound(perRound.connectVsOidcProvider, 2, 'x')})\n`,
      );
    }
    if (ratios.connectVsCeiling !== undefined) {
      const verdict = ceilingIsBare() ? `target >= ${TARGETS.vsCeiling * 100}%: ${mark(targets.connectVsCeiling)}` : 'the target applies to the bare ceiling only';
      process.stdout.write(
        `Connect / ceiling:       ${fmt(ratios.connectVsCeiling * 100, 1)}%  (${verdict}${eachRound(perRound.connectVsCeiling.map((r) => r * 100), 1, '%')})\n`,
      );
    }
    if (connect) {
      process.stdout.write(`Connect p99:             ${fmt(connect.p99Ms, 2)} ms (target < ${TARGETS.p99Ms} ms, no non-2xx: ${mark(targets.connectP99)})\n`);
    }

    const report = {
      benchmark: 'POST /token grant_type=client_credentials, client_secret_basic',
      startedAt: new Date(startedAt).toISOString(),
      machine: { ...host, loadAverageAfter: loadAverage() },
      config: { ...config, connectRequestLogging: 'info, to a file' },
      summaries,
      rounds,
      ratios: { ...ratios, perRound },
      heldBack: heldBack.map((r) => ({ name: r.name, round: r.round })),
      targets: { ...TARGETS, met: targets },
    };
    const file = writeResults('token-bench', startedAt, report);
    process.stdout.write(`\nraw results: ${file}\n`);
    ok = true;
    if (config.enforceTargets && Object.values(targets).some((met) => met === false)) process.exitCode = 1;
  } finally {
    killAll();
    if (ok && !config.keepTemp) rmSync(workDir, { recursive: true, force: true });
    else process.stderr.write(`bench: server logs kept in ${workDir}\n`);
  }
}

main().catch((error) => {
  process.stderr.write(`\nbench FAILED: ${error.benchFailure ? error.message : (error.stack ?? error)}\n`);
  killAll();
  process.exitCode = 1;
});
