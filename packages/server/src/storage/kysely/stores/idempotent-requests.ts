import { sql, type Kysely, type Selectable } from 'kysely';
import { deleteBatch } from './delete-batch.js';
import { Conflict } from '../../../core/storage-errors.js';
import type { IdempotentRequestRecord, IdempotentRequestStore } from '../../../core/customer-tokens/idempotent-request-store.js';
import type { Database, IdempotentRequestsTable } from './schema.js';
import { insertOrConflict } from './insert-or-conflict.js';

/** The Kysely {@link IdempotentRequestStore}. */
export function createIdempotentRequestStore(db: Kysely<Database>): IdempotentRequestStore {
  const find = async (clientId: string, reference: string) => {
    const row = await db
      .selectFrom('idempotent_requests')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('reference', '=', reference)
      .executeTakeFirst();
    return row && toRecord(row);
  };
  const insert = (r: IdempotentRequestRecord) =>
    insertOrConflict(
      db.insertInto('idempotent_requests').values({
        client_id: r.clientId,
        reference: r.reference,
        request_hash: r.requestHash,
        sealed_response: r.sealedResponse,
        created_at: r.createdAt,
        expires_at: r.expiresAt,
      }),
      'request reference in use',
    );

  return {
    async claimIdempotentRequest(record) {
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          await insert(record);
          return undefined;
        } catch (error) {
          if (!(error instanceof Conflict)) throw error;
        }
        const existing = await find(record.clientId, record.reference);
        if (existing && existing.expiresAt > record.createdAt) return existing;
        // An expired record: forget it and claim the reference again.
        await db
          .deleteFrom('idempotent_requests')
          .where('client_id', '=', record.clientId)
          .where('reference', '=', record.reference)
          .where('expires_at', '<=', record.createdAt)
          .execute();
      }
      // Lost a race twice: report what is there, or a running claim, never "claimed".
      return (await find(record.clientId, record.reference)) ?? { ...record, requestHash: '' };
    },

    async findIdempotentRequest(clientId, reference, now) {
      const record = await find(clientId, reference);
      return record && record.expiresAt > now ? record : undefined;
    },

    async releaseIdempotentRequest(record) {
      await db
        .deleteFrom('idempotent_requests')
        .where('client_id', '=', record.clientId)
        .where('reference', '=', record.reference)
        .where('sealed_response', record.sealedResponse === null ? 'is' : '=', record.sealedResponse)
        .execute();
    },

    async replaceIdempotentResponse(record, sealedResponse) {
      await db
        .updateTable('idempotent_requests')
        .set({ sealed_response: sealedResponse })
        .where('client_id', '=', record.clientId)
        .where('reference', '=', record.reference)
        .where('sealed_response', record.sealedResponse === null ? 'is' : '=', record.sealedResponse)
        .execute();
    },

    async deleteExpiredIdempotentRequests(now, limit) {
      return deleteBatch(db, 'idempotent_requests', ['client_id', 'reference'], sql`expires_at <= ${now}`, limit);
    },
  };
}

function toRecord(row: Selectable<IdempotentRequestsTable>): IdempotentRequestRecord {
  return {
    clientId: row.client_id,
    reference: row.reference,
    requestHash: row.request_hash,
    sealedResponse: row.sealed_response,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}
