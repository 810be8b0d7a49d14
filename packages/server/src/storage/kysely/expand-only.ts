import { Kysely, sql, type Migration } from 'kysely';
import { createSqliteDialect } from './sqlite.js';

/** The tables of a schema and, for each, its columns. */
type Shape = Map<string, Map<string, { notNull: boolean; hasDefault: boolean }>>;

/** What {@link checkExpandOnly} compares. */
export interface ExpandOnlyInput {
  /** Names of the migrations the previous release shipped (it runs on their schema). */
  readonly shipped: readonly string[];
  /** Every migration by name, the previous release's and the new ones. */
  readonly migrations: Readonly<Record<string, Migration>>;
  /**
   * Where the previous release's code names `identifier` (a table or a
   * column), e.g. a file path; `undefined` when it never does.
   */
  readonly readByPrevious: (identifier: string) => string | undefined;
}

/**
 * The expand-only rule across one release (docs/upgrades.md, "Migrations
 * across releases"): applies the previous release's migrations to an empty
 * embedded database, then each newer migration in turn, and reports every
 * newer migration that removes or renames a table or a column the previous
 * release's code names, or adds a `not null` column without a default to a
 * table it writes (its inserts would fail). An empty list: the newer
 * migrations are safe to run under the previous release's instances.
 */
export async function checkExpandOnly(input: ExpandOnlyInput): Promise<string[]> {
  const shipped = new Set(input.shipped);
  const names = Object.keys(input.migrations).sort();
  const unknown = input.shipped.filter((name) => !(name in input.migrations));
  if (unknown.length > 0) return unknown.map((name) => `${name}: shipped by the previous release but missing here (a shipped migration is never removed)`);
  const { dialect, database } = createSqliteDialect(':memory:');
  const db = new Kysely<any>({ dialect });
  const problems: string[] = [];
  try {
    for (const name of names.filter((n) => shipped.has(n))) await input.migrations[name]!.up(db);
    const previous = await shapeOf(db);
    let before = previous;
    for (const name of names.filter((n) => !shipped.has(n))) {
      try {
        await input.migrations[name]!.up(db);
      } catch (error) {
        problems.push(`${name}: fails on the previous release's schema (${error instanceof Error ? error.message : String(error)})`);
        break;
      }
      const after = await shapeOf(db);
      for (const [table, columns] of before) {
        if (!previous.has(table)) continue;
        const now = after.get(table);
        if (!now) {
          const reader = input.readByPrevious(table);
          if (reader) problems.push(`${name}: removes or renames table ${table}, which the previous release reads (${reader})`);
          continue;
        }
        for (const column of columns.keys()) {
          if (now.has(column) || !previous.get(table)!.has(column)) continue;
          const reader = input.readByPrevious(column);
          if (reader) problems.push(`${name}: removes or renames column ${table}.${column}, which the previous release reads (${reader})`);
        }
        for (const [column, info] of now) {
          if (columns.has(column) || !info.notNull || info.hasDefault) continue;
          problems.push(`${name}: adds column ${table}.${column} as not null without a default, so the previous release's inserts into ${table} would fail`);
        }
      }
      before = after;
    }
  } finally {
    await db.destroy();
    database.close();
  }
  return problems;
}

async function shapeOf(db: Kysely<any>): Promise<Shape> {
  const { rows: tables } = await sql<{ name: string }>`
    select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%'`.execute(db);
  const shape: Shape = new Map();
  for (const { name } of tables) {
    const { rows } = await sql<{ name: string; notnull: number; dflt_value: string | null; pk: number }>`
      select name, "notnull", dflt_value, pk from pragma_table_info(${name})`.execute(db);
    shape.set(name, new Map(rows.map((r) => [r.name, { notNull: r.notnull === 1 && r.pk === 0, hasDefault: r.dflt_value !== null }])));
  }
  return shape;
}
