// Frozen once shipped: never change it and never import app code here.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Client access tokens are self-contained: the ones issued at or before
  // this second (epoch seconds) are refused. Set by `clients disable`;
  // it only ever moves forward.
  await db.schema.alterTable('clients').addColumn('tokens_ended_at', 'bigint').execute();

  // `customers lock` and `clients disable` end a customer's or a client's
  // token sessions and unredeemed codes in one statement each.
  await db.schema.createIndex('token_sessions_profile').on('token_sessions').column('profile_id').execute();
  await db.schema.createIndex('authorization_codes_profile').on('authorization_codes').column('profile_id').execute();
  await db.schema.createIndex('authorization_codes_client').on('authorization_codes').column('client_id').execute();

  // Clients disabled and customers locked before this migration keep no
  // token: what the lock or disable ends from now on is ended for them
  // too, as of their last change (the lock or disable, or later).
  await sql`update clients set tokens_ended_at = updated_at where status = 'disabled'`.execute(db);
  await sql`
    update token_sessions set revoked_at = (select c.updated_at from clients c where c.id = token_sessions.client_id)
    where revoked_at is null and client_id in (select id from clients where status = 'disabled')`.execute(db);
  await sql`
    update token_sessions set revoked_at = (select c.updated_at from customers c where c.profile_id = token_sessions.profile_id)
    where revoked_at is null and profile_id in (select profile_id from customers where status = 'locked')`.execute(db);
  await sql`
    update authorization_codes set expires_at = 0
    where consumed_at is null
      and client_id in (select id from clients where status = 'disabled')
      and expires_at > (select c.updated_at from clients c where c.id = authorization_codes.client_id)`.execute(db);
  await sql`
    update authorization_codes set expires_at = 0
    where consumed_at is null
      and profile_id in (select profile_id from customers where status = 'locked')
      and expires_at > (select c.updated_at from customers c where c.profile_id = authorization_codes.profile_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('authorization_codes_client').execute();
  await db.schema.dropIndex('authorization_codes_profile').execute();
  await db.schema.dropIndex('token_sessions_profile').execute();
  await db.schema.alterTable('clients').dropColumn('tokens_ended_at').execute();
}
