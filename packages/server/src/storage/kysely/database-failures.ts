import type { DatabaseLocation } from '../../core/storage/storage.js';

/**
 * A sentence for the operator about a database that could not be used at
 * start-up or by `migrate`, from the driver's error code (PostgreSQL's
 * SQLSTATE, or Node's for the connection): it names the server, the user
 * and the database of `DATABASE_URL`, never its password
 * (docs/operator-guide.md, "The database"). `undefined` for a code it does
 * not know.
 *
 * @example
 * describeDatabaseFailure('3D000', { engine: 'postgres', url: 'postgres://app:pw@db:5432/connect' })
 * // 'database "connect" does not exist on db:5432: create it (createdb connect) or name another in DATABASE_URL (PostgreSQL 3D000)'
 */
export function describeDatabaseFailure(code: string | undefined, database: DatabaseLocation | undefined): string | undefined {
  if (!code || database?.engine !== 'postgres') return undefined;
  let url: URL;
  try {
    url = new URL(database.url);
  } catch {
    return undefined;
  }
  const host = url.hostname || 'localhost';
  const server = `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${url.port || '5432'}`;
  const user = JSON.stringify(decodeURIComponent(url.username) || 'the default user');
  // PostgreSQL's default database is the user's name.
  const name = decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username);
  const db = JSON.stringify(name);
  switch (code) {
    case '3D000':
      return `database ${db} does not exist on ${server}: create it (createdb ${name}) or name another in DATABASE_URL (PostgreSQL 3D000)`;
    case '28P01':
      return `PostgreSQL on ${server} refused the password of user ${user} for database ${db}: check DATABASE_URL (PostgreSQL 28P01)`;
    case '28000':
      return `PostgreSQL on ${server} does not let user ${user} connect to database ${db} (its pg_hba.conf or the role refuses it): check DATABASE_URL (PostgreSQL 28000)`;
    case '42501':
      return `user ${user} lacks a privilege Connect needs on database ${db} on ${server}: it must be able to create tables there (PostgreSQL 42501)`;
    case '53300':
      return `PostgreSQL on ${server} has no connection left for database ${db}: too many clients (PostgreSQL 53300)`;
    case '57P03':
      return `PostgreSQL on ${server} is starting up or shutting down: try again in a moment (PostgreSQL 57P03)`;
    case 'ECONNREFUSED':
      return `cannot reach PostgreSQL on ${server} for database ${db}: the connection was refused; is it running there? check DATABASE_URL (ECONNREFUSED)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot find the database host ${JSON.stringify(host)} of DATABASE_URL (${code})`;
    case 'ETIMEDOUT':
      return `cannot reach PostgreSQL on ${server} for database ${db}: the connection timed out; check DATABASE_URL and the network (ETIMEDOUT)`;
    default:
      return undefined;
  }
}
