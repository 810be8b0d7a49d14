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

noticePostgresSkipped('the migration that ends the tokens of locked customers and disabled clients');

const T = 1_767_225_600;
/** The migration before the one under test. */
const BEFORE = '2026-11-25T10-00-journey';

/**
 * A database made by the migrations before `2026-11-25T12-10-client-token-ends`,
 * holding a client disabled and a customer locked before it (each with a live
 * token session and an unredeemed code), and an active client and customer.
 */
async function seedOldDatabase(dialect: Dialect): Promise<void> {
  const db = new Kysely<any>({ dialect });
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(BEFORE);
    if (error) throw error;
    const client = (id: string, status: string, updatedAt: number) =>
      sql`insert into clients (id, name, secret_hash, redirect_uri, grants, require_pkce, status, created_at, updated_at)
          values (${id}, 'Shop', 'hash', 'https://shop.example/cb', 'client_credentials authorization_code', 0, ${status}, ${T}, ${updatedAt})`.execute(db);
    const customer = (profileId: string, mobile: string, status: string, updatedAt: number) =>
      sql`insert into customers (profile_id, mobile, name, pin_hash, status, failed_pin_attempts, created_at, updated_at)
          values (${profileId}, ${mobile}, null, 'scrypt$x', ${status}, 0, ${T}, ${updatedAt})`.execute(db);
    const session = (sid: string, clientId: string, profileId: string) =>
      sql`insert into token_sessions (sid, client_id, profile_id, code_hash, refresh_jti, access_jti, created_at, refresh_expires_at, access_expires_at, revoked_at)
          values (${sid}, ${clientId}, ${profileId}, null, 'r', 'a', ${T}, ${T + 604_800}, ${T + 3600}, null)`.execute(db);
    const code = (codeHash: string, clientId: string, profileId: string) =>
      sql`insert into authorization_codes (code_hash, client_id, redirect_uri, profile_id, code_challenge, created_at, expires_at, consumed_at)
          values (${codeHash}, ${clientId}, 'https://shop.example/cb', ${profileId}, null, ${T}, ${T + 300}, null)`.execute(db);
    await client('cid_sandbox_disabled', 'disabled', T + 60);
    await client('cid_sandbox_active', 'active', T + 70);
    await customer('100000000001', '+639171000001', 'locked', T + 80);
    await customer('100000000002', '+639171000002', 'active', T + 90);
    await session('of-disabled-client', 'cid_sandbox_disabled', '100000000002');
    await session('of-locked-customer', 'cid_sandbox_active', '100000000001');
    await session('live', 'cid_sandbox_active', '100000000002');
    await code('code-of-disabled-client', 'cid_sandbox_disabled', '100000000002');
    await code('code-of-locked-customer', 'cid_sandbox_active', '100000000001');
    await code('live-code', 'cid_sandbox_active', '100000000002');
  } finally {
    await db.destroy();
  }
}

/** Seeds a database made by the earlier migrations, migrates it to the latest and checks what the migration ended. */
async function migratesAndEnds(location: DatabaseLocation, dialect: Dialect): Promise<void> {
  await seedOldDatabase(dialect);
  const storage = openStorage(location);
  try {
    expect(await storage.migrate()).toContain('2026-11-25T12-10-client-token-ends');
    expect((await storage.clients.findClient('cid_sandbox_disabled'))?.tokensEndedAt).toBe(T + 60);
    expect((await storage.clients.findClient('cid_sandbox_active'))?.tokensEndedAt).toBeNull();
    expect((await storage.tokenSessions.findTokenSession('of-disabled-client'))?.revokedAt).toBe(T + 60);
    expect((await storage.tokenSessions.findTokenSession('of-locked-customer'))?.revokedAt).toBe(T + 80);
    expect((await storage.tokenSessions.findTokenSession('live'))?.revokedAt).toBeNull();
    expect((await storage.codes.findAuthorizationCode('code-of-disabled-client'))?.expiresAt).toBe(0);
    expect((await storage.codes.findAuthorizationCode('code-of-locked-customer'))?.expiresAt).toBe(0);
    expect((await storage.codes.findAuthorizationCode('live-code'))?.expiresAt).toBe(T + 300);
  } finally {
    await storage.close();
  }
}

describe('migration 2026-11-25T12-10-client-token-ends', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('on SQLite: ends what a lock or a disable made before it left live', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-migration-'));
    dirs.push(dir);
    const path = join(dir, 'connect.db');
    await migratesAndEnds({ engine: 'sqlite', path }, createSqliteDialect(path).dialect);
  });

  describe.skipIf(!postgresAdminUrl)('on PostgreSQL', () => {
    let database: TestDatabase | undefined;
    afterEach(async () => {
      await database?.drop();
      database = undefined;
    });

    it('ends what a lock or a disable made before it left live', async () => {
      database = await createTestDatabase();
      await migratesAndEnds({ engine: 'postgres', url: database.url }, createPostgresDialect(database.url).dialect);
    });
  });
});
