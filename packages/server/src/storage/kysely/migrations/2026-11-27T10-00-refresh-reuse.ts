// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/**
 * The reuse interval of refreshes (`CONNECT_REFRESH_REUSE_SECONDS`,
 * docs/tokens.md, "Concurrent refreshes"): when a token session's access
 * token was minted by a refresh, for which scope, and that token itself,
 * sealed under a key derived from the master key. Every session made
 * before has none, so its next refresh mints a new token.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('token_sessions').addColumn('refreshed_at', 'bigint').execute();
  await db.schema.alterTable('token_sessions').addColumn('refreshed_scope', 'text').execute();
  await db.schema.alterTable('token_sessions').addColumn('refreshed_access', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('token_sessions').dropColumn('refreshed_access').execute();
  await db.schema.alterTable('token_sessions').dropColumn('refreshed_scope').execute();
  await db.schema.alterTable('token_sessions').dropColumn('refreshed_at').execute();
}
