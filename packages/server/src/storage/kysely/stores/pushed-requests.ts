import { sql, type Kysely, type Selectable } from 'kysely';
import type { PushedRequestRecord, PushedRequestStore } from '../../../core/authorize/pushed-request-store.js';
import { deleteBatch } from './delete-batch.js';
import { insertOrConflict } from './insert-or-conflict.js';
import type { Database, PushedRequestsTable } from './schema.js';

/** The Kysely {@link PushedRequestStore}, shared by both engines. */
export function createPushedRequestStore(db: Kysely<Database>): PushedRequestStore {
  return {
    async insertPushedRequest(r) {
      await insertOrConflict(
        db.insertInto('pushed_requests').values({
          id_hash: r.idHash,
          client_id: r.clientId,
          parameters: JSON.stringify(r.parameters),
          created_at: r.createdAt,
          expires_at: r.expiresAt,
          consumed_at: r.consumedAt,
        }),
        'pushed request exists',
      );
    },

    async consumePushedRequest(idHash, clientId, now) {
      // One UPDATE … WHERE consumed_at IS NULL AND expires_at > now RETURNING:
      // the engine serialises concurrent uses of the row (PostgreSQL by its
      // row lock, SQLite by its single writer), so one caller gets it.
      const row = await db
        .updateTable('pushed_requests')
        .set({ consumed_at: now })
        .where('id_hash', '=', idHash)
        .where('client_id', '=', clientId)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      return row && toRecord(row);
    },

    async deleteExpiredPushedRequests(now, limit) {
      return deleteBatch(db, 'pushed_requests', ['id_hash'], sql`expires_at <= ${now}`, limit);
    },
  };
}

function toRecord(row: Selectable<PushedRequestsTable>): PushedRequestRecord {
  return {
    idHash: row.id_hash,
    clientId: row.client_id,
    parameters: JSON.parse(row.parameters) as Record<string, string>,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    consumedAt: row.consumed_at === null ? null : Number(row.consumed_at),
  };
}
