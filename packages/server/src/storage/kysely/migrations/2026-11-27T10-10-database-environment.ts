// Frozen once shipped: never change it and never import app code here.
import { sql, type Kysely } from 'kysely';

/**
 * The environment the database belongs to, `sandbox` or `production`: one
 * row, written once, which every server and command compares with its own
 * `CONNECT_ENVIRONMENT` (docs/operator-guide.md, "One database, one
 * environment").
 *
 * A database that already holds clients belongs to the environment their
 * IDs name (`cid_production_…`, `cid_sandbox_…`): production as soon as one
 * production client is there, since a production server never creates a
 * sandbox client and the other way round is the mistake this record stops.
 * A database without clients gets no row here: the first server or command
 * that opens it records its own environment.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('database_environment')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment in ('sandbox', 'production')`))
    .execute();
  await sql`
    insert into database_environment (id, environment)
    select 1, case when exists (select 1 from clients where substr(id, 1, 15) = 'cid_production_') then 'production' else 'sandbox' end
    where exists (select 1 from clients)
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('database_environment').execute();
}
