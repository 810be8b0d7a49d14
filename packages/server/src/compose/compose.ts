import type { CommandDeps } from './command-deps.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../config/schema.js';
import { currentRelease } from '../config/release.js';
import { defaultAuthUrl } from '../config/load.js';
import { keyPublicationDelaySeconds } from '../core/lifetimes.js';
import type { SeedDemoDeps } from '../demo/seed-demo.js';
import { maxTokenTtlSeconds, openRuntime, type Runtime } from './runtime.js';
import type { ServiceOverrides, Services } from './services.js';

/** Everything built from one runtime: the server's services, the CLI commands' dependencies and the demo seed's. */
export interface Composition {
  /** What each group of CLI commands works with. */
  readonly commands: CommandDeps;
  /** What seeding the sandbox demo needs. */
  readonly demo: SeedDemoDeps;
  /**
   * The server's services. Opens what only a server needs (the change
   * signal, Redis, the key ring); close them with `Services.close()`.
   */
  services(overrides?: ServiceOverrides): Promise<Services>;
}

/**
 * The composition root: builds, from the runtime (the configuration, the
 * storage and the keys derived from the master key), the dependencies of
 * the server, of every CLI command and of the demo seed, each as the narrow
 * object its user declares. Nothing outside `compose/` reaches into the
 * runtime.
 */
export function compose(runtime: Runtime): Composition {
  const { config, clock, storage } = runtime;
  const environment = config.environment;
  const transaction: Runtime['storage']['transaction'] = (work) => storage.transaction(work);
  const authUrl = config.authUrl ?? defaultAuthUrl(config.host, config.port);
  const commands: CommandDeps = {
    migrate: { engine: storage.engine, appliedMigrations: runtime.appliedMigrations },
    clients: {
      clients: storage.clients,
      audit: storage.audit,
      transaction,
      hasher: runtime.hasher,
      clock,
      environment,
      secretRotationGraceSeconds: config.secretRotationGraceSeconds,
      authUrl,
      baseUrl: config.baseUrl ?? authUrl,
    },
    customers: {
      customers: storage.customers,
      consents: storage.consents,
      clients: storage.clients,
      passkeys: storage.passkeys,
      audit: storage.audit,
      transaction,
      clock,
      environment,
      smsCountries: config.smsCountries,
    },
    keys: {
      keys: storage.keys,
      audit: storage.audit,
      storage: { transaction },
      sealKey: runtime.sealKey,
      clock,
      policy: {
        maxTokenTtlSeconds: maxTokenTtlSeconds(config),
        publicationDelaySeconds: keyPublicationDelaySeconds(config.lifetimes),
      },
    },
    masterKey: {
      store: storage.masterKeys,
      masterKeys: runtime.masterKeys,
      audit: storage.audit,
      clock,
      requireThisRelease: () => storage.requireRelease({ version: currentRelease().version, now: clock.nowSeconds() }),
    },
    audit: { audit: storage.audit, clock },
    purge: {
      stores: storage,
      clock,
      sessionIdleSeconds: config.lifetimes.sessionIdleSeconds,
      auditRetentionDays: config.auditRetentionDays,
    },
  };
  const demo: SeedDemoDeps = {
    clients: storage.clients,
    customers: storage.customers,
    hasher: runtime.hasher,
    clock,
    environment,
    demoKey: runtime.demoKey,
  };
  return {
    commands,
    demo,
    // Loaded only when a server is composed, so that every other command
    // starts without loading the server's services.
    services: async (overrides) => (await import('./services.js')).composeServices(runtime, overrides),
  };
}

/** A composition over a runtime of its own. */
export interface OpenedComposition extends Composition {
  /** Closes the storage the runtime opened. */
  close(): Promise<void>;
}

/** Opens the runtime (`openRuntime`: the database, migrated, and the keys) and composes it: what a CLI command runs on. */
export async function openComposition(config: Config, clock: Clock): Promise<OpenedComposition> {
  const runtime = await openRuntime(config, clock);
  return { ...compose(runtime), close: () => runtime.close() };
}
