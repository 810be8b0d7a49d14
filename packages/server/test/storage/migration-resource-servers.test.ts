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
import { createChangeCache } from '../../src/core/changes/change-cache.js';
import { changeReached } from '../helpers/change-reached.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl, type TestDatabase } from '../helpers/postgres.js';

noticePostgresSkipped('the migration that adds resource servers');

const T = 1_767_225_600;
/** The migration before the one under test. */
const BEFORE = '2026-11-25T16-00-revocation-signals';

/** A database made by the migrations before `2026-11-25T19-00-resource-servers`, holding one client. */
async function seedOldDatabase(dialect: Dialect): Promise<void> {
  const db = new Kysely<any>({ dialect });
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(BEFORE);
    if (error) throw error;
    await sql`insert into clients (id, name, secret_hash, redirect_uri, grants, require_pkce, status, created_at, updated_at)
              values ('cid_sandbox_old', 'Shop', 'hash', 'https://shop.example/cb', 'client_credentials authorization_code', 0, 'active', ${T}, ${T})`.execute(db);
  } finally {
    await db.destroy();
  }
}

/**
 * Migrates an old database: its client is a consumer with everything it
 * had; a resource server can be stored beside it; a kind the code does not
 * know is refused by the database; and a change to a client is still
 * announced to the instances that cache clients.
 */
async function migratesToKinds(location: DatabaseLocation, dialect: () => Dialect): Promise<void> {
  await seedOldDatabase(dialect());
  const storage = openStorage(location);
  try {
    expect(await storage.migrate()).toContain('2026-11-25T19-00-resource-servers');
    expect(await storage.clients.findClient('cid_sandbox_old')).toMatchObject({
      kind: 'consumer',
      redirectUri: 'https://shop.example/cb',
      grants: ['client_credentials', 'authorization_code'],
    });

    const feed = storage.openChangeFeed();
    const cache = createChangeCache<string | undefined>(feed, 'client');
    try {
      await changeReached(async () => feed.isCurrent(), 5000);
      const read = async () => (await storage.clients.findClient('cid_sandbox_old'))?.status;
      expect(await cache.get('cid_sandbox_old', read)).toBe('active');
      expect(cache.size).toBe(1);
      await storage.clients.updateClient('cid_sandbox_old', { status: 'disabled' }, T + 1);
      await changeReached(async () => (await cache.get('cid_sandbox_old', read)) === 'disabled');
    } finally {
      cache.close();
      await feed.close();
    }

    await storage.clients.insertClient({
      ...(await storage.clients.findClient('cid_sandbox_old'))!,
      id: 'cid_sandbox_api',
      kind: 'resource_server',
      redirectUri: null,
      grants: [],
    });
    expect(await storage.clients.findClient('cid_sandbox_api')).toMatchObject({ kind: 'resource_server', redirectUri: null, grants: [] });
  } finally {
    await storage.close();
  }
  const db = new Kysely<any>({ dialect: dialect() });
  try {
    await expect(sql`update clients set kind = 'admin' where id = 'cid_sandbox_old'`.execute(db)).rejects.toThrow();
  } finally {
    await db.destroy();
  }
}

describe('migration 2026-11-25T19-00-resource-servers', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('on SQLite: every existing client is a consumer; a resource server can be stored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-migration-'));
    dirs.push(dir);
    const path = join(dir, 'connect.db');
    await migratesToKinds({ engine: 'sqlite', path }, () => createSqliteDialect(path).dialect);
  });

  describe.skipIf(!postgresAdminUrl)('on PostgreSQL', () => {
    let database: TestDatabase | undefined;
    afterEach(async () => {
      await database?.drop();
      database = undefined;
    });

    it('every existing client is a consumer; a resource server can be stored', async () => {
      database = await createTestDatabase();
      await migratesToKinds({ engine: 'postgres', url: database.url }, () => createPostgresDialect(database!.url).dialect);
    });
  });
});
