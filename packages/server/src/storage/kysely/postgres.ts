import pg from 'pg';
import { DATABASE_TIMEOUT_MS } from '../../core/lifetimes.js';
import { PostgresDialect, type Dialect } from 'kysely';

const INT8_OID = 20;

/**
 * The production engine: PostgreSQL through a `pg` pool. `bigint` columns
 * (epoch seconds) come back as numbers, as they do from SQLite.
 * `timeoutMs` bounds a new connection, the wait for a free one in the
 * pool, a wait for a row lock and a statement (default
 * `DATABASE_TIMEOUT_MS`): past it PostgreSQL cancels the statement and the
 * operation fails (`StorageUnavailable`, a 503), rather than hanging.
 */
export function createPostgresDialect(
  connectionString: string,
  options: { maxConnections?: number; timeoutMs?: number } = {},
): { dialect: Dialect; poolStats: () => { total: number; idle: number; waiting: number } } {
  const timeoutMs = options.timeoutMs ?? DATABASE_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: timeoutMs,
    statement_timeout: timeoutMs,
    lock_timeout: timeoutMs,
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
    dialect: new PostgresDialect({ pool }),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}
