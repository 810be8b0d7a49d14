import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { Kysely } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { currentRelease } from '../../src/config/release.js';
import { ConfigError } from '../../src/config/load.js';
import { fixedClock } from '../../src/core/clock.js';
import { startServer } from '../../src/http/server.js';
import { T0 } from '../helpers/build.js';
import { SchemaTooNew, type DatabaseLocation } from '../../src/core/storage/storage.js';
import { MIGRATION_NAMES, OLDEST_COMPATIBLE_RELEASE } from '../../src/storage/kysely/migrations/index.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import { createPostgresDialect } from '../../src/storage/kysely/postgres.js';
import { checkSchemaRelease, compareVersions } from '../../src/storage/kysely/schema-releases.js';
import { createSqliteDialect } from '../../src/storage/kysely/sqlite.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl, type TestDatabase } from '../helpers/postgres.js';

noticePostgresSkipped('the schema releases of a database migrated across releases');

const LATEST = MIGRATION_NAMES.at(-1)!;

describe('compareVersions', () => {
  it('compares major, minor and patch numerically', () => {
    expect(compareVersions('0.10.0', '0.9.9')).toBeGreaterThan(0);
    expect(compareVersions('1.0.0', '1.0.0')).toBe(0);
    expect(compareVersions('0.2.0', '0.2.1')).toBeLessThan(0);
    expect(compareVersions('0.3.0-rc.1', '0.3.0')).toBe(0);
  });
});

describe('checkSchemaRelease', () => {
  const known = ['a', 'b'];
  it('lets a release migrate a database it knows every migration of', () => {
    expect(checkSchemaRelease('0.2.0', known, { executed: ['a'], releases: [] })).toEqual({ ahead: false });
  });
  it('leaves alone a database a newer compatible release migrated further', () => {
    const state = { executed: ['a', 'b', 'c'], releases: [{ version: '0.3.0', oldestCompatible: '0.2.0' }] };
    expect(checkSchemaRelease('0.2.0', known, state)).toEqual({ ahead: true });
  });
  it('refuses, naming both releases, a database whose newer release needs a newer one than this', () => {
    const state = { executed: ['a', 'b', 'c'], releases: [{ version: '0.4.0', oldestCompatible: '0.3.0' }, { version: '0.2.0', oldestCompatible: '0.1.0' }] };
    expect(() => checkSchemaRelease('0.2.0', known, state)).toThrow(
      new SchemaTooNew('this database was migrated by Connect 0.4.0, whose schema needs Connect 0.3.0 or newer; this is Connect 0.2.0: start a newer release (docs/upgrades.md)'),
    );
  });
  it('refuses unknown migrations that no release vouches for', () => {
    expect(() => checkSchemaRelease('0.2.0', known, { executed: ['a', 'b', 'z'], releases: [] })).toThrow(/migration z is unknown here\); this is Connect 0\.2\.0/);
  });
  it('refuses a database ahead of this release that lacks one of its migrations', () => {
    const state = { executed: ['a', 'c'], releases: [{ version: '0.3.0', oldestCompatible: '0.2.0' }] };
    expect(() => checkSchemaRelease('0.2.0', known, state)).toThrow(/lacks migration b of Connect 0\.2\.0/);
  });
});

/** What a newer release leaves behind: one more migration (expand-only) and its row. */
async function migrateAsNewerRelease(location: DatabaseLocation, oldestCompatible: string): Promise<void> {
  const dialect = location.engine === 'sqlite' ? createSqliteDialect(location.path).dialect : createPostgresDialect(location.url).dialect;
  const db = new Kysely<any>({ dialect });
  try {
    await db.schema.alterTable('clients').addColumn('newer_release_note', 'text').execute();
    await sql`insert into kysely_migration (name, timestamp) values ('2099-01-01T00-00-newer', '2099-01-01T00:00:00.000Z')`.execute(db);
    await sql`insert into schema_releases (version, oldest_compatible, recorded_at) values ('99.0.0', ${oldestCompatible}, 1)`.execute(db);
  } finally {
    await db.destroy();
  }
}

