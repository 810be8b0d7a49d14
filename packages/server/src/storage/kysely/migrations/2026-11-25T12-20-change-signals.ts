// Frozen once shipped: never change it and never import app code here.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Every change a running instance may hold in memory is announced by the
 * database itself, in the transaction that makes it (docs/operator-guide.md,
 * "Changes reach every instance"): a client, a customer's status, a token
 * session's access token or revocation, the keys.
 * - PostgreSQL: `pg_notify('connect_changes', 'kind:key')`, delivered to
 *   every listening instance when the transaction commits.
 * - SQLite: a row in `change_log`, which instances read when the database's
 *   change counter moves.
 */
const WATCHED = [
  // table, kind, key column, the columns whose change matters (none: any)
  { table: 'clients', kind: 'client', key: 'id', columns: [] as string[] },
  { table: 'customers', kind: 'customer', key: 'profile_id', columns: ['status'] },
  { table: 'token_sessions', kind: 'session', key: 'sid', columns: ['access_jti', 'revoked_at'] },
  { table: 'signing_keys', kind: 'keys', key: null, columns: [] as string[] },
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    for (const w of WATCHED) {
      // One function per table, reading its key column directly: it runs on
      // every refresh, so it stays as cheap as a trigger can be.
      const key = w.key ? `case when tg_op = 'DELETE' then old.${w.key} else new.${w.key} end` : "''";
      await sql
        .raw(
          `create function connect_announce_${w.table}() returns trigger language plpgsql as $$ ` +
            `begin perform pg_notify('connect_changes', '${w.kind}:' || ${key}); return null; end $$`,
        )
        .execute(db);
      const changed = w.columns.map((c) => `old.${c} is distinct from new.${c}`).join(' or ');
      const when = w.columns.length > 0 ? `after update on ${w.table} for each row when (${changed})` : `after insert or update or delete on ${w.table} for each row`;
      await sql.raw(`create trigger ${w.table}_announce ${when} execute function connect_announce_${w.table}()`).execute(db);
    }
    return;
  }

  await db.schema
    .createTable('change_log')
    .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  for (const w of WATCHED) {
    const log = (row: 'new' | 'old') =>
      `insert into change_log (kind, key, at) values ('${w.kind}', ${w.key ? `${row}.${w.key}` : "''"}, cast(strftime('%s', 'now') as integer));`;
    if (w.columns.length > 0) {
      const changed = w.columns.map((c) => `old.${c} is not new.${c}`).join(' or ');
      await sql
        .raw(`create trigger ${w.table}_announce after update of ${w.columns.join(', ')} on ${w.table} when ${changed} begin ${log('new')} end`)
        .execute(db);
      continue;
    }
    await sql.raw(`create trigger ${w.table}_announce_insert after insert on ${w.table} begin ${log('new')} end`).execute(db);
    await sql.raw(`create trigger ${w.table}_announce_update after update on ${w.table} begin ${log('new')} end`).execute(db);
    await sql.raw(`create trigger ${w.table}_announce_delete after delete on ${w.table} begin ${log('old')} end`).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    for (const w of WATCHED) {
      await sql.raw(`drop trigger if exists ${w.table}_announce on ${w.table}`).execute(db);
      await sql.raw(`drop function if exists connect_announce_${w.table}()`).execute(db);
    }
    return;
  }
  for (const w of WATCHED) {
    for (const suffix of ['', '_insert', '_update', '_delete']) await sql.raw(`drop trigger if exists ${w.table}_announce${suffix}`).execute(db);
  }
  await db.schema.dropTable('change_log').execute();
}
