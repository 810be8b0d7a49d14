// Instructions per client-credentials token request (`npm run bench:instructions`).
//
// Requests per second on a shared virtual machine move by several percent
// from one run to the next for reasons outside the servers. The number of
// instructions a server executes per request hardly moves: this script runs
// each server under Valgrind's callgrind, warms it up, then counts the
// instructions (all threads, user space: JavaScript, V8, libuv, OpenSSL; not
// the kernel) of a fixed number of requests. So a change to Connect's hot path
// can be weighed on any machine, and Connect compared with the ceiling, in
// figures that repeat within about 1% (an odd round a few percent higher, so
// the servers take turns for several rounds and the median counts).
//
// What it cannot see: time the kernel spends (system calls, context
// switches) and how fast the processor runs the instructions (cache misses).
// Requests per second are measured by token-bench.js; bench/README.md has both.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fail, freePort, HOST, killAll, readSettings, run, runMain, spawnTracked, stop, stopAfter, wholeNumberSetting } from './processes.js';
import { fmt, loadAverage, machine, median, progressPrinter, textTable, writeResults } from './report.js';
import { BENCH, ceilingIsBare, checkTokenResponse, countLines, createConnectClient, readServerConfig, ROOT, serverLabel, serverLaunch, tokenRequest, waitUntilServing } from './token-servers.js';

const config = readSettings(readConfig);
const startedAt = Date.now();
const progress = progressPrinter(startedAt);
/** Warm-up requests per load generator run (each run opens new connections). */
const WARMUP_PASS = 2000;

function readConfig(env) {
  const int = (name, fallback, min, max) => wholeNumberSetting(env, name, fallback, min, max);
  return {
    ...readServerConfig(env, 'ceiling,connect'),
    rounds: int('BENCH_ROUNDS', 3, 1, 10),
    warmupRequests: int('BENCH_WARMUP_REQUESTS', 10_000, 0, 100_000),
    requests: int('BENCH_REQUESTS', 4000, 100, 100_000),
    connections: int('BENCH_CONNECTIONS', 4, 1, 64),
    keepTemp: env.BENCH_KEEP_TMP === '1',
  };
}


/** Sends exactly `amount` requests with load.js (autocannon); fails on any non-2xx. */
async function send(url, request, amount) {
  const options = { url, ...request, amount, duration: 3600, connections: config.connections, timeout: 60 };
  const stdout = await run(process.execPath, [join(BENCH, 'load.js'), JSON.stringify(options)], { cwd: ROOT, timeout: 30 * 60 * 1000, killSignal: 'SIGKILL' });
  const result = JSON.parse(stdout.trim().split('\n').pop());
  if (result.responses2xx !== amount || result.errors > 0 || result.timeouts > 0) {
    fail(`${url}: of ${amount} requests ${result.responses2xx} succeeded (statuses ${JSON.stringify(result.statusCodes)}, errors ${result.errors}, timeouts ${result.timeouts})`);
  }
}

/** Runs `callgrind_control` against the server's Valgrind (same environment and vgdb prefix). */
function callgrindControl(server, args) {
  return run('callgrind_control', [`--vgdb-prefix=${server.vgdbPrefix}`, ...args, String(server.child.pid)], { env: server.env, timeout: 120_000 });
}

/** The instruction count (`Ir`) a callgrind dump file records in all. */
function instructionsIn(file) {
  const text = readFileSync(file, 'utf8');
  const events = /^events:\s*(.+)$/m.exec(text)?.[1]?.trim().split(/\s+/) ?? [];
  const totals = /^(?:summary|totals):\s*(.+)$/m.exec(text)?.[1]?.trim().split(/\s+/) ?? [];
  const index = events.indexOf('Ir');
  const value = Number(totals[index]);
  if (index === -1 || !Number.isSafeInteger(value)) fail(`${file}: no instruction count in the callgrind dump`);
  return value;
}

