import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MASTER_KEY_FILE } from '../../config/master-key-file.js';
import type { Config } from '../../config/schema.js';
import { BACKUP_PAGES_PER_STEP, backUpSqlite, BackupError, restoreSqlite, type BackupProgress } from '../../storage/kysely/sqlite-backup.js';
import { Interrupted, UsageError, type CommandResult } from './output.js';

/** Where the operator guide describes backups, PostgreSQL's included. */
const GUIDE = 'docs/operator-guide.md, "Backups and restores"';

/**
 * `backup --out FILE`: an online copy of the embedded database, taken while
 * servers run on it (docs/operator-guide.md, "Backups and restores").
 * Progress goes to `progress` (stderr) for a database of more than one
 * step; the result is one line, or the JSON document.
 */
export async function backupCommand(config: Config, options: { out?: string }, progress: (line: string) => void, signal: AbortSignal): Promise<CommandResult> {
  if (!options.out) throw new UsageError('--out is required: the file to write the backup to');
  const database = sqlitePath(config, 'backup copies the embedded SQLite database only; DATABASE_URL names PostgreSQL: back it up with pg_dump or continuous archiving');
  const started = performance.now();
  try {
    const result = await backUpSqlite(database, options.out, {
      environment: config.environment,
      onProgress: reportProgress(progress),
      signal,
    });
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    return {
      json: { backup: result.out, database, environment: result.environment ?? config.environment, pages: result.pages, bytes: result.bytes, seconds },
      text: `backed up the ${config.environment} database ${database} to ${result.out}: ${result.pages} pages, ${megabytes(result.bytes)} in ${seconds} s\n`,
    };
  } catch (error) {
    if (signal.aborted && !(error instanceof BackupError)) throw new Interrupted('backup interrupted; no backup was written');
    throw error;
  }
}

/**
 * `restore --from FILE`: puts a backup where the configuration looks for
 * the embedded database, once it is found whole and this environment's;
 * never over a database (docs/operator-guide.md, "Backups and restores").
 * A sandbox without its master key is told where to find it.
 */
export async function restoreCommand(config: Config, options: { from?: string }, note: (line: string) => void): Promise<CommandResult> {
  if (!options.from) throw new UsageError('--from is required: the backup file to restore');
  const database = sqlitePath(config, 'restore puts back a backup of the embedded SQLite database only; DATABASE_URL names PostgreSQL: restore with pg_restore');
  const result = await restoreSqlite(options.from, database, { environment: config.environment });
  const pending = result.pendingMigrations.length;
  if (!config.masterKey && !existsSync(join(config.dataDir, MASTER_KEY_FILE))) {
    note(
      `connect-auth: note: CONNECT_MASTER_KEY is not set and ${config.dataDir} holds no ${MASTER_KEY_FILE}: the backup is of use only with the master key it was taken under; put that key in place before serve\n`,
    );
  }
  return {
    json: { restored: result.target, from: options.from, environment: result.environment ?? config.environment, bytes: result.bytes, pendingMigrations: result.pendingMigrations },
    text: `restored ${options.from} to ${result.target} (${config.environment}, ${megabytes(result.bytes)}); ${
      pending === 0 ? 'its schema is up to date' : `serve applies ${pending} pending migration${pending === 1 ? '' : 's'} when it starts`
    }\n`,
  };
}

/** The SQLite file the configuration names, or the refusal `postgres` for PostgreSQL. */
function sqlitePath(config: Config, postgres: string): string {
  const location = config.database;
  if (location.engine === 'postgres') throw new BackupError(`${postgres} (${GUIDE})`);
  if (location.path === ':memory:') throw new BackupError('DATABASE_URL names an in-memory database (sqlite::memory:), which no other process can reach: there is nothing to back up or restore');
  return location.path;
}

/** Reports a backup of more than one step at each tenth of its pages. */
function reportProgress(progress: (line: string) => void): (step: BackupProgress) => void {
  let reported = 0;
  return ({ copiedPages, totalPages }) => {
    if (totalPages <= BACKUP_PAGES_PER_STEP) return;
    const tenths = Math.floor((copiedPages * 10) / totalPages);
    if (tenths <= reported) return;
    reported = tenths;
    progress(`backup: ${copiedPages} of ${totalPages} pages copied (${tenths * 10}%)\n`);
  };
}

function megabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
