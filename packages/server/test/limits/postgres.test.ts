import { afterEach, describe, expect, it } from 'vitest';
import { StorageUnavailable } from '../../src/core/storage-errors.js';
import { createLimits, hashLimitKey, LIMIT_KEY_PREFIXES } from '../../src/limits/create-limits.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../helpers/postgres.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { BUDGETS, concurrently, describeLimits, freshAddress, freshMobile } from './limits.js';

/** A start time for the counters' clock: 2026-01-01T00:00:00Z, in milliseconds. */
const T0_MS = 1_767_225_600_000;

noticePostgresSkipped('limits on PostgreSQL');

/** Expects `work` to fail with `StorageUnavailable`, carrying the driver's error as its cause. */
async function expectUnavailable(work: Promise<unknown>): Promise<void> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageUnavailable);
  expect((error as Error).cause).toBeDefined();
}

describe.skipIf(!postgresAdminUrl)('PostgreSQL', () => {
  const postgres = usePostgresStorage();

  // Every instance opens its own storage (connection pool) on the test's database.
  describeLimits(
    'PostgreSQL, one storage per instance',
    async () => {
      const first = postgres.open();
      await first.migrate();
      let now = T0_MS;
      return {
        instance: async (budgets = BUDGETS, keySecret) => createLimits({ counters: postgres.open().rateLimitCounters, budgets, nowMs: () => now, ...(keySecret ? { keySecret } : {}) }),
        storedCount: async (key) => (await first.rateLimitCounters.findRateLimitCounter(key, now))?.points,
        advanceMs: (ms) => (now += ms),
      };
    },
    { databaseClock: true },
  );

  describe('limits on PostgreSQL: failures', () => {
    let proxy: TcpProxy | undefined;
    let proxied: Storage | undefined;
    afterEach(async () => {
      await proxied?.close().catch(() => {});
      await proxy?.close();
      proxied = proxy = undefined;
    });

    it('two instances with their own connection pools share one budget', async () => {
      const a = postgres.open();
      const b = postgres.open();
      await a.migrate();
      const limitsA = createLimits({ counters: a.rateLimitCounters, budgets: BUDGETS });
      const limitsB = createLimits({ counters: b.rateLimitCounters, budgets: BUDGETS });
      const mobile = freshMobile();
      const sends = await concurrently(20, (i) => (i % 2 ? limitsB : limitsA).sends.take(mobile, freshAddress()));
      expect(sends.filter((r) => r === undefined)).toHaveLength(BUDGETS.smsLimitPerMobile);
      const address = freshAddress();
      const attempts = await concurrently(50, (i) => (i % 2 ? limitsB : limitsA).pinAttempts.take(address));
      expect(attempts.filter((r) => r === undefined)).toHaveLength(BUDGETS.pinLimitPerAddress);
    });

    it('fails closed with StorageUnavailable while the database is out of reach, and recovers by itself', async () => {
      const direct = postgres.open();
      await direct.migrate();
      const url = new URL(postgres.databaseUrl());
      proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
      url.hostname = '127.0.0.1';
      url.port = String(proxy.port);
      proxied = openStorage({ engine: 'postgres', url: url.href });
      const limits = createLimits({ counters: proxied.rateLimitCounters, budgets: BUDGETS });
      const address = freshAddress();

      await proxy.cut();
      await expectUnavailable(limits.pinAttempts.take(address));
      await expectUnavailable(limits.sends.take(freshMobile(), address));
      await expectUnavailable(limits.pinAttempts.giveBack(address));

      await proxy.restore();
      expect(await limits.pinAttempts.take(address)).toBeUndefined();
      // The attempts refused while out of reach were never counted.
      const key = `${LIMIT_KEY_PREFIXES.pinPerAddress}:${hashLimitKey(address.bucket)}`;
      expect((await direct.rateLimitCounters.findRateLimitCounter(key, Date.now()))?.points).toBe(1);
    });

    it('fails closed with StorageUnavailable once the database is closed', async () => {
      const storage = openStorage({ engine: 'postgres', url: postgres.databaseUrl() });
      await storage.migrate();
      const limits = createLimits({ counters: storage.rateLimitCounters, budgets: BUDGETS });
      expect(await limits.sends.take(freshMobile(), freshAddress())).toBeUndefined();
      await storage.close();
      await expectUnavailable(limits.sends.take(freshMobile(), freshAddress()));
      await expectUnavailable(limits.pinAttempts.take(freshAddress()));
    });
  });
});
