import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RateLimitCounterStore } from '../../src/core/limits/rate-limit-counter-store.js';
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

describe('limits on SQLite: the turn of a window', () => {
  it('30 refusals in the last moment of a window, their points reaching the counters once the next window has started, open that window no further', async () => {
    const storage = await openSqlite();
    let now = T0_MS;
    // Give-backs held while `hold` is set: a round trip that ends after the window's turn.
    let hold = false;
    const held: Array<() => void> = [];
    const counters: RateLimitCounterStore = {
      ...storage.rateLimitCounters,
      async subtractFromLiveRateLimitCounter(key, points, nowMs) {
        if (hold) await new Promise<void>((resolve) => held.push(resolve));
        return storage.rateLimitCounters.subtractFromLiveRateLimitCounter(key, points, nowMs);
      },
    };
    const limits = createLimits({ counters, budgets: BUDGETS, nowMs: () => now });
    const address = freshAddress();
    for (let i = 0; i < BUDGETS.pinLimitPerAddress; i++) expect(await limits.pinAttempts.take(address)).toBeUndefined();
    now += 60 * 60_000 - 500;
    hold = true;
    const refused = Promise.all(Array.from({ length: 30 }, () => limits.pinAttempts.take(address)));
    // Every refusal has either answered or is waiting to give its point back.
    await Promise.race([refused, vi.waitFor(() => expect(held).toHaveLength(30))]);
    now += 1000;
    hold = false;
    expect(await limits.pinAttempts.take(address)).toBeUndefined();
    for (const release of held.splice(0)) release();
    expect((await refused).every((answer) => answer !== undefined)).toBe(true);
    for (let i = 1; i < BUDGETS.pinLimitPerAddress; i++) expect(await limits.pinAttempts.take(address), `attempt #${i + 1}`).toBeUndefined();
    expect(await limits.pinAttempts.take(address)).toBeDefined();
  });
});
