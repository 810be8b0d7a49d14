// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/**
 * The releases of Connect that have migrated or started on this database
 * (docs/upgrades.md, "Migrations across releases"): one row per release,
 * with the oldest release whose code still runs on the schema it left.
 * A release that meets a database one of whose rows names a newer
 * `oldest_compatible` than itself refuses to start.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('schema_releases')
    .addColumn('version', 'text', (c) => c.primaryKey())
    .addColumn('oldest_compatible', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('schema_releases').execute();
}
