import pg from 'pg';
import { DATABASE_TIMEOUT_MS } from '../../core/lifetimes.js';
import { PostgresDialect, type Dialect, type PostgresCursor, type PostgresPool, type PostgresPoolClient, type PostgresQueryResult } from 'kysely';

const INT8_OID = 20;

/**
 * The production engine: PostgreSQL through a `pg` pool. `bigint` columns
 * (epoch seconds) come back as numbers, as they do from SQLite.
 *
 * `timeoutMs` (default `DATABASE_TIMEOUT_MS`) bounds, each measured by
 * Connect itself, so that a database that never hears the query (a silent
 * network) fails as fast as one that refuses it (docs/operator-guide.md,
 * "Timeouts"):
 * - the wait for a pooled connection together with opening a new one
 *   (`connectionTimeoutMillis`);
 * - each statement (pg's own `query_timeout`);
 * - a transaction as a whole, from `begin` to `commit` or `rollback`.
 * Past a bound the operation fails (`StorageUnavailable`, a 503) and the
 * connection is closed, never handed to the next request with an answer
 * still owed on it. PostgreSQL's own `statement_timeout` and `lock_timeout`
 * stay, at `timeoutMs`: a database that hears the query cancels it itself
 * and keeps the connection usable; Connect's bounds, {@link SERVER_FIRST_MS}
 * later, end the wait when it does not.
 */
export function createPostgresDialect(
  connectionString: string,
  options: {
    maxConnections?: number;
    timeoutMs?: number;
    /**
     * `false`: a transaction as a whole is not bounded, only each of its
     * statements (the migrations: many statements in one transaction, run
     * once by an operator, over a network that may be distant); default `true`.
     */
    boundTransactions?: boolean;
  } = {},
): { dialect: Dialect; poolStats: () => { total: number; idle: number; waiting: number } } {
  const timeoutMs = options.timeoutMs ?? DATABASE_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs + SERVER_FIRST_MS,
    statement_timeout: timeoutMs,
    lock_timeout: timeoutMs,
    // An idle pooled connection whose peer vanished is found by TCP itself.
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEP_ALIVE_DELAY_MS,
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // A client losing its connection must not crash the process (an 'error'
  // event without a listener would). Idle, the pool reports it here and
  // replaces it. Checked out (in a transaction, between two queries), the pool
  // leaves the client's errors to its holder: the next query fails on its own
  // (StorageUnavailable) and the pool drops the broken client when it is
  // released, so the listener only has to be there.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return {
    dialect: new PostgresDialect({ pool: new BoundedPool(pool, timeoutMs, options.boundTransactions ?? true) }),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}

/**
 * How much longer than the database's own timeouts Connect waits for a
 * statement or a transaction, ms: long enough for the database's answer
 * to a timeout it enforced to arrive, so that a slow database costs no
 * connection.
 */
export const SERVER_FIRST_MS = 250;

/** Initial delay of TCP keep-alive probes on pooled connections, ms. */
const KEEP_ALIVE_DELAY_MS = 10_000;

/** A statement or transaction that got no answer within the bound; the `cause` of a `StorageUnavailable`. */
export class DatabaseTimeout extends Error {
  override readonly name = 'DatabaseTimeout';
  readonly code = 'ETIMEDOUT';
}

/**
 * Whether `error` is pg's for a connection not had within
 * `connectionTimeoutMillis`: a new one not established, or no place in the
 * pool. pg gives them no code, only these messages; as `DatabaseTimeout`
 * (`ETIMEDOUT`) they are told as a timed-out connection to the server of
 * `DATABASE_URL` (`database-failures.ts`).
 */
function connectTimedOut(error: unknown): boolean {
  const message = error instanceof Error && (error as { code?: unknown }).code === undefined ? error.message : '';
  return message === 'Connection terminated due to connection timeout' || message === 'timeout exceeded when trying to connect';
}

/** How Kysely's driver opens a transaction and ends one (`PostgresDriver`). */
const BEGINS = /^(begin|start transaction)\b/i;
const ENDS = /^(commit|rollback)$/i;

/**
 * How many bounds were passed so far in one pool: each is a sign that the
 * network may have gone silent, for every connection opened before it.
 */
interface Silences {
  count: number;
}

