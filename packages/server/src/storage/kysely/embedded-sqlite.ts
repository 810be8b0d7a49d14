import { createRequire } from 'node:module';

/**
 * One connection to an SQLite file, through whichever driver runs well on
 * this Node.js (docs/operator-guide.md, "The embedded engine"):
 * - Node's built-in `node:sqlite` from Node.js 24.15 on (except on the
 *   25 line), where Node no longer calls it experimental. Built against
 *   Node.js 24.19 or 26.4 and later, better-sqlite3 12 (the newest line
 *   that still runs on Node.js 20) aborts the whole process when the garbage
 *   collector frees a statement (`node::ObjectWrap` there removes a cleanup
 *   hook in its destructor);
 * - better-sqlite3 before that: Node.js 20 has no `node:sqlite`, and Node.js
 *   22, 24.0 to 24.14 and early 25 print an experimental-feature warning
 *   when it loads.
 *
 * Both speak the statement interface of Kysely's `SqliteDialect`, bind the
 * same kinds of values, wait 5 seconds for another connection's lock unless
 * told otherwise, and report SQLite's errors with the result code's name as
 * `code` (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_UNIQUE`, ...).
 */
export interface EmbeddedSqlite {
  /** Which driver this connection uses. */
  readonly driver: EmbeddedSqliteDriver;
  /** False once closed. */
  readonly open: boolean;
  /** True inside a transaction begun on this connection. */
  readonly inTransaction: boolean;
  /**
   * How many calls reached the connection so far: statements prepared and
   * run, `exec`, `backup`, `close`. While it stays the same, `open` and
   * `inTransaction` do too, without asking the driver (`change-feed-sqlite.ts`
   * asks this on every cached lookup).
   */
  readonly operations: number;
  prepare(sql: string): EmbeddedStatement;
  /** Runs one or more statements that take no parameters, ignoring what they return. */
  exec(sql: string): void;
  /**
   * Copies the database into the file `destination` with SQLite's online
   * backup, `pagesPerStep` pages at a time, telling `progress` after each
   * step (a `progress` that throws ends the backup with that error; under
   * node:sqlite once the copy is complete). The
   * copy is of one moment: begin a read transaction on this connection
   * first, or a write of another connection restarts it from the start.
   */
  backup(destination: string, options: BackupOptions): Promise<void>;
  /** Closes the connection; a second call does nothing. */
  close(): void;
}

/** How {@link EmbeddedSqlite.backup} copies. */
export interface BackupOptions {
  readonly pagesPerStep: number;
  readonly progress: (step: { readonly totalPages: number; readonly remainingPages: number }) => void;
}

/**
 * A prepared statement; parameters are positional (`?`), given as an array
 * of strings, numbers, bigints, `Uint8Array`s or `null` (`undefined` binds
 * as `null`); any other value is refused with a `TypeError`.
 */
