import { sql, type Kysely, type Selectable } from 'kysely';
import type { KeyStatus, KeyUse, SigningKeyRecord } from '../../../core/keys/signing-key.js';
import type { SigningKeyStore } from '../../../core/keys/signing-key-store.js';
import type { Database, SigningKeysTable } from './schema.js';
import { insertOrConflict } from './insert-or-conflict.js';

/** The Kysely {@link SigningKeyStore}, shared by both engines. */
export function createSigningKeyStore(db: Kysely<Database>): SigningKeyStore {
  const listKeys = async () => {
    const rows = await db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').orderBy('kid', 'desc').execute();
    return rows.map(toRecord);
  };
  return {
    listKeys,

    async lockKeys() {
      // A write that changes nothing, so that PostgreSQL locks every row (SQLite's
      // IMMEDIATE transactions hold the whole database anyway). A second caller
      // waits here for the first to commit; the read after it is a new
      // statement, so it sees what the first one wrote, new keys included.
      await db.updateTable('signing_keys').set({ status: sql<string>`status` }).execute();
      return listKeys();
    },

    async insertKey(key) {
      await insertOrConflict(
        db.insertInto('signing_keys').values({
          kid: key.kid,
          alg: key.alg,
          use: key.use,
          status: key.status,
          public_jwk: key.publicJwk,
          sealed_private_jwk: key.sealedPrivateJwk,
          created_at: key.createdAt,
          generation: key.generation,
          activates_at: key.activatesAt,
          retired_at: key.retiredAt,
          verify_until: key.verifyUntil,
        }),
        `key ${key.kid} (${key.use}, generation ${key.generation}) exists`,
      );
    },

    async retireKeys(use, belowGeneration, retiredAt, verifyUntil) {
      const result = await db
        .updateTable('signing_keys')
        .set({ status: 'retired', retired_at: retiredAt, verify_until: verifyUntil })
        .where('use', '=', use)
        .where('generation', '<', belowGeneration)
        .where('status', '!=', 'revoked')
        .where('verify_until', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async restoreKey(kid) {
      const result = await db
        .updateTable('signing_keys')
        .set({ status: 'active', retired_at: null, verify_until: null })
        .where('kid', '=', kid)
        .where('status', '!=', 'revoked')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async activateKey(kid, now) {
      const result = await db
        .updateTable('signing_keys')
        .set({ activates_at: now })
        .where('kid', '=', kid)
        .where('status', '!=', 'revoked')
        .where('activates_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async revokeKey(kid) {
      const result = await db
        .updateTable('signing_keys')
        .set({ status: 'revoked' })
        .where('kid', '=', kid)
        .where('status', '!=', 'revoked')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
  };
}

function toRecord(row: Selectable<SigningKeysTable>): SigningKeyRecord {
  return {
    kid: row.kid,
    alg: row.alg,
    use: row.use as KeyUse,
    status: row.status as KeyStatus,
    publicJwk: row.public_jwk,
    sealedPrivateJwk: row.sealed_private_jwk,
    createdAt: Number(row.created_at),
    generation: Number(row.generation),
    activatesAt: Number(row.activates_at),
    retiredAt: row.retired_at === null ? null : Number(row.retired_at),
    verifyUntil: row.verify_until === null ? null : Number(row.verify_until),
  };
}