async function acrossReleases(location: DatabaseLocation, release: string): Promise<void> {
  const storage = openStorage(location);
  try {
    expect(await storage.migrate({ version: release, now: 1 })).toContain(LATEST);
    expect(await storage.migrate({ version: release, now: 1 })).toEqual([]);
  } finally {
    await storage.close();
  }
  // A newer release that keeps this one compatible: this release starts and migrates nothing.
  await migrateAsNewerRelease(location, release);
  const again = openStorage(location);
  try {
    expect(await again.migrate({ version: release, now: 1 })).toEqual([]);
    expect(await again.clients.listClients()).toEqual([]);
  } finally {
    await again.close();
  }
}

async function refusedWhenTooOld(location: DatabaseLocation): Promise<void> {
  const storage = openStorage(location);
  try {
    await storage.migrate({ version: '1.0.0', now: 1 });
  } finally {
    await storage.close();
  }
  await migrateAsNewerRelease(location, '2.0.0');
  const older = openStorage(location);
  try {
    await expect(older.migrate({ version: '1.0.0', now: 1 })).rejects.toThrow(
      new SchemaTooNew('this database was migrated by Connect 99.0.0, whose schema needs Connect 2.0.0 or newer; this is Connect 1.0.0: start a newer release (docs/upgrades.md)'),
    );
  } finally {
    await older.close();
  }
}

describe('migrating across releases', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const sqliteAt = (): DatabaseLocation => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-releases-'));
    dirs.push(dir);
    return { engine: 'sqlite', path: join(dir, 'connect.db') };
  };

  it('records the release, and the oldest release its schema runs with', async () => {
    const location = sqliteAt();
    const storage = openStorage(location);
    try {
      await storage.migrate({ version: '0.2.0', now: 1 });
      const db = new Kysely<any>({ dialect: createSqliteDialect((location as { path: string }).path).dialect });
      const { rows } = await sql<{ version: string; oldest_compatible: string }>`select version, oldest_compatible from schema_releases`.execute(db);
      await db.destroy();
      expect(rows).toEqual([{ version: '0.2.0', oldest_compatible: OLDEST_COMPATIBLE_RELEASE }]);
    } finally {
      await storage.close();
    }
  });

  it('on SQLite: a release runs on a database a newer compatible one migrated', async () => {
    await acrossReleases(sqliteAt(), '0.2.0');
  });

  it('on SQLite: a release the newer one left behind refuses, naming both', async () => {
    await refusedWhenTooOld(sqliteAt());
  });

  describe.skipIf(!postgresAdminUrl)('on PostgreSQL', () => {
    const databases: TestDatabase[] = [];
    afterAll(async () => {
      for (const database of databases) await database.drop();
    });
    const postgresAt = async (): Promise<DatabaseLocation> => {
      const database = await createTestDatabase();
      databases.push(database);
      return { engine: 'postgres', url: database.url };
    };

    it('a release runs on a database a newer compatible one migrated', async () => {
      await acrossReleases(await postgresAt(), '0.2.0');
    });

    it('a release the newer one left behind refuses, naming both', async () => {
      await refusedWhenTooOld(await postgresAt());
    });
  });
});

describe('a release older than the database allows', () => {
  it('stops at start with one line naming both releases: commands and the server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-releases-cli-'));
    try {
      const path = join(dir, 'connect.db');
      const env = { CONNECT_DATA_DIR: dir, DATABASE_URL: `sqlite:${path}`, CONNECT_LOG_LEVEL: 'silent' };
      const run = async (argv: string[]) => {
        let stdout = '';
        let stderr = '';
        const code = await runCli(argv, { env, stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), clock: fixedClock(T0) });
        return { code, stdout, stderr };
      };
      expect((await run(['migrate'])).code).toBe(0);
      expect((await run(['clients', 'list', '--json'])).code).toBe(0);
      await migrateAsNewerRelease({ engine: 'sqlite', path }, '99.0.0');
      const line = `this database was migrated by Connect 99.0.0, whose schema needs Connect 99.0.0 or newer; this is Connect ${currentRelease().version}: start a newer release (docs/upgrades.md)`;
      expect(await run(['clients', 'list', '--json'])).toEqual({ code: 1, stdout: '', stderr: `connect-auth: ${line}\n` });
      await expect(startServer({ env: { ...env, PORT: '0' }, print: () => {} })).rejects.toThrow(new ConfigError(line));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
