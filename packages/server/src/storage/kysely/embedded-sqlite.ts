import { createRequire } from 'node:module';

/**
 * One connection to an SQLite file, through whichever driver runs well on
 * this Node.js (docs/operator-guide.md, "The embedded engine"):
 * - Node.js 24 and later: Node's built-in `node:sqlite`. better-sqlite3 12
 *   (the newest line that still runs on Node.js 20) is built against
 *   Node.js 24's `node::ObjectWrap`, whose destructor aborts the whole
 *   process when the garbage collector frees a statement;
 * - Node.js 20 and 22: better-sqlite3 (Node.js 20 has no `node:sqlite`,
 *   and Node.js 22 still calls it experimental and warns at start-up).
 *
 * Both speak the statement interface of Kysely's `SqliteDialect`, and both
 * report SQLite's errors with the result code's name as `code`
 * (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_UNIQUE`, ...).
 */
export interface EmbeddedSqlite {
  /** Which driver this connection uses. */
  readonly driver: EmbeddedSqliteDriver;
  /** False once closed. */
  readonly open: boolean;
  /** True inside a transaction begun on this connection. */
  readonly inTransaction: boolean;
  prepare(sql: string): EmbeddedStatement;
  /** Runs one or more statements that take no parameters, ignoring what they return. */
  exec(sql: string): void;
  close(): void;
}

/** A prepared statement; parameters are positional (`?`), given as an array. */
export interface EmbeddedStatement {
  /** True when the statement returns rows (a query, or a write with `returning`). */
  readonly reader: boolean;
  get(parameters?: readonly unknown[]): unknown;
  all(parameters?: readonly unknown[]): unknown[];
  run(parameters?: readonly unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(parameters?: readonly unknown[]): IterableIterator<unknown>;
}

export type EmbeddedSqliteDriver = 'node:sqlite' | 'better-sqlite3';

/** The driver the embedded engine uses on the Node.js running this process. */
export function embeddedSqliteDriver(nodeVersion: string = process.versions.node): EmbeddedSqliteDriver {
  return Number(nodeVersion.split('.')[0]) >= 24 ? 'node:sqlite' : 'better-sqlite3';
}

/** Opens `path` (or `:memory:`); every call may throw an error whose `code` names SQLite's result code. */
export function openEmbeddedSqlite(path: string, options: { readonly?: boolean } = {}): EmbeddedSqlite {
  return embeddedSqliteDriver() === 'node:sqlite' ? openNodeSqlite(path, options) : openBetterSqlite(path, options);
}

const load = createRequire(import.meta.url);

// --- better-sqlite3 ---------------------------------------------------------

interface BetterStatement {
  readonly reader: boolean;
  get(...parameters: unknown[]): unknown;
  all(...parameters: unknown[]): unknown[];
  run(...parameters: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  iterate(...parameters: unknown[]): IterableIterator<unknown>;
}

interface BetterDatabase {
  readonly open: boolean;
  readonly inTransaction: boolean;
  prepare(sql: string): BetterStatement;
  exec(sql: string): void;
  close(): void;
}

function openBetterSqlite(path: string, options: { readonly?: boolean }): EmbeddedSqlite {
  // Loaded only here: on Node.js 24 the module is never loaded at all.
  const Database = load('better-sqlite3') as new (path: string, options: { readonly: boolean }) => BetterDatabase;
  const database = new Database(path, { readonly: options.readonly ?? false });
  // better-sqlite3 binds an array given as the only argument as the positional parameters.
  return {
    driver: 'better-sqlite3',
    get open() {
      return database.open;
    },
    get inTransaction() {
      return database.inTransaction;
    },
    prepare(sql) {
      const statement = database.prepare(sql);
      return {
        reader: statement.reader,
        get: (parameters = []) => statement.get(parameters),
        all: (parameters = []) => statement.all(parameters),
        run: (parameters = []) => statement.run(parameters),
        iterate: (parameters = []) => statement.iterate(parameters),
      };
    },
    exec: (sql) => void database.exec(sql),
    close: () => database.close(),
  };
}

// --- node:sqlite -------------------------------------------------------------

interface NodeStatement {
  columns(): unknown[];
  get(...parameters: unknown[]): unknown;
  all(...parameters: unknown[]): unknown[];
  run(...parameters: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...parameters: unknown[]): IterableIterator<unknown>;
}

interface NodeDatabase {
  readonly isOpen: boolean;
  readonly isTransaction: boolean;
  prepare(sql: string): NodeStatement;
  exec(sql: string): void;
  close(): void;
}

function openNodeSqlite(path: string, options: { readonly?: boolean }): EmbeddedSqlite {
  const { DatabaseSync } = load('node:sqlite') as { DatabaseSync: new (path: string, options: { readOnly: boolean }) => NodeDatabase };
  const database = named(() => new DatabaseSync(path, { readOnly: options.readonly ?? false }));
  return {
    driver: 'node:sqlite',
    get open() {
      return database.isOpen;
    },
    get inTransaction() {
      return database.isOpen && database.isTransaction;
    },
    prepare(sql) {
      const statement = named(() => database.prepare(sql));
      return {
        reader: statement.columns().length > 0,
        get: (parameters = []) => named(() => statement.get(...parameters)),
        all: (parameters = []) => named(() => statement.all(...parameters)),
        run: (parameters = []) => named(() => statement.run(...parameters)),
        iterate: (parameters = []) => namedIterator(named(() => statement.iterate(...parameters))),
      };
    },
    exec: (sql) => named(() => database.exec(sql)),
    close: () => named(() => database.close()),
  };
}

/** Runs `work`, giving an SQLite error of `node:sqlite` the name of its result code as `code`, as better-sqlite3 does. */
function named<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw withResultCodeName(error);
  }
}

