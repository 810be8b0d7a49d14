import type { Kysely, Selectable } from 'kysely';
import type { KeyStatus, KeyUse, SigningKeyRecord } from '../../../core/keys/signing-key.js';
import type { SigningKeyStore } from '../../../core/keys/signing-key-store.js';
import type { Database, SigningKeysTable } from './schema.js';
import { insertOrConflict } from './insert-or-conflict.js';

/** The Kysely {@link SigningKeyStore}, shared by both engines. */
export function createSigningKeyStore(db: Kysely<Database>): SigningKeyStore {
  return {
    async listKeys() {
      const rows = await db
        .selectFrom('signing_keys')
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('kid', 'desc')
        .execute();
      return rows.map(toRecord);
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
          retired_at: key.retiredAt,
          verify_until: key.verifyUntil,
        }),
        `key ${key.kid} exists`,
      );
    },

    async retireKeys(use, keepKid, now, verifyUntil) {
      const result = await db
        .updateTable('signing_keys')
        .set({ status: 'retired', retired_at: now, verify_until: verifyUntil })
        .where('use', '=', use)
        .where('status', '=', 'active')
        .where('kid', '!=', keepKid)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
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
    retiredAt: row.retired_at === null ? null : Number(row.retired_at),
    verifyUntil: row.verify_until === null ? null : Number(row.verify_until),
  };
}
