import pg from 'pg';
import { PostgresDialect, type Dialect } from 'kysely';

const INT8_OID = 20;

/**
 * The production engine: PostgreSQL through a `pg` pool. `bigint` columns
 * (epoch seconds) come back as numbers, as they do from SQLite.
 * `connectTimeoutMs` bounds both a new connection and the wait for a free
 * one in the pool (default 5000).
 */
export function createPostgresDialect(connectionString: string, options: { maxConnections?: number; connectTimeoutMs?: number } = {}): Dialect {
  const pool = new pg.Pool({
    connectionString,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
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
  return new PostgresDialect({ pool });
}
