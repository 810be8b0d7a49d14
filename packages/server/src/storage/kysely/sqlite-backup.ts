import { randomBytes } from 'node:crypto';
import { accessSync, chmodSync, closeSync, constants, copyFileSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, realpathSync, renameSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isEnvironment, type Environment } from '../../core/environment.js';
import { openEmbeddedSqlite, type EmbeddedSqlite } from './embedded-sqlite.js';
import { migrationProvider } from './migrations/index.js';

/**
 * Backups of the embedded database and their restores
 * (docs/operator-guide.md, "Backups and restores"): SQLite's online backup
 * of one moment of the live file, written beside its destination and
 * renamed into place once whole, and a restore that checks a backup before
 * it puts it where the configuration points, never over a database.
 */

/** Pages copied per step: 4 MB at SQLite's default page size of 4096 bytes. */
export const BACKUP_PAGES_PER_STEP = 1024;

/** A backup or restore refused or failed; the message is one line for the operator, and nothing was written. */
export class BackupError extends Error {
  override readonly name = 'BackupError';
}

/** How far a backup is: pages copied of the whole. */
export interface BackupProgress {
  readonly copiedPages: number;
  readonly totalPages: number;
}

/** What a backup wrote. */
export interface BackupResult {
  readonly out: string;
  readonly environment: Environment | undefined;
  readonly pages: number;
  readonly bytes: number;
}

/**
 * Copies the SQLite database at `databasePath` into `out`, consistently,
 * while servers read and write it. The copy goes into a hidden file beside
 * `out` and is renamed into place only once complete and on disk, so a
 * backup that fails or is interrupted (`signal`) leaves `out` as it was.
 *
 * Within one read transaction (one snapshot): in WAL mode a reader never
 * holds up a writer, so the servers go on writing meanwhile, and their
 * writes cannot restart the copy.
 *
 * @throws BackupError when there is nothing to back up, `out` cannot be
 *   written or names the database itself, the database is not this
 *   environment's, or the copy fails.
 */
export async function backUpSqlite(
  databasePath: string,
  outPath: string,
  options: { environment: Environment; onProgress?: (progress: BackupProgress) => void; signal?: AbortSignal },
): Promise<BackupResult> {
  const out = resolve(outPath);
  if (!isFile(databasePath)) throw new BackupError(`there is no database at ${databasePath} to back up (check DATABASE_URL and CONNECT_DATA_DIR)`);
  const folder = writableFolder(out, 'the backup');
  if (isDirectory(out)) throw new BackupError(`--out ${out} is a folder: name the backup file, e.g. ${join(out, 'connect.db')}`);
  const live = realpathSync(databasePath);
  const target = join(folder, basename(out));
  if (['', '-wal', '-shm', '-journal'].some((suffix) => target === `${live}${suffix}`) || sameFile(out, live)) {
    throw new BackupError(`--out ${out} is the live database itself: write the backup to another file, best on another disk`);
  }
  if (['-wal', '-shm'].some((suffix) => existsSync(`${target}${suffix}`))) {
    // A database with its write-ahead log beside it is in use (or was not closed cleanly): never replace it.
    throw new BackupError(`--out ${out} is a database in use (its ${basename(target)}-wal or -shm is beside it): write the backup to another file`);
  }

  const partial = join(folder, `.${basename(out)}.${randomBytes(6).toString('hex')}.partial`);
  const source = openEmbeddedSqlite(databasePath);
  let environment: Environment | undefined;
  let pages = 0;
  try {
    source.exec('begin');
    // The snapshot begins with the transaction's first read.
    environment = connectEnvironment(source, databasePath);
    if (environment !== undefined && environment !== options.environment) {
      throw new BackupError(`the database at ${databasePath} belongs to ${environment}; CONNECT_ENVIRONMENT is ${options.environment}`);
    }
    pages = Number((source.prepare('pragma page_count').get() as { page_count: number }).page_count);
    // Made empty and for its owner's eyes only before a byte is copied: it will hold the signing keys
    // (sealed) and the secrets' HMACs, as the master key file does.
    try {
      closeSync(openSync(partial, 'wx', 0o600));
    } catch (error) {
      throw new BackupError(`cannot write the backup to ${out}: the folder ${folder} does not take new files (${String((error as { code?: unknown }).code ?? 'failed')})`, { cause: error });
    }
    await source.backup(partial, {
      pagesPerStep: BACKUP_PAGES_PER_STEP,
      progress: ({ totalPages, remainingPages }) => {
        if (options.signal?.aborted) throw options.signal.reason;
        options.onProgress?.({ copiedPages: totalPages - remainingPages, totalPages });
      },
    });
    source.exec('commit');
    if (options.signal?.aborted) throw options.signal.reason;
    chmodSync(partial, 0o600);
    syncFile(partial);
    renameSync(partial, target);
    syncFile(folder);
  } catch (error) {
    removeDatabaseFiles(partial);
    if (error instanceof BackupError || (options.signal?.aborted && error === options.signal.reason)) throw error;
    throw new BackupError(`the backup to ${out} failed, and nothing was written: ${describeFileError(error)}`, { cause: error });
  } finally {
    if (source.inTransaction) source.exec('rollback');
    source.close();
  }
  return { out, environment, pages, bytes: statSync(target).size };
}

