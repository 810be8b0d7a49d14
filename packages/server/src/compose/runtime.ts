import { ClientSecretHasher } from '../core/clients/client-secret.js';
import { currentRelease } from '../config/release.js';
import type { Clock } from '../core/clock.js';
import type { MasterKeyStore } from '../core/keys/master-key-store.js';
import { checkConfiguredKeys, MasterKeyMismatch, MasterKeys, type SubKeys } from '../core/keys/master-keys.js';
import { opensStoredKeys } from '../core/keys/master-key-rotation.js';
import { OtpHasher } from '../core/otp/otp-hasher.js';
import { resolveMasterKey } from '../config/master-key-file.js';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../config/load.js';
import type { Environment } from '../core/environment.js';
import { openStorage, type StorageOptions } from '../storage/kysely/open-storage.js';
import { SchemaTooNew, type Storage } from '../core/storage/storage.js';

/** The services the server and every CLI command share. */
export interface Runtime {
  readonly config: Config;
  readonly clock: Clock;
  readonly storage: Storage;
  /** The migrations that opening the database applied, oldest first; empty when none was pending. */
  readonly appliedMigrations: readonly string[];
  /**
   * The configured master keys and what the database says of them: which
   * one writes, which are accepted (docs/operator-guide.md, "Replacing the
   * master key"). The sub-keys below follow it.
   */
  readonly masterKeys: MasterKeys;
  readonly hasher: ClientSecretHasher;
  /** Seals private keys at rest. */
  readonly sealKey: SubKeys;
  readonly otpHasher: OtpHasher;
  /** Keys the CSRF tokens of the hosted pages (carried across rotations). */
  readonly csrfKey: Uint8Array;
  /** Seals the responses kept for idempotent `POST /tokens` retries. */
  readonly idempotencyKey: SubKeys;
  /** Seals the access token a refresh minted, kept for the refreshes of its reuse interval. */
  readonly refreshReuseKey: SubKeys;
  /** Keys the hashed mobiles and addresses in rate-limit counters (carried across rotations: a rotation resets no budget). */
  readonly limitKey: Uint8Array;
  /** Keys the proofs of the known-device cookie (`core/journey/known-device.ts`). */
  readonly knownDeviceKey: SubKeys;
  /** Keys the DPoP server nonces (`core/dpop/dpop-nonce.ts`), the same on every instance. */
  readonly dpopNonceKey: SubKeys;
  /** Derives the sandbox demo client's secret and demo customer's PIN, the same for as long as the master key. */
  readonly demoKey: Uint8Array;
  /** Closes the storage it opened; one given to {@link openRuntime} is left to its owner. */
  close(): Promise<void>;
}

/**
 * Opens the database (migrated to the latest schema), checks that it
 * belongs to the configured environment (recording it in a new database)
 * and derives the keys from the master key: what the server and every CLI command share. Close
 * with `runtime.close()`. `storage` uses an open database instead
 * (two test servers on one database); its owner closes it.
 */
