import { mkdirSync } from 'node:fs';
import { DATABASE_TIMEOUT_MS } from '../../core/lifetimes.js';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Dialect, type Driver, type SqliteDialectConfig } from 'kysely';


/**
 * The embedded engine: one SQLite file (or `:memory:`) through better-sqlite3.
 * WAL mode lets the CLI read and write while a server runs on the same file.
 *
 * Two processes writing one file (a server and a `connect-auth` command)
 * take turns on SQLite's single write lock (docs/operator-guide.md):
 * - every connection waits up to `busyTimeoutMs` for that lock instead of
 *   failing at once with `SQLITE_BUSY`. better-sqlite3 waits synchronously:
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
): { dialect: Dialect; database: SqliteDatabase.Database; uses: () => number } {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new SqliteDatabase(path);
  // First, so that even switching the journal mode waits for a lock held elsewhere.
  database.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? DATABASE_TIMEOUT_MS))}`);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  const dialect = new ImmediateSqliteDialect({ database });
  return { dialect, database, uses: () => dialect.uses };
}

/** Kysely's SQLite dialect, with {@link ImmediateSqliteDriver} as its driver. */
class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  #driver: ImmediateSqliteDriver | undefined;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  /** How many times the connection was handed back after a query or a transaction. */
  get uses(): number {
    return this.#driver?.uses ?? 0;
  }

  override createDriver(): Driver {
    this.#driver = new ImmediateSqliteDriver(this.#config);
    return this.#driver;
  }
}

/**
 * Kysely's SQLite driver, except that transactions begin `IMMEDIATE` rather
 * than deferred, and that it counts the times its connection is handed back
 * (after each query, or after a transaction's commit or rollback): the change
 * signal reads the database's change counter again only once this moved or
 * a moment passed (`change-feed-sqlite.ts`).
 */
class ImmediateSqliteDriver extends SqliteDriver {
  uses = 0;

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  override async releaseConnection(): Promise<void> {
    this.uses++;
    await super.releaseConnection();
  }
}
