// Frozen: this migration has shipped. Never change it and never import app code here.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('previous_secret_hash', 'text').execute();
  await db.schema.alterTable('clients').addColumn('previous_secret_expires_at', 'bigint').execute();

  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('subject', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('details', 'text')
    .execute();
  await db.schema.createIndex('audit_events_at').on('audit_events').columns(['at', 'id']).execute();
  await db.schema.createIndex('audit_events_type').on('audit_events').columns(['type', 'at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
  await db.schema.alterTable('clients').dropColumn('previous_secret_expires_at').execute();
  await db.schema.alterTable('clients').dropColumn('previous_secret_hash').execute();
}
