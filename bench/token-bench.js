// Load benchmark of the client_credentials token request (`npm run bench`).
//
// Three servers answer the same `POST /token` (grant_type=client_credentials,
// HTTP Basic client authentication, form body), one after the other, in one
// run on one machine: Connect, oidc-provider and the ceiling, a bare Fastify
// route doing the same work (token-servers.js describes and starts them).
//
// Each server is pinned to one CPU core and the load generator (autocannon,
// in load.js) to another, so neither steals the other's CPU. Every server is
// checked with one real token request before it is loaded, warmed up, then
// measured. The servers take turns for several rounds (BENCH_ROUNDS), and the
// verdicts use the median of the rounds, so that one disturbed measurement
// does not decide them. See bench/README.md for the knobs (BENCH_* variables).
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkPinning, cpuTimeMs, fail, freePort, HOST, killAll, readSettings, run, runMain, spawnTracked, stop, stopAfter, wholeNumberSetting } from './processes.js';
import { fmt, loadAverage, machine, median, progressPrinter, textTable, writeResults } from './report.js';
import { BENCH, ceilingIsBare, checkTokenResponse, countLines, createConnectClient, readServerConfig, ROOT, serverLabel, serverLaunch, tokenRequest, waitUntilServing } from './token-servers.js';

/** The targets the token endpoint is held to (with request logging on). */
const TARGETS = { vsOidcProvider: 2, vsCeiling: 0.9, p99Ms: 10 };

const config = readSettings(readConfig);
const startedAt = Date.now();
const progress = progressPrinter(startedAt);

function readConfig(env) {
  const int = (name, fallback, min, max) => wholeNumberSetting(env, name, fallback, min, max);
  return {
    ...readServerConfig(env, 'ceiling,oidc-provider,connect'),
    rounds: int('BENCH_ROUNDS', 3, 1, 10),
    duration: int('BENCH_DURATION', 10, 1, 60),
    warmup: int('BENCH_WARMUP', 3, 0, 30),
    connections: int('BENCH_CONNECTIONS', 16, 1, 1000),
    pipelining: int('BENCH_PIPELINING', 1, 1, 100),
    pin: env.BENCH_PIN !== '0',
    serverCpu: env.BENCH_SERVER_CPU?.trim() || '0',
    loadCpu: env.BENCH_LOAD_CPU?.trim() || '1',
    cpuProfile: env.BENCH_CPU_PROF === '1',
    keepTemp: env.BENCH_KEEP_TMP === '1',
    enforceTargets: env.BENCH_ENFORCE_TARGETS === '1',
  };
}


// ---------------------------------------------------------------- processes

/** Runs `command` under `taskset -c <cpu>` when pinning is on. */
function pinned(cpu, command, args) {
  return config.pin ? ['taskset', ['-c', cpu, command, ...args]] : [command, args];
}

// ------------------------------------------------------------------ servers

/** Starts one server on `port`, its output going to a file in `workDir`. */
function startServer(name, port, workDir, client) {
  const logFile = join(workDir, `${name}.log`);
  const out = openSync(logFile, 'a');
  const nodeArgs = config.cpuProfile ? ['--cpu-prof', '--cpu-prof-dir', join(BENCH, 'results', 'profiles'), '--cpu-prof-name', `${name}-${process.pid}.cpuprofile`] : [];
  const { script, env } = serverLaunch(name, { port, workDir, client, config });
  const [command, args] = pinned(config.serverCpu, process.execPath, [...nodeArgs, ...script]);
  const child = spawnTracked(command, args, { cwd: ROOT, env, stdio: ['ignore', out, out] });
  closeSync(out);
  return { child, logFile };
}

// ----------------------------------------------------------------- requests

/** One autocannon run in its own (pinned) process; returns load.js's summary. */
async function load(url, request, duration) {
  const options = { url, ...request, duration, connections: config.connections, pipelining: config.pipelining };
  const [command, args] = pinned(config.loadCpu, process.execPath, [join(BENCH, 'load.js'), JSON.stringify(options)]);
  const stdout = await run(command, args, { cwd: ROOT, timeout: (duration + 30) * 1000, killSignal: 'SIGKILL' });
  return JSON.parse(stdout.trim().split('\n').pop());
}

// -------------------------------------------------------------- one server

async function benchServer(name, workDir, client) {
  const label = serverLabel(name, config);
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

/**
 * `value` with `digits` decimals, or more where those would print a value
 * that misses `target` as the target itself (1.996 as 2.00).
 */
function againstTarget(value, target, digits) {
  let shown = digits;
  while (shown < 6 && value < target && fmt(value, shown) === fmt(target, shown)) shown += 1;
  return fmt(value, shown);
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
    const client = await createConnectClient(workDir, config);
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
      connectVsCeiling: ratios.connectVsCeiling === undefined || !ceilingIsBare(config) ? undefined : ratios.connectVsCeiling >= TARGETS.vsCeiling,
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
        `Connect / oidc-provider: ${againstTarget(ratios.connectVsOidcProvider, TARGETS.vsOidcProvider, 2)}x  (target >= ${TARGETS.vsOidcProvider}x: ${mark(targets.connectVsOidcProvider)}` +
          `${eachRound(perRound.connectVsOidcProvider, 2, 'x')})\n`,
      );
    }
    if (ratios.connectVsCeiling !== undefined) {
      const verdict = ceilingIsBare(config) ? `target >= ${TARGETS.vsCeiling * 100}%: ${mark(targets.connectVsCeiling)}` : 'the target applies to the bare ceiling only';
      process.stdout.write(
        `Connect / ceiling:       ${againstTarget(ratios.connectVsCeiling * 100, TARGETS.vsCeiling * 100, 1)}%  (${verdict}${eachRound(perRound.connectVsCeiling.map((r) => r * 100), 1, '%')})\n`,
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

runMain(main);
