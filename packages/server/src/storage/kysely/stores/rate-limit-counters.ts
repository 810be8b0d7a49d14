import { sql, type Kysely } from 'kysely';
import type { RateLimitCounter, RateLimitCounterStore } from '../../../core/limits/rate-limit-counter-store.js';
import type { Database } from './schema.js';
import { deleteBatch } from './delete-batch.js';

/** The Kysely {@link RateLimitCounterStore}. */
export function createRateLimitCounterStore(db: Kysely<Database>): RateLimitCounterStore {
  return {
    async addToRateLimitCounter(key, points, expiresAt, nowMs, forceExpire) {
      // One INSERT … ON CONFLICT DO UPDATE … RETURNING: the engine serialises
      // concurrent adds to one key (PostgreSQL by the row lock, SQLite by its
      // single writer), so no add is lost and each returns its own total.
      // Both engines name the stored row by its table and the new one `excluded`.
      const expired = sql<boolean>`rate_limit_counters.expires_at is not null and rate_limit_counters.expires_at <= ${nowMs}`;
      const update = forceExpire
        ? { points: sql<number>`excluded.points`, expires_at: sql<number | null>`excluded.expires_at` }
        : {
            points: sql<number>`case when ${expired} then excluded.points else rate_limit_counters.points + excluded.points end`,
            expires_at: sql<number | null>`case when ${expired} then excluded.expires_at else rate_limit_counters.expires_at end`,
          };
      const row = await db
        .insertInto('rate_limit_counters')
        .values({ key, points, expires_at: expiresAt })
        .onConflict((oc) => oc.column('key').doUpdateSet(update))
        .returning(['points', 'expires_at'])
        .executeTakeFirstOrThrow();
      return toCounter(row);
    },

    async subtractFromLiveRateLimitCounter(key, points, nowMs) {
      const row = await db
        .updateTable('rate_limit_counters')
        .set({ points: sql<number>`points - ${points}` })
        .where('key', '=', key)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowMs)]))
        .returning(['points', 'expires_at'])
        .executeTakeFirst();
      return row && toCounter(row);
    },

    async findRateLimitCounter(key, nowMs) {
      const row = await db
        .selectFrom('rate_limit_counters')
        .select(['points', 'expires_at'])
        .where('key', '=', key)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowMs)]))
        .executeTakeFirst();
      return row && toCounter(row);
    },

    async deleteRateLimitCounter(key) {
      const result = await db.deleteFrom('rate_limit_counters').where('key', '=', key).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async deleteExpiredRateLimitCounters(nowMs, limit) {
      return deleteBatch(db, 'rate_limit_counters', ['key'], sql`expires_at <= ${nowMs}`, limit);
    },
  };
}

function toCounter(row: { points: number; expires_at: number | null }): RateLimitCounter {
  return { points: Number(row.points), expiresAt: row.expires_at === null ? null : Number(row.expires_at) };
}
