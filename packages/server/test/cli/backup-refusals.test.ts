import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Kysely, Migrator } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openEmbeddedSqlite } from '../../src/storage/kysely/embedded-sqlite.js';
import { migrationProvider } from '../../src/storage/kysely/migrations/index.js';
import { createSqliteDialect } from '../../src/storage/kysely/sqlite.js';
import { cliWorkspace, expectFailure, type CliWorkspace } from './command-line.js';

/**
 * What `backup` and `restore` refuse, each with one line and nothing
 * written (docs/operator-guide.md, "Backups and restores"); and a restore
 * of an older release's backup, which `migrate` (or `serve`) brings up to
 * date. The round trip under load is in backup-restore.test.ts.
 */

const DATABASE = 'connect-sandbox.db';
const PRODUCTION = {
  CONNECT_ENVIRONMENT: 'production',
  CONNECT_MASTER_KEY: randomBytes(32).toString('base64'),
  CONNECT_AUTH_URL: 'https://auth.connect.example',
  CONNECT_SMS_WEBHOOK_URL: 'https://sms.gateway.example/send',
  CONNECT_SMS_WEBHOOK_SECRET: 'webhook-secret',
};

/** A folder of the test's own, removed when it ends. */
function scratch(): string {
  const path = mkdtempSync(join(tmpdir(), 'connect-backup-refusals-'));
  onTestFinished(() => rmSync(path, { recursive: true, force: true }));
  return path;
}

/** A workspace whose database has a client in it. */
async function withDatabase(): Promise<CliWorkspace> {
  const w = cliWorkspace();
  await w.cliJson(['clients', 'create', '--name', 'Shop', '--redirect-uri', 'https://shop.example/callback']);
  return w;
}

/** A backup of the workspace's database, taken with `backup`. */
async function backupOf(w: CliWorkspace): Promise<string> {
  const out = join(scratch(), 'connect.db');
  expect((await w.cli(['backup', '--out', out])).code).toBe(0);
  return out;
}

/** Grows the database by about `megabytes` of audit events, so that its backup takes several steps. */
function grow(databasePath: string, megabytes: number): void {
  const database = openEmbeddedSqlite(databasePath);
  try {
    const insert = database.prepare(`insert into audit_events (id, at, type, actor, outcome, details) values (?, 0, 'test.filler', 'test', 'success', ?)`);
    database.exec('begin');
    for (let n = 0; n < megabytes * 1000; n++) insert.run([`filler-${n}`, 'x'.repeat(1000)]);
    database.exec('commit');
  } finally {
    database.close();
  }
}

