// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Repeated failures of one client from one address in one minute are one
  // event whose `count` each failure raises by one; other events: null.
  await db.schema.alterTable('audit_events').addColumn('count', 'bigint').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('audit_events').dropColumn('count').execute();
}
