// Frozen once shipped: never change it and never import app code here.
import { sql, type Kysely } from 'kysely';

/**
 * A client is an API consumer or a resource server (one of the platform's
 * APIs, which checks tokens at `/introspect` and obtains none). Every client
 * registered before is a consumer. A resource server has no redirect URI:
 * its `redirect_uri` is the empty string, which `/authorize` never matches.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('clients')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('consumer').check(sql`kind in ('consumer', 'resource_server')`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('clients').dropColumn('kind').execute();
}
