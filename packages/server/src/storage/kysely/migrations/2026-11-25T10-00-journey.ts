// Frozen once shipped: never change it and never import app code here.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // The customer's journey has an explicit state (docs/journey.md) and, once
  // known, the customer it is for.
  await db.schema.alterTable('authorization_requests').addColumn('status', 'text', (c) => c.notNull().defaultTo('pending')).execute();
  await db.schema.alterTable('authorization_requests').addColumn('profile_id', 'text').execute();
  await sql`update authorization_requests set status = 'cancelled' where completed_at is not null`.execute(db);

  // Which clients a customer approved: a session signs in silently only for these.
  await db.schema
    .createTable('consents')
    .addColumn('profile_id', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('approved_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('consents_pk', ['profile_id', 'client_id'])
    .execute();

  // Rate-limit counters shared by every instance when there is no Redis.
  await db.schema
    .createTable('rate_limit_counters')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('points', 'integer', (c) => c.notNull())
    // Epoch milliseconds; null: never expires.
    .addColumn('expires_at', 'bigint')
    .execute();
  await db.schema.createIndex('rate_limit_counters_expires').on('rate_limit_counters').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_limit_counters').execute();
  await db.schema.dropTable('consents').execute();
  await db.schema.alterTable('authorization_requests').dropColumn('profile_id').execute();
  await db.schema.alterTable('authorization_requests').dropColumn('status').execute();
}
