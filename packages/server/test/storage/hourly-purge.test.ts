import { afterEach, describe, expect, it, vi } from 'vitest';
import { fixedClock } from '../../src/core/clock.js';
import { startHourlyPurge, type HourlyPurge, type PurgeLog, type PurgeRun } from '../../src/compose/hourly-purge.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl, type TestDatabase } from '../helpers/postgres.js';

/** The server's hourly purge: one instance at a time, failures logged, never thrown. */

const T = 1_767_225_600;
const clock = fixedClock(T + 3600);

function recordingLog(): PurgeLog & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (_details, message) => void lines.push(message), error: (_details, message) => void lines.push(message) };
}

async function expiredCodes(storage: Storage, count: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    await storage.codes.insertAuthorizationCode({
      codeHash: `code-${n}`,
      clientId: 'cid_sandbox_x',
      redirectUri: 'https://shop.example/cb',
      profileId: '123456789012',
      codeChallenge: null,
      createdAt: T,
      expiresAt: T + 300,
      consumedAt: null,
      scopes: [],
      authentication: null,
    });
  }
}

const opened: Array<HourlyPurge | Storage> = [];
async function closeAll(): Promise<void> {
  for (const item of opened.splice(0).reverse()) await ('runOnce' in item ? item.stop() : (item as Storage).close());
}
afterEach(closeAll);

function purgeOn(storage: Storage, log: PurgeLog, options: { batchSize?: number; onProgress?: () => void; intervalMs?: number } = {}): HourlyPurge {
  const purge = startHourlyPurge({ storage, clock, log, sessionIdleSeconds: 1800, auditRetentionDays: 365, ...options });
  opened.push(purge);
  return purge;
}

noticePostgresSkipped('hourly purge');

describe.skipIf(!postgresAdminUrl)('hourly purge on PostgreSQL', () => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await closeAll();
    await database?.drop();
    database = undefined;
  });

  it('two instances purging at the same moment: one does the work, the other skips and says so', async () => {
    database = await createTestDatabase();
    const a = openStorage({ engine: 'postgres', url: database.url });
    const b = openStorage({ engine: 'postgres', url: database.url });
    opened.push(a, b);
    await a.migrate();
    await expiredCodes(a, 60);
    // B's pool is connected already, so its one lock attempt lands well within A's 60 batches.
    await b.ping();
    const logA = recordingLog();
    const logB = recordingLog();
    const purgeB = purgeOn(b, logB);
    let second: Promise<PurgeRun> | undefined;
    // B starts while A is under way (after A's first batch): A holds the lock.
    const purgeA = purgeOn(a, logA, { batchSize: 1, onProgress: () => void (second ??= purgeB.runOnce()) });
    const first = await purgeA.runOnce();
    expect(first).toMatchObject({ ran: true, deleted: { authorizationCodes: 60 } });
    expect(await second).toEqual({ ran: false, reason: 'locked' });
    expect(logB.lines).toEqual(['purge skipped: another instance is purging']);
    expect(logA.lines).toEqual(['purge done']);
    // The lock is released: B purges next time.
    expect(await purgeB.runOnce()).toMatchObject({ ran: true, deleted: { authorizationCodes: 0 } });
  });

  it('with a pool of one connection (CONNECT_DB_POOL_SIZE=1) it deletes on the connection that holds its lock: it neither waits for a second one nor fails', async () => {
    database = await createTestDatabase();
    const storage = openStorage({ engine: 'postgres', url: database.url }, { maxConnections: 1, timeoutMs: 2000 });
    opened.push(storage);
    await storage.migrate();
    await expiredCodes(storage, 5);
    const log = recordingLog();
    expect(await purgeOn(storage, log, { batchSize: 2 }).runOnce()).toMatchObject({ ran: true, deleted: { authorizationCodes: 5 } });
    expect(log.lines).toEqual(['purge done']);
  });

  it('both started at once: exactly one of them purges', async () => {
    database = await createTestDatabase();
    const a = openStorage({ engine: 'postgres', url: database.url });
    const b = openStorage({ engine: 'postgres', url: database.url });
    opened.push(a, b);
    await a.migrate();
    await expiredCodes(a, 50);
    const runs = await Promise.all([purgeOn(a, recordingLog(), { batchSize: 1 }).runOnce(), purgeOn(b, recordingLog(), { batchSize: 1 }).runOnce()]);
    const deleted = runs.map((run) => (run.ran ? run.deleted.authorizationCodes : 0));
    expect(deleted.reduce((sum, n) => sum + n, 0)).toBe(50);
    // One purged; the other skipped, or (had the first ended before it began) found nothing left.
    for (const run of runs) if (!run.ran) expect(run.reason).toBe('locked');
    expect(deleted.sort((x, y) => x - y)[1]).toBe(50);
  });
});

describe('hourly purge', () => {
  it('SQLite: always runs (one writer per file), and a failure is logged, never thrown', async () => {
    const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
    await storage.migrate();
    await expiredCodes(storage, 3);
    const log = recordingLog();
    const purge = purgeOn(storage, log);
    expect(await purge.runOnce()).toMatchObject({ ran: true, deleted: { authorizationCodes: 3 } });
    await storage.close();
    expect(await purge.runOnce()).toEqual({ ran: false, reason: 'failed' });
    expect(log.lines).toEqual(['purge done', 'purge failed; trying again at the next hour']);
  });

  it('runs by itself every interval until stopped, on an unref\'d timer', async () => {
    const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
    opened.push(storage);
    await storage.migrate();
    const log = recordingLog();
    const purge = purgeOn(storage, log, { intervalMs: 20 });
    const deadline = Date.now() + 2000;
    while (log.lines.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(log.lines.slice(0, 2)).toEqual(['purge done', 'purge done']);
    await purge.stop();
    const count = log.lines.length;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(log.lines).toHaveLength(count);
  });

  it('runs first a minute after start, long before the first hour, then every hour', async () => {
    const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
    opened.push(storage);
    await storage.migrate();
    await expiredCodes(storage, 2);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    try {
      const log = recordingLog();
      purgeOn(storage, log);
      await vi.advanceTimersByTimeAsync(59_000);
      expect(log.lines).toEqual([]);
      await vi.advanceTimersByTimeAsync(1_000);
      await vi.waitFor(() => expect(log.lines).toEqual(['purge done']));
      await vi.advanceTimersByTimeAsync(3_599_000);
      expect(log.lines).toEqual(['purge done']);
      await vi.advanceTimersByTimeAsync(1_000);
      await vi.waitFor(() => expect(log.lines).toEqual(['purge done', 'purge done']));
    } finally {
      vi.useRealTimers();
    }
  });
});
