import { Kysely, Migrator, sql, type Dialect } from 'kysely';
import type { DatabaseLocation, ExclusiveWork, Storage, Stores } from '../../core/storage/storage.js';
import { MIGRATION_NAMES, migrationProvider, OLDEST_COMPATIBLE_RELEASE } from './migrations/index.js';
import { checkSchemaRelease, readSchemaState } from './schema-releases.js';
import { createPostgresDialect } from './postgres.js';
import type { Database } from './stores/schema.js';
import { createSqliteDialect } from './sqlite.js';
import { translateDriverErrors, type StatementObserver } from './translate-driver-errors.js';
import { openPostgresChangeFeed } from './change-feed-postgres.js';
import { openSqliteChangeFeed } from './change-feed-sqlite.js';
import { DATABASE_TIMEOUT_MS } from '../../core/lifetimes.js';
import { isEnvironment, type Environment } from '../../core/environment.js';
import { createAuthorizationCodeStore, createAuthorizationRequestStore, createConsentStore, createCustomerSessionStore } from './stores/authorization.js';
import { createClientStore } from './stores/clients.js';
import { createCustomerStore } from './stores/customers.js';
import { createOtpChallengeStore } from './stores/otp-challenges.js';
import { createPasskeyStore } from './stores/passkeys.js';
import { createSigningKeyStore } from './stores/signing-keys.js';
import { createAuditStore } from './stores/audit-events.js';
import { createIdempotentRequestStore } from './stores/idempotent-requests.js';
import { createRateLimitCounterStore } from './stores/rate-limit-counters.js';
import { createRevokedTokenStore } from './stores/revoked-tokens.js';
import { createSignInStore } from './stores/sign-ins.js';
import { createSmsOutboxStore } from './stores/sms-outbox.js';
import { createTokenSessionStore } from './stores/token-sessions.js';
import { createReplayStore } from './stores/used-jtis.js';
import { createPushedRequestStore } from './stores/pushed-requests.js';
import { createMasterKeyStore } from './stores/master-keys.js';

/** PostgreSQL advisory lock keys of the work only one instance does at a time. */
const ADVISORY_LOCKS: Record<ExclusiveWork, number> = { purge: 0x636f_0001, 'journey-purge': 0x636f_0002 };

function storesFor(db: Kysely<Database>): Stores {
  return {
    clients: createClientStore(db),
    keys: createSigningKeyStore(db),
    customers: createCustomerStore(db),
    authorizationRequests: createAuthorizationRequestStore(db),
    otpChallenges: createOtpChallengeStore(db),
    customerSessions: createCustomerSessionStore(db),
    consents: createConsentStore(db),
    codes: createAuthorizationCodeStore(db),
    signIns: createSignInStore(db),
    tokenSessions: createTokenSessionStore(db),
    outbox: createSmsOutboxStore(db),
    revokedTokens: createRevokedTokenStore(db),
    idempotentRequests: createIdempotentRequestStore(db),
    audit: createAuditStore(db),
    rateLimitCounters: createRateLimitCounterStore(db),
    passkeys: createPasskeyStore(db),
    usedJtis: createReplayStore(db),
    pushedRequests: createPushedRequestStore(db),
    masterKeys: createMasterKeyStore(db),
  };
}

/** The environment in the database's one `database_environment` row, if any. */
async function readEnvironment(db: Kysely<Database>): Promise<Environment | undefined> {
  const row = await db.selectFrom('database_environment').select('environment').where('id', '=', 1).executeTakeFirst();
  if (row === undefined) return undefined;
  if (!isEnvironment(row.environment)) throw new Error(`the database records an unknown environment ${JSON.stringify(row.environment)}`);
  return row.environment;
}

/** How long the storage waits for the database. */
export interface StorageOptions {
  /**
   * Milliseconds a SQLite statement waits for another process's write lock,
   * or a PostgreSQL request waits for a connection (a new one, or a free
   * one in the pool), for a row lock, or for its statement; default
   * `DATABASE_TIMEOUT_MS`. Past it the operation fails with
   * `StorageUnavailable`.
   */
  readonly timeoutMs?: number;
  /** PostgreSQL connections in the pool; default 10. */
  readonly maxConnections?: number;
  /** Told of every statement the stores send (see `StatementObserver`). */
  readonly onStatement?: StatementObserver;
}

/**
 * Opens the database; call `migrate()` before first use. Every error of
 * the database driver surfaces as `StorageUnavailable`, except unique-key
 * violations, which the stores turn into `Conflict`
 * (`translate-driver-errors.ts`).
 */
