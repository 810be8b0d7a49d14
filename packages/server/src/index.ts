/**
 * The Connect server package: build the app, start a server, run the CLI.
 * The command line is `connect-auth` (`bin/connect-auth.js`).
 */
export { buildApp, type AppDeps } from './http/app.js';
export { startServer, type RunningServer, type StartOptions } from './http/server.js';
export { runCli } from './cli/main.js';
export { loadConfig, ConfigError } from './config/load.js';
export type { Config } from './config/schema.js';
export { fixedClock, systemClock, type Clock, type FixedClock } from './core/clock.js';

// The resource-server check for the platform's other APIs (see docs/resource-servers.md).
export { openCustomerAccessCheck, type OpenedCustomerAccessCheck } from './compose/resource-server.js';
export {
  createCustomerAccessCheck,
  type CustomerAccess,
  type CustomerAccessCheck,
  type CustomerAccessCheckDeps,
  type CustomerAccessRequirements,
} from './core/tokens/customer-access-check.js';
export { ACR_PIN_SMS, ACR_VALUES_SUPPORTED, type Authentication } from './core/authentication.js';
export { KeyRing } from './core/keys/key-ring.js';
export { CHANGE_SIGNAL_TRUST_MS } from './core/lifetimes.js';
export { localChangeFeed, type Change, type ChangeFeed } from './core/changes/change-feed.js';
export { deriveKey } from './core/keys/master-key.js';
export { openStorage } from './storage/kysely/open-storage.js';
export type { DatabaseLocation } from './core/storage/storage.js';
export { resolveMasterKey } from './config/master-key-file.js';
export { InsufficientScope, InvalidToken, OAuthError } from './core/errors.js';
