// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/** The ID of the request that caused an audit event, when a request did (docs/operator-guide.md, "Request IDs"). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('audit_events').addColumn('request_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('audit_events').dropColumn('request_id').execute();
}
