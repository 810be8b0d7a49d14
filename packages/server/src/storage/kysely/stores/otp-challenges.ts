import { sql, type Kysely, type Selectable } from 'kysely';
import type { OtpChallengeRecord, OtpPurpose } from '../../../core/otp/records.js';
import type { OtpChallengeStore } from '../../../core/otp/otp-challenge-store.js';
import type { Database, OtpChallengesTable } from './schema.js';
import { insertOrConflict } from './insert-or-conflict.js';
import { deleteBatch } from './delete-batch.js';

/** The Kysely {@link OtpChallengeStore}. */
export function createOtpChallengeStore(db: Kysely<Database>): OtpChallengeStore {
  return {
    async insertOtpChallenge(c) {
      await insertOrConflict(
        db.insertInto('otp_challenges').values({
          id: c.id,
          request_hash: c.requestHash,
          purpose: c.purpose,
          mobile: c.mobile,
          profile_id: c.profileId,
          pending_pin_hash: c.pendingPinHash,
          code_hash: c.codeHash,
          attempts: c.attempts,
          resends: c.resends,
          last_sent_at: c.lastSentAt,
          expires_at: c.expiresAt,
          created_at: c.createdAt,
          consumed_at: c.consumedAt,
        }),
        'one-time PIN challenge exists',
      );
    },

    async findOtpChallenge(id) {
      const row = await db.selectFrom('otp_challenges').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toChallenge(row);
    },

    async findLatestOtpChallenge(requestHash) {
      const row = await db
        .selectFrom('otp_challenges')
        .selectAll()
        .where('request_hash', '=', requestHash)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row && toChallenge(row);
    },

    async consumeOtpChallenge(id, now) {
      const result = await db
        .updateTable('otp_challenges')
        .set({ consumed_at: now })
        .where('id', '=', id)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async endOtpChallengesOf(profileId, now) {
      const result = await db
        .updateTable('otp_challenges')
        .set({ consumed_at: now })
        .where('profile_id', '=', profileId)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async resendOtpChallenge(id, update) {
      const result = await db
        .updateTable('otp_challenges')
        .set({
          code_hash: update.codeHash,
          last_sent_at: update.now,
          expires_at: update.expiresAt,
          resends: sql<number>`resends + 1`,
        })
        .where('id', '=', id)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', update.now)
        .where('last_sent_at', '<=', update.sentBefore)
        .where('resends', '<', update.maxResends)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async deleteOtpChallengesExpiredBy(cutoff, limit) {
      return deleteBatch(db, 'otp_challenges', ['id'], sql`expires_at <= ${cutoff}`, limit);
    },
  };
}

export function toChallenge(row: Selectable<OtpChallengesTable>): OtpChallengeRecord {
  return {
    id: row.id,
    requestHash: row.request_hash,
    purpose: row.purpose as OtpPurpose,
    mobile: row.mobile,
    profileId: row.profile_id,
    pendingPinHash: row.pending_pin_hash,
    codeHash: row.code_hash,
    attempts: Number(row.attempts),
    resends: Number(row.resends),
    lastSentAt: Number(row.last_sent_at),
    expiresAt: Number(row.expires_at),
    createdAt: Number(row.created_at),
    consumedAt: row.consumed_at === null ? null : Number(row.consumed_at),
  };
}
