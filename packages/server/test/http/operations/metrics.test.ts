import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError } from '../../../src/config/load.js';
import { startServer } from '../../../src/http/server.js';
import { currentRelease } from '../../../src/config/release.js';
import { basicAuth, build, form } from '../../helpers/build.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../../helpers/postgres.js';
import { addCustomer, authorizeParams, Browser, MOBILE, startLogin } from '../../helpers/customer-flow.js';
import { postToken } from '../../helpers/wire.js';

/** The value of one sample of the metrics text, `undefined` when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.indexOf('}'));
    const have = inside.split(',');
    if (wanted.every((w) => have.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('metrics', () => {
  it('counts requests by route pattern and status, tokens by grant and login steps by outcome; never a secret, token or mobile number', async () => {
    const t = await build();
    const client = await t.createClient();
    const ok = await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: form({ grant_type: 'client_credentials' }) });
    expect(ok.statusCode).toBe(200);
    const refused = await postToken(t.app, { authorization: basicAuth(client.id, 'wrong'), body: form({ grant_type: 'client_credentials' }) });
    expect(refused.statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: `/no/such/${MOBILE}` })).statusCode).toBe(404);
    await addCustomer(t);
    const browser = new Browser(t.app);
    const { page } = await startLogin(browser, authorizeParams(client));
    const wrong = await browser.submit(page, { mobile: MOBILE, pin: '999999', action: 'login' });
    expect(wrong.statusCode).toBe(400);

    const text = await t.services.metrics.registry.metrics();
    expect(sample(text, 'connect_http_requests_total', { route: '/token', method: 'POST', status: '200' })).toBe(1);
    expect(sample(text, 'connect_http_requests_total', { route: '/token', method: 'POST', status: '401' })).toBe(1);
    expect(sample(text, 'connect_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(sample(text, 'connect_http_request_duration_seconds_count', { route: '/token', method: 'POST' })).toBe(2);
    expect(sample(text, 'connect_tokens_issued_total', { endpoint: '/token', grant: 'client_credentials' })).toBe(1);
    expect(sample(text, 'connect_login_steps_total', { step: 'login', outcome: 'credentials_wrong' })).toBe(1);
    expect(sample(text, 'connect_audit_events_total', { type: 'client.authentication_failed', outcome: 'failure' })).toBe(1);
    expect(text).toContain('connect_nodejs_eventloop_lag_seconds');
    const { version, commit } = currentRelease();
    expect(sample(text, 'connect_build_info', { version, commit, node: process.version })).toBe(1);
    expect(text).toContain('connect_process_cpu_user_seconds_total');
    for (const secret of [client.secret, ok.json<{ access_token: string }>().access_token, MOBILE]) expect(text).not.toContain(secret);
    // Digits occur in any number; as a label value they would be quoted.
    for (const digits of [MOBILE.slice(1), '999999']) expect(text).not.toContain(`"${digits}"`);
  });

  it('counts every request with the server logger too, where the log controller does the end-of-request work, each once', async () => {
    const t = await build({ captureLogs: true });
    const client = await t.createClient();
    for (let i = 0; i < 3; i += 1) {
      expect((await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: form({ grant_type: 'client_credentials' }) })).statusCode).toBe(200);
    }
    expect((await t.app.inject({ method: 'GET', url: '/no/such/path' })).statusCode).toBe(404);
    const text = await t.services.metrics.registry.metrics();
    expect(sample(text, 'connect_http_requests_total', { route: '/token', method: 'POST', status: '200' })).toBe(3);
    expect(sample(text, 'connect_http_request_duration_seconds_count', { route: '/token', method: 'POST' })).toBe(3);
    expect(sample(text, 'connect_tokens_issued_total', { endpoint: '/token', grant: 'client_credentials' })).toBe(3);
    expect(sample(text, 'connect_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    // And each got its one request line.
    const lines = t.logs.map((line) => JSON.parse(line) as { msg?: string; statusCode?: number });
    expect(lines.filter((line) => line.msg === 'request completed').map((line) => line.statusCode)).toEqual([200, 200, 200, 404]);
  });

  it('are served at GET /metrics on CONNECT_METRICS_PORT, apart from the public port, with the database pool on PostgreSQL', async () => {
    if (!postgresAdminUrl) return noticePostgresSkipped('metrics of the database pool');
    const database = await createTestDatabase();
    onTestFinished(() => database.drop());
    const dataDir = mkdtempSync(join(tmpdir(), 'connect-metrics-'));
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const server = await startServer({
      env: { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent', DATABASE_URL: database.url, CONNECT_METRICS_PORT: String(port) },
      print: () => {},
    });
    onTestFinished(() => server.close());
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(sample(text, 'connect_db_pool_connections', { state: 'waiting' })).toBe(0);
    expect(sample(text, 'connect_db_pool_connections', { state: 'in_use' })).toBeGreaterThanOrEqual(0);
    // Not on the public listener.
    expect((await fetch(`${server.address}/metrics`)).status).toBe(404);
  });

  it.each([
    // HOST opens the public listener on every address; the metrics stay on the loopback address by default.
    { metricsHost: undefined, reachable: '127.0.0.1', unreachable: '127.0.0.2' },
    { metricsHost: '127.0.0.2', reachable: '127.0.0.2', unreachable: '127.0.0.1' },
  ])('listen on CONNECT_METRICS_HOST ($metricsHost), not on HOST=0.0.0.0', async ({ metricsHost, reachable, unreachable }) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'connect-metrics-'));
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const server = await startServer({
      env: {
        PORT: '0',
        HOST: '0.0.0.0',
        CONNECT_DATA_DIR: dataDir,
        CONNECT_LOG_LEVEL: 'silent',
        CONNECT_METRICS_PORT: String(port),
        ...(metricsHost ? { CONNECT_METRICS_HOST: metricsHost } : {}),
      },
      print: () => {},
    });
    onTestFinished(() => server.close());
    expect(server.config.metricsHost).toBe(metricsHost ?? '127.0.0.1');
    const publicPort = new URL(server.address).port;
    // The public listener answers on both loopback addresses (Linux routes all of 127.0.0.0/8 to lo)...
    for (const address of ['127.0.0.1', '127.0.0.2']) expect((await fetch(`http://${address}:${publicPort}/healthz`)).status).toBe(200);
    // ...the metrics listener on its own address only.
    expect((await fetch(`http://${reachable}:${port}/metrics`)).status).toBe(200);
    const refused = await fetch(`http://${unreachable}:${port}/metrics`).then(
      () => undefined,
      (error: Error) => (error.cause as { code?: string } | undefined)?.code,
    );
    expect(refused).toBe('ECONNREFUSED');
  });

  it('a connection to the metrics port that never finishes its request does not hold the shutdown: close() ends it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'connect-metrics-'));
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const server = await startServer({
      env: { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent', CONNECT_METRICS_PORT: String(port) },
      print: () => {},
    });
    // One connection that has sent nothing, one half a request.
    const sockets = await Promise.all(
      ['', 'GET /metr'].map(
        (sent) =>
          new Promise<Socket>((resolve, reject) => {
            const socket = connect(port, '127.0.0.1', () => resolve(socket));
            socket.on('error', reject);
            if (sent !== '') socket.write(sent);
          }),
      ),
    );
    const closed = sockets.map((socket) => new Promise<void>((resolve) => socket.on('close', () => resolve())));
    // Before, close() waited for them for ever (the CLI's grace then cut the process off, the database not closed).
    await server.close();
    await Promise.all(closed);
  });

  it('a CONNECT_METRICS_PORT already in use stops start-up with a message naming it', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const port = (taken.address() as { port: number }).port;
    const dataDir = mkdtempSync(join(tmpdir(), 'connect-metrics-'));
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const error = await startServer({
      env: { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent', CONNECT_METRICS_PORT: String(port) },
      print: () => {},
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(`CONNECT_METRICS_PORT: port ${port} on 127.0.0.1 is already in use`);
  });
});

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
