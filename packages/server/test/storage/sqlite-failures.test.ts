import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { StorageUnavailable } from '../../src/core/storage-errors.js';
import { embeddedSqliteDriver, openEmbeddedSqlite, type EmbeddedSqlite } from '../../src/storage/kysely/embedded-sqlite.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { clientRecord } from '../helpers/client-record.js';
import { describeStorageFailures } from './failures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new database file path in a folder removed after the test. */
function databasePath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'connect-sqlite-failures-'));
  dirs.push(dir);
  return join(dir, 'connect.db');
}

/** A second, raw connection to the file, as another process would have; closed when the test ends. */
function rawConnection(path: string, busyTimeoutMs = 0): EmbeddedSqlite {
  const db = openEmbeddedSqlite(path);
  db.exec(`pragma busy_timeout = ${busyTimeoutMs}`);
  onTestFinished(() => {
    if (db.inTransaction) db.exec('rollback');
    db.close();
  });
  return db;
}

/** A migrated storage on `path`, closed when the test ends. */
async function storageAt(path: string, timeoutMs?: number): Promise<Storage> {
  const storage = openStorage({ engine: 'sqlite', path }, { timeoutMs });
  onTestFinished(() => storage.close());
  await storage.migrate();
  return storage;
}

function insertOutboxRow(db: EmbeddedSqlite, id: string): void {
  db.prepare('insert into sms_outbox (id, to_mobile, body, sent_at) values (?, ?, ?, ?)').run([id, '+639171234567', 'hello', 1]);
}

let currentPath = '';
describeStorageFailures('sqlite', {
  async open() {
    currentPath = databasePath();
    const storage = openStorage({ engine: 'sqlite', path: currentPath });
    await storage.migrate();
    return storage;
  },
  dispose: (storage) => storage.close(),
  async exec(sql) {
    rawConnection(currentPath).exec(sql);
  },
  async refuseInserts(table) {
    rawConnection(currentPath).exec(`CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
  },
  refusedCode: 'SQLITE_CONSTRAINT_TRIGGER',
});

describe('sqlite: another process holding the write lock', () => {
  it('past the busy timeout, a write surfaces as StorageUnavailable (SQLITE_BUSY); once the lock is free it succeeds', async () => {
    const path = databasePath();
    const storage = await storageAt(path, 50);
    const other = rawConnection(path);
    other.exec('begin immediate');
    insertOutboxRow(other, 'other-1');

    const single = await storage.clients.insertClient(clientRecord()).catch((error: unknown) => error);
    expect(single).toBeInstanceOf(StorageUnavailable);
    expect(((single as StorageUnavailable).cause as { code?: string }).code).toBe('SQLITE_BUSY');
    const inTransaction = await storage.transaction((tx) => tx.clients.insertClient(clientRecord())).catch((error: unknown) => error);
    expect(inTransaction).toBeInstanceOf(StorageUnavailable);
    // WAL: reads go on while another connection writes.
    expect(await storage.clients.findClient('cid_sandbox_acme')).toBeUndefined();

    other.exec('commit');
    await storage.transaction((tx) => tx.clients.insertClient(clientRecord()));
    expect(await storage.clients.findClient('cid_sandbox_acme')).toBeDefined();
    expect(await storage.outbox.listOutboxMessages('+639171234567', 10)).toHaveLength(1);
  });
});

describe('sqlite: transactions begin IMMEDIATE', () => {
  it('(the failure it avoids) a deferred transaction that reads and then writes gets SQLITE_BUSY at once, busy timeout or not', async () => {
    const path = databasePath();
    await storageAt(path);
    const deferred = rawConnection(path, 5000);
    const other = rawConnection(path);

    // Another connection commits between the read and the write: the snapshot read is stale.
    deferred.exec('begin');
    deferred.prepare('select count(*) from sms_outbox').get();
    insertOutboxRow(other, 'other-1');
    expect(() => insertOutboxRow(deferred, 'deferred-1')).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY_SNAPSHOT' }));
    deferred.exec('rollback');

    // Another connection holds the write lock: the deferred transaction cannot wait for it.
    other.exec('begin immediate');
    insertOutboxRow(other, 'other-2');
    deferred.exec('begin');
    deferred.prepare('select count(*) from sms_outbox').get();
    const started = performance.now();
    expect(() => insertOutboxRow(deferred, 'deferred-2')).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));
    // Refused without waiting out its 5-second busy timeout.
    expect(performance.now() - started).toBeLessThan(2500);
    deferred.exec('rollback');
    other.exec('commit');
  });

  it('waits for a write lock another process holds, then reads and writes', async () => {
    const path = databasePath();
    const storage = await storageAt(path);
    // Another process: holds the write lock with an uncommitted row, commits after 300 ms on its own.
    const holder = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const db = workerData.driver === 'node:sqlite'
         ? new (require('node:sqlite').DatabaseSync)(workerData.path)
         : new (require(workerData.betterSqlite))(workerData.path);
       db.exec('begin immediate');
       db.prepare("insert into sms_outbox (id, to_mobile, body, sent_at) values ('other-1', '+639171234567', 'hello', 1)").run();
       parentPort.postMessage('locked');
       setTimeout(() => { db.exec('commit'); db.close(); parentPort.postMessage('committed'); }, 300);`,
      { eval: true, workerData: { path, driver: embeddedSqliteDriver(), betterSqlite: createRequire(import.meta.url).resolve('better-sqlite3') } },
    );
    onTestFinished(async () => {
      await holder.terminate();
    });
    const messages: string[] = [];
    const committed = new Promise<void>((resolve, reject) => {
      holder.on('error', reject);
      holder.on('message', (message: string) => {
        messages.push(message);
        if (message === 'committed') resolve();
      });
    });
    await new Promise<void>((resolve) => holder.once('message', () => resolve()));
    expect(messages).toEqual(['locked']);

    const seen = await storage.transaction(async (tx) => {
      const before = await tx.outbox.listOutboxMessages('+639171234567', 10);
      await tx.clients.insertClient(clientRecord());
      return before.map((m) => m.id);
    });
    // The transaction began only once the other process had committed.
    expect(seen).toEqual(['other-1']);
    expect(await storage.clients.findClient('cid_sandbox_acme')).toBeDefined();
    await committed;
  });

  it('holds the write lock from its start: no other connection writes between its read and its write', async () => {
    const path = databasePath();
    const storage = await storageAt(path);
    const other = rawConnection(path);
    let otherWrite: unknown;
    await storage.transaction(async (tx) => {
      await tx.outbox.listOutboxMessages('+639171234567', 10);
      try {
        insertOutboxRow(other, 'other-1');
      } catch (error) {
        otherWrite = error;
      }
      await tx.clients.insertClient(clientRecord());
    });
    expect(otherWrite).toMatchObject({ code: 'SQLITE_BUSY' });
    expect(await storage.clients.findClient('cid_sandbox_acme')).toBeDefined();
  });
});
