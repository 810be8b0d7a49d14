// Two token servers measured side by side (`npm run bench:paired`).
//
// token-bench.js measures the servers one after the other, each alone on its
// core. On a shared virtual machine the host itself speeds up and slows down
// from one minute to the next, by 10% and more, and a ratio of two servers
// measured a minute apart moves with it. Here the two servers run at the same
// time, both pinned to the same CPU, each loaded by its own load generator on
// the other CPU. The scheduler shares the one core between them, so each gets
// half of it, whatever the host does, and the ratio of their requests per
// second is the ratio of what a request costs each of them. A change to
// Connect's hot path is weighed in a minute or two: pair Connect with itself
// before and after, or with one setting changed.
//
// Each round starts both servers afresh, in turns which one first, and warms
// them up: what a process's start gave it (where its code landed, what V8
// compiled and how) stays with it while it runs, and moved one build against
// itself by up to 11% for a whole run of rounds on the same two processes.
// The median of rounds with fresh processes is the figure.
//
// What it does not give: the requests per second of one server with a core of
// its own, or its latency at that load, which the targets are about
// (token-bench.js). Two processes on one core also share its caches, which
// costs the one with more code on its path a little more than when it runs
// alone.
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkPinning, cpuTimeMs, fail, freePort, HOST, killAll, readSettings, run, runMain, spawnTracked, stop, stopAfter, wholeNumberSetting } from './processes.js';
import { fmt, loadAverage, machine, median, progressPrinter, textTable, writeResults } from './report.js';
import { BENCH, checkTokenResponse, createConnectClient, readServerConfig, ROOT, SERVERS, serverLabel, serverLaunch, tokenRequest, waitUntilServing } from './token-servers.js';

const config = readSettings(readConfig);
const startedAt = Date.now();
const progress = progressPrinter(startedAt);

/**
 * One side of the pair: `name` or `name:VAR=value:VAR=value`, the variables
 * set in that server's environment only (`connect:CONNECT_LOG_LEVEL=silent`).
 * `connect@/path/to/checkout` is Connect as built in another checkout (a
 * build before a change, in a git worktree of its own).
 */
function parseServer(spec) {
  const [named, ...settings] = spec.split(':').map((part) => part.trim());
  const at = named.indexOf('@');
  const name = at === -1 ? named : named.slice(0, at);
  const connectRoot = at === -1 ? ROOT : resolve(named.slice(at + 1));
  if (!SERVERS[name]) fail(`BENCH_PAIR: unknown server "${name}"; known: ${Object.keys(SERVERS).join(', ')}`);
  if (at !== -1 && name !== 'connect') fail(`BENCH_PAIR: only connect takes @<checkout>, not ${name}`);
  if (at !== -1 && !['packages/server/bin/connect-auth.js', 'packages/server/dist/index.js'].every((file) => existsSync(join(connectRoot, file)))) fail(`BENCH_PAIR: no built Connect in ${connectRoot}`);
  const env = {};
  for (const setting of settings) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(setting);
    if (!match) fail(`BENCH_PAIR: "${setting}" is not VARIABLE=value`);
    env[match[1]] = match[2];
  }
  return { spec, name, env, connectRoot };
}

function readConfig(env) {
  const int = (name, fallback, min, max) => wholeNumberSetting(env, name, fallback, min, max);
  const pair = (env.BENCH_PAIR?.trim() || 'ceiling,connect').split(',').map((s) => s.trim());
  if (pair.length !== 2) fail('BENCH_PAIR names two servers, separated by a comma');
  return {
    ...readServerConfig(env, 'ceiling,connect'),
    pair: pair.map(parseServer),
    rounds: int('BENCH_ROUNDS', 5, 1, 20),
    duration: int('BENCH_DURATION', 8, 1, 60),
    warmup: int('BENCH_WARMUP', 3, 0, 30),
    connections: int('BENCH_CONNECTIONS', 16, 1, 1000),
    serverCpu: env.BENCH_SERVER_CPU?.trim() || '0',
    loadCpu: env.BENCH_LOAD_CPU?.trim() || '1',
    keepTemp: env.BENCH_KEEP_TMP === '1',
  };
}

