import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';

/**
 * Deletes at most `limit` rows of `table` matching `condition` in one
 * statement (every row when `limit` is undefined) and returns how many it
 * deleted. The rows are picked by their key in a sub-query, the one form of
 * a limited DELETE both engines accept, so a purge deletes in small batches
 * and no statement holds its locks long (docs/operator-guide.md, "Retention").
 */
export async function deleteBatch(
  db: Kysely<Database>,
  table: keyof Database,
  keys: readonly string[],
  condition: RawBuilder<unknown>,
  limit: number | undefined,
): Promise<number> {
  if (limit === undefined) {
    const all = await sql`delete from ${sql.table(table)} where ${condition}`.execute(db);
    return Number(all.numAffectedRows ?? 0);
  }
  const columns = sql.join(keys.map((key) => sql.ref(key)));
  const picked = keys.length === 1 ? columns : sql`(${columns})`;
  const result = await sql`delete from ${sql.table(table)} where ${picked} in (select ${columns} from ${sql.table(table)} where ${condition} limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
