import { PostgresAdapter, sql, type Kysely, type Selectable } from 'kysely';
import type { PasskeyStore } from '../../../core/passkeys/passkey-store.js';
import type { PasskeyRecord, WebAuthnChallengeRecord, WebAuthnPurpose } from '../../../core/passkeys/records.js';
import type { Database, PasskeysTable, WebAuthnChallengesTable } from './schema.js';
import { insertOrConflict } from './insert-or-conflict.js';
import { deleteBatch } from './delete-batch.js';

/** The Kysely {@link PasskeyStore}. */
export function createPasskeyStore(db: Kysely<Database>): PasskeyStore {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  return {
    async insertPasskey(p) {
      await insertOrConflict(
        db.insertInto('passkeys').values({
          credential_id: p.credentialId,
          profile_id: p.profileId,
          user_handle: p.userHandle,
          public_key: p.publicKey,
          sign_count: p.signCount,
          transports: p.transports.join(' '),
          aaguid: p.aaguid,
          name: p.name,
          created_at: p.createdAt,
          last_used_at: p.lastUsedAt,
          held_until: p.heldUntil,
          suspended_at: p.suspendedAt,
        }),
        'passkey exists',
      );
    },

    async findPasskey(credentialId) {
      const row = await db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
      return row && toPasskey(row);
    },

    async listPasskeysOf(profileId) {
      const rows = await db
        .selectFrom('passkeys')
        .selectAll()
        .where('profile_id', '=', profileId)
        .orderBy('created_at')
        .orderBy('credential_id')
        .execute();
      return rows.map(toPasskey);
    },

    async insertPasskeyOfActiveCustomer(p) {
      // One statement: inserted only while the customer is active; an existing credential ID inserts nothing.
      const { rows } = await sql<{ credential_id: string }>`
        insert into passkeys (credential_id, profile_id, user_handle, public_key, sign_count, transports, aaguid, name, created_at, last_used_at, held_until, suspended_at)
        select ${p.credentialId}, ${p.profileId}, ${p.userHandle}, ${p.publicKey}, ${p.signCount}, ${p.transports.join(' ')}, ${p.aaguid}, ${p.name},
          ${p.createdAt}, ${p.lastUsedAt}, ${p.heldUntil}, ${p.suspendedAt}
        where exists (select 1 from customers where profile_id = ${p.profileId} and status = 'active')
        on conflict (credential_id) do nothing
        returning credential_id`.execute(db);
      if (rows.length === 1) return 'added';
      const existing = await db.selectFrom('passkeys').select('credential_id').where('credential_id', '=', p.credentialId).executeTakeFirst();
      return existing ? 'exists' : 'customer_unavailable';
    },

    async findUserHandleOf(profileId) {
      const row = await db.selectFrom('customers').select('user_handle').where('profile_id', '=', profileId).executeTakeFirst();
      return row?.user_handle ?? undefined;
    },

    async claimUserHandle(profileId, candidate) {
      await db.updateTable('customers').set({ user_handle: candidate }).where('profile_id', '=', profileId).where('user_handle', 'is', null).execute();
      const row = await db.selectFrom('customers').select('user_handle').where('profile_id', '=', profileId).executeTakeFirst();
      return row?.user_handle ?? undefined;
    },

    async recordPasskeyUse(credentialId, { signCount, now }) {
      const result = await db
        .updateTable('passkeys')
        .set({ sign_count: signCount, last_used_at: now })
        .where('credential_id', '=', credentialId)
        .where('suspended_at', 'is', null)
        .where((eb) => (signCount === 0 ? eb('sign_count', '=', 0) : eb('sign_count', '<', signCount)))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async removePasskey(profileId, credentialId) {
      if (postgres) {
        // The customer's row first, as a passkey sign-in holds it while it checks the passkey and
        // completes: one that found the passkey finishes before this returns, any later one finds
        // it gone. `held` is read through a subquery evaluated once, before any passkey row is
        // scanned. (SQLite lets one writer at a time: the sign-in's transaction is already that.)
        const { rows } = await sql<{ credential_id: string }>`
          with held as (update customers set updated_at = updated_at where profile_id = ${profileId} returning 1 as one)
          delete from passkeys where credential_id = ${credentialId} and profile_id = ${profileId} and (select count(*) from held) >= 0
          returning credential_id`.execute(db);
        return rows.length === 1;
      }
      const result = await db.deleteFrom('passkeys').where('credential_id', '=', credentialId).where('profile_id', '=', profileId).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },

    async suspendPasskeysOf(profileId, now) {
      const result = await db
        .updateTable('passkeys')
        .set({ suspended_at: now })
        .where('profile_id', '=', profileId)
        .where('suspended_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async restorePasskeysOf(profileId) {
      const result = await db
        .updateTable('passkeys')
        .set({ suspended_at: null })
        .where('profile_id', '=', profileId)
        .where('suspended_at', 'is not', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async insertWebAuthnChallenge(c) {
      await insertOrConflict(
        db.insertInto('webauthn_challenges').values({
          challenge_hash: c.challengeHash,
          request_hash: c.requestHash,
          purpose: c.purpose,
          profile_id: c.profileId,
          created_at: c.createdAt,
          expires_at: c.expiresAt,
          consumed_at: c.consumedAt,
        }),
        'WebAuthn challenge exists',
      );
    },

    async consumeWebAuthnChallenge(challengeHash, { requestHash, purpose, now }) {
      const row = await db
        .updateTable('webauthn_challenges')
        .set({ consumed_at: now })
        .where('challenge_hash', '=', challengeHash)
        .where('request_hash', '=', requestHash)
        .where('purpose', '=', purpose)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      return row && toChallenge(row);
    },

    async deleteWebAuthnChallengesEndedBy(cutoff, limit) {
      return deleteBatch(db, 'webauthn_challenges', ['challenge_hash'], sql`(expires_at <= ${cutoff} or consumed_at <= ${cutoff})`, limit);
    },
  };
}

function toPasskey(row: Selectable<PasskeysTable>): PasskeyRecord {
  return {
    credentialId: row.credential_id,
    profileId: row.profile_id,
    userHandle: row.user_handle,
    publicKey: row.public_key,
    signCount: Number(row.sign_count),
    transports: row.transports === '' ? [] : row.transports.split(' '),
    aaguid: row.aaguid,
    name: row.name,
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
    heldUntil: row.held_until === null ? null : Number(row.held_until),
    suspendedAt: row.suspended_at === null ? null : Number(row.suspended_at),
  };
}

function toChallenge(row: Selectable<WebAuthnChallengesTable>): WebAuthnChallengeRecord {
  return {
    challengeHash: row.challenge_hash,
    requestHash: row.request_hash,
    purpose: row.purpose as WebAuthnPurpose,
    profileId: row.profile_id,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    consumedAt: row.consumed_at === null ? null : Number(row.consumed_at),
  };
}
