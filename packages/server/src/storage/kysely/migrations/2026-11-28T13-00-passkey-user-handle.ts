// Frozen once shipped: never change it and never import app code here.
import { sql, type Kysely } from 'kysely';

/**
 * The customer's WebAuthn user handle on the customer's row
 * (docs/operator-guide.md, "Passkeys"): random, never the mobile, set once
 * by a conditional update when the customer first adds a passkey, so that
 * every passkey of the customer carries the same one. Backfilled from the
 * customer's oldest passkey; `null` for a customer without any.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('customers').addColumn('user_handle', 'text').execute();
  await sql`update customers set user_handle = (
      select p.user_handle from passkeys p where p.profile_id = customers.profile_id order by p.created_at, p.credential_id limit 1)
    where user_handle is null and exists (select 1 from passkeys p where p.profile_id = customers.profile_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('customers').dropColumn('user_handle').execute();
}
