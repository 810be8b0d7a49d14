import { sql, type Kysely } from 'kysely';
import type { MasterKeyRecord, MasterKeyState, MasterKeyStore, SealedKind } from '../../../core/keys/master-key-store.js';
import type { Database } from './schema.js';

/** Where each kind of sealed value lives: its table, key columns (in order) and sealed column. */
const SEALED: Record<SealedKind, { table: 'signing_keys' | 'idempotent_requests' | 'token_sessions'; key: readonly string[]; column: string }> = {
  'signing-key': { table: 'signing_keys', key: ['kid'], column: 'sealed_private_jwk' },
  'idempotent-response': { table: 'idempotent_requests', key: ['client_id', 'reference'], column: 'sealed_response' },
  'refresh-reuse': { table: 'token_sessions', key: ['sid'], column: 'refreshed_access' },
};

/** The Kysely {@link MasterKeyStore}, shared by both engines. */
export function createMasterKeyStore(db: Kysely<Database>): MasterKeyStore {
  return {
    async listMasterKeys() {
      const rows = await db.selectFrom('master_keys').selectAll().orderBy('recorded_at').orderBy('fingerprint').execute();
      return rows.map(
        (row): MasterKeyRecord => ({
          fingerprint: row.fingerprint,
          state: row.state as MasterKeyState,
          recordedAt: Number(row.recorded_at),
          changedAt: Number(row.changed_at),
          sealedCarried: row.sealed_carried,
        }),
      );
    },

    async recordMasterKey(fingerprint, state, now) {
      // A writing key only into a database that knows none; otherwise (or
      // when another opener won) nothing changes.
      const values = sql`select ${fingerprint}, ${state}, cast(${now} as bigint), cast(${now} as bigint), null`;
      const only = state === 'writing' ? sql`where not exists (select 1 from master_keys)` : sql`where true`;
      await sql`insert into master_keys (fingerprint, state, recorded_at, changed_at, sealed_carried) ${values} ${only}
                on conflict do nothing`.execute(db);
    },

    async switchWritingMasterKey(from, to, sealedCarried, now) {
      return db.transaction().execute(async (trx) => {
        const moved = await trx
          .updateTable('master_keys')
          .set({ state: 'previous', changed_at: now })
          .where('fingerprint', '=', from)
          .where('state', '=', 'writing')
          .where(({ not, exists, selectFrom }) => not(exists(selectFrom('master_keys as earlier').select('earlier.fingerprint').where('earlier.state', '=', 'previous'))))
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) === 0) return false;
        await trx
          .insertInto('master_keys')
          .values({ fingerprint: to, state: 'writing', recorded_at: now, changed_at: now, sealed_carried: sealedCarried })
          .onConflict((oc) => oc.column('fingerprint').doUpdateSet({ state: 'writing', changed_at: now, sealed_carried: sealedCarried }))
          .execute();
        return true;
      });
    },

    async retireMasterKey(fingerprint, now, unlessClientsNotUnder) {
      // With the guard, in the same statement: a client given a secret under the old key a moment
      // before is never cut off without the refusal.
      const guard = unlessClientsNotUnder
        ? sql`and not exists (select 1 from clients where ${secretsNotUnder(unlessClientsNotUnder.fingerprint, unlessClientsNotUnder.firstFingerprint, now)})`
        : sql``;
      const result = await sql`update master_keys set state = 'retired', changed_at = ${now}
        where fingerprint = ${fingerprint} and state = 'previous' ${guard}`.execute(db);
      return Number(result.numAffectedRows ?? 0) > 0;
    },

    async listSealedValues(kind, after, limit) {
      const { table, key, column } = SEALED[kind];
      const keyList = sql.join(key.map((k) => sql.ref(k)));
      const from = after === undefined ? sql`` : sql`and (${keyList}) > (${sql.join(after.map((v) => sql`${v}`))})`;
      const { rows } = await sql<Record<string, string>>`
        select ${keyList}, ${sql.ref(column)} as sealed from ${sql.table(table)}
        where ${sql.ref(column)} is not null ${from}
        order by ${keyList} limit ${limit}`.execute(db);
      return rows.map((row) => ({ key: key.map((k) => String(row[k])), sealed: String(row.sealed) }));
    },

    async replaceSealedValue(kind, keyValues, expected, replacement) {
      const { table, key, column } = SEALED[kind];
      const match = sql.join(
        key.map((k, i) => sql`${sql.ref(k)} = ${keyValues[i]}`),
        sql` and `,
      );
      const result = await sql`update ${sql.table(table)} set ${sql.ref(column)} = ${replacement}
        where ${match} and ${sql.ref(column)} = ${expected}`.execute(db);
      return Number(result.numAffectedRows ?? 0) > 0;
    },

    async listClientsWithSecretsNotUnder(fingerprint, now, firstFingerprint) {
      const { rows } = await sql<{ id: string; name: string }>`
        select id, name from clients
        where ${secretsNotUnder(fingerprint, firstFingerprint, now)}
        order by created_at, id`.execute(db);
      return rows.map((row) => ({ id: row.id, name: row.name }));
    },
  };
}

/**
 * The condition on a `clients` row: its secret (current, or previous within
 * its grace at `now`) is hashed under a master key other than `fingerprint`.
 * A bare HMAC (no `:`; base64url has none) was made under `firstFingerprint`.
 */
function secretsNotUnder(fingerprint: string, firstFingerprint: string, now: number) {
  const prefix = `${fingerprint}:`;
  const bareIsUnder = fingerprint === firstFingerprint;
  const notUnder = (column: 'secret_hash' | 'previous_secret_hash') =>
    bareIsUnder
      ? sql`(${sql.ref(column)} like '%:%' and substr(${sql.ref(column)}, 1, ${prefix.length}) <> ${prefix})`
      : sql`(${sql.ref(column)} <> '' and substr(${sql.ref(column)}, 1, ${prefix.length}) <> ${prefix})`;
  return sql`(${notUnder('secret_hash')}
    or (previous_secret_hash is not null and previous_secret_expires_at > ${now} and ${notUnder('previous_secret_hash')}))`;
}
