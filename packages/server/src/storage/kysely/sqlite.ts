import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Dialect, type Driver, type SqliteDialectConfig } from 'kysely';
import { DATABASE_TIMEOUT_MS } from '../../core/lifetimes.js';
import { openEmbeddedSqlite, type EmbeddedSqlite } from './embedded-sqlite.js';

/**
 * The embedded engine: one SQLite file (or `:memory:`) through the driver
 * of `embedded-sqlite.ts` (better-sqlite3, or `node:sqlite` from Node.js
 * 24.15 on). WAL mode lets the CLI read and write while a server runs on the same file.
 *
 * Two processes writing one file (a server and a `connect-auth` command)
 * take turns on SQLite's single write lock (docs/operator-guide.md):
 * - every connection waits up to `busyTimeoutMs` for that lock instead of
 *   failing at once with `SQLITE_BUSY`. Both drivers wait synchronously:
 *   the process does nothing else while it waits, so write transactions
 *   stay short and never wait on anything but the database;
 * - every transaction begins `IMMEDIATE`, taking the write lock before its
 *   first read. A deferred transaction that reads and then writes cannot
 *   wait for the lock (SQLite refuses it at once with `SQLITE_BUSY`, since
 *   another writer may have changed what it read), so it would fail
 *   whenever another process writes at the same moment.
 */
export function createSqliteDialect(
  path: string,
  options: { busyTimeoutMs?: number } = {},
): { dialect: Dialect; database: EmbeddedSqlite } {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true });
    // A new database file is its owner's alone (0600), as backups and the
    // master key file are: it holds PIN hashes, client secret hashes and
    // sealed keys. SQLite gives its -wal and -shm files the mode of the
    // database file. A file that exists is not touched, and whatever keeps
    // this from creating one is left for SQLite to say as it opens.
    try {
      closeSync(openSync(path, 'wx', 0o600));
    } catch {
      // It exists, or SQLite tells why it cannot be opened.
    }
  }
  const database = openEmbeddedSqlite(path);
  // First, so that even switching the journal mode waits for a lock held elsewhere.
  database.exec(`pragma busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? DATABASE_TIMEOUT_MS))}`);
  database.exec('pragma journal_mode = WAL');
  database.exec('pragma synchronous = NORMAL');
  database.exec('pragma foreign_keys = ON');
  // A 16 MB page cache, as better-sqlite3 sets it; node:sqlite would keep SQLite's 2 MB.
  database.exec('pragma cache_size = -16000');
  const dialect = new ImmediateSqliteDialect({ database });
  return { dialect, database };
}

/** Kysely's SQLite dialect, with {@link ImmediateSqliteDriver} as its driver. */
class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}

/** Kysely's SQLite driver, except that transactions begin `IMMEDIATE` rather than deferred. */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}
