import type { Kysely, Selectable } from 'kysely';
import type { AuthorizationCodeRecord, AuthorizationRequestRecord, CustomerSessionRecord } from '../../../core/journey/records.js';
import type { AuthorizationCodeStore, AuthorizationRequestStore, CustomerSessionStore } from '../../../core/journey/stores.js';
import type { AuthorizationCodesTable, AuthorizationRequestsTable, CustomerSessionsTable, Database } from './schema.js';
import { insertOrConflict } from './insert-or-conflict.js';

const num = (value: number | null): number | null => (value === null ? null : Number(value));

/** The Kysely {@link AuthorizationRequestStore}. */
export function createAuthorizationRequestStore(db: Kysely<Database>): AuthorizationRequestStore {
  return {
    async insertAuthorizationRequest(r) {
      await insertOrConflict(
        db.insertInto('authorization_requests').values({
          id_hash: r.idHash,
          client_id: r.clientId,
          redirect_uri: r.redirectUri,
          state: r.state,
          code_challenge: r.codeChallenge,
          login_hint: r.loginHint,
          browser_hash: r.browserHash,
          created_at: r.createdAt,
          expires_at: r.expiresAt,
          completed_at: r.completedAt,
          status: r.completedAt === null ? 'pending' : 'cancelled',
        }),
        'authorization request exists',
      );
    },

    async findAuthorizationRequest(idHash) {
      const row = await db.selectFrom('authorization_requests').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
      return row && toRequest(row);
    },

    async completeAuthorizationRequest(idHash, now) {
      const result = await db
        .updateTable('authorization_requests')
        .set({ completed_at: now })
        .where('id_hash', '=', idHash)
        .where('completed_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}

function toRequest(row: Selectable<AuthorizationRequestsTable>): AuthorizationRequestRecord {
  return {
    idHash: row.id_hash,
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    state: row.state,
    codeChallenge: row.code_challenge,
    loginHint: row.login_hint,
    browserHash: row.browser_hash,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    completedAt: num(row.completed_at),
  };
}

/** The Kysely {@link CustomerSessionStore}. */
export function createCustomerSessionStore(db: Kysely<Database>): CustomerSessionStore {
  return {
    async insertCustomerSession(s) {
      await insertOrConflict(
        db.insertInto('customer_sessions').values({
          id_hash: s.idHash,
          profile_id: s.profileId,
          created_at: s.createdAt,
          last_seen_at: s.lastSeenAt,
          expires_at: s.expiresAt,
          ended_at: s.endedAt,
        }),
        'customer session exists',
      );
    },

    async findCustomerSession(idHash) {
      const row = await db.selectFrom('customer_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
      return row && toSession(row);
    },

    async touchCustomerSession(idHash, now) {
      await db.updateTable('customer_sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).where('ended_at', 'is', null).execute();
    },

    async endCustomerSession(idHash, now) {
      await db.updateTable('customer_sessions').set({ ended_at: now }).where('id_hash', '=', idHash).where('ended_at', 'is', null).execute();
    },

    async endCustomerSessionsOf(profileId, now) {
      const result = await db
        .updateTable('customer_sessions')
        .set({ ended_at: now })
        .where('profile_id', '=', profileId)
        .where('ended_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

function toSession(row: Selectable<CustomerSessionsTable>): CustomerSessionRecord {
  return {
    idHash: row.id_hash,
    profileId: row.profile_id,
    createdAt: Number(row.created_at),
    lastSeenAt: Number(row.last_seen_at),
    expiresAt: Number(row.expires_at),
    endedAt: num(row.ended_at),
  };
}

/** The Kysely {@link AuthorizationCodeStore}. */
export function createAuthorizationCodeStore(db: Kysely<Database>): AuthorizationCodeStore {
  return {
    async insertAuthorizationCode(c) {
      await insertOrConflict(
        db.insertInto('authorization_codes').values({
          code_hash: c.codeHash,
          client_id: c.clientId,
          redirect_uri: c.redirectUri,
          profile_id: c.profileId,
          code_challenge: c.codeChallenge,
          created_at: c.createdAt,
          expires_at: c.expiresAt,
          consumed_at: c.consumedAt,
        }),
        'authorization code exists',
      );
    },

    async findAuthorizationCode(codeHash) {
      const row = await db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
      return row && toCode(row);
    },

    async consumeAuthorizationCode(codeHash, clientId, now) {
      // One conditional update: of any number of concurrent redemptions, on any
      // number of servers, exactly one matches the row while consumed_at is null.
      const row = await db
        .updateTable('authorization_codes')
        .set({ consumed_at: now })
        .where('code_hash', '=', codeHash)
        .where('client_id', '=', clientId)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      return row && toCode(row);
    },
  };
}

function toCode(row: Selectable<AuthorizationCodesTable>): AuthorizationCodeRecord {
  return {
    codeHash: row.code_hash,
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    profileId: row.profile_id,
    codeChallenge: row.code_challenge,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    consumedAt: num(row.consumed_at),
  };
}