/**
 * The pool as Kysely sees it: every client it hands out is a
 * {@link BoundedClient}. After a connection passed a bound, an idle one that
 * has not answered since is not trusted either: it is closed at its next
 * checkout and another taken (a new one if need be), so that once a
 * partition heals no request waits out the bound on a connection the
 * network lost meanwhile.
 */
class BoundedPool implements PostgresPool {
  /** One wrapper per pg client: Kysely keeps its connection per client object. */
  readonly #clients = new WeakMap<pg.PoolClient, BoundedClient>();
  readonly #silences: Silences = { count: 0 };

  constructor(
    readonly pool: pg.Pool,
    readonly timeoutMs: number,
    readonly boundTransactions: boolean,
  ) {}

  async connect(): Promise<PostgresPoolClient> {
    for (;;) {
      const client = await this.pool.connect().catch((error: unknown) => {
        throw connectTimedOut(error) ? new DatabaseTimeout(`no connection within ${this.timeoutMs} ms (${(error as Error).message})`, { cause: error }) : error;
      });
      const bounded = this.#clients.get(client);
      if (!bounded) {
        const opened = new BoundedClient(client, this.timeoutMs + SERVER_FIRST_MS, this.#silences, this.boundTransactions);
        this.#clients.set(client, opened);
        return opened;
      }
      if (bounded.trusted()) return bounded;
      // Closed, not pooled again; the loop ends at the latest with a new connection.
      client.release(new DatabaseTimeout('an idle connection was not trusted after a silence'));
    }
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

/**
 * A pooled pg client whose statements and transactions are bounded. Once a
 * bound is passed the client is broken: its socket is destroyed (what was
 * in flight fails at once) and releasing it removes it from the pool.
 */
class BoundedClient implements PostgresPoolClient {
  #broken: DatabaseTimeout | undefined;
  #transaction: NodeJS.Timeout | undefined;
  /** The pool's count of silences when this connection last answered (or opened). */
  #answeredAt: number;

  constructor(
    readonly client: pg.PoolClient,
    readonly timeoutMs: number,
    readonly silences: Silences,
    readonly boundTransactions: boolean,
  ) {
    this.#answeredAt = silences.count;
  }

  /** Whether the connection answered since the last silence in its pool. */
  trusted(): boolean {
    return this.#answeredAt === this.silences.count;
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(sql: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // Kysely passes a cursor only to stream, which is not configured.
    if (typeof sql !== 'string') throw new Error('the database driver does not support cursors');
    return this.#query<R>(sql, parameters ?? []);
  }

  async #query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    if (this.#broken) throw this.#broken;
    if (this.boundTransactions && BEGINS.test(sql)) this.#startTransactionBound();
    try {
      const result = await this.client.query(sql, [...parameters]);
      this.#answeredAt = this.silences.count;
      if (ENDS.test(sql)) this.#endTransactionBound();
      return result as unknown as PostgresQueryResult<R>;
    } catch (error) {
      if (error instanceof Error && error.message === 'Query read timeout') {
        this.#break(new DatabaseTimeout(`the database did not answer a statement within ${this.timeoutMs} ms`, { cause: error }));
      }
      throw this.#broken ?? error;
    }
  }

  release(): void {
    this.#endTransactionBound();
    const broken = this.#broken;
    this.#broken = undefined;
    // With an error, the pool closes the client instead of keeping it.
    this.client.release(broken);
  }

  #startTransactionBound(): void {
    this.#endTransactionBound();
    this.#transaction = setTimeout(() => {
      this.#transaction = undefined;
      this.#break(new DatabaseTimeout(`a transaction was not done within ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    this.#transaction.unref();
  }

  #endTransactionBound(): void {
    if (this.#transaction) clearTimeout(this.#transaction);
    this.#transaction = undefined;
  }

  #break(reason: DatabaseTimeout): void {
    this.#broken ??= reason;
    this.silences.count++;
    this.#endTransactionBound();
    // What is in flight fails now ("Connection terminated"), with no answer
    // left owed on the socket. A reset, not a graceful close: the kernel
    // drops what it has not delivered yet instead of sending it on once the
    // network heals, so a statement (a COMMIT, a code exchange) Connect gave
    // up on, and answered 503 for, does not run on the database later.
    const stream = this.client.connection.stream as { resetAndDestroy?: () => void; destroy: () => void };
    if (typeof stream.resetAndDestroy === 'function') stream.resetAndDestroy();
    else stream.destroy();
  }
}