describe('backup refuses, with one line, and writes nothing', () => {
  it('into a folder that does not exist', async () => {
    const w = await withDatabase();
    const missing = join(scratch(), 'not-yet');
    const line = expectFailure(await w.cli(['backup', '--out', join(missing, 'connect.db')]), 1);
    expect(line).toBe(`connect-auth: cannot write the backup to ${join(missing, 'connect.db')}: the folder ${missing} does not exist\n`);
    expect(existsSync(missing)).toBe(false);
  });

  it('to a path that cannot be written', async () => {
    const w = await withDatabase();
    // /proc takes no new files, not even from root.
    const line = expectFailure(await w.cli(['backup', '--out', '/proc/connect-backup.db']), 1);
    expect(line).toMatch(/^connect-auth: cannot write the backup to \/proc\/connect-backup\.db: the folder \/proc (is not writable|does not take new files \(E[A-Z]+\))\n$/);
    expect(existsSync('/proc/connect-backup.db')).toBe(false);
    // A folder without write permission (root may write anyway: then the backup is simply written).
    const folder = join(scratch(), 'read-only');
    mkdirSync(folder, { mode: 0o555 });
    const run = await w.cli(['backup', '--out', join(folder, 'connect.db')]);
    if (process.getuid?.() !== 0) {
      expect(expectFailure(run, 1)).toBe(`connect-auth: cannot write the backup to ${join(folder, 'connect.db')}: the folder ${folder} is not writable\n`);
      expect(readdirSync(folder)).toEqual([]);
    }
  });

  it('when interrupted: exit 130, and the backup there before is left as it was, with no partial file beside it', async () => {
    const w = await withDatabase();
    grow(join(w.dataDir, DATABASE), 6);
    const folder = scratch();
    const out = join(folder, 'connect.db');
    writeFileSync(out, 'the previous backup');
    let stderr = '';
    let interrupted = false;
    const { runCli } = await import('../../src/cli/main.js');
    const code = await runCli(['backup', '--out', out], {
      env: w.env,
      stdout: () => {},
      stderr: (text) => {
        stderr += text;
        // The first progress line: the copy is under way. SIGINT, as Ctrl-C sends it.
        if (text.startsWith('backup: ') && !interrupted) {
          interrupted = true;
          process.emit('SIGINT');
        }
      },
    });
    expect(interrupted).toBe(true);
    expect(code).toBe(130);
    expect(stderr.split('\n').filter((line) => !line.startsWith('backup: '))).toEqual(['connect-auth: backup interrupted; no backup was written', '']);
    expect(readdirSync(folder)).toEqual(['connect.db']);
    expect(readFileSync(out, 'utf8')).toBe('the previous backup');
    // Uninterrupted, the same backup replaces it.
    expect((await w.cli(['backup', '--out', out])).code).toBe(0);
    expect(readdirSync(folder)).toEqual(['connect.db']);
    expect(readFileSync(out).subarray(0, 16).toString()).toBe('SQLite format 3\0');
    // Readable by its owner only: it holds the sealed signing keys.
    expect(statSync(out).mode & 0o777).toBe(0o600);
  });

  it('to the live database itself, however it is named', async () => {
    const w = await withDatabase();
    const live = join(w.dataDir, DATABASE);
    const before = readFileSync(live);
    const link = join(scratch(), 'data-link');
    symlinkSync(w.dataDir, link);
    for (const out of [live, join(link, DATABASE), `${live}-wal`]) {
      const line = expectFailure(await w.cli(['backup', '--out', out]), 1);
      expect(line).toBe(`connect-auth: --out ${out} is the live database itself: write the backup to another file, best on another disk\n`);
    }
    expect(readFileSync(live).equals(before)).toBe(true);
    expect(await w.cliJson<unknown[]>(['clients', 'list'])).toHaveLength(1);
  });

  it('onto a database in use (its -wal or -shm beside it), which it never replaces', async () => {
    const w = await withDatabase();
    const folder = scratch();
    const other = join(folder, 'other.db');
    writeFileSync(other, 'another database');
    for (const suffix of ['-wal', '-shm']) {
      writeFileSync(`${other}${suffix}`, '');
      const line = expectFailure(await w.cli(['backup', '--out', other]), 1);
      expect(line).toBe(`connect-auth: --out ${other} is a database in use (its other.db-wal or -shm is beside it): write the backup to another file\n`);
      rmSync(`${other}${suffix}`);
    }
    expect(readFileSync(other, 'utf8')).toBe('another database');
    expect(readdirSync(folder)).toEqual(['other.db']);
  });

  it('to a folder, and without --out', async () => {
    const w = await withDatabase();
    const folder = scratch();
    expect(expectFailure(await w.cli(['backup', '--out', folder]), 1)).toBe(`connect-auth: --out ${folder} is a folder: name the backup file, e.g. ${join(folder, 'connect.db')}\n`);
    expect(readdirSync(folder)).toEqual([]);
    expect(expectFailure(await w.cli(['backup']), 2)).toBe('connect-auth: --out is required: the file to write the backup to; see connect-auth backup --help\n');
  });

  it('when there is no database to back up, and creates none', async () => {
    const w = cliWorkspace();
    const out = join(scratch(), 'connect.db');
    const line = expectFailure(await w.cli(['backup', '--out', out]), 1);
    expect(line).toBe(`connect-auth: there is no database at ${join(w.dataDir, DATABASE)} to back up (check DATABASE_URL and CONNECT_DATA_DIR)\n`);
    expect(readdirSync(w.dataDir)).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });

  it("of the other environment's database", async () => {
    const w = await withDatabase();
    const live = join(w.dataDir, DATABASE);
    const out = join(scratch(), 'connect.db');
    const line = expectFailure(await w.cli(['backup', '--out', out], { ...PRODUCTION, DATABASE_URL: `sqlite:${live}` }), 1);
    expect(line).toBe(`connect-auth: the database at ${live} belongs to sandbox; CONNECT_ENVIRONMENT is production\n`);
    expect(readdirSync(dirname(out))).toEqual([]);
  });

  it('on PostgreSQL, pointing to the operator guide; restore too', async () => {
    const w = cliWorkspace({ env: { DATABASE_URL: 'postgres://connect@db.invalid:5432/connect' } });
    const out = join(scratch(), 'connect.db');
    expect(expectFailure(await w.cli(['backup', '--out', out]), 1)).toBe(
      'connect-auth: backup copies the embedded SQLite database only; DATABASE_URL names PostgreSQL: back it up with pg_dump or continuous archiving (docs/operator-guide.md, "Backups and restores")\n',
    );
    expect(existsSync(out)).toBe(false);
    expect(expectFailure(await w.cli(['restore', '--from', out]), 1)).toBe(
      'connect-auth: restore puts back a backup of the embedded SQLite database only; DATABASE_URL names PostgreSQL: restore with pg_restore (docs/operator-guide.md, "Backups and restores")\n',
    );
  });
});

