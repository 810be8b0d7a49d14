// Frozen once shipped: never change it and never import app code here.
import type { Kysely } from 'kysely';

/**
 * Passkeys (docs/operator-guide.md, "Passkeys"): the WebAuthn credentials
 * customers register, and the single-use challenges of their ceremonies.
 *
 * `passkeys`: one row per credential, keyed by its credential ID
 * (base64url). `user_handle` is the customer's opaque WebAuthn user handle
 * (random, never the mobile), the same on each of their passkeys;
 * `public_key` the COSE public key (base64url); `sign_count` the last
 * signature counter seen (0: the authenticator keeps none); `transports`
 * space-separated; `held_until` until when the passkey gives no
 * phishing-resistant strength (null: not held); `suspended_at` set by
 * `customers lock`, cleared by `customers unlock` (null: usable).
 *
 * `webauthn_challenges`: keyed by the challenge's SHA-256 (base64url),
 * bound to one journey (`request_hash`, as `otp_challenges` names it) and
 * one purpose (`register` or `authenticate`); consumed once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('passkeys')
    .addColumn('credential_id', 'text', (c) => c.primaryKey())
    .addColumn('profile_id', 'text', (c) => c.notNull())
    .addColumn('user_handle', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('sign_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('transports', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('aaguid', 'text')
    .addColumn('name', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('held_until', 'bigint')
    .addColumn('suspended_at', 'bigint')
    .execute();
  await db.schema.createIndex('passkeys_profile').on('passkeys').column('profile_id').execute();
  await db.schema.createIndex('passkeys_user_handle').on('passkeys').column('user_handle').execute();

  await db.schema
    .createTable('webauthn_challenges')
    .addColumn('challenge_hash', 'text', (c) => c.primaryKey())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('profile_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute();
  await db.schema.createIndex('webauthn_challenges_expires').on('webauthn_challenges').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webauthn_challenges').execute();
  await db.schema.dropTable('passkeys').execute();
}
