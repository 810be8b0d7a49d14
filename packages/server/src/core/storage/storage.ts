/**
 * The storage ports as one: every store, transactions, health and
 * lifecycle, and the rules every store follows (on {@link Stores}). Each
 * store's interface is declared in `core/`, beside the records it keeps;
 * `storage/kysely/` implements them for both engines (SQLite and
 * PostgreSQL), importing core and never imported by it, and is held to
 * them by `test/storage/contract.ts`.
 *
 * @packageDocumentation
 */
import type { ChangeFeed } from '../changes/change-feed.js';
import type { Environment } from '../environment.js';
import type { StorageUnavailable } from '../storage-errors.js';
import type { AuditStore } from '../audit/audit-log.js';
import type { ClientStore } from '../clients/client-store.js';
import type { IdempotentRequestStore } from '../customer-tokens/idempotent-request-store.js';
import type { CustomerStore } from '../customers/customer-store.js';
import type { AuthorizationCodeStore } from '../codes/code-store.js';
import type { AuthorizationRequestStore, ConsentStore, CustomerSessionStore, SignInStore } from '../journey/stores.js';
import type { SigningKeyStore } from '../keys/signing-key-store.js';
import type { MasterKeyStore } from '../keys/master-key-store.js';
import type { RateLimitCounterStore } from '../limits/rate-limit-counter-store.js';
import type { OtpChallengeStore } from '../otp/otp-challenge-store.js';
import type { PasskeyStore } from '../passkeys/passkey-store.js';
import type { ReplayStore } from '../replay/replay-store.js';
import type { PushedRequestStore } from '../authorize/pushed-request-store.js';
import type { SmsOutboxStore } from '../sms/outbox-store.js';
import type { RevokedTokenStore, TokenSessionStore } from '../tokens/token-session-store.js';

/** Where the data lives: parsed from `DATABASE_URL` by `config/load.ts`, opened by `storage/kysely/open-storage.ts`. */
export type DatabaseLocation = { engine: 'sqlite'; path: string } | { engine: 'postgres'; url: string };

/**
 * Told how the database's operations end, for the log of outages
 * (docs/operator-guide.md, "When a dependency fails").
 */
export interface AvailabilityObserver {
  /** An operation failed with `StorageUnavailable`: `error`. */
  unavailable(error: StorageUnavailable): void;
  /** An operation succeeded (called on every success: keep it cheap). */
  available(): void;
}

/** Work that only one instance does at a time: the hourly purge, and the sweep of expired journeys. */
export type ExclusiveWork = 'purge' | 'journey-purge';

/**
 * The stores that can take part in one transaction.
 *
 * Rules every store follows:
 * - Timestamps are whole epoch seconds and "now" is always passed in; stores
 *   never read the clock.
 * - Lookups of a missing record return `undefined`; updates of one throw
 *   `NotFound`; inserting a duplicate key throws `Conflict`; a database that
 *   fails or does not answer in time throws `StorageUnavailable`
 *   (`core/storage-errors.ts`).
 */
export interface Stores {
  readonly clients: ClientStore;
  readonly keys: SigningKeyStore;
  readonly customers: CustomerStore;
  readonly authorizationRequests: AuthorizationRequestStore;
  readonly otpChallenges: OtpChallengeStore;
  readonly customerSessions: CustomerSessionStore;
  readonly consents: ConsentStore;
  readonly codes: AuthorizationCodeStore;
  readonly signIns: SignInStore;
  readonly tokenSessions: TokenSessionStore;
  readonly outbox: SmsOutboxStore;
  readonly revokedTokens: RevokedTokenStore;
  readonly idempotentRequests: IdempotentRequestStore;
  readonly audit: AuditStore;
  readonly rateLimitCounters: RateLimitCounterStore;
  readonly passkeys: PasskeyStore;
  readonly usedJtis: ReplayStore;
  readonly pushedRequests: PushedRequestStore;
  readonly masterKeys: MasterKeyStore;
}

/** A database: the stores, transactions, health and lifecycle. */
export interface Storage extends Stores {
  /** `sqlite` or `postgres`. */
  readonly engine: 'sqlite' | 'postgres';
  /**
   * Runs `work` in one database transaction: every store it is handed writes
   * in that transaction, which commits when `work` resolves and rolls back
   * when it throws.
   */
  transaction<T>(work: (tx: Stores) => Promise<T>): Promise<T>;
  /**
   * Applies pending migrations; returns the names of those applied now.
   * With `release` (the running code's version, and the time to record),
   * first refuses a database
   * that a newer release left needing a newer one than this
   * ({@link SchemaTooNew}), leaves alone a database a newer release has
   * migrated further (expand-only: this release's schema is still there),
   * and afterwards records the release (docs/upgrades.md, "Migrations
   * across releases").
   */
  migrate(release?: { readonly version: string; readonly now: number }): Promise<string[]>;
  /**
   * Records that only `release.version` or a newer release may run on the
   * database from now on (older ones stop at start, naming both): for a
   * change of data, not of schema, that older releases cannot read.
   */
  requireRelease(release: { readonly version: string; readonly now: number }): Promise<void>;
  /**
   * The environment recorded as the database's own; `undefined` when none
   * is yet. In a database not migrated that far, the one its migration will
   * record (the environment its clients name; `undefined` without clients).
   * Safe to call before `migrate()` (docs/operator-guide.md, "One database,
   * one environment").
   */
  recordedEnvironment(): Promise<Environment | undefined>;
  /**
   * Records `environment` as the database's own unless one is recorded
   * already (one atomic insert: of two first openers, one wins), and
   * returns the one recorded. Call after `migrate()`.
   */
  claimEnvironment(environment: Environment): Promise<Environment>;
  /**
   * Starts hearing the database's change signal (`core/changes/`); call
   * after `migrate()`. Each call opens a feed of its own; close it before
   * the storage.
   */
  openChangeFeed(options?: { onState?: (state: 'lost' | 'listening', error?: Error) => void }): ChangeFeed;
  /** How full the connection pool is (PostgreSQL); `undefined` for an engine without one. */
  poolStats(): { total: number; idle: number; waiting: number } | undefined;
  /**
   * Runs `work` unless another holder of the lock `name`, in this process or
   * any other on the same database, runs it now: then returns at once with
   * `ran: false`. PostgreSQL holds a session advisory lock on one dedicated
   * connection while `work` runs; `work` is handed stores on that very
   * connection (each statement its own short transaction), so that it never
   * needs a second one (a pool of one connection would otherwise wait on
   * itself until the pool's timeout, holding up every request meanwhile).
   * SQLite, one writer per file anyway, always runs it, with the stores of
   * the database (docs/operator-guide.md, "Retention").
   */
  runExclusively<T>(name: ExclusiveWork, work: (stores: Stores) => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }>;
  /** Resolves when the database answers a trivial query; throws otherwise. */
  ping(): Promise<void>;
  /**
   * Tells `observer` how every later database operation ends (not those
   * refused because the storage was closed). Returns the function that
   * stops it.
   */
  observeAvailability(observer: AvailabilityObserver): () => void;
  /** Closes every connection; any operation after it throws `StorageUnavailable`. */
  close(): Promise<void>;
}

/**
 * The database was migrated by a newer release than this code may run
 * beside (docs/upgrades.md, "Migrations across releases"); the message
 * names both releases.
 */
export class SchemaTooNew extends Error {
  override readonly name = 'SchemaTooNew';
}
