import { ConfigError, loadConfig } from '../config/load.js';
import { resolveMasterKey } from '../config/master-key-file.js';
import { systemClock, type Clock } from '../core/clock.js';
import { checkConfiguredKeys, MasterKeyMismatch, MasterKeys } from '../core/keys/master-keys.js';
import { followMasterKeys } from './follow-master-keys.js';
import { createCustomerAccessCheck, type CustomerAccess, type CustomerAccessRequirements } from '../core/tokens/customer-access-check.js';
import { createDpopNonces } from '../core/dpop/dpop-nonce.js';
import type { ResourceRequest } from '../core/dpop/presented-token.js';
import { openStorage } from '../storage/kysely/open-storage.js';
import { openKeyRing } from './key-ring.js';
import { storageOptions } from './runtime.js';
import type { ChangeFeed } from '../core/changes/change-feed.js';

/** A resource server's handle on Connect's customer tokens. */
export interface OpenedCustomerAccessCheck {
  /**
   * Checks a customer access token; throws `InvalidToken` (status 401) when
   * it is not acceptable, and `InsufficientScope` (status 403, with the
   * scopes needed in `scope`) when it lacks one of `requirements.scopes`,
   * and `InsufficientUserAuthentication` (status 401, its `challenge` the
   * `WWW-Authenticate` to answer) when the customer's sign-in is weaker or
   * older than `requirements.acr` / `requirements.maxAge` allow (RFC 9470).
   */
  verify(token: string | undefined, requirements?: CustomerAccessRequirements): Promise<CustomerAccess>;
  /**
   * Checks the token of a whole request: `Authorization: Bearer` for a
   * bearer token, `Authorization: DPoP` with a DPoP proof of its key for a
   * DPoP-bound one (docs/resource-servers.md, "DPoP-bound tokens"). `url`
   * is the request's URL as the API publishes it (never one built from the
   * `Host` header). Throws as `verify` does, and `InvalidDpopProof` or
   * `UseDpopNonce` (status 401) for a bad proof. A DPoP-bound token given
   * to `verify` (presented as Bearer) is refused.
   */
  verifyRequest(request: ResourceRequest, requirements?: CustomerAccessRequirements): Promise<CustomerAccess>;
  /** A fresh DPoP nonce, for `DPoP-Nonce` on a successful answer to a DPoP request (RFC 9449 §9). */
  dpopNonce(): string;
  /** Stops listening to changes and closes the database. */
  close(): Promise<void>;
}

/**
 * Opens the resource-server check for one of the platform's APIs, from the
 * same configuration as Connect (the same `DATABASE_URL`,
 * `CONNECT_MASTER_KEY`, `CONNECT_AUTH_URL` and `CONNECT_BASE_URL`). It
 * hears the database's change signal, so a refresh, a revocation, a lock,
 * a disabled client or a key rotation reaches it within a second, while it
 * reads nothing from the database for tokens whose session did not change.
 *
 * @example
 * const connect = await openCustomerAccessCheck(environmentVariables);
 * const { profileId } = await connect.verify(bearerTokenFromRequest);
 * await connect.verify(bearerTokenFromRequest, { scopes: ['payments:read'] });
 * await connect.verify(bearerTokenFromRequest, { acr: ['phr'], maxAge: 300 });
 */
export async function openCustomerAccessCheck(
  env: Readonly<Record<string, string | undefined>>,
  clock: Clock = systemClock,
): Promise<OpenedCustomerAccessCheck> {
  const config = loadConfig(env);
  if (!config.authUrl) throw new ConfigError('CONNECT_AUTH_URL is required to check tokens outside the Connect server');
  const masterKeys = new MasterKeys(resolveMasterKey(config), config.previousMasterKey);
  const storage = openStorage(config.database, storageOptions(config));
  let changes: ChangeFeed | undefined;
  try {
    const feed = storage.openChangeFeed();
    changes = feed;
    // docs/operator-guide.md, "Replacing the master key": which key writes, which are still accepted.
    const records = await storage.masterKeys.listMasterKeys();
    try {
      checkConfiguredKeys(records, masterKeys.current.fingerprint, masterKeys.previous?.fingerprint);
    } catch (error) {
      throw error instanceof MasterKeyMismatch ? new ConfigError(error.message) : error;
    }
    await masterKeys.apply(records);
    const stopFollowing = followMasterKeys(storage.masterKeys, masterKeys, feed);
    const keys = await openKeyRing({ keys: storage.keys, sealKey: masterKeys.subKeys('key-sealing'), clock, changes: feed });
    const urls = { authUrl: config.authUrl, baseUrl: config.baseUrl ?? config.authUrl };
    // Proof jtis go to Connect's own replay store, and nonces are keyed as Connect's: a proof is accepted once everywhere.
    const dpop = { clock, replay: storage.usedJtis, nonces: createDpopNonces(masterKeys.subKeys('dpop-nonce'), clock) };
    const check = createCustomerAccessCheck({ keys: keys.keyRing, clock, urls, tokenSessions: storage.tokenSessions, changes: feed, dpop });
    return {
      verify: (token, requirements) => check.verify(token, requirements),
      verifyRequest: (request, requirements) => check.verifyRequest(request, requirements),
      dpopNonce: () => check.dpopNonce(),
      async close() {
        stopFollowing();
        keys.close();
        check.close();
        await feed.close();
        await storage.close();
      },
    };
  } catch (error) {
    await changes?.close();
    await storage.close().catch(() => {});
    throw error;
  }
}
