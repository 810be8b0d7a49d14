// Frozen once shipped: never change it and never import app code here.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The revocation of a client access token is announced like the other
 * changes of `2026-11-25T12-20-change-signals` (docs/operator-guide.md,
 * "Changes reach every instance"), as `token:<jti>`, so that instances may
 * keep "not revoked" in memory until they hear otherwise.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql
      .raw(
        `create function connect_announce_revoked_tokens() returns trigger language plpgsql as $$ ` +
          `begin perform pg_notify('connect_changes', 'token:' || new.jti); return null; end $$`,
      )
      .execute(db);
    await sql.raw('create trigger revoked_tokens_announce after insert on revoked_tokens for each row execute function connect_announce_revoked_tokens()').execute(db);
    return;
  }
  await sql
    .raw(
      `create trigger revoked_tokens_announce_insert after insert on revoked_tokens begin ` +
        `insert into change_log (kind, key, at) values ('token', new.jti, cast(strftime('%s', 'now') as integer)); end`,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql.raw('drop trigger if exists revoked_tokens_announce on revoked_tokens').execute(db);
    await sql.raw('drop function if exists connect_announce_revoked_tokens()').execute(db);
    return;
  }
  await sql.raw('drop trigger if exists revoked_tokens_announce_insert').execute(db);
}