describe('restore refuses, with one line, and changes nothing', () => {
  /** Runs `restore --from from` into a fresh data folder; expects the refusal `reason` and an untouched folder. */
  async function refused(from: string, reason: string, env: Record<string, string> = {}): Promise<void> {
    const target = cliWorkspace({ env });
    expect(expectFailure(await target.cli(['restore', '--from', from]), 1)).toBe(`connect-auth: ${reason}\n`);
    expect(readdirSync(target.dataDir)).toEqual([]);
    // A data folder not made yet is not made either.
    const fresh = join(target.dataDir, 'not-yet', 'data');
    expect(expectFailure(await target.cli(['restore', '--from', from], { CONNECT_DATA_DIR: fresh }), 1)).toBe(`connect-auth: ${reason}\n`);
    expect(readdirSync(target.dataDir)).toEqual([]);
  }

  it('a file that is not a database, and an SQLite database that is not Connect\'s', async () => {
    const folder = scratch();
    const text = join(folder, 'notes.txt');
    writeFileSync(text, 'not a database at all, but long enough to look like one might be here. '.repeat(100));
    await refused(text, `${text} is not a Connect database: it is not an SQLite database file`);

    const other = join(folder, 'other.db');
    const database = openEmbeddedSqlite(other);
    database.exec('create table notes (id integer primary key, body text); insert into notes (body) values (\'hello\')');
    database.close();
    await refused(other, `${other} is not a Connect database: it has none of Connect's tables`);
    await refused(join(folder, 'missing.db'), `there is no backup file at ${join(folder, 'missing.db')}`);
  });

  it('a damaged backup', async () => {
    const backup = await backupOf(await withDatabase());
    const pages = readFileSync(backup).length / 4096;
    // Garbage over the last pages: tables and indexes SQLite finds broken.
    const fd = openSync(backup, 'r+');
    for (let page = Math.floor(pages / 2); page < pages; page++) writeSync(fd, randomBytes(4096), 0, 4096, page * 4096);
    closeSync(fd);
    const target = cliWorkspace();
    const line = expectFailure(await target.cli(['restore', '--from', backup]), 1);
    // SQLite reports the damage (integrity_check), or fails to read the file at all (SQLITE_CORRUPT).
    expect(line.startsWith(`connect-auth: ${backup} is damaged (`)).toBe(true);
    expect(line.endsWith('): use another backup\n')).toBe(true);
    expect(readdirSync(target.dataDir)).toEqual([]);
  });

  it('a backup of the other environment', async () => {
    const backup = await backupOf(await withDatabase());
    await refused(backup, `${backup} is a backup of the sandbox database; CONNECT_ENVIRONMENT is production`, PRODUCTION);
  });

  it('a backup of a newer release', async () => {
    const backup = await backupOf(await withDatabase());
    const database = openEmbeddedSqlite(backup);
    database.exec("insert into kysely_migration (name, timestamp) values ('2099-01-01T00-00-from-the-future', '2099-01-01T00:00:00.000Z')");
    database.close();
    await refused(backup, `${backup} comes from a newer release of Connect (migration 2099-01-01T00-00-from-the-future is unknown to this one): restore it with that release`);
  });

  it('a live database, with its write-ahead log beside it', async () => {
    const w = await withDatabase();
    const live = join(w.dataDir, DATABASE);
    // A connection of a server: the write-ahead log stays while it is open.
    const server = openEmbeddedSqlite(live);
    server.exec("pragma journal_mode = WAL; update clients set name = 'Shop 2'");
    onTestFinished(() => server.close());
    await refused(live, `${live} has a write-ahead log beside it (${live}-wal): it is a live database, not a backup; take one with connect-auth backup`);
  });

  it('when the target already holds a database', async () => {
    const backup = await backupOf(await withDatabase());
    const target = await withDatabase();
    const path = join(target.dataDir, DATABASE);
    const before = readFileSync(path);
    const files = readdirSync(target.dataDir).sort();
    const line = expectFailure(await target.cli(['restore', '--from', backup]), 1);
    expect(line).toBe(`connect-auth: a database is already at ${path}: restore writes only where there is none; stop its servers and move it (with its -wal and -shm files) aside first\n`);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(readdirSync(target.dataDir).sort()).toEqual(files);
  });
});

