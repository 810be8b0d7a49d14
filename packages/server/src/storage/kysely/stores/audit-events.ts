import { sql, type Kysely } from 'kysely';
import { deleteBatch } from './delete-batch.js';
import type { AuditEventType, AuditRecord, AuditStore } from '../../../core/audit/audit-log.js';
import type { Database } from './schema.js';

/** The Kysely {@link AuditStore}. */
export function createAuditStore(db: Kysely<Database>): AuditStore {
  return {
    async insertAuditEvent(r) {
      await db.insertInto('audit_events').values(toRow(r)).execute();
    },

    async countAuditEvent(r) {
      // One INSERT … ON CONFLICT DO UPDATE: concurrent failures, on any
      // number of instances, each add exactly one (the engine serialises
      // them on the row), and the first one's fields stay.
      await db
        .insertInto('audit_events')
        // The first failure's fields, its request ID included: the one the event's time is of.
        .values({ ...toRow(r), count: 1 })
        .onConflict((oc) => oc.column('id').doUpdateSet({ count: sql<number>`audit_events.count + 1` }))
        .execute();
    },

    async listAuditEvents(filter) {
      let query = db.selectFrom('audit_events').selectAll();
      if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
      if (filter.type !== undefined) query = query.where('type', '=', filter.type);
      const newest = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
      return newest.reverse().map(
        (row): AuditRecord => ({
          id: row.id,
          at: Number(row.at),
          type: row.type as AuditEventType,
          actor: row.actor,
          subject: row.subject,
          outcome: row.outcome as AuditRecord['outcome'],
          ...(row.details || row.count !== null
            ? { details: { ...(row.details ? (JSON.parse(row.details) as AuditRecord['details']) : {}), ...(row.count !== null ? { count: Number(row.count) } : {}) } }
            : {}),
          ...(row.request_id ? { requestId: row.request_id } : {}),
        }),
      );
    },

    async deleteAuditEventsBefore(cutoff, limit) {
      return deleteBatch(db, 'audit_events', ['id'], sql`at < ${cutoff}`, limit);
    },
  };
}

/** A record as its row (without the count of an aggregated event). */
function toRow(r: AuditRecord) {
  return {
    id: r.id,
    at: r.at,
    type: r.type,
    actor: r.actor,
    subject: r.subject,
    outcome: r.outcome,
    details: r.details ? JSON.stringify(r.details) : null,
    request_id: r.requestId ?? null,
  };
}
