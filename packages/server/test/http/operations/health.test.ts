import { once } from 'node:events';
import { connect, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import { build, type TestApp } from '../../helpers/build.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../../helpers/postgres.js';
import { startTcpProxy, throughProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';
import { expectJson } from '../../helpers/wire.js';
import { noticeRedisSkipped, redisTestUrl } from '../../helpers/redis.js';

noticePostgresSkipped('/readyz with PostgreSQL');
const redisUrl = redisTestUrl;
noticeRedisSkipped('/readyz with Redis');

/** `GET /readyz`: its status, body and how long it took (ms). */
async function readyz(t: TestApp): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
  const started = performance.now();
  const res = await t.app.inject({ method: 'GET', url: '/readyz' });
  const ms = performance.now() - started;
  expectJson(res);
  expect(res.headers['cache-control']).toBe('no-store');
  return { status: res.statusCode, body: res.json<Record<string, unknown>>(), ms };
}

/** A proxy in front of `url`'s host and port, closed when the test ends. */
async function proxyTo(url: string, defaultPort: number): Promise<TcpProxy> {
  const target = new URL(url);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || defaultPort) });
  onTestFinished(() => proxy.close());
  return proxy;
}

describe('health endpoints', () => {
  it('GET /healthz answers 200 while the process is up', async () => {
    const t = await build();
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expectJson(res);
    expect(res.json()).toEqual({ status: 'ok' });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('GET /readyz answers 200 while the database answers', async () => {
    const t = await build();
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expectJson(res);
    expect(res.json()).toEqual({ status: 'ready' });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('GET /readyz answers 503 with a JSON body once the database is gone; /healthz stays 200', async () => {
    const t = await build();
    await t.storage.close();
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expectJson(res);
    const body = res.json<Record<string, unknown>>();
    expect(body.status).toBe('unavailable');
    expect(body.failed).toEqual(['database']);
    expect(typeof body.error_description).toBe('string');
    expect(res.body).not.toMatch(/destroyed|\/work\/|node_modules|\bat \S+ \(/);
    expect(res.headers['cache-control']).toBe('no-store');

    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('GET /readyz answers 503 shutting_down once the app starts closing; a request begun before is still answered', async () => {
    const t = await build();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
    // A request begun but not finished when the close starts: its connection is not idle.
    socket.write('GET /readyz HTTP/1.1\r\nHost: connect.test\r\n');
    await sleep(100);
    const closing = t.app.close();
    socket.write('\r\n');
    await once(socket, 'end');
    await closing;
    const [head = '', body = ''] = received.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 503 /);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(body)).toMatchObject({ status: 'unavailable', failed: ['shutting_down'] });
  });
});

describe.skipIf(!redisUrl)('/readyz with Redis', () => {
  it('checks Redis when it is configured: 503 naming redis within 2 s when it is down or hangs, 200 again once it is back', async () => {
    const proxy = await proxyTo(redisUrl ?? '', 6379);
    const t = await build({ env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}` } });
    await expect.poll(async () => (await readyz(t)).status, { timeout: 5000 }).toBe(200);
    expect((await readyz(t)).body).toEqual({ status: 'ready' });

    await proxy.cut();
    const down = await readyz(t);
    expect(down).toMatchObject({ status: 503, body: { status: 'unavailable', failed: ['redis'] } });
    expect(down.ms).toBeLessThan(2000);

    await proxy.restore();
    await expect.poll(async () => (await readyz(t)).status, { timeout: 5000 }).toBe(200);

    proxy.silence();
    const hung = await readyz(t);
    expect(hung).toMatchObject({ status: 503, body: { status: 'unavailable', failed: ['redis'] } });
    expect(hung.ms).toBeGreaterThanOrEqual(900);
    expect(hung.ms).toBeLessThan(2000);
  });
});

describe.skipIf(!postgresAdminUrl)('/readyz with PostgreSQL', () => {
  it('503 naming the database within 2 s when PostgreSQL hangs or is cut off; 200 again once it is back', async () => {
    const database = await createTestDatabase();
    const proxy = await proxyTo(database.url, 5432);
    const storage = openStorage({ engine: 'postgres', url: throughProxy(database.url, proxy) });
    const t = await build({ storage });
    onTestFinished(async () => {
      await t.app.close();
      await storage.close();
      await database.drop();
    });
    expect((await readyz(t)).body).toEqual({ status: 'ready' });

    proxy.silence();
    const hung = await readyz(t);
    expect(hung).toMatchObject({ status: 503, body: { status: 'unavailable', failed: ['database'] } });
    expect(hung.ms).toBeLessThan(2000);

    await proxy.cut();
    const cut = await readyz(t);
    expect(cut).toMatchObject({ status: 503, body: { status: 'unavailable', failed: ['database'] } });
    expect(cut.ms).toBeLessThan(2000);

    await proxy.restore();
    await expect.poll(async () => (await readyz(t)).status, { timeout: 7000, interval: 200 }).toBe(200);
  });
});
