// The three client-credentials token servers the benchmarks measure, how each
// is started, and the token request they all answer. Shared by token-bench.js
// (requests per second) and instructions.js (instructions per request).
//
//   connect        Connect itself (`connect-auth serve`): embedded SQLite on a
//                  fresh data folder, request logging on (`info` by default);
//   oidc-provider  panva's oidc-provider 9, JWT access tokens (oidc-provider-server.js);
//   ceiling        a bare Fastify route doing the same work with nothing else
//                  (ceiling-server.js): the practical upper bound.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { cleanEnv, fail, HOST, run } from './processes.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BENCH = join(ROOT, 'bench');
/** The `connect-auth` command of the built checkout `root`. */
const connectBin = (root) => join(root, 'packages/server/bin/connect-auth.js');

export const SERVERS = {
  connect: { label: 'Connect' },
  'oidc-provider': { label: 'oidc-provider 9' },
  ceiling: { label: 'ceiling (bare Fastify)' },
};

/**
 * Reads the settings that change the servers themselves: BENCH_SERVERS (which,
 * in order), BENCH_CEILING_SIGNER, BENCH_CEILING_WITH, BENCH_CONNECT_LOG_LEVEL.
 */
export function readServerConfig(env, defaultServers) {
  const servers = (env.BENCH_SERVERS?.trim() || defaultServers).split(',').map((s) => s.trim());
  for (const name of servers) {
    if (!SERVERS[name]) fail(`BENCH_SERVERS: unknown server "${name}"; known: ${Object.keys(SERVERS).join(', ')}`);
  }
  const ceilingSigner = env.BENCH_CEILING_SIGNER?.trim() || 'jose';
  if (!['jose', 'jose-compact', 'node'].includes(ceilingSigner)) fail('BENCH_CEILING_SIGNER must be jose, jose-compact or node');
  const ceilingWith = (env.BENCH_CEILING_WITH?.trim() || '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const part of ceilingWith) if (!['log', 'headers', 'startup'].includes(part)) fail(`BENCH_CEILING_WITH: unknown part "${part}"; known: log, headers, startup`);
  const connectLogLevel = env.BENCH_CONNECT_LOG_LEVEL?.trim() || 'info';
  return { servers, ceilingSigner, ceilingWith, connectLogLevel };
}

/** Whether the ceiling runs as defined: jose signing, nothing of Connect added. */
export function ceilingIsBare(config) {
  return config.ceilingSigner === 'jose' && config.ceilingWith.length === 0;
}

/** A server's label, naming what a run changed in the ceiling. */
export function serverLabel(name, config) {
  if (name !== 'ceiling' || ceilingIsBare(config)) return SERVERS[name].label;
  const signer = { jose: '', 'jose-compact': ', CompactSign', node: ', node:crypto' }[config.ceilingSigner];
  const added = config.ceilingWith.length > 0 ? ` + Connect ${config.ceilingWith.join(' + ')}` : '';
  return `ceiling (bare Fastify${signer}${added})`;
}

/** Connect's environment: the data folder `workDir`, embedded SQLite, its log level. */
function connectEnv(workDir, config) {
  return {
    ...cleanEnv(),
    CONNECT_DATA_DIR: workDir,
    DATABASE_URL: `sqlite:${join(workDir, 'connect.db')}`,
    CONNECT_LOG_LEVEL: config.connectLogLevel,
    HOST,
  };
}

/**
 * Creates the one client every server accepts, with `connect-auth clients
 * create` of the built checkout `connectRoot` (default: this one).
 */
export async function createConnectClient(workDir, config, connectRoot = ROOT) {
  const stdout = await run(
    process.execPath,
    [connectBin(connectRoot), 'clients', 'create', '--name', 'Bench', '--redirect-uri', 'https://b.example/cb', '--grants', 'client_credentials', '--json'],
    { cwd: ROOT, env: connectEnv(workDir, config) },
  );
  const created = JSON.parse(stdout);
  if (!created.clientId || !created.clientSecret) fail(`clients create printed no credentials: ${stdout}`);
  return { id: created.clientId, secret: created.clientSecret };
}

/**
 * The script (and its arguments) and environment that start server `name` on
 * `port`; Connect from the built checkout `connectRoot` (default: this one).
 */
export function serverLaunch(name, { port, workDir, client, config, connectRoot = ROOT }) {
  if (name === 'connect') {
    return { script: [connectBin(connectRoot), 'serve'], env: { ...connectEnv(workDir, config), PORT: String(port) } };
  }
  return {
    script: [join(BENCH, name === 'ceiling' ? 'ceiling-server.js' : 'oidc-provider-server.js')],
    env: {
      ...cleanEnv(),
      PORT: String(port),
      HOST,
      BENCH_CLIENT_ID: client.id,
      BENCH_CLIENT_SECRET: client.secret,
      CEILING_SIGNER: config.ceilingSigner,
      CEILING_WITH: config.ceilingWith.join(','),
    },
  };
}

/** The one request every run sends: client_credentials, client by HTTP Basic. */
export function tokenRequest(client) {
  const basic = Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64');
  return {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  };
}

/** Sends one token request and checks that a real JWT access token came back. */
export async function checkTokenResponse(url, request, client, timeoutMs = 5000) {
  const response = await fetch(url, { ...request, signal: AbortSignal.timeout(timeoutMs) });
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

/**
 * Waits until the server answers a token request correctly (or dies, or
 * `timeoutMs` passes). `server` is `{ child, logFile }`.
 */
export async function waitUntilServing(name, server, url, request, client, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (server.child.exited) fail(`${name} exited during start-up (${JSON.stringify(server.child.exited)}); see ${server.logFile}`);
    try {
      return await checkTokenResponse(url, request, client, Math.max(5000, deadline - Date.now()));
    } catch (error) {
      const refused = error.cause?.code === 'ECONNREFUSED';
      if (!refused) throw error;
      if (Date.now() > deadline) fail(`${name} did not start listening within ${timeoutMs / 1000} s; see ${server.logFile}`);
      await sleep(100);
    }
  }
}

/** The number of lines in a file so far (Connect's request log lines). */
export function countLines(file) {
  let lines = 0;
  for (const byte of readFileSync(file)) if (byte === 10) lines += 1;
  return lines;
}
