import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { migrationProvider } from '../../src/storage/kysely/migrations/index.js';
import { describeDatabaseFailure } from '../../src/storage/kysely/database-failures.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../helpers/postgres.js';
import { requireBuiltCli, runProcess, type ProcessSetting } from '../helpers/processes.js';

/**
 * What `connect-auth` says when it starts or migrates, as the real command
 * prints it (docs/operator-guide.md, "The database"): one truthful line
 * for a migration, a database problem named in words with the server and
 * database (never the password), a port in use named with its address.
 */

const ALL = Object.keys(await migrationProvider.getMigrations()).sort();
const PASSWORD = 'pw-never-printed';

function setting(env: Record<string, string> = {}): ProcessSetting {
  requireBuiltCli();
  const dataDir = mkdtempSync(join(tmpdir(), 'connect-start-'));
  onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
  return { cwd: dataDir, env: { CONNECT_DATA_DIR: dataDir, ...env } };
}

/** A TCP port that is listened on by this test (so in use), closed when the test ends. */
async function portInUse(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/** A port that accepts connections and never answers on them (a PostgreSQL gone silent); closed, with them, when the test ends. */
async function silentPort(): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as AddressInfo).port;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('connect-auth migrate and serve: what they say', { timeout: 60_000 }, () => {
  it('migrate prints one line for what it did, then the names; a second migrate says none was pending', async () => {
    const s = setting();
    const first = await runProcess(s, ['migrate']);
    expect(first).toEqual({ code: 0, stdout: `applied ${ALL.length} migrations (sqlite), now up to date:\n${ALL.map((name) => `  ${name}\n`).join('')}`, stderr: '' });
    expect(first.stdout).not.toContain('database is up to date');
    expect(await runProcess(s, ['migrate'])).toEqual({ code: 0, stdout: 'database is up to date (sqlite): no migrations pending\n', stderr: '' });
  });

  it('a PostgreSQL server that refuses connections: migrate and serve name the server and the database, never the password', async () => {
    const port = await closedPort();
    const s = setting({ DATABASE_URL: `postgres://connect:${PASSWORD}@127.0.0.1:${port}/shop_db` });
    for (const args of [['migrate'], ['serve']]) {
      const run = await runProcess(s, args, { PORT: '0' });
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `connect-auth: cannot reach PostgreSQL on 127.0.0.1:${port} for database "shop_db": the connection was refused; is it running there? check DATABASE_URL (ECONNREFUSED)\n`,
      );
    }
  });

  it('a PostgreSQL server that accepts connections and never answers: migrate and serve name a timed-out connection to it, never the password', async () => {
    const port = await silentPort();
    const s = setting({ DATABASE_URL: `postgres://connect:${PASSWORD}@127.0.0.1:${port}/shop_db`, CONNECT_DB_TIMEOUT_MS: '300' });
    for (const args of [['migrate'], ['serve']]) {
      const run = await runProcess(s, args, { PORT: '0' });
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `connect-auth: cannot reach PostgreSQL on 127.0.0.1:${port} for database "shop_db": the connection timed out; check DATABASE_URL and the network (ETIMEDOUT)\n`,
      );
    }
  });

  it.skipIf(!postgresAdminUrl)('a PostgreSQL database that does not exist: "database … does not exist", not its code alone', async () => {
    const url = new URL(postgresAdminUrl ?? '');
    const name = `connect_missing_${randomBytes(4).toString('hex')}`;
    url.pathname = `/${name}`;
    url.password = PASSWORD;
    const s = setting({ DATABASE_URL: url.href });
    for (const args of [['migrate'], ['serve']]) {
      const run = await runProcess(s, args, { PORT: '0' });
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `connect-auth: database "${name}" does not exist on ${url.hostname}:${url.port || 5432}: create it (createdb ${name}) or name another in DATABASE_URL (PostgreSQL 3D000)\n`,
      );
      expect(run.stderr).not.toContain(PASSWORD);
    }
  });

  it('a HOST that names no address of this machine: serve names HOST, never the database (on either engine)', async () => {
    const engines = [setting()];
    if (postgresAdminUrl) {
      const database = await createTestDatabase();
      onTestFinished(() => database.drop());
      engines.push(setting({ DATABASE_URL: database.url }));
    }
    for (const s of engines) {
      const run = await runProcess(s, ['serve'], { PORT: '0', HOST: 'nonexistent.invalid' });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^connect-auth: HOST: "nonexistent\.invalid" is not an address of this machine \((ENOTFOUND|EAI_AGAIN)\)\n$/);
    }
  });

  it('a port in use: serve names the address and the port', async () => {
    const port = await portInUse();
    const run = await runProcess(setting(), ['serve'], { PORT: String(port), HOST: '127.0.0.1' });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`connect-auth: 127.0.0.1:${port} is in use: set PORT to a free port (PORT=0 picks one)\n`);
  });
});
noticePostgresSkipped('a PostgreSQL database that does not exist');

describe('describeDatabaseFailure', () => {
  const database = { engine: 'postgres', url: `postgres://app%20user:${PASSWORD}@db.internal:6543/connect%2Dprod` } as const;
  it.each([
    ['3D000', 'database "connect-prod" does not exist on db.internal:6543: create it (createdb connect-prod) or name another in DATABASE_URL (PostgreSQL 3D000)'],
    ['28P01', 'PostgreSQL on db.internal:6543 refused the password of user "app user" for database "connect-prod": check DATABASE_URL (PostgreSQL 28P01)'],
    ['28000', 'PostgreSQL on db.internal:6543 does not let user "app user" connect to database "connect-prod" (its pg_hba.conf or the role refuses it): check DATABASE_URL (PostgreSQL 28000)'],
    ['42501', 'user "app user" lacks a privilege Connect needs on database "connect-prod" on db.internal:6543: it must be able to create tables there (PostgreSQL 42501)'],
    ['53300', 'PostgreSQL on db.internal:6543 has no connection left for database "connect-prod": too many clients (PostgreSQL 53300)'],
    ['57P03', 'PostgreSQL on db.internal:6543 is starting up or shutting down: try again in a moment (PostgreSQL 57P03)'],
    ['ENOTFOUND', 'cannot find the database host "db.internal" of DATABASE_URL (ENOTFOUND)'],
  ])('%s', (code, sentence) => {
    expect(describeDatabaseFailure(code, database)).toBe(sentence);
    expect(sentence).not.toContain(PASSWORD);
  });

  it('a code it does not know, or SQLite: nothing (the command prints the driver\'s own line)', () => {
    expect(describeDatabaseFailure('XX000', database)).toBeUndefined();
    expect(describeDatabaseFailure('3D000', { engine: 'sqlite', path: '/tmp/x.db' })).toBeUndefined();
  });
});