export async function openRuntime(config: Config, clock: Clock, options: { storage?: Storage } = {}): Promise<Runtime> {
  const storage = options.storage ?? openStorage(config.database, storageOptions(config));
  let appliedMigrations: string[];
  let masterKeys: MasterKeys;
  try {
    // Before migrating: a command of the other environment changes nothing, not even the schema.
    refuseOtherEnvironment(await storage.recordedEnvironment(), config.environment);
    appliedMigrations = await storage.migrate({ version: currentRelease().version, now: clock.nowSeconds() }).catch((error: unknown) => {
      throw error instanceof SchemaTooNew ? new ConfigError(error.message) : error;
    });
    refuseOtherEnvironment(await storage.claimEnvironment(config.environment), config.environment);
    // Once the database is known to be this environment's: a refused sandbox command generates no master key.
    const writing = (await storage.masterKeys.listMasterKeys()).find((record) => record.state === 'writing');
    masterKeys = new MasterKeys(resolveMasterKey(config, writing?.fingerprint), config.previousMasterKey);
    await reconcileMasterKeys(storage.masterKeys, masterKeys, clock.nowSeconds());
  } catch (error) {
    if (!options.storage) await storage.close().catch(() => {});
    throw error;
  }
  return {
    config,
    clock,
    storage,
    appliedMigrations,
    close: async () => {
      if (!options.storage) await storage.close();
    },
    masterKeys,
    hasher: new ClientSecretHasher(masterKeys.subKeys('client-secret-hmac')),
    sealKey: masterKeys.subKeys('key-sealing'),
    otpHasher: new OtpHasher(masterKeys.subKeys('otp-hmac')),
    csrfKey: masterKeys.carried('csrf'),
    idempotencyKey: masterKeys.subKeys('idempotency'),
    refreshReuseKey: masterKeys.subKeys('refresh-reuse'),
    limitKey: masterKeys.carried('rate-limit-keys'),
    demoKey: masterKeys.carried('sandbox-demo'),
    knownDeviceKey: masterKeys.subKeys('known-device'),
    dpopNonceKey: masterKeys.subKeys('dpop-nonce'),
  };
}

/**
 * Records the configured master keys in a database that does not know them
 * yet and takes what it says of them (docs/operator-guide.md, "Replacing
 * the master key"). A database that knows no master key yet records the
 * one its values were made under: the previous one when both are
 * configured, else the only one. A current key beside a known previous one
 * is recorded as `next`. A configured key the database refuses stops the
 * start with one line.
 */
export async function reconcileMasterKeys(store: MasterKeyStore, masterKeys: MasterKeys, now: number): Promise<void> {
  const { current, previous } = masterKeys;
  const first = previous ?? current;
  if ((await store.listMasterKeys()).length === 0 && !(await opensStoredKeys(store, first.key))) {
    // A database from before master keys were recorded: only the key its signing keys were sealed under may become its first.
    throw new ConfigError(
      `${previous ? 'CONNECT_PREVIOUS_MASTER_KEY' : 'CONNECT_MASTER_KEY'} (${first.fingerprint}) does not open this database's signing keys: is it the key this database was created with?`,
    );
  }
  await store.recordMasterKey(first.fingerprint, 'writing', now);
  let records = await store.listMasterKeys();
  try {
    checkConfiguredKeys(records, current.fingerprint, previous?.fingerprint);
  } catch (error) {
    if (error instanceof MasterKeyMismatch) throw new ConfigError(error.message);
    throw error;
  }
  if (previous && !records.some((r) => r.fingerprint === current.fingerprint)) {
    await store.recordMasterKey(current.fingerprint, 'next', now);
    records = await store.listMasterKeys();
  }
  await masterKeys.apply(records);
}

/**
 * A database belongs to one environment, recorded by its first opener
 * (docs/operator-guide.md, "One database, one environment"): a server or
 * command configured for the other one stops with one line naming both.
 */
function refuseOtherEnvironment(recorded: Environment | undefined, configured: Environment): void {
  if (recorded !== undefined && recorded !== configured) {
    throw new ConfigError(
      `this database belongs to ${recorded}; CONNECT_ENVIRONMENT is ${configured} (check CONNECT_ENVIRONMENT and DATABASE_URL)`,
    );
  }
}

/** The longest lifetime of any token signed by the signing keys. */
export function maxTokenTtlSeconds(config: Config): number {
  const { accessTokenSeconds, refreshTokenSeconds, codeSeconds } = config.lifetimes;
  return Math.max(accessTokenSeconds, refreshTokenSeconds, codeSeconds);
}

/** How the storage waits and how many connections it keeps, as configured. */
export function storageOptions(config: Pick<Config, 'databasePoolSize' | 'databaseTimeoutMs'>): StorageOptions {
  return { maxConnections: config.databasePoolSize, timeoutMs: config.databaseTimeoutMs };
}
