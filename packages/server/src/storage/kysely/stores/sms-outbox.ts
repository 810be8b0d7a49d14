import { sql, type Kysely } from 'kysely';
import { deleteBatch } from './delete-batch.js';
import type { OutboxMessage } from '../../../core/sms/outbox-store.js';
import type { SmsOutboxStore } from '../../../core/sms/outbox-store.js';
import type { Database } from './schema.js';
import { insertOrConflict } from './insert-or-conflict.js';

/** The Kysely {@link SmsOutboxStore}. */
export function createSmsOutboxStore(db: Kysely<Database>): SmsOutboxStore {
  return {
    async insertOutboxMessage(m) {
      await insertOrConflict(
        db.insertInto('sms_outbox').values({ id: m.id, to_mobile: m.to, body: m.body, sent_at: m.sentAt }),
        'outbox message exists',
      );
    },

    async listOutboxMessages(to, limit) {
      const rows = await db
        .selectFrom('sms_outbox')
        .selectAll()
        .where('to_mobile', '=', to)
        .orderBy('sent_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map((r): OutboxMessage => ({ id: r.id, to: r.to_mobile, body: r.body, sentAt: Number(r.sent_at) }));
    },

    async deleteOutboxMessagesSentBefore(cutoff, limit) {
      return deleteBatch(db, 'sms_outbox', ['id'], sql`sent_at < ${cutoff}`, limit);
    },
  };
}