export interface EmbeddedStatement {
  /** True when the statement returns rows (a query, or a write with `returning`). */
  readonly reader: boolean;
  get(parameters?: readonly unknown[]): unknown;
  all(parameters?: readonly unknown[]): unknown[];
  run(parameters?: readonly unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(parameters?: readonly unknown[]): IterableIterator<unknown>;
}

export type EmbeddedSqliteDriver = 'node:sqlite' | 'better-sqlite3';

/** The driver the embedded engine uses on a Node.js version (by default the one running this process). */
export function embeddedSqliteDriver(nodeVersion: string = process.versions.node): EmbeddedSqliteDriver {
  const [major = 0, minor = 0] = nodeVersion.split('.').map(Number);
  return (major === 24 && minor >= 15) || major >= 26 ? 'node:sqlite' : 'better-sqlite3';
}

/** How long a connection waits for another connection's write lock, unless told otherwise. */
const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** Opens `path` (or `:memory:`); every call may throw an error whose `code` names SQLite's result code. */
export function openEmbeddedSqlite(path: string, options: { readonly?: boolean } = {}): EmbeddedSqlite {
  const database = counted(embeddedSqliteDriver() === 'node:sqlite' ? openNodeSqlite(path, options) : openBetterSqlite(path, options));
  database.exec(`pragma busy_timeout = ${DEFAULT_BUSY_TIMEOUT_MS}`);
  return database;
}

/** A connection of one driver, before its calls are counted. */
type Uncounted = Omit<EmbeddedSqlite, 'operations'>;

/** `connection` with {@link EmbeddedSqlite.operations} counted: one for every call that reaches it. */
function counted(connection: Uncounted): EmbeddedSqlite {
  let operations = 0;
  return {
    driver: connection.driver,
    get open() {
      return connection.open;
    },
    get inTransaction() {
      return connection.inTransaction;
    },
    get operations() {
      return operations;
    },
    prepare(sql) {
      operations++;
      const statement = connection.prepare(sql);
      return {
        reader: statement.reader,
        get: (parameters) => (operations++, statement.get(parameters)),
        all: (parameters) => (operations++, statement.all(parameters)),
        run: (parameters) => (operations++, statement.run(parameters)),
        iterate: (parameters) => (operations++, statement.iterate(parameters)),
      };
    },
    exec(sql) {
      operations++;
      connection.exec(sql);
    },
    backup(destination, options) {
      operations++;
      return connection.backup(destination, options);
    },
    close() {
      operations++;
      connection.close();
    },
  };
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
  backup(destination: string, options: { progress: (step: { totalPages: number; remainingPages: number }) => number | undefined }): Promise<unknown>;
  close(): void;
}

function openBetterSqlite(path: string, options: { readonly?: boolean }): Uncounted {
  // Loaded only here: where node:sqlite is the driver, the add-on is never loaded at all.
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
    async backup(destination, { pagesPerStep, progress }) {
      // better-sqlite3 copies a step at a time between turns of the event loop; the number the callback returns is the next step's size.
      await database.backup(destination, {
        progress: (step) => {
          progress(step);
          return pagesPerStep;
        },
      });
    },
    // A second close does nothing.
    close: () => void database.close(),
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

type NodeBackup = (
  source: NodeDatabase,
  destination: string,
  options: { rate: number; progress: (step: { totalPages: number; remainingPages: number }) => void },
) => Promise<number>;

function openNodeSqlite(path: string, options: { readonly?: boolean }): Uncounted {
  const { DatabaseSync, backup } = load('node:sqlite') as {
    DatabaseSync: new (path: string, options: { readOnly: boolean }) => NodeDatabase;
    backup: NodeBackup;
  };
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
        get: (parameters = []) => named(() => statement.get(...bindable(parameters))),
        all: (parameters = []) => named(() => statement.all(...bindable(parameters))),
        run: (parameters = []) => named(() => statement.run(...bindable(parameters))),
        iterate: (parameters = []) => namedIterator(named(() => statement.iterate(...bindable(parameters)))),
      };
    },
    exec: (sql) => named(() => database.exec(sql)),
    async backup(destination, { pagesPerStep, progress }) {
      // node:sqlite runs the steps on its thread pool and documents no way for the callback to stop them: a
      // callback that throws is remembered, and the backup fails with its error once the copy is done.
      let stopped: { error: unknown } | undefined;
      try {
        await backup(database, destination, {
          rate: pagesPerStep,
          progress: (step) => {
            if (stopped) return;
            try {
              progress(step);
            } catch (error) {
              stopped = { error };
            }
          },
        });
      } catch (error) {
        throw withResultCodeName(error);
      }
      if (stopped) throw stopped.error;
    },
    close: () => {
      if (database.isOpen) named(() => database.close());
    },
  };
}

/**
 * The parameters as better-sqlite3 binds them: `undefined` as `null`, and
 * nothing but strings, numbers, bigints, byte arrays and `null`. (node:sqlite
 * would bind a boolean as 1, and read an object or a `Date` as named
 * parameters, shifting the values after it.)
 */
function bindable(parameters: readonly unknown[]): unknown[] {
  return parameters.map((value, index) => {
    if (value === undefined) return null;
    if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || value instanceof Uint8Array) return value;
    throw new TypeError(`SQLite cannot bind parameter ${index + 1}: only strings, numbers, bigints, byte arrays and null can be bound, not ${typeof value}`);
  });
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
