import { sql, type Kysely } from 'kysely';
import { deleteBatch } from './delete-batch.js';
import type { RevokedTokenStore } from '../../../core/tokens/token-session-store.js';
import type { Database } from './schema.js';
import { Conflict } from '../../../core/storage-errors.js';
import { insertOrConflict } from './insert-or-conflict.js';

/** The Kysely {@link RevokedTokenStore}. */
export function createRevokedTokenStore(db: Kysely<Database>): RevokedTokenStore {
  return {
    async revokeToken(entry) {
      try {
        await insertOrConflict(
          db.insertInto('revoked_tokens').values({
            jti: entry.jti,
            client_id: entry.clientId,
            revoked_at: entry.revokedAt,
            expires_at: entry.expiresAt,
          }),
          'token revoked before',
        );
      } catch (error) {
        if (!(error instanceof Conflict)) throw error;
      }
    },

    async isTokenRevoked(jti) {
      const row = await db.selectFrom('revoked_tokens').select('jti').where('jti', '=', jti).executeTakeFirst();
      return row !== undefined;
    },

    async deleteExpiredRevocations(now, limit) {
      return deleteBatch(db, 'revoked_tokens', ['jti'], sql`expires_at <= ${now}`, limit);
    },
  };
}
