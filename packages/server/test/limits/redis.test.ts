import { once } from 'node:events';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { StorageUnavailable } from '../../src/core/storage-errors.js';
import { createLimits, hashLimitKey, LIMIT_KEY_PREFIXES } from '../../src/limits/create-limits.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { BUDGETS, describeLimits, freshAddress, freshMobile, usedKeys } from './limits.js';
import { noticeRedisSkipped, redisTestUrl } from '../helpers/redis.js';

const redisUrl = redisTestUrl;
noticeRedisSkipped('limits on Redis');

// As the server connects: fail at once rather than queue while disconnected.
const SERVER_OPTIONS: RedisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 1 };

describe.skipIf(!redisUrl)('Redis', () => {
  const clients: Redis[] = [];
  const connect = (): Redis => {
    const redis = new Redis(redisUrl ?? '', SERVER_OPTIONS);
    redis.on('error', () => {});
    clients.push(redis);
    return redis;
  };
  // The database counters are there but must stay unused: with Redis every count lives in Redis.
  const unusedDatabase = openStorage({ engine: 'sqlite', path: ':memory:' });

  afterAll(async () => {
    const keys = [...usedKeys].flatMap((value) => Object.values(LIMIT_KEY_PREFIXES).map((prefix) => `${prefix}:${hashLimitKey(value)}`));
    const admin = connect();
    await once(admin, 'ready');
    for (let i = 0; i < keys.length; i += 500) await admin.del(...keys.slice(i, i + 500));
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
    await unusedDatabase.close();
  });

  describeLimits(
    'Redis, one client per instance',
    async () => {
      const reader = connect();
      await once(reader, 'ready');
      return {
        async instance(budgets = BUDGETS, keySecret) {
          const redis = connect();
          await once(redis, 'ready');
          return createLimits({ redis, counters: unusedDatabase.rateLimitCounters, budgets, ...(keySecret ? { keySecret } : {}) });
        },
        async storedCount(key) {
          const value = await reader.get(key);
          return value === null ? undefined : Number(value);
        },
        async expireKey(key) {
          await reader.del(key);
        },
      };
    },
    { databaseClock: false },
  );

  describe('limits on Redis: failures', () => {
    let proxy: TcpProxy | undefined;
    afterEach(async () => {
      await proxy?.close();
      proxy = undefined;
    });

    it('keeps nothing in the database when Redis is there', async () => {
      await unusedDatabase.migrate();
      const redis = connect();
      await once(redis, 'ready');
      const limits = createLimits({ redis, counters: unusedDatabase.rateLimitCounters, budgets: BUDGETS });
      const address = freshAddress();
      expect(await limits.pinAttempts.take(address)).toBeUndefined();
      const key = `${LIMIT_KEY_PREFIXES.pinPerAddress}:${hashLimitKey(address.bucket)}`;
      expect(await unusedDatabase.rateLimitCounters.findRateLimitCounter(key, 0)).toBeUndefined();
      expect(await redis.get(key)).toBe('1');
    });

    it('fails closed with StorageUnavailable when the connection to Redis is cut, and recovers by itself', async () => {
      const url = new URL(redisUrl ?? '');
      proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 6379) });
      url.hostname = '127.0.0.1';
      url.port = String(proxy.port);
      const redis = new Redis(url.href, SERVER_OPTIONS);
      redis.on('error', () => {});
      clients.push(redis);
      await once(redis, 'ready');
      const limits = createLimits({ redis, counters: unusedDatabase.rateLimitCounters, budgets: BUDGETS });
      const address = freshAddress();
      expect(await limits.pinAttempts.take(address)).toBeUndefined();

      const closed = once(redis, 'close');
      await proxy.cut();
      // Whether or not the client has noticed the cut yet …
      await expectUnavailable(limits.pinAttempts.take(address));
      await closed;
      // … and once it has.
      await expectUnavailable(limits.sends.take(freshMobile(), address));
      await expectUnavailable(limits.pinAttempts.giveBack(address));

      await proxy.restore();
      await once(redis, 'ready');
      expect(await limits.pinAttempts.take(address)).toBeUndefined();
      expect(await redis.get(`${LIMIT_KEY_PREFIXES.pinPerAddress}:${hashLimitKey(address.bucket)}`)).toBe('2');
    });
  });
});

/** Expects `work` to fail with `StorageUnavailable`, carrying Redis's error as its cause. */
async function expectUnavailable(work: Promise<unknown>): Promise<void> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageUnavailable);
  expect((error as Error).cause).toBeDefined();
}
