import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, Migrator, sql, type Dialect } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { migrationProvider } from '../../src/storage/kysely/migrations/index.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { DatabaseLocation } from '../../src/core/storage/storage.js';
import { createPostgresDialect } from '../../src/storage/kysely/postgres.js';
import { createSqliteDialect } from '../../src/storage/kysely/sqlite.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../helpers/postgres.js';

const T = 1_767_225_600;

/**
 * Keys stored before rotation had activations and generations: each signed
 * from its creation, and they are numbered per use in the order they were
 * made (two made in the same second by kid).
 */
async function migrateLegacyKeys(location: DatabaseLocation, dialect: Dialect): Promise<void> {
  const db = new Kysely<any>({ dialect });
  try {
    const migrator = new Migrator({ db, provider: migrationProvider });
    const before = await migrator.migrateTo('2026-11-25T10-00-journey');
    expect(before.error).toBeUndefined();
    const row = (kid: string, use: string, status: string, createdAt: number, verifyUntil: number | null) =>
      sql`insert into signing_keys (kid, alg, use, status, public_jwk, sealed_private_jwk, created_at, retired_at, verify_until)
          values (${kid}, 'ES256', ${use}, ${status}, null, 'sealed', ${createdAt}, ${verifyUntil === null ? null : createdAt}, ${verifyUntil})`.execute(db);
    await row('sig-old', 'sig', 'retired', T, T + 5000);
    await row('sig-b', 'sig', 'active', T + 100, null);
    await row('sig-a', 'sig', 'active', T + 100, null);
    await row('enc-1', 'enc', 'active', T, null);
    const after = await migrator.migrateToLatest();
    expect(after.error).toBeUndefined();
  } finally {
    await db.destroy();
  }

  const storage = openStorage(location);
  try {
    const keys = Object.fromEntries((await storage.keys.listKeys()).map((k) => [k.kid, k]));
    expect(keys['sig-old']).toMatchObject({ generation: 1, activatesAt: T, verifyUntil: T + 5000 });
    expect(keys['sig-a']).toMatchObject({ generation: 2, activatesAt: T + 100 });
    expect(keys['sig-b']).toMatchObject({ generation: 3, activatesAt: T + 100 });
    expect(keys['enc-1']).toMatchObject({ generation: 1, activatesAt: T });
  } finally {
    await storage.close();
  }
}

describe('migration 2026-11-25T12-00-key-rotation', () => {
  it('gives the keys of a SQLite database their activation and generation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-migration-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'connect.db');
    await migrateLegacyKeys({ engine: 'sqlite', path }, createSqliteDialect(path).dialect);
  });

  noticePostgresSkipped('key rotation migration');
  it.skipIf(!postgresAdminUrl)('gives the keys of a PostgreSQL database their activation and generation', async () => {
    const database = await createTestDatabase();
    onTestFinished(() => database.drop());
    await migrateLegacyKeys({ engine: 'postgres', url: database.url }, createPostgresDialect(database.url).dialect);
  });
});
