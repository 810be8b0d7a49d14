import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { authenticateClient } from '../core/clients/client-authenticate.js';
import { cacheClientLookup } from '../core/clients/cached-client-lookup.js';
import type { ClientSecretHasher } from '../core/clients/client-secret.js';
import type { Clock } from '../core/clock.js';
import type { Environment } from '../core/environment.js';
import { TemporarilyUnavailable } from '../core/errors.js';
import { clientCredentialsGrant } from '../core/grants/client-credentials.js';
import { bindGrant, createGrantRegistry } from '../core/grants/registry.js';
import type { KeyRing } from '../core/keys/key-ring.js';
import type { PublicUrls } from '../core/tokens/public-urls.js';
import type { Storage } from '../storage/ports.js';
import { registerErrorHandling } from './plugins/oauth-errors.js';
import { registerSecurityHeaders } from './plugins/security-headers.js';
import { healthRoutes } from './routes/health.js';
import { tokenRoutes } from './routes/token.js';
import { wellKnownRoutes } from './routes/well-known.js';

/** Everything the HTTP app is wired from. */
export interface AppDeps {
  readonly environment: Environment;
  readonly accessTokenTtlSeconds: number;
  readonly storage: Storage;
  readonly keyRing: KeyRing;
  readonly hasher: ClientSecretHasher;
  readonly clock: Clock;
  readonly urls: PublicUrls;
  /** A pino logger, or `false` for none. */
  readonly logger: FastifyBaseLogger | false;
}

/**
 * Builds the Connect HTTP app from its dependencies. It never listens: the
 * caller (`server.ts`, or a test through `inject()`) decides.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    bodyLimit: 64 * 1024,
    return503OnClosing: true,
    requestTimeout: 30_000,
  });

  registerSecurityHeaders(app, { hsts: deps.environment === 'production' });
  registerErrorHandling(app);

  const grants = createGrantRegistry([
    bindGrant(clientCredentialsGrant, {
      keys: deps.keyRing,
      clock: deps.clock,
      urls: deps.urls,
      accessTokenTtlSeconds: deps.accessTokenTtlSeconds,
    }),
  ]);
  const findClient = cacheClientLookup(async (id) => {
    try {
      return await deps.storage.clients.findClient(id);
    } catch (error) {
      // The database is out of reach: tell the client to retry rather than fail for good.
      throw new TemporarilyUnavailable('the service is temporarily unavailable; retry shortly', { cause: error });
    }
  }, deps.clock);
  const authenticate = (input: Parameters<typeof authenticateClient>[0]) =>
    authenticateClient(input, { findClient, hasher: deps.hasher, environment: deps.environment });

  await app.register(tokenRoutes, { grants, authenticate });
  await app.register(wellKnownRoutes, { urls: deps.urls, keyRing: deps.keyRing, grants });
  await app.register(healthRoutes, { storage: deps.storage });
  return app;
}