describe('restore', () => {
  it('puts a backup in place and says so, in JSON too; a sandbox without its master key is told so', async () => {
    const w = await withDatabase();
    const backup = await backupOf(w);
    const target = cliWorkspace();
    const run = await target.cli(['restore', '--from', backup, '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      restored: join(target.dataDir, DATABASE),
      from: backup,
      environment: 'sandbox',
      bytes: readFileSync(backup).length,
      pendingMigrations: [],
    });
    expect(run.stderr).toBe(
      `connect-auth: note: CONNECT_MASTER_KEY is not set and ${target.dataDir} holds no master-key.sandbox: the backup is of use only with the master key it was taken under; put that key in place before serve\n`,
    );
    // With the sandbox's key copied along, the client is there as it was.
    copyFileSync(join(w.dataDir, 'master-key.sandbox'), join(target.dataDir, 'master-key.sandbox'));
    expect(await target.cliJson(['clients', 'list'])).toEqual(await w.cliJson(['clients', 'list']));
  });

  it('a backup of an older release: restore names the migrations it lacks, and migrate applies them', async () => {
    // A database as an older release left it: migrated up to the database environment's record.
    const folder = scratch();
    const old = join(folder, 'old.db');
    const { dialect } = createSqliteDialect(old);
    const db = new Kysely<unknown>({ dialect });
    const migrations = Object.keys(await migrationProvider.getMigrations());
    const last = '2026-11-27T10-10-database-environment';
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(last);
    expect(error).toBeUndefined();
    await db.destroy();
    const database = openEmbeddedSqlite(old);
    database.exec("insert into database_environment (id, environment) values (1, 'sandbox')");
    database.close();

    const w = cliWorkspace({ env: { DATABASE_URL: `sqlite:${old}` } });
    const backup = join(folder, 'old-backup.db');
    expect((await w.cli(['backup', '--out', backup])).code).toBe(0);
    const target = cliWorkspace();
    const pending = migrations.slice(migrations.indexOf(last) + 1);
    const run = await target.cli(['restore', '--from', backup]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `restored ${backup} to ${join(target.dataDir, DATABASE)} (sandbox, ${(readFileSync(backup).length / 1e6).toFixed(1)} MB); serve applies ${pending.length} pending migrations when it starts\n`,
    );
    expect(await target.cliJson(['migrate'])).toEqual({ migrated: true, engine: 'sqlite', applied: pending });
  });
});
