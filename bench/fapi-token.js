// The FAPI 2.0 token request against the plain one (`npm run bench:fapi`).
//
// One Connect (`connect-auth serve`, embedded SQLite, request logging at
// `info`) pinned to one CPU core, with two clients registered by the command
// line: a standard client with a secret, and a `fapi2` client with an ES256
// key (`--profile fapi2 --jwks FILE`). The load generator (load.js, on the
// other core) sends, in turns, round after round:
//
//   secret  grant_type=client_credentials, the secret by HTTP Basic: a
//           bearer token (the request of `npm run bench`);
//   fapi2   the same grant authenticated by a `private_key_jwt` assertion,
//           with a DPoP proof carrying Connect's nonce: a DPoP-bound token.
//           An assertion and a proof are each accepted once, so every
//           request is made beforehand (signed with jose), just before its
//           round, and sent once.
//
// Each round counts the server's CPU time per request (from /proc) and its
// requests per second; the table gives each side's median over the rounds and
// the median of the rounds' fapi2 / secret ratios. Knobs: BENCH_ROUNDS (5),
// BENCH_REQUESTS (requests per round, 4000), BENCH_CONNECTIONS (16),
// BENCH_PIN (1), BENCH_SERVER_CPU (0), BENCH_LOAD_CPU (1).
import { randomUUID } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { checkPinning, cleanEnv, cpuTimeMs, fail, freePort, HOST, readSettings, run, runMain, spawnTracked, stop, stopAfter, wholeNumberSetting } from './processes.js';
import { fmt, loadAverage, machine, median, progressPrinter, textTable, writeResults } from './report.js';
import { BENCH, ROOT, tokenRequest } from './token-servers.js';

const CONNECT_BIN = join(ROOT, 'packages/server/bin/connect-auth.js');
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

const config = readSettings((env) => ({
  rounds: wholeNumberSetting(env, 'BENCH_ROUNDS', 5, 1, 20),
  requests: wholeNumberSetting(env, 'BENCH_REQUESTS', 4000, 500, 20000),
  connections: wholeNumberSetting(env, 'BENCH_CONNECTIONS', 16, 1, 256),
  pin: (env.BENCH_PIN?.trim() || '1') !== '0',
  serverCpu: env.BENCH_SERVER_CPU?.trim() || '0',
  loadCpu: env.BENCH_LOAD_CPU?.trim() || '1',
}));
const startedAt = Date.now();
const progress = progressPrinter(startedAt);

function pinned(cpu, command, args) {
  return config.pin ? ['taskset', ['-c', cpu, command, ...args]] : [command, args];
}

async function createClients(env, workDir) {
  const cli = (args) => run(process.execPath, [CONNECT_BIN, 'clients', 'create', '--name', 'Bench', '--redirect-uri', 'https://b.example/cb', '--grants', 'client_credentials', ...args, '--json'], { cwd: ROOT, env });
  const secret = JSON.parse(await cli([]));
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = randomUUID();
  const jwksFile = join(workDir, 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] }));
  const fapi = JSON.parse(await cli(['--profile', 'fapi2', '--jwks', jwksFile]));
  if (!secret.clientId || !secret.clientSecret || !fapi.clientId) fail('clients create printed no client');
  const dpop = await generateKeyPair('ES256');
  const dpopJwk = await exportJWK(dpop.publicKey);
  return { secret: { id: secret.clientId, secret: secret.clientSecret }, fapi: { id: fapi.clientId, kid, privateKey, dpopKey: dpop.privateKey, dpopJwk, jkt: await calculateJwkThumbprint(dpopJwk) } };
}

/** One FAPI 2.0 token request: a new assertion and a new proof with `nonce`. */
async function fapiRequest(client, authUrl, nonce) {
  const now = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({ iss: client.id, sub: client.id, aud: authUrl, jti: randomUUID(), iat: now, exp: now + 120 })
    .setProtectedHeader({ alg: 'ES256', kid: client.kid })
    .sign(client.privateKey);
  const proof = await new SignJWT({ jti: randomUUID(), htm: 'POST', htu: `${authUrl}/token`, iat: now, ...(nonce ? { nonce } : {}) })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: client.dpopJwk })
    .sign(client.dpopKey);
  return {
    headers: { dpop: proof },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: ASSERTION_TYPE, client_assertion: assertion }).toString(),
  };
}

/** Sends one FAPI request (asking for the nonce first); checks a DPoP-bound token came back; returns the nonce. */
async function checkFapi(url, client, authUrl) {
  const send = async (nonce) => {
    const request = await fapiRequest(client, authUrl, nonce);
    const response = await fetch(url, { method: 'POST', headers: { ...request.headers, 'content-type': 'application/x-www-form-urlencoded' }, body: request.body, signal: AbortSignal.timeout(5000) });
    return { response, body: await response.json() };
  };
  let { response, body } = await send();
  if (body.error === 'use_dpop_nonce') ({ response, body } = await send(response.headers.get('dpop-nonce')));
  if (response.status !== 200 || body.token_type !== 'DPoP') fail(`the fapi2 token request did not succeed: status ${response.status}, ${JSON.stringify(body).slice(0, 200)}`);
  const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1], 'base64url').toString('utf8'));
  if (claims.cnf?.jkt !== client.jkt) fail('the fapi2 token is not bound to the DPoP key (cnf.jkt)');
  return response.headers.get('dpop-nonce');
}

