// A rolling restart under steady load (`npm run bench:rolling-restart`).
//
// Three Connect servers (`connect-auth serve`, production settings, one
// fresh PostgreSQL database) stand behind a small round-robin HTTP balancer
// (below) that checks each server's /readyz every 250 ms and routes only to
// those that answered 200, as load balancers do. Client-credentials POST
// /token requests go through the balancer at a steady rate, all the time.
// Meanwhile each server in turn is replaced: a new server starts, the
// balancer takes it in once its /readyz says 200, the old one gets SIGTERM
// and must exit 0. The run counts every request that did not get its token
// (a 5xx, a reset, a timeout): the figure a deploy must keep at 0. Loopback
// only, bounded in time. See bench/README.md, "Rolling restart".
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, rmSync, closeSync } from 'node:fs';
import { Agent, createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { cleanEnv, fail, freePort, HOST, killAll, readSettings, run, runMain, spawnTracked, stopAfter, wholeNumberSetting } from './processes.js';
import { fmt, loadAverage, machine, progressPrinter, textTable, writeResults } from './report.js';
import { tokenRequest } from './token-servers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CONNECT_BIN = join(ROOT, 'packages/server/bin/connect-auth.js');
/** How often the balancer asks each server's /readyz, and how long it waits for the answer. */
const CHECK_INTERVAL_MS = 250;
const CHECK_TIMEOUT_MS = 1000;
/** A request through the balancer not answered within this long counts as failed. */
const REQUEST_TIMEOUT_MS = 10_000;

function readConfig(env) {
  const postgresUrl = env.BENCH_POSTGRES_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/postgres';
  const parsed = URL.canParse(postgresUrl) ? new URL(postgresUrl) : undefined;
  if (!/^postgres(ql)?:$/.test(parsed?.protocol ?? '') || !['127.0.0.1', 'localhost', '[::1]'].includes(parsed?.hostname ?? '')) {
    fail('BENCH_POSTGRES_URL must be a postgres:// URL on the loopback address');
  }
  return {
    postgresUrl,
    servers: 3,
    rate: wholeNumberSetting(env, 'BENCH_RATE', 100, 1, 2000),
    connections: wholeNumberSetting(env, 'BENCH_CONNECTIONS', 8, 1, 256),
    passes: wholeNumberSetting(env, 'BENCH_PASSES', 1, 1, 5),
    shutdownDelay: wholeNumberSetting(env, 'BENCH_SHUTDOWN_DELAY', 5, 0, 30),
    settle: wholeNumberSetting(env, 'BENCH_SETTLE', 2, 0, 30),
  };
}

const config = readSettings(readConfig);
const startedAt = Date.now();
const progress = progressPrinter(startedAt);

/** A fresh database on the PostgreSQL server, dropped when the run ends. */
async function createDatabase(adminUrl) {
  const name = `connect_bench_${randomBytes(6).toString('hex')}`;
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.href, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

const masterKey = randomBytes(32).toString('base64');

/** The production settings every server shares: one database, one master key, one issuer. */
function serverEnv(databaseUrl, workDir) {
  return {
    ...cleanEnv(),
    CONNECT_ENVIRONMENT: 'production',
    DATABASE_URL: databaseUrl,
    CONNECT_DATA_DIR: workDir,
    CONNECT_MASTER_KEY: masterKey,
    CONNECT_AUTH_URL: 'https://auth.bench.example',
    CONNECT_SMS_WEBHOOK_URL: 'https://sms.bench.example/send',
    CONNECT_SMS_WEBHOOK_SECRET: 'bench-webhook-secret',
    CONNECT_SHUTDOWN_DELAY: String(config.shutdownDelay),
    CONNECT_LOG_LEVEL: 'warn',
    HOST,
  };
}
/** One server process behind the balancer: its port, state in the balancer, and what it did. */
class Backend {
  static count = 0;
  constructor(child, port, logFile) {
    this.name = `server ${++Backend.count}`;
    this.child = child;
    this.port = port;
    this.logFile = logFile;
    this.ready = false;
    this.served = 0;
    this.agent = new Agent({ keepAlive: true, maxSockets: 64 });
  }
}

async function startServer(env, workDir) {
  const port = await freePort();
  const logFile = join(workDir, `server-${Backend.count + 1}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawnTracked(process.execPath, [CONNECT_BIN, 'serve'], { cwd: ROOT, env: { ...env, PORT: String(port) }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const backend = new Backend(child, port, logFile);
  const deadline = Date.now() + 30_000;
  while (!(await isReady(backend))) {
    if (child.exited) fail(`${backend.name} exited during start-up (${JSON.stringify(child.exited)}); see ${logFile}`);
    if (Date.now() > deadline) fail(`${backend.name} was not ready within 30 s; see ${logFile}`);
    await sleep(100);
  }
  return backend;
}

/** Whether the server's /readyz answers 200 now. */
function isReady(backend) {
  return new Promise((resolve) => {
    const req = httpRequest({ host: HOST, port: backend.port, path: '/readyz', agent: backend.agent, timeout: CHECK_TIMEOUT_MS }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode === 200));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
    req.end();
  });
}

/**
 * The balancer: round-robin over the servers whose last readiness check
 * answered 200; keep-alive connections to each (as nginx's upstream
 * `keepalive`); no retries, so that every failure reaches the client.
 */
function startBalancer(backends) {
  let next = 0;
  const checks = setInterval(() => {
    for (const backend of backends) {
      if (backend.checking) continue;
      backend.checking = true;
      void isReady(backend).then((ready) => {
        backend.checking = false;
        if (backend.ready && !ready) backend.outAt = performance.now();
        backend.ready = ready;
      });
    }
  }, CHECK_INTERVAL_MS);
  const server = createServer((req, res) => {
    const ready = backends.filter((backend) => backend.ready);
    if (ready.length === 0) {
      res.writeHead(503).end('no server ready');
      return;
    }
    const backend = ready[next++ % ready.length];
    backend.served += 1;
    const upstream = httpRequest(
      { host: HOST, port: backend.port, method: req.method, path: req.url, headers: { ...req.headers, host: `${HOST}:${backend.port}`, connection: 'keep-alive' }, agent: backend.agent },
      (answer) => {
        const headers = { ...answer.headers };
        delete headers.connection;
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
      },
    );
    upstream.once('error', (error) => {
      if (!res.headersSent) res.writeHead(502).end(`upstream ${backend.name}: ${error.code ?? error.message}`);
      else res.destroy();
    });
    req.pipe(upstream);
  });
  return new Promise((resolve) => {
    server.listen(0, HOST, () => resolve({ url: `http://${HOST}:${server.address().port}`, close: () => (clearInterval(checks), server.close(), server.closeAllConnections()) }));
  });
}

/** Steady load: `connections` loops sending token requests at `rate` per second in all; counts every outcome. */
function startLoad(url, client) {
  const request = tokenRequest(client);
  const outcomes = { ok: 0, failed: 0, kinds: {} };
  let running = true;
  const intervalMs = (config.connections * 1000) / config.rate;
  const loop = async () => {
    while (running) {
      const started = performance.now();
      let kind = 'ok';
      try {
        const response = await fetch(`${url}/token`, { ...request, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        const text = await response.text();
        if (response.status !== 200) kind = `${response.status} ${text.slice(0, 80)}`;
        else if (JSON.parse(text).token_type !== 'Bearer') kind = 'no token';
      } catch (error) {
        kind = error.cause?.code ?? error.name ?? 'error';
      }
      if (kind === 'ok') outcomes.ok += 1;
      else {
        outcomes.failed += 1;
        outcomes.kinds[kind] = (outcomes.kinds[kind] ?? 0) + 1;
      }
      const wait = intervalMs - (performance.now() - started);
      if (wait > 0) await sleep(wait);
    }
  };
  const loops = Array.from({ length: config.connections }, loop);
  return {
    outcomes,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function main() {
  stopAfter(120 + config.passes * config.servers * (config.shutdownDelay + 20 + config.settle), 'process');
  const workDir = mkdtempSync(join(tmpdir(), 'connect-rolling-'));
  const database = await createDatabase(config.postgresUrl);
  try {
    const env = serverEnv(database.url, workDir);
    progress(`database ${new URL(database.url).pathname.slice(1)}; migrating and creating a client`);
    await run(process.execPath, [CONNECT_BIN, 'migrate'], { cwd: ROOT, env });
    const created = JSON.parse(
      await run(process.execPath, [CONNECT_BIN, 'clients', 'create', '--name', 'Bench', '--redirect-uri', 'https://b.example/cb', '--grants', 'client_credentials', '--json'], { cwd: ROOT, env }),
    );
    const client = { id: created.clientId, secret: created.clientSecret };

    const backends = [];
    for (let i = 0; i < config.servers; i++) backends.push(await startServer(env, workDir));
    const balancer = await startBalancer(backends);
    await sleep(2 * CHECK_INTERVAL_MS);
    progress(`${backends.length} servers ready behind the balancer at ${balancer.url}; load: ${config.rate} token requests/s over ${config.connections} connections`);
    const load = startLoad(balancer.url, client);
    const loadStartedAt = performance.now();
    await sleep(config.settle * 1000);

    const restarts = [];
    for (let pass = 0; pass < config.passes; pass++) {
      for (const old of [...backends]) {
        const fresh = await startServer(env, workDir);
        backends.push(fresh);
        while (!fresh.ready) await sleep(50);
        const signalledAt = performance.now();
        old.child.kill('SIGTERM');
        const exit = await Promise.race([old.child.exitState, sleep(config.shutdownDelay * 1000 + 20_000).then(() => undefined)]);
        if (!exit) fail(`${old.name} did not exit within its delay + 20 s of SIGTERM; see ${old.logFile}`);
        const exitedAt = performance.now();
        backends.splice(backends.indexOf(old), 1);
        restarts.push({
          server: old.name,
          replacedBy: fresh.name,
          servedRequests: old.served,
          outOfRotationMs: old.outAt === undefined ? null : Math.round(old.outAt - signalledAt),
          exitMs: Math.round(exitedAt - signalledAt),
          exit,
        });
        progress(`${old.name} replaced by ${fresh.name}: out of rotation after ${fmt(restarts.at(-1).outOfRotationMs, 0)} ms, exited ${JSON.stringify(exit)} after ${fmt(restarts.at(-1).exitMs, 0)} ms; so far ${load.outcomes.ok} answered, ${load.outcomes.failed} failed`);
        await sleep(config.settle * 1000);
      }
    }
    await load.stop();
    const seconds = (performance.now() - loadStartedAt) / 1000;
    balancer.close();
    for (const backend of backends) backend.child.kill('SIGTERM');
    await Promise.all(backends.map((backend) => backend.child.exitState));

    const { ok, failed, kinds } = load.outcomes;
    const badExits = restarts.filter((r) => r.exit.code !== 0);
    console.log('');
    console.log(textTable([
      ['server', 'requests routed', 'out of rotation after SIGTERM (ms)', 'exit after SIGTERM (ms)', 'exit'],
      ...restarts.map((r) => [r.server, String(r.servedRequests), fmt(r.outOfRotationMs, 0), fmt(r.exitMs, 0), r.exit.code === null ? String(r.exit.signal) : `code ${r.exit.code}`]),
    ]));
    console.log('');
    console.log(`requests: ${ok + failed} in ${fmt(seconds, 1)} s (${fmt((ok + failed) / seconds, 0)}/s), answered 200: ${ok}, failed: ${failed}${failed ? ` ${JSON.stringify(kinds)}` : ''}`);
    console.log(`restarts: ${restarts.length} (CONNECT_SHUTDOWN_DELAY=${config.shutdownDelay}), exits other than 0: ${badExits.length}`);
    const file = writeResults('rolling-restart', startedAt, { machine: await machine(), config: { ...config, postgresUrl: undefined }, seconds, ok, failed, kinds, restarts, loadAverage: loadAverage() });
    console.log(`results: ${file}`);
    if (failed > 0 || badExits.length > 0) process.exitCode = 1;
  } finally {
    killAll();
    await database.drop().catch((error) => process.stderr.write(`bench: could not drop the database: ${error.message}\n`));
    rmSync(workDir, { recursive: true, force: true });
  }
}

runMain(main);