/** What a restore put in place. */
export interface RestoreResult {
  readonly target: string;
  readonly environment: Environment | undefined;
  /** The migrations of this release the backup has not had: `serve` applies them. */
  readonly pendingMigrations: readonly string[];
  readonly bytes: number;
}

/**
 * Puts the backup `from` at `databasePath`, where the configuration looks
 * for the database, after checking that it is whole (`PRAGMA
 * integrity_check`), a Connect database of `environment` and of this
 * release or an older one. Refused when a database is already there:
 * nothing is ever written over one. The checks run on a copy beside the
 * target, which takes the target's name only once they pass, and only if
 * the name is still free.
 *
 * @throws BackupError when refused; nothing was changed.
 */
export async function restoreSqlite(fromPath: string, databasePath: string, options: { environment: Environment }): Promise<RestoreResult> {
  const from = resolve(fromPath);
  if (!isFile(from)) throw new BackupError(`there is no backup file at ${from}`);
  if (isFile(`${from}-wal`) && statSync(`${from}-wal`).size > 0) {
    throw new BackupError(`${from} has a write-ahead log beside it (${from}-wal): it is a live database, not a backup; take one with connect-auth backup`);
  }
  const existing = ['', '-wal', '-journal'].map((suffix) => `${databasePath}${suffix}`).find((path) => isFile(path));
  if (existing !== undefined) throw targetHoldsData(databasePath);
  // The folder as `serve` would make it; removed again when the restore is refused.
  const created = mkdirSync(dirname(databasePath), { recursive: true });
  let placed = false;
  let checking: string | undefined;
  try {
    const folder = writableFolder(databasePath, 'the restored database');
    checking = join(folder, `.${basename(databasePath)}.${randomBytes(6).toString('hex')}.restoring`);
    try {
      copyFileSync(from, checking, constants.COPYFILE_EXCL);
    } catch (error) {
      throw new BackupError(`cannot read the backup ${from}: ${describeFileError(error)}`, { cause: error });
    }
    const facts = checkBackup(checking, from);
    if (facts.environment !== undefined && facts.environment !== options.environment) {
      throw new BackupError(`${from} is a backup of the ${facts.environment} database; CONNECT_ENVIRONMENT is ${options.environment}`);
    }
    const known = Object.keys(await migrationProvider.getMigrations());
    const unknown = facts.migrations.find((name) => !known.includes(name));
    if (unknown !== undefined) throw new BackupError(`${from} comes from a newer release of Connect (migration ${unknown} is unknown to this one): restore it with that release`);
    syncFile(checking);
    placeWithoutReplacing(checking, databasePath);
    placed = true;
    syncFile(folder);
    return {
      target: databasePath,
      environment: facts.environment,
      pendingMigrations: known.filter((name) => !facts.migrations.includes(name)),
      bytes: statSync(databasePath).size,
    };
  } finally {
    if (checking !== undefined) removeDatabaseFiles(checking);
    if (!placed && created !== undefined) removeEmptyFolders(dirname(databasePath), created);
  }
}

/** Removes the empty folder `path` and its parents up to `top`; stops at the first that is not empty. */
function removeEmptyFolders(path: string, top: string): void {
  for (let folder = path; ; folder = dirname(folder)) {
    try {
      rmdirSync(folder);
    } catch {
      return;
    }
    if (folder === top || dirname(folder) === folder) return;
  }
}

function targetHoldsData(databasePath: string): BackupError {
  return new BackupError(
    `a database is already at ${databasePath}: restore writes only where there is none; stop its servers and move it (with its -wal and -shm files) aside first`,
  );
}

