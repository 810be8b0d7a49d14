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

noticePostgresSkipped('the migration that records how customers signed in');

const T = 1_767_225_600;
/** The migration before the one under test. */
const BEFORE = '2026-11-28T10-00-scope-descriptions';

/** A database made by the migrations before `2026-11-28T11-00-authentication`, with a customer session, a code and a token session. */
async function seedOldDatabase(dialect: Dialect): Promise<void> {
  const db = new Kysely<any>({ dialect });
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(BEFORE);
    if (error) throw error;
    await sql`insert into customers (profile_id, mobile, name, pin_hash, status, failed_pin_attempts, created_at, updated_at)
              values ('100000000001', '+639171000001', null, 'scrypt$x', 'active', 0, ${T}, ${T})`.execute(db);
    await sql`insert into customer_sessions (id_hash, profile_id, created_at, last_seen_at, expires_at, ended_at)
              values ('session-1', '100000000001', ${T + 40}, ${T + 100}, ${T + 43_240}, null)`.execute(db);
    await sql`insert into authorization_codes (code_hash, client_id, redirect_uri, profile_id, code_challenge, created_at, expires_at, consumed_at)
              values ('code-1', 'cid_sandbox_x', 'https://shop.example/cb', '100000000001', null, ${T + 100}, ${T + 160}, null)`.execute(db);
    await sql`insert into token_sessions (sid, client_id, profile_id, code_hash, refresh_jti, access_jti, created_at, refresh_expires_at, access_expires_at, revoked_at)
              values ('sid-1', 'cid_sandbox_x', '100000000001', null, 'r', 'a', ${T + 50}, ${T + 604_800}, ${T + 3600}, null)`.execute(db);
  } finally {
    await db.destroy();
  }
}

/** Migrates a seeded database to the latest and checks what each row was given. */
async function migratesAndRecords(location: DatabaseLocation, dialect: Dialect): Promise<void> {
  await seedOldDatabase(dialect);
  const storage = openStorage(location);
  try {
    expect(await storage.migrate()).toContain('2026-11-28T11-00-authentication');
    // Every session was started by a PIN + SMS sign-in, at its creation.
    expect((await storage.customerSessions.findCustomerSession('session-1'))?.authentication).toEqual({
      acr: 'urn:connect:acr:pin-sms',
      amr: ['pin', 'sms', 'mfa'],
      authTime: T + 40,
    });
    // A code or a token session does not say when its sign-in was: none, and their tokens carry none.
    expect((await storage.codes.findAuthorizationCode('code-1'))?.authentication).toBeNull();
    expect((await storage.tokenSessions.findTokenSession('sid-1'))?.authentication).toBeNull();
  } finally {
    await storage.close();
  }
}

describe('migration 2026-11-28T11-00-authentication', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('on SQLite: gives existing customer sessions their PIN + SMS sign-in, and codes and token sessions none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-migration-'));
    dirs.push(dir);
    const path = join(dir, 'connect.db');
    await migratesAndRecords({ engine: 'sqlite', path }, createSqliteDialect(path).dialect);
  });

  describe.skipIf(!postgresAdminUrl)('on PostgreSQL', () => {
    let database: TestDatabase | undefined;
    afterEach(async () => {
      await database?.drop();
      database = undefined;
    });

    it('gives existing customer sessions their PIN + SMS sign-in, and codes and token sessions none', async () => {
      database = await createTestDatabase();
      await migratesAndRecords({ engine: 'postgres', url: database.url }, createPostgresDialect(database.url).dialect);
    });
  });
});
