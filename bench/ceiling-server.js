// The practical ceiling for Connect's client_credentials token endpoint: the
// least work that still does the same job on the same stack (Fastify 5, jose 6).
//
// - parses the same application/x-www-form-urlencoded body;
// - checks HTTP Basic credentials against one in-memory client, HMAC-SHA-256
//   of the secret compared with crypto.timingSafeEqual (as Connect stores it);
// - signs one ES256 JWT per request with the claims and header of a Connect
//   client access token (iss, sub, client_id, aud, iat, exp, jti; typ at+jwt, kid).
//
// No database, no logging, no security headers, no client cache: the bare minimum.
//
// Environment: PORT (required), HOST (default 127.0.0.1),
// BENCH_CLIENT_ID and BENCH_CLIENT_SECRET (the one client),
// CEILING_SIGNER: `jose` (default: jose's SignJWT, its API for JWTs),
// `jose-compact` (jose's CompactSign over the claims set serialized with
// JSON.stringify, as Connect signs since 2026-11-24: SignJWT copies the claims
// with structuredClone and checks each one, which costs several µs per token)
// or `node` (node:crypto's asynchronous sign of the same JWT: a measurement of
// what signing costs, not how Connect signs),
// CEILING_WITH: empty (default), or a list of Connect's own parts to add
// (separated by `,` or `+`), to measure what they cost on their own: `log` (Connect's
// logger and its one request line per request, to stdout), `headers`
// (Connect's security headers) and `startup` (Connect's whole start-up, run in
// this process on a migrated data folder of its own and closed again before
// the ceiling serves: the ceiling's request path then runs in a process that
// has run the code Connect runs before it serves). They come from the server
// package's public entry (`@connect-auth/server`) and the `connect-auth`
// command, so Connect must be built.
import { execFileSync } from 'node:child_process';
import { createHmac, KeyObject, randomBytes, randomUUID, sign, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { calculateJwkThumbprint, CompactSign, exportJWK, generateKeyPair, SignJWT } from 'jose';

const port = Number(process.env.PORT);
const host = process.env.HOST ?? '127.0.0.1';
const clientId = process.env.BENCH_CLIENT_ID;
const clientSecret = process.env.BENCH_CLIENT_SECRET;
const signer = process.env.CEILING_SIGNER ?? 'jose';
const withParts = (process.env.CEILING_WITH ?? '').split(/[,+]/).filter(Boolean);
if (!port || !clientId || !clientSecret || !['jose', 'jose-compact', 'node'].includes(signer) || withParts.some((part) => !['log', 'headers', 'startup'].includes(part))) {
  process.stderr.write(
    'ceiling-server: PORT, BENCH_CLIENT_ID and BENCH_CLIENT_SECRET are required; CEILING_SIGNER is jose, jose-compact or node; CEILING_WITH lists log, headers, startup\n',
  );
  process.exit(2);
}

// First of all, as in Connect's own process: its start-up, then the ceiling's.
if (withParts.includes('startup')) await runConnectStartUp();

const TTL_SECONDS = 3600;
const hmacKey = randomBytes(32);
const hmac = (secret) => createHmac('sha256', hmacKey).update(secret, 'utf8').digest();
const clients = new Map([[clientId, { id: clientId, secretHash: hmac(clientSecret) }]]);

const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true }); // extractable: KeyObject.from() below is deprecated for a non-extractable key (Node.js 24)
const kid = await calculateJwkThumbprint(await exportJWK(publicKey));
const issuer = `http://${host}:${port}`;

const protectedHeader = { alg: 'ES256', typ: 'at+jwt', kid };
const encoder = new TextEncoder();
function signWithJoseCompact(claims) {
  return new CompactSign(encoder.encode(JSON.stringify(claims))).setProtectedHeader(protectedHeader).sign(privateKey);
}

