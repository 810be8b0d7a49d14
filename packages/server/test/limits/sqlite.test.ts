import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StorageUnavailable } from '../../src/core/storage-errors.js';
import { createLimits } from '../../src/limits/create-limits.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { BUDGETS, describeLimits, freshAddress, freshMobile, type LimitsFixture } from './limits.js';

/** A start time for the counters' clock: 2026-01-01T00:00:00Z, in milliseconds. */
const T0_MS = 1_767_225_600_000;

const opened: Storage[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close().catch(() => {});
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function openSqlite(path = ':memory:'): Promise<Storage> {
  const storage = openStorage({ engine: 'sqlite', path });
  opened.push(storage);
  await storage.migrate();
  return storage;
}

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'connect-limits-'));
  dirs.push(dir);
  return join(dir, 'connect.db');
}

/** Limits on one storage's counters, on a clock the test moves. */
function fixtureOn(storage: Storage): LimitsFixture {
  let now = T0_MS;
  return {
    instance: async (budgets = BUDGETS, keySecret) => createLimits({ counters: storage.rateLimitCounters, budgets, nowMs: () => now, ...(keySecret ? { keySecret } : {}) }),
    storedCount: async (key) => (await storage.rateLimitCounters.findRateLimitCounter(key, now))?.points,
    advanceMs: (ms) => (now += ms),
  };
}

describeLimits('SQLite (memory)', async () => fixtureOn(await openSqlite()), { databaseClock: true });
describeLimits('SQLite (file)', async () => fixtureOn(await openSqlite(tempFile())), { databaseClock: true });

describe('limits on SQLite: the database in use', () => {
  it('waits for a transaction the same process holds open, then counts (one connection, no deadlock)', async () => {
    const storage = await openSqlite(tempFile());
    const limits = createLimits({ counters: storage.rateLimitCounters, budgets: BUDGETS });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const transaction = storage.transaction(async (tx) => {
      await tx.rateLimitCounters.addToRateLimitCounter('held', 1, null, T0_MS, false);
      entered();
      await held;
    });
    await inside;
    const address = freshAddress();
    const taking = limits.pinAttempts.take(address);
    release();
    await transaction;
    expect(await taking).toBeUndefined();
  });

  it('fails closed with StorageUnavailable once the database is closed', async () => {
    const storage = await openSqlite(tempFile());
    const limits = createLimits({ counters: storage.rateLimitCounters, budgets: BUDGETS });
    const address = freshAddress();
    expect(await limits.pinAttempts.take(address)).toBeUndefined();
    await storage.close();
    const refusals = [
      limits.sends.take(freshMobile(), address),
      limits.pinAttempts.take(address),
      limits.pinAttempts.giveBack(address),
    ];
    for (const refusal of refusals) {
      const error = await refusal.then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(StorageUnavailable);
      expect((error as Error).cause).toBeDefined();
    }
  });
});
