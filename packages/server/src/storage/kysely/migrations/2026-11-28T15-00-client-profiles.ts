// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/**
 * Client profiles and the replay store (docs/operator-guide.md, "FAPI 2.0
 * clients").
 *
 * `clients.profile`: `standard` (every existing client) or `fapi2`.
 * `clients.jwks`: the client's registered public keys for `private_key_jwt`,
 * a JSON Web Key Set as JSON text; `clients.jwks_uri`: where they are
 * published instead. Both null for a client without keys.
 *
 * `used_jtis`: the `jti`s of client assertions and DPoP proofs already
 * accepted, each kept until the token it came in could no longer be
 * accepted anyway. `kind` names the token kind, `jti_hash` is the SHA-256
 * (base64url) of the issuer of that `jti` and the `jti` itself.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('clients').addColumn('profile', 'text', (c) => c.notNull().defaultTo('standard')).execute();
  await db.schema.alterTable('clients').addColumn('jwks', 'text').execute();
  await db.schema.alterTable('clients').addColumn('jwks_uri', 'text').execute();

  await db.schema
    .createTable('used_jtis')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('jti_hash', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('used_jtis_pkey', ['kind', 'jti_hash'])
    .execute();
  await db.schema.createIndex('used_jtis_expires').on('used_jtis').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('used_jtis').execute();
  await db.schema.alterTable('clients').dropColumn('jwks_uri').execute();
  await db.schema.alterTable('clients').dropColumn('jwks').execute();
  await db.schema.alterTable('clients').dropColumn('profile').execute();
}
