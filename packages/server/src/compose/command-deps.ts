import type { AuditStore } from '../core/audit/audit-log.js';
import type { ClientAdminDeps } from '../core/clients/manage-clients.js';
import type { Clock } from '../core/clock.js';
import type { Environment } from '../core/environment.js';
import type { KeyActionDeps, RotationPolicy } from '../core/keys/key-rotation.js';
import type { SigningKeyStore } from '../core/keys/signing-key-store.js';
import type { MasterKeyActionDeps } from '../core/keys/master-key-rotation.js';
import type { PurgeStores } from '../core/retention/purge.js';
import type { Stores } from '../core/storage/storage.js';

/*
 * What each group of `connect-auth` commands (`cli/commands/`) works with:
 * narrow objects built by `compose.ts` from the runtime, so that no command
 * reaches into the storage or the configuration itself.
 */

/** What the commands work with, one narrow set for each group (built by `compose.ts`). */
export interface CommandDeps {
  readonly migrate: MigrateCommandDeps;
  readonly clients: ClientCommandDeps;
  readonly customers: CustomerCommandDeps;
  readonly keys: KeyCommandDeps;
  readonly masterKey: MasterKeyCommandDeps;
  readonly audit: AuditCommandDeps;
  readonly purge: PurgeCommandDeps;
}

/** What recording an admin action needs: the audit store outside a transaction, and the clock. */
export interface AdminActionDeps {
  readonly audit: Stores['audit'];
  readonly clock: Clock;
}

/** What `purge` needs. */
export interface PurgeCommandDeps {
  readonly stores: PurgeStores;
  readonly clock: Clock;
  /** `CONNECT_SESSION_IDLE_TTL`. */
  readonly sessionIdleSeconds: number;
  /** `CONNECT_AUDIT_RETENTION_DAYS`. */
  readonly auditRetentionDays: number;
}

/** What `migrate` reports: what opening the database did. */
export interface MigrateCommandDeps {
  /** The database engine (`sqlite` or `postgres`). */
  readonly engine: string;
  /** The migrations that opening the database applied, oldest first. */
  readonly appliedMigrations: readonly string[];
}

/** What `audit` needs. */
export interface AuditCommandDeps {
  readonly audit: Pick<AuditStore, 'listAuditEvents'>;
  readonly clock: Clock;
}

/** What the `keys` commands need. */
export interface KeyCommandDeps extends KeyActionDeps<Stores>, AdminActionDeps {
  readonly keys: Pick<SigningKeyStore, 'listKeys'>;
  /** When a rotation's keys start signing and how long old keys verify, from the configured lifetimes. */
  readonly policy: RotationPolicy;
}

/** What the `master-key` commands need. */
export interface MasterKeyCommandDeps extends MasterKeyActionDeps, AdminActionDeps {
  /**
   * Records that the database now needs this release or a newer one: after
   * a rotation, a release that knows one master key only cannot open what
   * was re-sealed (docs/upgrades.md, "Migrations across releases").
   */
  readonly requireThisRelease: () => Promise<void>;
}

/** What the `clients` commands need. */
export interface ClientCommandDeps extends ClientAdminDeps, AdminActionDeps {
  readonly clients: Stores['clients'];
  /** Runs `work` in one database transaction. */
  transaction<T>(work: (tx: Stores) => Promise<T>): Promise<T>;
  /** `CONNECT_SECRET_ROTATION_GRACE`: how long a rotated secret still works by default. */
  readonly secretRotationGraceSeconds: number;
  /** Where a credentials file says the server answers: `CONNECT_AUTH_URL`, or the address it listens on. */
  readonly authUrl: string;
  /** `CONNECT_BASE_URL`, by default the auth URL. */
  readonly baseUrl: string;
}

/** What the `customers` commands need. */
export interface CustomerCommandDeps extends AdminActionDeps {
  readonly customers: Stores['customers'];
  readonly consents: Pick<Stores['consents'], 'listConsents'>;
  /** Names the clients a customer approved. */
  readonly clients: Pick<Stores['clients'], 'findClient'>;
  /** Lists a customer's passkeys (`customers show`). */
  readonly passkeys: Pick<Stores['passkeys'], 'listPasskeysOf'>;
  /** Runs `work` in one database transaction. */
  transaction<T>(work: (tx: Stores) => Promise<T>): Promise<T>;
  readonly clock: Clock;
  readonly environment: Environment;
  /** `CONNECT_SMS_COUNTRIES`: the countries a new customer's mobile may be in; unset, every country. */
  readonly smsCountries: readonly string[] | undefined;
}
