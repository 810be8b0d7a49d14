import { sql, type Kysely } from 'kysely';
import { SchemaTooNew } from '../../core/storage/storage.js';
import type { Database } from './stores/schema.js';

/**
 * Compares two release versions (`major.minor.patch`, numerically):
 * negative when `a` is older than `b`, 0 when equal, positive when newer.
 */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.split(/[-+]/)[0]!.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** What the database says about the releases that migrated it. */
export interface SchemaState {
  /** Names of the migrations the database has run. */
  readonly executed: readonly string[];
  /** Its `schema_releases` rows (none before that table's migration). */
  readonly releases: readonly { version: string; oldestCompatible: string }[];
}

/** Reads {@link SchemaState}; an empty database has run nothing. */
export async function readSchemaState(db: Kysely<Database>, engine: 'sqlite' | 'postgres'): Promise<SchemaState> {
  const present = async (table: string) => {
    const { rows } = await (engine === 'sqlite'
      ? sql<{ present: number }>`select count(*) as present from sqlite_master where type = 'table' and name = ${table}`
      : sql<{ present: number }>`select count(*)::int as present from pg_catalog.pg_tables where tablename = ${table} and schemaname = any (current_schemas(false))`
    ).execute(db);
    return Number(rows[0]?.present ?? 0) > 0;
  };
  const executed = (await present('kysely_migration'))
    ? (await sql<{ name: string }>`select name from kysely_migration`.execute(db)).rows.map((r) => r.name)
    : [];
  const releases = (await present('schema_releases'))
    ? (await db.selectFrom('schema_releases').select(['version', 'oldest_compatible']).execute()).map((r) => ({
        version: r.version,
        oldestCompatible: r.oldest_compatible,
      }))
    : [];
  return { executed, releases };
}

/**
 * Whether `release` (this code) may run on a database in `state`, knowing
 * the migrations `known`. Throws {@link SchemaTooNew}, naming both
 * releases, when a newer release recorded that its schema needs a release
 * newer than this one, or when the database ran migrations this code does
 * not know and no release recorded that this one still runs there. Returns
 * whether the database is ahead of this code (then it must not migrate: the
 * newer release's migrations are expand-only and leave this code's schema in
 * place).
 */
export function checkSchemaRelease(release: string | undefined, known: readonly string[], state: SchemaState): { ahead: boolean } {
  const knownSet = new Set(known);
  const unknown = state.executed.filter((name) => !knownSet.has(name));
  const newest = [...state.releases].sort((a, b) => compareVersions(b.version, a.version))[0];
  const needed = [...state.releases].map((r) => r.oldestCompatible).sort((a, b) => compareVersions(b, a))[0];
  const self = release === undefined ? 'this release' : `Connect ${release}`;
  if (release !== undefined && needed !== undefined && compareVersions(release, needed) < 0) {
    throw new SchemaTooNew(
      `this database was migrated by Connect ${newest!.version}, whose schema needs Connect ${needed} or newer; this is Connect ${release}: start a newer release (docs/upgrades.md)`,
    );
  }
  if (unknown.length === 0) return { ahead: false };
  const compatible = release !== undefined && needed !== undefined && state.releases.some((r) => compareVersions(r.version, release) > 0);
  if (!compatible) {
    throw new SchemaTooNew(
      `this database was migrated by ${newest ? `Connect ${newest.version}` : 'a newer release of Connect'} (its migration ${unknown[0]} is unknown here); this is ${self}: start a newer release (docs/upgrades.md)`,
    );
  }
  const missing = known.filter((name) => !state.executed.includes(name));
  if (missing.length > 0) {
    throw new SchemaTooNew(
      `this database was migrated by Connect ${newest!.version} but lacks migration ${missing[0]} of ${self}: restore it from a backup or migrate it with Connect ${newest!.version} (docs/upgrades.md)`,
    );
  }
  return { ahead: true };
}