export function openStorage(location: DatabaseLocation, options: StorageOptions = {}): Storage {
  const sqlite = location.engine === 'sqlite' ? createSqliteDialect(location.path, { busyTimeoutMs: options.timeoutMs }) : undefined;
  const postgres =
    location.engine === 'postgres' ? createPostgresDialect(location.url, { timeoutMs: options.timeoutMs, maxConnections: options.maxConnections }) : undefined;
  const engineDialect = sqlite?.dialect ?? (postgres as { dialect: Dialect }).dialect;
  const dialect = translateDriverErrors(engineDialect, options.onStatement);
  const db = new Kysely<Database>({ dialect });
  return {
    engine: location.engine,
    ...storesFor(db),
    transaction: (work) => db.transaction().execute((trx) => work(storesFor(trx))),
    async migrate(release) {
      // On PostgreSQL the pending migrations run in one transaction: on a
      // connection of their own where each statement is bounded but not the
      // transaction as a whole, which over a distant network may well take
      // longer than the bound of a request's (docs/operator-guide.md, "Timeouts").
      const migrating =
        location.engine === 'postgres'
          ? new Kysely<Database>({
              dialect: translateDriverErrors(
                createPostgresDialect(location.url, { timeoutMs: options.timeoutMs, maxConnections: 1, boundTransactions: false }).dialect,
              ),
            })
          : db;
      try {
        const { ahead } = checkSchemaRelease(release?.version, MIGRATION_NAMES, await readSchemaState(migrating, location.engine));
        if (ahead) return [];
        const migrator = new Migrator({ db: migrating, provider: migrationProvider });
        const { error, results } = await migrator.migrateToLatest();
        if (error) throw error instanceof Error ? error : new Error(String(error));
        if (release !== undefined) {
          await migrating
            .insertInto('schema_releases')
            .values({
              version: release.version,
              oldest_compatible: OLDEST_COMPATIBLE_RELEASE,
              recorded_at: release.now,
            })
            .onConflict((conflict) => conflict.column('version').doNothing())
            .execute();
        }
        return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
      } finally {
        if (migrating !== db) await migrating.destroy();
      }
    },
    async requireRelease(release) {
      await db
        .insertInto('schema_releases')
        .values({ version: release.version, oldest_compatible: release.version, recorded_at: release.now })
        .onConflict((conflict) => conflict.column('version').doUpdateSet({ oldest_compatible: release.version }))
        .execute();
    },
    async recordedEnvironment() {
      const present = async (table: string) => {
        const { rows } = await (sqlite
          ? sql<{ present: number }>`select count(*) as present from sqlite_master where type = 'table' and name = ${table}`
          : sql<{ present: number }>`select count(*)::int as present from pg_catalog.pg_tables where tablename = ${table} and schemaname = any (current_schemas(false))`
        ).execute(db);
        return Number(rows[0]?.present ?? 0) > 0;
      };
      if (await present('database_environment')) return readEnvironment(db);
      // A database from before the record: the environment its migration will
      // record (the one its clients name), so that a command of the other one
      // is refused before it migrates anything.
      if (!(await present('clients'))) return undefined;
      const { rows } = await sql<{ environment: string | null }>`
        select case when exists (select 1 from clients where substr(id, 1, 15) = 'cid_production_') then 'production'
                    when exists (select 1 from clients) then 'sandbox' end as environment`.execute(db);
      const implied = rows[0]?.environment;
      return implied === 'production' || implied === 'sandbox' ? implied : undefined;
    },
    async claimEnvironment(environment) {
      await db
        .insertInto('database_environment')
        .values({ id: 1, environment })
        .onConflict((conflict) => conflict.column('id').doNothing())
        .execute();
      const recorded = await readEnvironment(db);
      if (!recorded) throw new Error('the database has no environment recorded: run `connect-auth migrate` first');
      return recorded;
    },
    poolStats: () => postgres?.poolStats(),
    openChangeFeed(feedOptions = {}) {
      if (sqlite) {
        try {
          return openSqliteChangeFeed(sqlite.database, (olderThan) =>
            // The database's own time, as its triggers wrote `at` with it.
            sql`delete from change_log where at < cast(strftime('%s', 'now') as integer) - ${olderThan}`.execute(db),
          );
        } catch (error) {
          throw new Error('the database has no change log yet: run `connect-auth migrate` first', { cause: error });
        }
      }
      return openPostgresChangeFeed((location as { url: string }).url, {
        connectTimeoutMs: options.timeoutMs ?? DATABASE_TIMEOUT_MS,
        ...feedOptions,
      });
    },
    async runExclusively(name, work) {
      if (sqlite) return { ran: true, value: await work(storesFor(db)) };
      const key = ADVISORY_LOCKS[name];
      return db.connection().execute(async (connection) => {
        const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}::bigint) as locked`.execute(connection);
        if (!rows[0]?.locked) return { ran: false } as const;
        try {
          // Its statements on the lock's own connection: the work never waits for a second one.
          return { ran: true, value: await work(storesFor(connection)) } as const;
        } finally {
          // A broken connection has lost the lock with its session anyway.
          await sql`select pg_advisory_unlock(${key}::bigint)`.execute(connection).catch(() => {});
        }
      });
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    observeAvailability: (observer) => dialect.observeAvailability(observer),
    close: () => dialect.close(),
  };
}
