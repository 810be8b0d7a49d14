// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/**
 * OAuth scopes (RFC 6749 §3.3): the scopes a client is registered with,
 * and the scope granted to a journey and to the authorization code it
 * gives, each space-separated; the empty string is none, which is what
 * every client, journey and code made before has.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('scopes', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('authorization_requests').addColumn('scope', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('authorization_codes').addColumn('scope', 'text', (c) => c.notNull().defaultTo('')).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('authorization_codes').dropColumn('scope').execute();
  await db.schema.alterTable('authorization_requests').dropColumn('scope').execute();
  await db.schema.alterTable('clients').dropColumn('scopes').execute();
}