function signWithJose(claims) {
  return new SignJWT({ client_id: claims.client_id })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
    .setIssuer(claims.iss)
    .setSubject(claims.sub)
    .setAudience(claims.aud)
    .setIssuedAt(claims.iat)
    .setExpirationTime(claims.exp)
    .setJti(claims.jti)
    .sign(privateKey);
}

const privateKeyObject = KeyObject.from(privateKey);
const encodedHeader = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid })).toString('base64url');
function signWithNodeCrypto(claims) {
  const input = `${encodedHeader}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return new Promise((resolve, reject) => {
    sign('sha256', Buffer.from(input), { key: privateKeyObject, dsaEncoding: 'ieee-p1363' }, (error, signature) =>
      error ? reject(error) : resolve(`${input}.${signature.toString('base64url')}`),
    );
  });
}

const signJwt = { jose: signWithJose, 'jose-compact': signWithJoseCompact, node: signWithNodeCrypto }[signer];

function unauthorized(reply) {
  return reply
    .code(401)
    .header('www-authenticate', 'Basic realm="ceiling"')
    .header('cache-control', 'no-store')
    .send({ error: 'invalid_client', error_description: 'client authentication failed' });
}

function authenticate(header) {
  if (typeof header !== 'string' || !header.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  let id;
  let secret;
  try {
    id = decodeURIComponent(decoded.slice(0, colon));
    secret = decodeURIComponent(decoded.slice(colon + 1));
  } catch {
    return undefined;
  }
  const client = clients.get(id);
  const actual = hmac(secret);
  if (!client || !timingSafeEqual(actual, client.secretHash)) return undefined;
  return client;
}

/**
 * Connect's start-up, then its shutdown, in this process: the database migrated
 * by `connect-auth migrate` in a process of its own (as the benchmarks' Connect
 * finds it), then `startServer` and `close()` of the built package.
 */
async function runConnectStartUp() {
  const dir = mkdtempSync(join(tmpdir(), 'ceiling-startup-'));
  try {
    const env = { CONNECT_DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, 'connect.db')}`, CONNECT_LOG_LEVEL: 'warn', HOST: host, PORT: '0' };
    const bin = fileURLToPath(new URL('../packages/server/bin/connect-auth.js', import.meta.url));
    execFileSync(process.execPath, [bin, 'migrate'], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
    const { startServer } = await import('@connect-auth/server');
    const running = await startServer({ env, print: () => {} });
    await running.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
async function connectLogging() {
  const { createLogger, requestLogging } = await import('@connect-auth/server');
  return requestLogging(createLogger({ level: 'info' }));
}
const app = Fastify({ ...(withParts.includes('log') ? await connectLogging() : { logger: false }), bodyLimit: 16 * 1024 });
if (withParts.includes('headers')) {
  const { securityHeaders } = await import('@connect-auth/server');
  const headers = securityHeaders({ hsts: false });
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
}
app.removeAllContentTypeParsers();
app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
  done(null, Object.fromEntries(new URLSearchParams(body)));
});

app.post(
  '/token',
  {
    schema: {
      response: {
        200: {
          type: 'object',
          properties: { access_token: { type: 'string' }, token_type: { type: 'string' }, expires_in: { type: 'integer' } },
        },
      },
    },
  },
  async (request, reply) => {
    const params = request.body ?? {};
    if (params.grant_type !== 'client_credentials') {
      return reply.code(400).header('cache-control', 'no-store').send({ error: 'unsupported_grant_type' });
    }
    const client = authenticate(request.headers.authorization);
    if (!client) return unauthorized(reply);
    const now = Math.floor(Date.now() / 1000);
    const token = await signJwt({
      client_id: client.id,
      iss: issuer,
      sub: client.id,
      aud: issuer,
      iat: now,
      exp: now + TTL_SECONDS,
      jti: randomUUID(),
    });
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    return { access_token: token, token_type: 'Bearer', expires_in: TTL_SECONDS };
  },
);

await app.listen({ port, host });
process.stdout.write(`ceiling listening on ${issuer}\n`);
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => app.close().then(() => process.exit(0)));