/** One server under callgrind: warm it up, count the instructions of `config.requests` requests. */
async function countServer(name, workDir, client, round) {
  const label = serverLabel(name, config);
  const port = await freePort();
  const url = `http://${HOST}:${port}/token`;
  const request = tokenRequest(client);
  const logFile = join(workDir, `${name}-${round}.log`);
  const { script, env } = serverLaunch(name, { port, workDir, client, config });
  const vgdbPrefix = join(workDir, `vgdb-${name}-${round}`);
  const outFile = join(workDir, `callgrind-${name}-${round}.out`);
  progress(`${label}: starting under callgrind on ${HOST}:${port}`);
  const out = openSync(logFile, 'a');
  const child = spawnTracked(
    'valgrind',
    ['--tool=callgrind', '--instr-atstart=no', `--vgdb-prefix=${vgdbPrefix}`, `--callgrind-out-file=${outFile}`, process.execPath, ...script],
    { cwd: ROOT, env, stdio: ['ignore', out, out] },
  );
  closeSync(out);
  const server = { child, env, vgdbPrefix, logFile };
  try {
    await waitUntilServing(name, server, url, request, client, 180_000);
    if (config.warmupRequests > 0) {
      progress(`${label}: warming up with ${fmt(config.warmupRequests, 0)} requests`);
      // In passes, each on new connections as the counted run will be: V8
      // re-optimizes the connection handling code a few times before it settles.
      for (let left = config.warmupRequests; left > 0; left -= WARMUP_PASS) await send(url, request, Math.min(left, WARMUP_PASS));
    }
    const linesBefore = name === 'connect' ? countLines(logFile) : undefined;
    await callgrindControl(server, ['--instr=on']);
    progress(`${label}: counting the instructions of ${fmt(config.requests, 0)} requests, ${config.connections} connections`);
    await send(url, request, config.requests);
    await callgrindControl(server, ['--dump=measured']);
    await callgrindControl(server, ['--instr=off']);
    await checkTokenResponse(url, request, client, 60_000);
    if (child.exited) fail(`${name} exited during the run; see ${logFile}`);
    const logLines = linesBefore === undefined ? undefined : countLines(logFile) - linesBefore;
    // The dump taken after the counted requests is the first part file.
    const instructions = instructionsIn(`${outFile}.1`);
    const perRequest = instructions / config.requests;
    progress(`${label}: ${fmt(perRequest, 0)} instructions per request` + (logLines === undefined ? '' : `, ${logLines} log lines written`));
    return { name, label, round, requests: config.requests, instructions, instructionsPerRequest: perRequest, logLines };
  } finally {
    await stop(child, 15_000);
  }
}

async function main() {
  stopAfter(120 + config.rounds * config.servers.length * (240 + (config.warmupRequests + config.requests) / 20), 'server');
  try {
    await run('valgrind', ['--version']);
  } catch {
    fail('valgrind is not installed; on Debian or Ubuntu: apt-get install valgrind');
  }
  const host = await machine();
  progress(`${host.cpus} CPUs (${host.model}), Node ${host.node}, load average ${host.loadAverage.join(' ')}`);
  progress(
    `servers ${config.servers.join(', ')}, ${config.rounds} round${config.rounds === 1 ? '' : 's'}; ` +
      `${fmt(config.warmupRequests, 0)} warm-up requests, ${fmt(config.requests, 0)} counted, ${config.connections} connections`,
  );

  const workDir = mkdtempSync(join(tmpdir(), 'connect-bench-'));
  let ok = false;
  try {
    progress(`creating a Connect client in ${workDir}`);
    const client = await createConnectClient(workDir, config);
    const runs = [];
    for (let round = 1; round <= config.rounds; round += 1) {
      if (config.rounds > 1) progress(`round ${round} of ${config.rounds}`);
      for (const name of config.servers) runs.push(await countServer(name, workDir, client, round));
    }
    const summaries = config.servers.map((name) => {
      const own = runs.filter((r) => r.name === name).map((r) => r.instructionsPerRequest);
      return { name, label: serverLabel(name, config), instructionsPerRequest: median(own), rounds: own };
    });
    const ceiling = summaries.find((s) => s.name === 'ceiling');
    const rows = [['server', 'instructions/req', ...(ceiling ? ['vs ceiling'] : [])]];
    for (const s of summaries) {
      rows.push([s.label, fmt(s.instructionsPerRequest, 0), ...(ceiling ? [`${fmt((s.instructionsPerRequest / ceiling.instructionsPerRequest) * 100, 1)}%`] : [])]);
    }
    if (config.rounds > 1) process.stdout.write(`\nmedians of ${config.rounds} rounds`);
    process.stdout.write(`\n${textTable(rows)}\n`);
    const connect = summaries.find((s) => s.name === 'connect');
    if (connect && ceiling) {
      // Requests per CPU second would stand in this ratio if every instruction took as long.
      const share = ceiling.instructionsPerRequest / connect.instructionsPerRequest;
      process.stdout.write(
        `\nConnect runs ${fmt(connect.instructionsPerRequest - ceiling.instructionsPerRequest, 0)} instructions per request more than the ` +
          `${ceilingIsBare(config) ? '' : 'changed '}ceiling: by instructions alone it would answer ${fmt(share * 100, 1)}% of the ceiling's requests per second\n`,
      );
    }
    const oidcProvider = summaries.find((s) => s.name === 'oidc-provider');
    if (connect && oidcProvider) {
      process.stdout.write(
        `oidc-provider runs ${fmt(oidcProvider.instructionsPerRequest / connect.instructionsPerRequest, 2)}x as many instructions per request as Connect\n`,
      );
    }
    const report = {
      benchmark: 'instructions per POST /token grant_type=client_credentials, client_secret_basic (callgrind)',
      startedAt: new Date(startedAt).toISOString(),
      machine: { ...host, loadAverageAfter: loadAverage() },
      config,
      summaries,
      runs,
    };
    const file = writeResults('instructions', startedAt, report);
    process.stdout.write(`\nraw results: ${file}\n`);
    ok = true;
  } finally {
    killAll();
    if (ok && !config.keepTemp) rmSync(workDir, { recursive: true, force: true });
    else process.stderr.write(`bench: server logs and callgrind files kept in ${workDir}\n`);
  }
}

runMain(main);
