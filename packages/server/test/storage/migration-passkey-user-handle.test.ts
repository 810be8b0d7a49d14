import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, Migrator, sql, type Dialect } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrationProvider } from '../../src/storage/kysely/migrations/index.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { DatabaseLocation } from '../../src/core/storage/storage.js';
import { createPostgresDialect } from '../../src/storage/kysely/postgres.js';
import { createSqliteDialect } from '../../src/storage/kysely/sqlite.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl, type TestDatabase } from '../helpers/postgres.js';

noticePostgresSkipped('the migration that keeps the user handle on the customer row');

const T = 1_767_225_600;
const BEFORE = '2026-11-28T12-00-passkeys';

/** Two customers before the migration: one with two passkeys (the older's handle wins), one with none. */
async function seed(dialect: Dialect): Promise<void> {
  const db = new Kysely<any>({ dialect });
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(BEFORE);
    if (error) throw error;
    for (const [profile, mobile] of [['100000000001', '+639171000001'], ['100000000002', '+639171000002']]) {
      await sql`insert into customers (profile_id, mobile, name, pin_hash, status, failed_pin_attempts, created_at, updated_at)
                values (${profile}, ${mobile}, null, 'scrypt$x', 'active', 0, ${T}, ${T})`.execute(db);
    }
    for (const [id, handle, at] of [['cred-new', 'handle-new', T + 50], ['cred-old', 'handle-old', T + 10]] as const) {
      await sql`insert into passkeys (credential_id, profile_id, user_handle, public_key, sign_count, transports, created_at)
                values (${id}, '100000000001', ${handle}, 'pk', 0, '', ${at})`.execute(db);
    }
  } finally {
    await db.destroy();
  }
}

async function backfills(location: DatabaseLocation, dialect: Dialect): Promise<void> {
  await seed(dialect);
  const storage = openStorage(location);
  try {
    expect(await storage.migrate()).toContain('2026-11-28T13-00-passkey-user-handle');
    expect(await storage.passkeys.findUserHandleOf('100000000001')).toBe('handle-old');
    expect(await storage.passkeys.findUserHandleOf('100000000002')).toBeUndefined();
    // Set once: a later claim keeps the backfilled handle.
    expect(await storage.passkeys.claimUserHandle('100000000001', 'another')).toBe('handle-old');
  } finally {
    await storage.close();
  }
}

describe('migration 2026-11-28T13-00-passkey-user-handle', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("on SQLite: sets each customer's handle from their oldest passkey, none without one", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-migration-'));
    dirs.push(dir);
    const path = join(dir, 'connect.db');
    await backfills({ engine: 'sqlite', path }, createSqliteDialect(path).dialect);
  });

  describe.skipIf(!postgresAdminUrl)('on PostgreSQL', () => {
    let database: TestDatabase | undefined;
    afterEach(async () => {
      await database?.drop();
      database = undefined;
    });

    it("sets each customer's handle from their oldest passkey, none without one", async () => {
      database = await createTestDatabase();
      await backfills({ engine: 'postgres', url: database.url }, createPostgresDialect(database.url).dialect);
    });
  });
});
