// Frozen once shipped: never change it and never import app code here.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The master keys the database knows (docs/operator-guide.md, "Replacing
 * the master key"), by fingerprint, never the key: the one that writes,
 * one configured beside it (`next`), the one a rotation replaced
 * (`previous`, still accepted) and the retired ones. `sealed_carried`: the
 * sub-keys carried over from the key before, sealed under this one.
 *
 * A change to it is announced as a change of the keys (`keys:master`), so
 * every instance reads it again within a second.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('master_keys')
    .addColumn('fingerprint', 'text', (c) => c.primaryKey())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('writing', 'next', 'previous', 'retired')`))
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .addColumn('changed_at', 'bigint', (c) => c.notNull())
    .addColumn('sealed_carried', 'text')
    .execute();
  // At most one writing key, whatever runs at once.
  await sql`create unique index master_keys_one_writing on master_keys (state) where state = 'writing'`.execute(db);

  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql
      .raw(
        `create function connect_announce_master_keys() returns trigger language plpgsql as $$ ` +
          `begin perform pg_notify('connect_changes', 'keys:master'); return null; end $$`,
      )
      .execute(db);
    await sql
      .raw(`create trigger master_keys_announce after insert or update or delete on master_keys for each row execute function connect_announce_master_keys()`)
      .execute(db);
    return;
  }
  const log = `insert into change_log (kind, key, at) values ('keys', 'master', cast(strftime('%s', 'now') as integer));`;
  for (const event of ['insert', 'update', 'delete']) {
    await sql.raw(`create trigger master_keys_announce_${event} after ${event} on master_keys begin ${log} end`).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql.raw(`drop trigger if exists master_keys_announce on master_keys`).execute(db);
    await sql.raw(`drop function if exists connect_announce_master_keys()`).execute(db);
  }
  await db.schema.dropTable('master_keys').execute();
}