/** The environment and migrations of the copy at `path` of the backup `from`, once SQLite finds it whole. */
function checkBackup(path: string, from: string): { environment: Environment | undefined; migrations: string[] } {
  let database: EmbeddedSqlite | undefined;
  try {
    database = openEmbeddedSqlite(path);
    const problems = (database.prepare('pragma integrity_check').all() as Array<Record<string, unknown>>).map((row) => String(Object.values(row)[0]));
    if (problems.length !== 1 || problems[0] !== 'ok') throw new BackupError(`${from} is damaged (integrity_check: ${problems[0] ?? 'no answer'}): use another backup`);
    const environment = connectEnvironment(database, from);
    const migrations = (database.prepare('select name from kysely_migration order by name').all() as Array<{ name: string }>).map((row) => row.name);
    return { environment, migrations };
  } catch (error) {
    if (error instanceof BackupError) throw error;
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'SQLITE_NOTADB') throw new BackupError(`${from} is not a Connect database: it is not an SQLite database file`, { cause: error });
    if (code === 'SQLITE_CORRUPT') throw new BackupError(`${from} is damaged (${code}): use another backup`, { cause: error });
    throw new BackupError(`${from} cannot be read as a database: ${describeFileError(error)}`, { cause: error });
  } finally {
    database?.close();
  }
}

/**
 * The environment a Connect database records (as `recordedEnvironment` of
 * `open-storage.ts` reads it; a database from before the record names it
 * by its clients' IDs), or `undefined` when it records none yet.
 *
 * @throws BackupError when the database at `name` is not a Connect database.
 */
function connectEnvironment(database: EmbeddedSqlite, name: string): Environment | undefined {
  const tables = new Set((database.prepare("select name from sqlite_master where type = 'table'").all() as Array<{ name: string }>).map((row) => row.name));
  if (!tables.has('kysely_migration') || !tables.has('clients')) throw new BackupError(`${name} is not a Connect database: it has none of Connect's tables`);
  if (tables.has('database_environment')) {
    const row = database.prepare('select environment from database_environment where id = 1').get() as { environment: string } | undefined;
    if (row === undefined) return undefined;
    if (!isEnvironment(row.environment)) throw new BackupError(`${name} records an unknown environment ${JSON.stringify(row.environment)}`);
    return row.environment;
  }
  const row = database
    .prepare(
      `select case when exists (select 1 from clients where substr(id, 1, 15) = 'cid_production_') then 'production'
                   when exists (select 1 from clients) then 'sandbox' end as environment`,
    )
    .get() as { environment: string | null };
  return row.environment === 'production' || row.environment === 'sandbox' ? row.environment : undefined;
}

/** Gives `file` the name `path` unless that name is taken, in one step (a hard link fails when the name exists). */
function placeWithoutReplacing(file: string, path: string): void {
  try {
    linkSync(file, path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw targetHoldsData(path);
    // A file system without hard links: the name was free a moment ago.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV') throw new BackupError(`cannot write ${path}: ${describeFileError(error)}`, { cause: error });
    if (isFile(path)) throw targetHoldsData(path);
    renameSync(file, path);
  }
}

/** The real folder `path` goes into, once it is known to exist and to be writable. */
function writableFolder(path: string, what: string): string {
  const folder = dirname(path);
  let real: string;
  try {
    real = realpathSync(folder);
  } catch {
    throw new BackupError(`cannot write ${what} to ${path}: the folder ${folder} does not exist`);
  }
  if (!isDirectory(real)) throw new BackupError(`cannot write ${what} to ${path}: ${folder} is not a folder`);
  try {
    accessSync(real, constants.W_OK);
  } catch {
    throw new BackupError(`cannot write ${what} to ${path}: the folder ${folder} is not writable`);
  }
  return real;
}

function sameFile(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
}

function isDirectory(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/** Flushes a file, or a folder's entries, to the disk. */
function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Removes a database file and the files SQLite may keep beside it. */
function removeDatabaseFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
}

/** A file-system or SQLite failure in a few words: its code, and what it says. */
function describeFileError(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code === 'ENOSPC' || code === 'SQLITE_FULL') return 'the disk is full';
  if (code === 'EACCES' || code === 'EPERM' || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY') return `permission denied (${String(code)})`;
  const text = typeof message === 'string' ? message.split('\n')[0] : String(error);
  return typeof code === 'string' ? `${text} (${code})` : (text ?? 'failed');
}
