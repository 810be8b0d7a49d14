import { sql, type Kysely } from 'kysely';
import type { ReplayStore } from '../../../core/replay/replay-store.js';
import type { Database } from './schema.js';
import { deleteBatch } from './delete-batch.js';

/** The Kysely {@link ReplayStore}, shared by both engines. */
export function createReplayStore(db: Kysely<Database>): ReplayStore {
  return {
    async useJtiOnce(kind, jtiHash, expiresAt, now) {
      // One INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING: a new jti is
      // inserted, an expired one taken over, a live one left alone and no row
      // returned. The engine serialises concurrent uses of one key
      // (PostgreSQL by the row lock, SQLite by its single writer).
      const row = await db
        .insertInto('used_jtis')
        .values({ kind, jti_hash: jtiHash, expires_at: expiresAt })
        .onConflict((oc) =>
          oc
            .columns(['kind', 'jti_hash'])
            .doUpdateSet({ expires_at: sql<number>`excluded.expires_at` })
            .where(sql<boolean>`used_jtis.expires_at <= ${now}`),
        )
        .returning('kind')
        .executeTakeFirst();
      return row !== undefined;
    },

    async deleteExpiredJtis(now, limit) {
      return deleteBatch(db, 'used_jtis', ['kind', 'jti_hash'], sql`expires_at <= ${now}`, limit);
    },
  };
}
