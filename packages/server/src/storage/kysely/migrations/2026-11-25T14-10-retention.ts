// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/** The expiry column of each table the purge deletes from, for its batches to find their rows by index. */
const EXPIRY_INDEXES = [
  ['authorization_codes_expires', 'authorization_codes', 'expires_at'],
  ['authorization_requests_expires', 'authorization_requests', 'expires_at'],
  ['customer_sessions_expires', 'customer_sessions', 'expires_at'],
  ['otp_challenges_expires', 'otp_challenges', 'expires_at'],
  ['token_sessions_refresh_expires', 'token_sessions', 'refresh_expires_at'],
  ['revoked_tokens_expires', 'revoked_tokens', 'expires_at'],
  ['idempotent_requests_expires', 'idempotent_requests', 'expires_at'],
  ['sms_outbox_sent', 'sms_outbox', 'sent_at'],
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  // Repeated failures of one client from one address in one minute are one
  // event whose `count` each failure raises by one; other events: null.
  await db.schema.alterTable('audit_events').addColumn('count', 'bigint').execute();
  for (const [name, table, column] of EXPIRY_INDEXES) await db.schema.createIndex(name).on(table).column(column).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [name] of EXPIRY_INDEXES) await db.schema.dropIndex(name).execute();
  await db.schema.alterTable('audit_events').dropColumn('count').execute();
}
