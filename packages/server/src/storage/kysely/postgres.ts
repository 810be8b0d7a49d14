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
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  return new PostgresDialect({ pool });
}