function labelOf(side) {
  const settings = Object.entries(side.env).map(([name, value]) => `${name}=${value}`);
  if (side.connectRoot !== ROOT) settings.unshift(`built in ${side.connectRoot}`);
  return serverLabel(side.name, config) + (settings.length > 0 ? ` (${settings.join(', ')})` : '');
}

/**
 * Starts one side of the pair on CPU `config.serverCpu`, its output going to
 * a file, on the data folder `workDir` with `client`.
 */
async function startServer(side, index, workDir, client) {
  const port = await freePort();
  const url = `http://${HOST}:${port}/token`;
  const { script, env } = serverLaunch(side.name, { port, workDir, client, config, connectRoot: side.connectRoot });
  const logFile = join(workDir, `${index}-${side.name}.log`);
  const out = openSync(logFile, 'a');
  const child = spawnTracked('taskset', ['-c', config.serverCpu, process.execPath, ...script], {
    cwd: ROOT,
    env: { ...env, ...side.env },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  const server = { ...side, label: labelOf(side), child, logFile, url, client };
  progress(`${server.label}: starting on ${HOST}:${port} (CPU ${config.serverCpu})`);
  await waitUntilServing(side.name, server, url, tokenRequest(client), client);
  return server;
}

/**
 * Starts both sides of the pair, in the order `order` gives (indexes into the
 * pair); returns them in the pair's order. `data[i]` is side i's data folder
 * and client.
 */
async function startPair(order, data) {
  const servers = [];
  for (const index of order) servers[index] = await startServer(config.pair[index], index, data[index].workDir, data[index].client);
  return servers;
}

/** One load generator run (load.js, autocannon) on CPU `config.loadCpu`. */
async function load(url, client, duration) {
  const options = { url, ...tokenRequest(client), duration, connections: config.connections, pipelining: 1 };
  const stdout = await run('taskset', ['-c', config.loadCpu, process.execPath, join(BENCH, 'load.js'), JSON.stringify(options)], {
    cwd: ROOT,
    timeout: (duration + 30) * 1000,
    killSignal: 'SIGKILL',
  });
  return JSON.parse(stdout.trim().split('\n').pop());
}

/** Both servers loaded at once for `duration` seconds; each one's requests per second and CPU. */
async function measure(servers, duration) {
  const cpuBefore = servers.map((s) => cpuTimeMs(s.child.pid));
  const results = await Promise.all(servers.map((s) => load(s.url, s.client, duration)));
  return servers.map((server, i) => {
    const result = results[i];
    const cpuMs = cpuTimeMs(server.child.pid) - cpuBefore[i];
    if (result.non2xx > 0 || result.errors > 0) fail(`${server.label}: ${result.non2xx} non-2xx responses and ${result.errors} errors`);
    return {
      requestsPerSecond: result.requestsPerSecond,
      requestsTotal: result.requestsTotal,
      cpuMs,
      cpuUsPerRequest: (cpuMs * 1000) / result.requestsTotal,
      coreShare: cpuMs / 10 / result.duration,
    };
  });
}

async function main() {
  stopAfter(120 + config.rounds * (config.duration + config.warmup + 40), 'server');
  // Both servers sharing one pinned core is what makes the ratio hold: there is no unpinned mode.
  await checkPinning(config.serverCpu, config.loadCpu, { canRunUnpinned: false });
  const host = await machine();
  progress(`${host.cpus} CPUs (${host.model}), Node ${host.node}, load average ${host.loadAverage.join(' ')}`);
  progress(
    `pair ${config.pair.map((s) => s.spec).join(' + ')}, both on CPU ${config.serverCpu}, load generators on CPU ${config.loadCpu}; ` +
      `${config.rounds} rounds of ${config.duration} s, warm-up ${config.warmup} s, ${config.connections} connections each`,
  );
  const workDir = mkdtempSync(join(tmpdir(), 'connect-bench-'));
  let ok = false;
  try {
    const client = await createConnectClient(workDir, config);
    // Connect built in another checkout gets a data folder and a client of
    // its own, made by its own command: its migrations need not be this
    // checkout's.
    const data = [];
    for (const [index, side] of config.pair.entries()) {
      if (side.connectRoot === ROOT) {
        data.push({ workDir, client });
        continue;
      }
      const ownDir = join(workDir, `${index}-data`);
      mkdirSync(ownDir);
      data.push({ workDir: ownDir, client: await createConnectClient(ownDir, config, side.connectRoot) });
    }
    const labels = config.pair.map(labelOf);
    const [first, second] = labels.map((label) => ({ label }));
    const rounds = [];
    for (let round = 1; round <= config.rounds; round += 1) {
      // Fresh processes each round, started in turns first one, then the
      // other: a process keeps what its start gave it (where V8 put its code,
      // what it compiled and how) for as long as it runs, and that alone
      // moved one build against itself by up to 11% (bench/README.md).
      const servers = await startPair(round % 2 === 1 ? [0, 1] : [1, 0], data);
      if (config.warmup > 0) {
        progress(`round ${round}: warming both up ${config.warmup} s`);
        await measure(servers, config.warmup);
      }
      const [a, b] = await measure(servers, config.duration);
      for (const server of servers) {
        await checkTokenResponse(server.url, tokenRequest(server.client), server.client);
        if (server.child.exited) fail(`${server.label} exited during the run; see ${server.logFile}`);
      }
      await Promise.all(servers.map((server) => stop(server.child)));
      const ratio = b.requestsPerSecond / a.requestsPerSecond;
      rounds.push({ round, first: a, second: b, ratio });
      progress(
        `round ${round}: ${first.label} ${fmt(a.requestsPerSecond, 0)} req/s (${fmt(a.cpuUsPerRequest, 0)} µs/req), ` +
          `${second.label} ${fmt(b.requestsPerSecond, 0)} req/s (${fmt(b.cpuUsPerRequest, 0)} µs/req): ${fmt(ratio * 100, 1)}%`,
      );
    }

    const side = (key, server) => ({
      label: server.label,
      requestsPerSecond: median(rounds.map((r) => r[key].requestsPerSecond)),
      cpuUsPerRequest: median(rounds.map((r) => r[key].cpuUsPerRequest)),
      coreShare: median(rounds.map((r) => r[key].coreShare)),
    });
    const summaries = [side('first', first), side('second', second)];
    const ratios = rounds.map((r) => r.ratio * 100);
    const rows = [['server', 'req/s', 'CPU µs/req', 'share of the core'], ...summaries.map((s) => [s.label, fmt(s.requestsPerSecond, 0), fmt(s.cpuUsPerRequest, 0), `${fmt(s.coreShare, 0)}%`])];
    process.stdout.write(`\nmedians of ${config.rounds} rounds, both servers on one core at the same time\n${textTable(rows)}\n\n`);
    process.stdout.write(
      `${second.label} / ${first.label}: ${fmt(median(ratios), 1)}% of the requests per second ` +
        `(rounds ${ratios.map((r) => `${fmt(r, 1)}%`).join(', ')})\n`,
    );
    // A fair split is the premise of the ratio; say so when a round did not have it.
    for (const r of rounds) {
      const shares = [r.first.coreShare, r.second.coreShare];
      if (Math.abs(shares[0] - shares[1]) > 10) {
        process.stdout.write(`note: in round ${r.round} the core was shared ${fmt(shares[0], 0)}% / ${fmt(shares[1], 0)}%, not evenly; that round's ratio is unreliable\n`);
      }
    }
    const report = {
      benchmark: 'paired: POST /token grant_type=client_credentials, two servers on one core at the same time',
      startedAt: new Date(startedAt).toISOString(),
      machine: { ...host, loadAverageAfter: loadAverage() },
      config,
      summaries,
      rounds,
      medianRatio: median(ratios) / 100,
    };
    const file = writeResults('paired', startedAt, report);
    process.stdout.write(`\nraw results: ${file}\n`);
    ok = true;
  } finally {
    killAll();
    if (ok && !config.keepTemp) rmSync(workDir, { recursive: true, force: true });
    else process.stderr.write(`bench: server logs kept in ${workDir}\n`);
  }
}

runMain(main);
