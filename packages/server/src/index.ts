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
export { ACR_PHR, ACR_PIN_SMS, ACR_VALUES_SUPPORTED, type Authentication } from './core/authentication.js';
export { KeyRing } from './core/keys/key-ring.js';
export { CHANGE_SIGNAL_TRUST_MS } from './core/lifetimes.js';
export { localChangeFeed, type Change, type ChangeFeed } from './core/changes/change-feed.js';
export { deriveKey } from './core/keys/master-key.js';
export { openStorage } from './storage/kysely/open-storage.js';
export type { DatabaseLocation } from './core/storage/storage.js';
export { resolveMasterKey } from './config/master-key-file.js';
export { InsufficientScope, InsufficientUserAuthentication, InvalidToken, OAuthError } from './core/errors.js';

// Connect's request logging and security headers, for an embedder's own
// Fastify routes (and the benchmark's ceiling server, bench/README.md).
/** The server's logger: pino JSON lines with secrets redacted, as `connect-auth serve` logs. */
export { createLogger } from './http/logger.js';
/** The Fastify options that log one flat line per request through a logger, as Connect does. */
export { requestLogging } from './http/plugins/request-log.js';
/** The security headers Connect sets on every response, computed once (`hsts` for `https://` deployments). */
export { securityHeaders } from './http/plugins/security-headers.js';
