// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/**
 * Pushed authorization requests (RFC 9126; docs/journey.md, "Pushed
 * authorization requests").
 *
 * `pushed_requests`: one row per `POST /par`. `id_hash` is the SHA-256
 * (base64url) of the random part of its `request_uri`, which is never
 * stored; `parameters` the authorization parameters the client pushed, as
 * a JSON object of strings; `consumed_at` is set once, by the one
 * `GET /authorize` that uses it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('pushed_requests')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('parameters', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('pushed_requests_expires').on('pushed_requests').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('pushed_requests').execute();
}