async function checkSecret(url, request) {
  const response = await fetch(url, { ...request, signal: AbortSignal.timeout(5000) });
  const body = await response.json();
  if (response.status !== 200 || body.token_type !== 'Bearer') fail(`the secret token request did not succeed: status ${response.status}`);
}

/** One round of `amount` requests of one kind; the server's CPU time and the load generator's summary. */
async function round(server, url, load) {
  const cpuBefore = cpuTimeMs(server.pid);
  const [command, args] = pinned(config.loadCpu, process.execPath, [join(BENCH, 'load.js'), JSON.stringify({ url, connections: config.connections, amount: config.requests, duration: 120, ...load })]);
  const summary = JSON.parse(await run(command, args, { cwd: ROOT }));
  const cpuMs = cpuTimeMs(server.pid) - cpuBefore;
  if (summary.non2xx > 0 || summary.errors > 0) fail(`${summary.non2xx} non-2xx answers and ${summary.errors} errors in a round: ${JSON.stringify(summary.statusCodes)}`);
  return { requestsPerSecond: summary.requestsPerSecondOverall, cpuMicrosPerRequest: (cpuMs * 1000) / summary.requestsTotal, p99Ms: summary.latencyMs.p99, requests: summary.requestsTotal };
}

async function main() {
  stopAfter(900, 'process');
  if (config.pin) await checkPinning(config.serverCpu, config.loadCpu);
  const workDir = mkdtempSync(join(tmpdir(), 'connect-bench-fapi-'));
  const port = await freePort();
  const authUrl = `http://${HOST}:${port}`;
  const env = { ...cleanEnv(), CONNECT_DATA_DIR: workDir, DATABASE_URL: `sqlite:${join(workDir, 'connect.db')}`, CONNECT_LOG_LEVEL: 'info', HOST, PORT: String(port), CONNECT_AUTH_URL: authUrl };
  const logFile = join(workDir, 'server.log');
  const log = openSync(logFile, 'a');
  try {
    progress('creating the two clients');
    const clients = await createClients(env, workDir);
    const [command, args] = pinned(config.serverCpu, process.execPath, [...(process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE_DIR] : []), CONNECT_BIN, 'serve']);
    const server = spawnTracked(command, args, { cwd: ROOT, env, stdio: ['ignore', log, log] });
    const url = `${authUrl}/token`;
    const secretRequest = tokenRequest(clients.secret);
    for (let tries = 0; ; tries++) {
      try {
        await checkSecret(url, secretRequest);
        break;
      } catch (error) {
        if (tries > 100 || server.exited) fail(`Connect did not start: ${error.message}; see ${logFile}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    const rows = { secret: [], fapi2: [] };
    const ratios = [];
    const requestsFile = join(workDir, 'requests.json');
    for (let r = 1; r <= config.rounds; r++) {
      const nonce = await checkFapi(url, clients.fapi, authUrl);
      const made = [];
      for (let i = 0; i < config.requests; i++) made.push(await fapiRequest(clients.fapi, authUrl, nonce));
      writeFileSync(requestsFile, JSON.stringify(made));
      const fapi = await round(server, url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, requestsFile });
      const secret = await round(server, url, secretRequest);
      rows.fapi2.push(fapi);
      rows.secret.push(secret);
      ratios.push(fapi.cpuMicrosPerRequest / secret.cpuMicrosPerRequest);
      progress(`round ${r}/${config.rounds}: secret ${fmt(secret.requestsPerSecond, 0)} req/s, ${fmt(secret.cpuMicrosPerRequest, 0)} CPU µs/req; fapi2 ${fmt(fapi.requestsPerSecond, 0)} req/s, ${fmt(fapi.cpuMicrosPerRequest, 0)} CPU µs/req`);
    }
    await stop(server);
    const summaryOf = (list) => ({
      requestsPerSecond: median(list.map((x) => x.requestsPerSecond)),
      cpuMicrosPerRequest: median(list.map((x) => x.cpuMicrosPerRequest)),
      p99Ms: median(list.map((x) => x.p99Ms)),
    });
    const secret = summaryOf(rows.secret);
    const fapi2 = summaryOf(rows.fapi2);
    const table = textTable([
      ['request', 'req/s (median)', 'CPU µs/req (median)', 'p99 ms (median)'],
      ['secret (HTTP Basic, bearer)', fmt(secret.requestsPerSecond, 0), fmt(secret.cpuMicrosPerRequest, 0), fmt(secret.p99Ms, 2)],
      ['fapi2 (private_key_jwt + DPoP)', fmt(fapi2.requestsPerSecond, 0), fmt(fapi2.cpuMicrosPerRequest, 0), fmt(fapi2.p99Ms, 2)],
    ]);
    const ratio = median(ratios);
    process.stdout.write(`\n${table}\n\nfapi2 / secret, CPU per request: ${fmt(ratio, 2)}x (rounds ${ratios.map((x) => fmt(x, 2)).join(', ')})\n`);
    const file = writeResults('fapi-token', startedAt, { config, machine: await machine(), loadAverage: loadAverage(), rounds: rows, secret, fapi2, cpuRatio: ratio, cpuRatios: ratios });
    process.stdout.write(`raw figures: ${file}\n`);
  } finally {
    closeSync(log);
    rmSync(workDir, { recursive: true, force: true });
  }
}

runMain(main);
