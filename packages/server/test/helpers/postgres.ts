import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, inject } from 'vitest';
import { openStorage, type StorageOptions } from '../../src/storage/kysely/open-storage.js';
import { adminStatement } from './postgres-template.js';
import { noteSkipped } from './skip-notices.js';
import type { Storage } from '../../src/core/storage/storage.js';

/**
 * The PostgreSQL server the tests use, from `CONNECT_TEST_POSTGRES_URL`
 * (e.g. `postgres://postgres@127.0.0.1:5432/postgres`). Without it the
 * PostgreSQL suites are skipped with a visible notice; in CI it is required.
 */
export const postgresAdminUrl: string | undefined = process.env.CONNECT_TEST_POSTGRES_URL || undefined;

if (!postgresAdminUrl && process.env.CI) {
  throw new Error('CONNECT_TEST_POSTGRES_URL must be set in CI: the PostgreSQL suites are required there');
}

/**
 * Notes that the PostgreSQL suite `suite` did not run; the run names
 * PostgreSQL once at its end, however many suites it skipped
 * (test/helpers/skip-notices.ts).
 */
export function noticePostgresSkipped(suite: string): void {
  if (!postgresAdminUrl) noteSkipped('PostgreSQL', suite);
}

/** A database created for one test file, dropped by `drop()`. */
export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/**
 * Creates a database `connect_test_<random>` on the test server: empty, or
 * with `{ migrated: true }` a copy of the run's migrated template
 * (test/helpers/postgres-template.ts), which saves running every migration
 * again for each test.
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  if (!postgresAdminUrl) throw new Error('CONNECT_TEST_POSTGRES_URL is not set');
  const name = `connect_test_${randomBytes(6).toString('hex')}`;
  const template = options.migrated ? inject('postgresTemplate') : undefined;
  await adminStatement(postgresAdminUrl, template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    drop: () => adminStatement(postgresAdminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/**
 * For a `describe` block on PostgreSQL: a migrated database for the block,
 * emptied before every test (every table but the migrator's, the same
 * state as a fresh copy of the template, at the cost of one `TRUNCATE`
 * instead of a `CREATE DATABASE` and a `DROP`), with every storage opened
 * on it closed after each test, and dropped after the block. `open()` opens
 * one more storage (connection pool) on the current database;
 * `databaseUrl()` is its URL, for raw queries. Without
 * `CONNECT_TEST_POSTGRES_URL` no database is made, so SQLite tests in the
 * same block still run; a test that calls `open()` then fails.
 */
export function usePostgresStorage(): { open(options?: StorageOptions): Storage; databaseUrl(): string } {
  let database: TestDatabase | undefined;
  const storages: Storage[] = [];
  beforeEach(async () => {
    if (!postgresAdminUrl) return;
    database ??= await createTestDatabase({ migrated: true });
    await emptyTables(database.url);
  });
  afterEach(async () => {
    for (const storage of storages.splice(0)) await storage.close();
  });
  afterAll(async () => {
    await database?.drop();
    database = undefined;
  });
  const current = () => {
    if (!postgresAdminUrl) throw new Error('CONNECT_TEST_POSTGRES_URL is not set');
    if (!database) throw new Error('usePostgresStorage: for use inside a test');
    return database;
  };
  return {
    open(options?: StorageOptions) {
      const storage = openStorage({ engine: 'postgres', url: current().url }, options);
      storages.push(storage);
      return storage;
    },
    databaseUrl: () => current().url,
  };
}

/** Empties every table of the database at `url` but the migrator's own, in one statement. */
export async function emptyTables(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      "select quote_ident(tablename) as name from pg_tables where schemaname = 'public' and tablename not like 'kysely_migration%'",
    );
    await client.query(`truncate ${rows.map((row) => row.name).join(', ')} restart identity cascade`);
  } finally {
    await client.end();
  }
}
