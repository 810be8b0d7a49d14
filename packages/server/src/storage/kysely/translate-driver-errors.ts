import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryCompiler, QueryResult, TransactionSettings } from 'kysely';
import { StorageError, StorageUnavailable } from '../../core/storage-errors.js';
import { isUniqueViolation } from './stores/insert-or-conflict.js';
import type { AvailabilityObserver } from '../../core/storage/storage.js';

/** A dialect whose driver reports its errors as `StorageUnavailable`; see {@link translateDriverErrors}. */
export interface TranslatingDialect extends Dialect {
  /** Tells `observer` how each later operation of the driver ends; returns the function that stops it. */
  observeAvailability(observer: AvailabilityObserver): () => void;
  /**
   * Closes the driver's connections. Every query after that fails with
   * `StorageUnavailable` (a server shutting down answers the requests still
   * in flight with 503), where `Kysely.destroy()` would make it fail with a
   * plain error.
   */
  close(): Promise<void>;
}

/**
 * Told of every statement sent to the database, a transaction's `begin`,
 * `commit` and `rollback` included, before it is sent: what the tests of
 * round trips count (docs/operator-guide.md, "Database round trips").
 */
export type StatementObserver = (sql: string) => void;

/**
 * Wraps a dialect so that every error its driver throws (pg or
 * SQLite's: connection refused or reset, pool connect timeout,
 * `SQLITE_BUSY`, a trigger's abort, anything) surfaces as
 * `StorageUnavailable` with the driver's error as `cause`. Callers above
 * the storage then never see a driver error, and the HTTP layer answers
 * 503 (docs/operator-guide.md).
 *
 * Unique-key violations pass through unchanged: the stores turn them into
 * `Conflict` (`stores/insert-or-conflict.ts`). Errors thrown by the work
 * inside a transaction never reach the driver, so they pass unchanged too.
 */
export function translateDriverErrors(dialect: Dialect, onStatement?: StatementObserver): TranslatingDialect {
  // Kysely asks its dialect for a driver once, when it is constructed.
  let driver: TranslatingDriver | undefined;
  const observers = new Observers();
  return {
    createDriver: () => (driver = new TranslatingDriver(dialect.createDriver(), onStatement ?? (() => {}), observers)),
    observeAvailability: (observer) => observers.add(observer),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    close: async () => {
      await driver?.destroy();
    },
  };
}

/**
 * The error to throw instead of `error`, a driver's error. Its message,
 * for operators (the command line prints it), names the driver's code and
 * the first line of its message; HTTP clients never see it.
 */
function translate(error: unknown): unknown {
  if (error instanceof StorageError || isUniqueViolation(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const named = typeof code === 'string' && /^[\w.-]{1,40}$/.test(code) ? ` (${code})` : '';
  const said = error instanceof Error ? (error.message.split('\n')[0] ?? '') : '';
  return new StorageUnavailable(`the database is unavailable${named}${said ? `: ${said}` : ''}`, { cause: error });
}

/** The observers of one storage's availability; told of every operation's end. */
class Observers {
  #all: AvailabilityObserver[] = [];

  add(observer: AvailabilityObserver): () => void {
    this.#all = [...this.#all, observer];
    return () => {
      this.#all = this.#all.filter((kept) => kept !== observer);
    };
  }

  available(): void {
    for (const observer of this.#all) observer.available();
  }

  unavailable(error: StorageUnavailable): void {
    for (const observer of this.#all) observer.unavailable(error);
  }
}

async function translated<T>(work: () => Promise<T>, observers: Observers): Promise<T> {
  let result: T;
  try {
    result = await work();
  } catch (error) {
    const translatedError = translate(error);
    if (translatedError instanceof StorageUnavailable) observers.unavailable(translatedError);
    throw translatedError;
  }
  observers.available();
  return result;
}

class TranslatingDriver implements Driver {
  readonly #driver: Driver;
  readonly #observe: StatementObserver;
  readonly #observers: Observers;
  /** One wrapper per connection of the wrapped driver, so Kysely sees the same connection each time. */
  readonly #wrappers = new WeakMap<DatabaseConnection, TranslatingConnection>();
  #destroyed: Promise<void> | undefined;
  /** Made when the driver was closed: its stack tells where, for the logs of whatever comes later. */
  #closedHere: Error | undefined;

  constructor(driver: Driver, observe: StatementObserver, observers: Observers) {
    this.#driver = driver;
    this.#observe = observe;
    this.#observers = observers;
  }

  async init(): Promise<void> {
    this.#refuseWhenClosed();
    await translated(() => this.#driver.init(), this.#observers);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    this.#refuseWhenClosed();
    const connection = await translated(() => this.#driver.acquireConnection(), this.#observers);
    let wrapper = this.#wrappers.get(connection);
    if (!wrapper) {
      wrapper = new TranslatingConnection(connection, this.#observe, this.#observers);
      this.#wrappers.set(connection, wrapper);
    }
    return wrapper;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    this.#observe('begin');
    return translated(() => this.#driver.beginTransaction(unwrap(connection), settings), this.#observers);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    this.#observe('commit');
    return translated(() => this.#driver.commitTransaction(unwrap(connection)), this.#observers);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    this.#observe('rollback');
    return translated(() => this.#driver.rollbackTransaction(unwrap(connection)), this.#observers);
  }

  savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    const savepoint = required(this.#driver.savepoint, 'savepoint').bind(this.#driver);
    return translated(() => savepoint(unwrap(connection), name, compileQuery), this.#observers);
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    const rollbackToSavepoint = required(this.#driver.rollbackToSavepoint, 'rollbackToSavepoint').bind(this.#driver);
    return translated(() => rollbackToSavepoint(unwrap(connection), name, compileQuery), this.#observers);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    const releaseSavepoint = required(this.#driver.releaseSavepoint, 'releaseSavepoint').bind(this.#driver);
    return translated(() => releaseSavepoint(unwrap(connection), name, compileQuery), this.#observers);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return translated(() => this.#driver.releaseConnection(unwrap(connection)), this.#observers);
  }

  /** Closes the wrapped driver, once, however often it is called. */
  destroy(): Promise<void> {
    this.#closedHere ??= new Error('the storage was closed');
    // Closing is no operation of the database's: nobody is told.
    this.#destroyed ??= translated(() => this.#driver.destroy(), new Observers());
    return this.#destroyed;
  }

  #refuseWhenClosed(): void {
    if (this.#closedHere) throw new StorageUnavailable('the database connection is closed', { cause: this.#closedHere });
  }
}

class TranslatingConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    readonly observe: StatementObserver,
    readonly observers: Observers,
  ) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    this.observe(compiledQuery.sql);
    return translated(() => this.inner.executeQuery<R>(compiledQuery), this.observers);
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    this.observe(compiledQuery.sql);
    try {
      yield* this.inner.streamQuery<R>(compiledQuery, chunkSize);
    } catch (error) {
      throw translate(error);
    }
  }
}

function unwrap(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof TranslatingConnection ? connection.inner : connection;
}

function required<F>(method: F | undefined, name: string): F {
  // A programming error, not an unavailable database: thrown as it is.
  if (!method) throw new Error(`the database driver does not support ${name}`);
  return method;
}
