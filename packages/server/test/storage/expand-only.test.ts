import { sql, type Migration } from 'kysely';
import { describe, expect, it } from 'vitest';
import { checkExpandOnly } from '../../src/storage/kysely/expand-only.js';
import { bundledMigrations, MIGRATION_NAMES, OLDEST_COMPATIBLE_RELEASE } from '../../src/storage/kysely/migrations/index.js';
import { git, previousRelease, requireCommit } from '../helpers/releases.js';

const MIGRATIONS_DIR = 'packages/server/src/storage/kysely/migrations';

/** The migrations `commit` shipped, by name. */
function shippedAt(commit: string): string[] {
  return git('ls-tree', '--name-only', `${commit}:${MIGRATIONS_DIR}`)
    .split('\n')
    .filter((file) => file.endsWith('.ts') && file !== 'index.ts')
    .map((file) => file.slice(0, -'.ts'.length));
}

/** Where the code of `commit` (its migrations aside) names `identifier` as a word. */
function readAt(commit: string): (identifier: string) => string | undefined {
  return (identifier) => {
    try {
      const hits = git('grep', '-l', '-w', '-F', '-e', identifier, commit, '--', 'packages/server/src', `:(exclude)${MIGRATIONS_DIR}`);
      return hits.split('\n')[0]?.replace(`${commit}:`, '') || undefined;
    } catch {
      return undefined; // git grep exits 1 when nothing matches
    }
  };
}

describe('the expand-only rule (docs/upgrades.md, "Migrations across releases")', () => {
  const previous = previousRelease();
  requireCommit(previous.commit);
  const shipped = shippedAt(previous.commit);

  it('holds for every migration since the previous release', async () => {
    expect(shipped.length).toBeGreaterThan(0);
    expect(await checkExpandOnly({ shipped, migrations: bundledMigrations(), readByPrevious: readAt(previous.commit) })).toEqual([]);
  });

  it('the schema names the previous release as the oldest it runs with', () => {
    expect(OLDEST_COMPATIBLE_RELEASE).toBe(previous.version);
  });

  // The deliberately destructive migrations below come after every shipped one,
  // checked against this checkout's own code as the "previous release".
  const withExtra = (extra: Migration) => ({ ...bundledMigrations(), '2099-01-01T00-00-extra': extra });
  const current = { shipped: MIGRATION_NAMES, readByPrevious: readAt('HEAD') };

  it('fails a migration that drops a column the previous release reads', async () => {
    const drop: Migration = { up: (db) => db.schema.alterTable('token_sessions').dropColumn('dpop_jkt').execute() };
    const problems = await checkExpandOnly({ ...current, migrations: withExtra(drop) });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^2099-01-01T00-00-extra: removes or renames column token_sessions\.dpop_jkt, which the previous release reads \(packages\/server\/src\/.+\.ts\)$/);
  });

  it('fails a migration that renames a table or a column the previous release reads', async () => {
    const renameTable: Migration = { up: (db) => db.schema.alterTable('pushed_requests').renameTo('pushed_authorization_requests').execute() };
    expect(await checkExpandOnly({ ...current, migrations: withExtra(renameTable) })).toEqual([
      expect.stringMatching(/^2099-01-01T00-00-extra: removes or renames table pushed_requests, which the previous release reads/),
    ]);
    const renameColumn: Migration = { up: (db) => db.schema.alterTable('clients').renameColumn('jwks_uri', 'key_set_uri').execute() };
    expect(await checkExpandOnly({ ...current, migrations: withExtra(renameColumn) })).toEqual([
      expect.stringMatching(/removes or renames column clients\.jwks_uri, which the previous release reads/),
    ]);
  });

  it("fails a not-null column without a default, which breaks the previous release's inserts", async () => {
    // Whether the table is rebuilt (as SQLite migrations often do) or altered.
    const rebuild: Migration = {
      async up(db) {
        await sql`create table used_jtis_new (kind text not null, jti_hash text not null, expires_at bigint not null, origin text not null, primary key (kind, jti_hash))`.execute(db);
        await sql`insert into used_jtis_new (kind, jti_hash, expires_at, origin) select kind, jti_hash, expires_at, 'x' from used_jtis`.execute(db);
        await sql`drop table used_jtis`.execute(db);
        await sql`alter table used_jtis_new rename to used_jtis`.execute(db);
      },
    };
    expect(await checkExpandOnly({ ...current, migrations: withExtra(rebuild) })).toEqual([
      "2099-01-01T00-00-extra: adds column used_jtis.origin as not null without a default, so the previous release's inserts into used_jtis would fail",
    ]);
    const alter: Migration = { up: (db) => db.schema.alterTable('used_jtis').addColumn('origin', 'text', (c) => c.notNull()).execute() };
    expect(await checkExpandOnly({ ...current, migrations: withExtra(alter) })).toEqual([
      "2099-01-01T00-00-extra: adds column used_jtis.origin as not null without a default, so the previous release's inserts into used_jtis would fail",
    ]);
  });

  it('reports a migration that fails on the previous release\'s schema', async () => {
    const broken: Migration = { up: async (db) => void (await sql`alter table no_such_table add column x text`.execute(db)) };
    expect(await checkExpandOnly({ ...current, migrations: withExtra(broken) })).toEqual([
      expect.stringMatching(/^2099-01-01T00-00-extra: fails on the previous release's schema \(.*no_such_table/),
    ]);
  });

  it('passes additions, and the removal of what the previous release no longer names', async () => {
    const expand: Migration = {
      async up(db) {
        await db.schema.createTable('release_notes').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('stale', 'text').execute();
        await db.schema.alterTable('clients').addColumn('note', 'text', (c) => c.notNull().defaultTo('')).execute();
        await db.schema.createIndex('clients_note').on('clients').column('note').execute();
      },
    };
    expect(await checkExpandOnly({ ...current, migrations: withExtra(expand) })).toEqual([]);
    const contract: Migration = { up: async (db) => void (await sql`alter table release_notes drop column stale`.execute(db)) };
    const both = { ...withExtra(expand), '2099-01-02T00-00-contract': contract };
    // Shipped with the table, never read by the code: dropping its column later is allowed.
    expect(await checkExpandOnly({ shipped: [...MIGRATION_NAMES, '2099-01-01T00-00-extra'], migrations: both, readByPrevious: () => undefined })).toEqual([]);
  });
});