function* namedIterator(rows: IterableIterator<unknown>): IterableIterator<unknown> {
  try {
    yield* rows;
  } catch (error) {
    throw withResultCodeName(error);
  }
}

function withResultCodeName(error: unknown): unknown {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  if (!(error instanceof Error) || typeof errcode !== 'number') return error;
  return Object.assign(new Error(error.message, { cause: error }), { code: resultCodeName(errcode), errcode });
}

/**
 * SQLite's name of an (extended) result code: the extended names the
 * storage tells apart (busy and constraint kinds), else the name of the
 * primary code in its low byte (https://www.sqlite.org/rescode.html).
 */
export function resultCodeName(errcode: number): string {
  return EXTENDED_CODES[errcode] ?? PRIMARY_CODES[errcode & 0xff] ?? `SQLITE_ERROR_${errcode}`;
}

const PRIMARY_CODES: Readonly<Record<number, string>> = {
  1: 'SQLITE_ERROR',
  2: 'SQLITE_INTERNAL',
  3: 'SQLITE_PERM',
  4: 'SQLITE_ABORT',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  9: 'SQLITE_INTERRUPT',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  12: 'SQLITE_NOTFOUND',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  16: 'SQLITE_EMPTY',
  17: 'SQLITE_SCHEMA',
  18: 'SQLITE_TOOBIG',
  19: 'SQLITE_CONSTRAINT',
  20: 'SQLITE_MISMATCH',
  21: 'SQLITE_MISUSE',
  22: 'SQLITE_NOLFS',
  23: 'SQLITE_AUTH',
  24: 'SQLITE_FORMAT',
  25: 'SQLITE_RANGE',
  26: 'SQLITE_NOTADB',
};

const EXTENDED_CODES: Readonly<Record<number, string>> = {
  261: 'SQLITE_BUSY_RECOVERY',
  517: 'SQLITE_BUSY_SNAPSHOT',
  773: 'SQLITE_BUSY_TIMEOUT',
  275: 'SQLITE_CONSTRAINT_CHECK',
  531: 'SQLITE_CONSTRAINT_COMMITHOOK',
  787: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  1043: 'SQLITE_CONSTRAINT_FUNCTION',
  1299: 'SQLITE_CONSTRAINT_NOTNULL',
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  1811: 'SQLITE_CONSTRAINT_TRIGGER',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
  2323: 'SQLITE_CONSTRAINT_VTAB',
  2579: 'SQLITE_CONSTRAINT_ROWID',
};
