import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { SqliteDialect, type Dialect } from 'kysely';

/**
 * The embedded engine: one SQLite file (or `:memory:`) through better-sqlite3.
 * WAL mode lets the CLI read and write while a server runs on the same file.
 */
export function createSqliteDialect(path: string): Dialect {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new SqliteDatabase(path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  return new SqliteDialect({ database });
}
