import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openEmbeddedSqlite } from '../../src/storage/kysely/embedded-sqlite.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import { BACKUP_PAGES_PER_STEP, backUpSqlite, type BackupProgress } from '../../src/storage/kysely/sqlite-backup.js';

/**
 * The online backup of the embedded database (docs/operator-guide.md,
 * "Backups and restores"): a copy of one moment, taken in steps, while
 * another connection (a server) goes on writing without waiting.
 */

async function migratedDatabase(): Promise<{ folder: string; path: string }> {
  const folder = mkdtempSync(join(tmpdir(), 'connect-sqlite-backup-'));
  onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
  const path = join(folder, 'connect-sandbox.db');
  const storage = openStorage({ engine: 'sqlite', path });
  await storage.migrate();
  await storage.claimEnvironment('sandbox');
  await storage.close();
  return { folder, path };
}

function count(path: string, type: string): number {
  const database = openEmbeddedSqlite(path);
  try {
    return Number((database.prepare('select count(*) as n from audit_events where type = ?').get([type]) as { n: number }).n);
  } finally {
    database.close();
  }
}

describe('backUpSqlite', () => {
  it('copies the moment it began, in steps, while another connection writes between the steps without waiting', async () => {
    const { folder, path } = await migratedDatabase();
    const writer = openEmbeddedSqlite(path);
    onTestFinished(() => writer.close());
    // A writer that would fail at once, rather than wait, if the backup held the write lock.
    writer.exec('pragma busy_timeout = 0');
    const insert = writer.prepare(`insert into audit_events (id, at, type, actor, outcome, details) values (?, 0, ?, 'test', 'success', ?)`);
    writer.exec('begin');
    for (let n = 0; n < 12_000; n++) insert.run([`before-${n}`, 'test.before', 'x'.repeat(1000)]);
    writer.exec('commit');

    const steps: BackupProgress[] = [];
    const partialModes = new Set<number>();
    const out = join(folder, 'backup.db');
    const result = await backUpSqlite(path, out, {
      environment: 'sandbox',
      onProgress: (progress) => {
        steps.push(progress);
        // While it is being written, the partial file is already for its owner's eyes only.
        for (const name of readdirSync(folder).filter((n) => n.endsWith('.partial'))) partialModes.add(statSync(join(folder, name)).mode & 0o777);
        // Several writes, each its own transaction, as a server makes them.
        for (let n = 0; n < 5; n++) insert.run([`during-${steps.length}-${n}`, 'test.during', 'y'.repeat(1000)]);
      },
    });

    expect(steps.length).toBeGreaterThan(2);
    expect([...partialModes]).toEqual([0o600]);
    // Every step goes on where the last one stopped: the writes never restarted the copy.
    for (let i = 1; i < steps.length; i++) {
      expect(steps[i]?.copiedPages).toBe((steps[i - 1]?.copiedPages ?? 0) + BACKUP_PAGES_PER_STEP);
      expect(steps[i]?.totalPages).toBe(steps[0]?.totalPages);
    }
    expect(result.pages).toBe(steps[0]?.totalPages);
    expect(result.environment).toBe('sandbox');
    // The backup holds the moment the backup began, whole; the live database holds the writes too.
    expect(count(out, 'test.before')).toBe(12_000);
    expect(count(out, 'test.during')).toBe(0);
    expect(count(path, 'test.during')).toBe(steps.length * 5);
    const copy = openEmbeddedSqlite(out);
    expect(copy.prepare('pragma integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
    copy.close();
    expect(readdirSync(folder).sort()).toEqual(['backup.db', 'connect-sandbox.db', 'connect-sandbox.db-shm', 'connect-sandbox.db-wal']);
  });
});
