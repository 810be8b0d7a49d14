import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/load.js';
import { build } from '../../helpers/build.js';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';
import { addCustomer, authorizeParams, Browser, expectPage, expectSeeOther, outbox, pageText, PIN, startLogin, type Response } from '../../helpers/customer-flow.js';
import { noticeRedisSkipped, redisTestUrl } from '../../helpers/redis.js';

/**
 * With `REDIS_URL` set, the PIN and SMS limits count in Redis, and they
 * fail closed (docs/journey.md, "PIN guessing"): while Redis cannot be
 * reached no PIN is checked and no code is sent; the customer sees the 503
 * page and the journey is left as it was. The Redis connection runs through
 * a proxy of the test's own, which it cuts.
 */

const redisUrl = redisTestUrl;
noticeRedisSkipped('login while Redis is unavailable');

describe.skipIf(!redisUrl)('login while Redis is unavailable', () => {
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  it('answers the 503 page, checks no PIN and sends no code, and works again once Redis is back', async () => {
    const target = new URL(redisUrl ?? '');
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const t = await build({ env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}` } });
    const client = await t.createClient();
    // A mobile no earlier run used, so the shared Redis holds no budget spent on it.
    const mobile = `+63917${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;
    await addCustomer(t, mobile, PIN);
    const browser = new Browser(t.app, { remoteAddress: `198.51.100.${randomInt(1, 255)}` });
    const { page } = await startLogin(browser, authorizeParams(client, { user_id: mobile }));

    await proxy.cut();
    const refused = await browser.submit(page, { mobile, pin: PIN, action: 'login' });
    expectPage(refused, 503);
    expect(pageText(refused.body)).toContain('Please try again in a moment');
    expect(await t.storage.customers.findCustomerByMobile(mobile)).toMatchObject({ pinAttempts: 0, lockedUntil: null });
    expect(await outbox(t.app, mobile)).toEqual([]);

    await proxy.restore();
    // The client reconnects by itself; the same form, posted again, then goes on.
    let res: Response = refused;
    for (let tries = 0; tries < 50 && res.statusCode !== 303; tries++) {
      await sleep(100);
      res = await browser.submit(page, { mobile, pin: PIN, action: 'login' });
    }
    expectSeeOther(res, /^\/login\/otp\?request=/);
    expect(await outbox(t.app, mobile)).toHaveLength(1);
  });

  it('a Redis that holds its answers (a partition): the 503 page within CONNECT_REDIS_TIMEOUT_MS plus a second, nothing checked or sent; working again within 5 s of the healing', async () => {
    const target = new URL(redisUrl ?? '');
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const t = await build({ env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, CONNECT_REDIS_TIMEOUT_MS: '300' }, captureLogs: true });
    const client = await t.createClient();
    const mobile = `+63917${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;
    await addCustomer(t, mobile, PIN);
    const browser = new Browser(t.app, { remoteAddress: `198.51.100.${randomInt(1, 255)}` });
    const { page } = await startLogin(browser, authorizeParams(client, { user_id: mobile }));

    // The connection stays open; nothing comes back.
    proxy.silence();
    const started = performance.now();
    const refused = await browser.submit(page, { mobile, pin: PIN, action: 'login' });
    const took = performance.now() - started;
    expectPage(refused, 503);
    expect(took).toBeLessThan(300 + 1000);
    expect(await t.storage.customers.findCustomerByMobile(mobile)).toMatchObject({ pinAttempts: 0, lockedUntil: null });
    expect(await outbox(t.app, mobile)).toEqual([]);

    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ failed: ['redis'] });

    // The partition heals, but the connection open across it stays silent for
    // good: Connect must notice and open a new one, within 5 seconds, without a restart.
    await proxy.restore({ abandon: true });
    const healed = performance.now();
    let res: Response = refused;
    while (res.statusCode !== 303 && performance.now() - healed < 5000) {
      await sleep(50);
      res = await browser.submit(page, { mobile, pin: PIN, action: 'login' });
    }
    expectSeeOther(res, /^\/login\/otp\?request=/);
    expect(performance.now() - healed).toBeLessThan(5000);
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);

    // The outage is logged once, with its cause; each request keeps one line; no stack anywhere.
    const lines = t.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
    const outageStarted = lines.filter((line) => line.outage === 'started');
    expect(outageStarted).toMatchObject([{ level: 50, dependency: 'redis', msg: 'Redis unreachable' }]);
    expect(outageStarted[0]?.cause).toEqual(expect.stringMatching(/\S/));
    const refusedLines = lines.filter((line) => line.statusCode === 503 && line.path === '/login');
    expect(refusedLines.length).toBeGreaterThan(0);
    for (const line of refusedLines) expect(line.unavailable).toBe('redis');
    expect(t.logs.join('\n')).not.toMatch(/"stack"|\bat \S+ \(/);
  });

  it('a REDIS_URL naming a database this Redis does not have stops start-up with a message naming it (ioredis would go on in database 0)', async () => {
    const url = new URL(redisUrl ?? '');
    url.pathname = '/99';
    const error = await build({ env: { REDIS_URL: url.href } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/^REDIS_URL: Redis at \S+ has no database 99 \(ERR .*\)$/);
  });

  it('a Redis that cannot be reached at start-up stops start-up with a message naming REDIS_URL, never its password', async () => {
    const target = new URL(redisUrl ?? '');
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    await proxy.cut();
    const error = await build({ env: { REDIS_URL: `redis://:hunter2@127.0.0.1:${proxy.port}` } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(new RegExp(`^REDIS_URL: cannot reach Redis at 127\\.0\\.0\\.1:${proxy.port} \\(.+\\)$`));
    expect((error as Error).message).not.toContain('hunter2');
  });
});
