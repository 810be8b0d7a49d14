import { ConfigError, loadConfig } from '../config/load.js';
import { resolveMasterKey } from '../config/master-key-file.js';
import { systemClock, type Clock } from '../core/clock.js';
import { KeyRing } from '../core/keys/key-ring.js';
import { deriveKey } from '../core/keys/master-key.js';
import { createCustomerAccessCheck, type CustomerAccess } from '../core/tokens/customer-access-check.js';
import { openStorage } from '../storage/kysely/open-storage.js';
import { KEY_RELOAD_SECONDS } from '../core/lifetimes.js';

/** A resource server's handle on Connect's customer tokens. */
export interface OpenedCustomerAccessCheck {
  /** Checks a customer access token; throws `InvalidToken` (status 401) when it is not acceptable. */
  verify(token: string | undefined): Promise<CustomerAccess>;
  /** Stops the key reloads and closes the database. */
  close(): Promise<void>;
}

/**
 * Opens the resource-server check for one of the platform's APIs, from the
 * same configuration as Connect (the same `DATABASE_URL`,
 * `CONNECT_MASTER_KEY`, `CONNECT_AUTH_URL` and `CONNECT_BASE_URL`). Keys are
 * reloaded every 30 seconds, so rotations are followed without a restart.
 *
 * @example
 * const connect = await openCustomerAccessCheck(environmentVariables);
 * const { profileId } = await connect.verify(bearerTokenFromRequest);
 */
export async function openCustomerAccessCheck(
  env: Readonly<Record<string, string | undefined>>,
  clock: Clock = systemClock,
): Promise<OpenedCustomerAccessCheck> {
  const config = loadConfig(env);
  if (!config.authUrl) throw new ConfigError('CONNECT_AUTH_URL is required to check tokens outside the Connect server');
  const masterKey = resolveMasterKey(config);
  const storage = openStorage(config.database);
  try {
    const keys = await KeyRing.open({ keys: storage.keys, sealKey: deriveKey(masterKey, 'key-sealing'), clock });
    const urls = { authUrl: config.authUrl, baseUrl: config.baseUrl ?? config.authUrl };
    const check = createCustomerAccessCheck({ keys, clock, urls, tokenSessions: storage.tokenSessions });
    const reload = setInterval(() => void keys.reload().catch(() => {}), KEY_RELOAD_SECONDS * 1000);
    reload.unref();
    return {
      verify: (token) => check.verify(token),
      async close() {
        clearInterval(reload);
        await storage.close();
      },
    };
  } catch (error) {
    await storage.close().catch(() => {});
    throw error;
  }
}
