import { join } from 'node:path';
import { Kysely, Migrator, type Dialect } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { migrationProvider } from '../../src/storage/kysely/migrations/index.js';
import { createPostgresDialect } from '../../src/storage/kysely/postgres.js';
import { createSqliteDialect } from '../../src/storage/kysely/sqlite.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../helpers/postgres.js';
import { cliWorkspace, type CliWorkspace } from './command-line.js';

/**
 * `connect-auth migrate` says what it did: the migrations it applied, one
 * a line, or that none was pending (docs/operator-guide.md, "Running it").
 */

const ALL = Object.keys(await migrationProvider.getMigrations()).sort();

interface MigrateJson {
  migrated: boolean;
  engine: string;
  applied: string[];
}

function suite(engine: 'sqlite' | 'postgres') {
  describe(`migrate on ${engine}`, () => {
    /** A workspace on an empty database of the engine; `dialect()` reaches that database directly. */
    async function workspace(): Promise<{ w: CliWorkspace; dialect: () => Dialect }> {
      if (engine === 'sqlite') {
        const w = cliWorkspace();
        return { w, dialect: () => createSqliteDialect(join(w.dataDir, 'connect-sandbox.db')).dialect };
      }
      const database = await createTestDatabase();
      onTestFinished(() => database.drop());
      return { w: cliWorkspace({ env: { DATABASE_URL: database.url } }), dialect: () => createPostgresDialect(database.url).dialect };
    }

    it('lists every migration it applied on an empty database, then says that none is pending', async () => {
      const { w } = await workspace();
      const first = await w.cli(['migrate']);
      expect(first).toMatchObject({ code: 0, stderr: '' });
      expect(first.stdout).toBe(`applied ${ALL.length} migrations (${engine}), now up to date:\n${ALL.map((name) => `  ${name}\n`).join('')}`);
      expect(await w.cli(['migrate'])).toEqual({ code: 0, stdout: `database is up to date (${engine}): no migrations pending\n`, stderr: '' });
    });

    it('--json: the names it applied, and none the second time', async () => {
      const { w } = await workspace();
      expect(await w.cliJson<MigrateJson>(['migrate'])).toEqual({ migrated: true, engine, applied: ALL });
      expect(await w.cliJson<MigrateJson>(['migrate'])).toEqual({ migrated: true, engine, applied: [] });
    });

    it('on a database some migrations behind, applies and lists only the pending ones', async () => {
      const { w, dialect } = await workspace();
      const db = new Kysely<unknown>({ dialect: dialect() });
      try {
        const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(ALL[2] as string);
        expect(error).toBeUndefined();
      } finally {
        await db.destroy();
      }
      const pending = ALL.slice(3);
      expect((await w.cli(['migrate'])).stdout).toBe(
        `applied ${pending.length} migration${pending.length === 1 ? '' : 's'} (${engine}), now up to date:\n${pending.map((name) => `  ${name}\n`).join('')}`,
      );
    });
  });
}

suite('sqlite');
if (postgresAdminUrl) suite('postgres');
else noticePostgresSkipped('migrate on PostgreSQL');
