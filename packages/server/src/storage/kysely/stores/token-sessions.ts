import { sql, type Kysely, type Selectable } from 'kysely';
import { deleteBatch } from './delete-batch.js';
import type { TokenSessionRecord } from '../../../core/tokens/records.js';
import type { TokenSessionStore } from '../../../core/tokens/token-session-store.js';
import type { Database, TokenSessionsTable } from './schema.js';
import { insertOrConflict } from './insert-or-conflict.js';
import { authenticationColumns, authenticationOfRow } from './authentication-columns.js';

/** The Kysely {@link TokenSessionStore}. */
export function createTokenSessionStore(db: Kysely<Database>): TokenSessionStore {
  return {
    async insertTokenSession(s) {
      await insertOrConflict(
        db.insertInto('token_sessions').values({
          sid: s.sid,
          client_id: s.clientId,
          profile_id: s.profileId,
          code_hash: s.codeHash,
          refresh_jti: s.refreshJti,
          access_jti: s.accessJti,
          created_at: s.createdAt,
          refresh_expires_at: s.refreshExpiresAt,
          access_expires_at: s.accessExpiresAt,
          revoked_at: s.revokedAt,
          ...authenticationColumns(s.authentication),
          dpop_jkt: s.dpopJkt ?? null,
        }),
        'token session exists',
      );
    },

    async findTokenSession(sid) {
      const row = await db.selectFrom('token_sessions').selectAll().where('sid', '=', sid).executeTakeFirst();
      return row && toTokenSession(row);
    },

    async revokeTokenSessionsByCode(codeHash, now) {
      const result = await db
        .updateTable('token_sessions')
        .set({ revoked_at: now })
        .where('code_hash', '=', codeHash)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async replaceAccessToken(sid, u) {
      // One statement decides "reuse or replace": concurrent refreshes of the
      // session run it one after another (its row), each seeing the last.
      const reuse = u.reuse
        ? sql<boolean>`(refreshed_at > ${u.reuse.since} and refreshed_scope = ${u.reuse.scope} and refreshed_access is not null
            and access_jti <> '' and access_expires_at > ${u.now})`
        : sql<boolean>`(1 = 0)`;
      const keep = <T>(column: string, value: unknown) => sql<T>`case when ${reuse} then ${sql.ref(column)} else ${value} end`;
      const row = await db
        .updateTable('token_sessions')
        .set({
          access_jti: keep('access_jti', u.accessJti),
          access_expires_at: keep('access_expires_at', sql`cast(${u.accessExpiresAt} as bigint)`),
          refreshed_at: keep('refreshed_at', sql`cast(${u.now} as bigint)`),
          refreshed_scope: keep('refreshed_scope', u.reuse?.scope ?? null),
          refreshed_access: keep('refreshed_access', u.reuse?.sealedAccess ?? null),
        })
        .where('sid', '=', sid)
        .where('refresh_jti', '=', u.refreshJti)
        .where('client_id', '=', u.clientId)
        .where('revoked_at', 'is', null)
        .where('refresh_expires_at', '>', u.now)
        .returning(['access_jti', 'access_expires_at', 'refreshed_access'])
        .executeTakeFirst();
      if (!row) return undefined;
      if (row.access_jti === u.accessJti) return { reused: false };
      // Kept only with its sealed copy (the condition above): never hand out a token that is not the session's.
      if (row.refreshed_access === null) throw new Error(`token session ${sid} kept an access token it has no copy of`);
      return { reused: true, accessJti: row.access_jti, accessExpiresAt: Number(row.access_expires_at), sealedAccess: row.refreshed_access };
    },

    async revokeTokenSessionsOf(holder, now) {
      const byHolder = holder.clientId === undefined ? (['profile_id', holder.profileId] as const) : (['client_id', holder.clientId] as const);
      const result = await db
        .updateTable('token_sessions')
        .set({ revoked_at: now })
        .where(byHolder[0], '=', byHolder[1])
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async revokeTokenSession(sid, now) {
      const result = await db
        .updateTable('token_sessions')
        .set({ revoked_at: now })
        .where('sid', '=', sid)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async revokeAccessToken(sid, accessJti) {
      // An empty jti matches no token: the session keeps its refresh token but has no valid access token.
      const result = await db
        .updateTable('token_sessions')
        .set({ access_jti: '', refreshed_access: null })
        .where('sid', '=', sid)
        .where('access_jti', '=', accessJti)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async deleteExpiredTokenSessions(now, limit) {
      return deleteBatch(db, 'token_sessions', ['sid'], sql`refresh_expires_at <= ${now} and access_expires_at <= ${now}`, limit);
    },
  };
}

function toTokenSession(row: Selectable<TokenSessionsTable>): TokenSessionRecord {
  return {
    sid: row.sid,
    clientId: row.client_id,
    profileId: row.profile_id,
    codeHash: row.code_hash,
    refreshJti: row.refresh_jti,
    accessJti: row.access_jti,
    createdAt: Number(row.created_at),
    refreshExpiresAt: Number(row.refresh_expires_at),
    accessExpiresAt: Number(row.access_expires_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    authentication: authenticationOfRow(row),
    ...(row.dpop_jkt ? { dpopJkt: row.dpop_jkt } : {}),
  };
}
