import { openEmbeddedSqlite } from '../../src/storage/kysely/embedded-sqlite.js';
import pg from 'pg';
import { onTestFinished } from 'vitest';
import type { DatabaseLocation } from '../../src/core/storage/storage.js';

/**
 * A connection of the test's own to the app's database (a SQLite file or a
 * PostgreSQL database), beside the app's: for counting rows the stores have
 * no query for, and for creating the triggers that make a write fail.
 * Closed when the test ends.
 */
export interface RawDatabase {
  readonly engine: DatabaseLocation['engine'];
  /** Runs SQL statements as they are (no parameters). */
  exec(sql: string): Promise<void>;
  /** `select count(*) from <table> [where <where>]`. */
  count(table: string, where?: string): Promise<number>;
  /**
   * Makes every `event` (`INSERT` or `UPDATE`) on `table` fail with the
   * message `injected`, when `when` (an SQL condition over `NEW`/`OLD`)
   * holds; returns a function that removes the trigger again (closing
   * removes any left).
   */
  failWrites(table: string, event: 'INSERT' | 'UPDATE', when?: string): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** Opens a {@link RawDatabase} on `location` (not `:memory:`, which only its own connection can see). */
export async function openRawDatabase(location: DatabaseLocation): Promise<RawDatabase> {
  const raw = location.engine === 'sqlite' ? openSqlite(location.path) : await openPostgres(location.url);
  // Triggers left by a failed test must not fail the next one on the same database.
  const left = new Set<() => Promise<void>>();
  const tracked: RawDatabase = {
    ...raw,
    async failWrites(table, event, when) {
      const drop = await raw.failWrites(table, event, when);
      const restore = async () => {
        if (left.delete(restore)) await drop();
      };
      left.add(restore);
      return restore;
    },
    async close() {
      for (const restore of [...left]) await restore().catch(() => {});
      await raw.close();
    },
  };
  onTestFinished(() => tracked.close().catch(() => {}));
  return tracked;
}

let triggers = 0;

function openSqlite(path: string): RawDatabase {
  if (path === ':memory:') throw new Error('an in-memory SQLite database cannot be opened twice');
  const db = openEmbeddedSqlite(path);
  db.exec('pragma busy_timeout = 5000');
  let open = true;
  return {
    engine: 'sqlite',
    async exec(sql) {
      db.exec(sql);
    },
    async count(table, where) {
      const row = db.prepare(`select count(*) as n from ${table}${where ? ` where ${where}` : ''}`).get() as { n: number };
      return Number(row.n);
    },
    async failWrites(table, event, when) {
      const name = `connect_test_fail_${++triggers}`;
      db.exec(`CREATE TRIGGER ${name} BEFORE ${event} ON ${table}${when ? ` WHEN ${when}` : ''} BEGIN SELECT RAISE(ABORT, 'injected'); END`);
      return async () => {
        db.exec(`DROP TRIGGER ${name}`);
      };
    },
    async close() {
      if (open) db.close();
      open = false;
    },
  };
}

async function openPostgres(url: string): Promise<RawDatabase> {
  const client = new pg.Client({ connectionString: url });
  // The database is dropped (connections and all) after the test.
  client.on('error', () => {});
  await client.connect();
  let open = true;
  return {
    engine: 'postgres',
    async exec(sql) {
      await client.query(sql);
    },
    async count(table, where) {
      const result = await client.query<{ n: string }>(`select count(*) as n from ${table}${where ? ` where ${where}` : ''}`);
      return Number(result.rows[0]?.n);
    },
    async failWrites(table, event, when) {
      const name = `connect_test_fail_${++triggers}`;
      await client.query(`CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected'; END $$`);
      await client.query(`CREATE TRIGGER ${name} BEFORE ${event} ON ${table} FOR EACH ROW${when ? ` WHEN (${when})` : ''} EXECUTE FUNCTION ${name}()`);
      return async () => {
        await client.query(`DROP TRIGGER ${name} ON ${table}`);
        await client.query(`DROP FUNCTION ${name}()`);
      };
    },
    async close() {
      if (open) await client.end();
      open = false;
    },
  };
}
