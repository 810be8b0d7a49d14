import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Services } from '../compose/services.js';
import type { TrustProxy } from '../config/schema.js';
import { REQUEST_TIMEOUT_MS } from '../core/lifetimes.js';
import { refuseControlCharacters } from './plugins/control-characters.js';
import { requestLogging } from './plugins/request-log.js';
import { registerErrorHandling } from './plugins/oauth-errors.js';
import { registerSecurityHeaders } from './plugins/security-headers.js';
import { assetRoutes } from './routes/assets.js';
import { customerProfileRoutes } from './routes/customer-profile.js';
import { customerTokenRoutes } from './routes/customer-tokens.js';
import { tokenStateRoutes } from './routes/token-state.js';
import { healthRoutes } from './routes/health.js';
import { journeyRoutes } from './routes/journey.js';
import { sandboxRoutes } from './routes/sandbox.js';
import { tokenRoutes } from './routes/token.js';
import { wellKnownRoutes } from './routes/well-known.js';

/** What the HTTP app is built from. */
export interface AppDeps {
  /** Every dependency, from the composition root (`compose/services.ts`). */
  readonly services: Services;
  /** A pino logger, or `false` for none. */
  readonly logger: FastifyBaseLogger | false;
}

/**
 * `CONNECT_TRUST_PROXY` as Fastify takes it: a number of hops as the
 * function Fastify itself makes of one (the first `hops` hops from this
 * server are trusted), a list as a copy of the frozen configuration's.
 */
function trustProxyOption(value: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof value === 'number') return (_address, hop) => hop < value;
  return typeof value === 'boolean' ? value : [...value];
}

/**
 * Builds the Connect HTTP app from its dependencies: only routes and
 * plugins, wired to the composed services. It never listens: the caller
 * (`server.ts`, or a test through `inject()`) decides.
 */
export async function buildApp({ services, logger }: AppDeps): Promise<FastifyInstance> {
  const { config, storage, csrfKey } = services.runtime;
  const app = Fastify({
    // One line per request instead of Fastify's two, and a request's child logger only when it logs more.
    ...(logger ? requestLogging(logger) : { logger: false }),
    bodyLimit: 64 * 1024,
    return503OnClosing: true,
    requestTimeout: REQUEST_TIMEOUT_MS,
    trustProxy: trustProxyOption(config.trustProxy),
  });

  registerSecurityHeaders(app, { hsts: config.environment === 'production' });
  registerErrorHandling(app);
  refuseControlCharacters(app);

  await app.register(tokenRoutes, { grants: services.grants, authenticate: services.authenticate });
  await app.register(journeyRoutes, { journey: services.journey, environment: config.environment, csrfKey, sessionTtlSeconds: config.lifetimes.sessionSeconds });
  await app.register(customerTokenRoutes, { bearer: services.bearer, refresh: services.refresh, idempotency: services.idempotency });
  await app.register(tokenStateRoutes, { authenticate: services.authenticate, state: services.tokenState });
  await app.register(customerProfileRoutes, { check: services.customerAccess, customers: storage.customers });
  await app.register(assetRoutes);
  if (config.environment === 'sandbox') await app.register(sandboxRoutes, { outbox: storage.outbox });
  await app.register(wellKnownRoutes, {
    urls: services.urls,
    keyRing: services.keyRing,
    grants: services.grants,
    jwksMaxAgeSeconds: services.runtime.config.lifetimes.jwksMaxAgeSeconds,
  });
  await app.register(healthRoutes, { storage });
  return app;
}
