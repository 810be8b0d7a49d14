import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Services } from '../compose/services.js';
import type { TrustProxy } from '../config/schema.js';
import { REQUEST_TIMEOUT_MS } from '../core/lifetimes.js';
import { refuseControlCharacters } from './plugins/control-characters.js';
import { requestLogging } from './plugins/request-log.js';
import { registerErrorHandling } from './plugins/oauth-errors.js';
import { declareRequestDeadlines, requestDeadlines } from './plugins/request-deadline.js';
import { requestCounter, stepOutcome } from './plugins/request-metrics.js';
import { securityHeaders } from './plugins/security-headers.js';
import { assetRoutes } from './routes/assets.js';
import { customerProfileRoutes } from './routes/customer-profile.js';
import { customerTokenRoutes } from './routes/customer-tokens.js';
import { tokenStateRoutes } from './routes/token-state.js';
import { healthRoutes } from './routes/health.js';
import { journeyRoutes } from './routes/journey.js';
import { openApiRoutes } from './routes/openapi.js';
import { parRoutes } from './routes/par.js';
import { sandboxRoutes } from './routes/sandbox.js';
import { tokenRoutes } from './routes/token.js';
import { wellKnownRoutes } from './routes/well-known.js';

/** What the HTTP app is built from. */
export interface AppDeps {
  /** Every dependency, from the composition root (`compose/services.ts`). */
  readonly services: Services;
  /** A pino logger, or `false` for none. */
  readonly logger: FastifyBaseLogger | false;
  /**
   * True once the server was told to stop but still serves
   * (`CONNECT_SHUTDOWN_DELAY`): `/readyz` answers 503 and every response
   * closes its connection, as once the app closes. Default: never.
   */
  readonly draining?: () => boolean;
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

/** An incoming `X-Request-Id` that is kept: 1 to 128 of `A-Z a-z 0-9 . _ : -`. */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's ID: its own `X-Request-Id` when that is well formed, else a
 * fresh UUID, so that IDs of several instances never collide and a bad
 * header is neither an error nor echoed (docs/operator-guide.md, "Request IDs").
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
}

/**
 * Builds the Connect HTTP app from its dependencies: only routes and
 * plugins, wired to the composed services. It never listens: the caller
 * (`server.ts`, or a test through `inject()`) decides.
 */
export async function buildApp({ services, logger, draining = () => false }: AppDeps): Promise<FastifyInstance> {
  const { config, storage, csrfKey, demoKey, clock } = services.runtime;
  const headers = securityHeaders({ hsts: config.environment === 'production' });
  const deadlines = requestDeadlines(config.requestTimeoutMs);
  const count = requestCounter(services.metrics);
  // The end of every request: its deadline is over, it is counted. Run by
  // the log controller, before the request line, where Fastify would run
  // an `onResponse` hook (`request-log.ts`).
  const completed = (request: FastifyRequest, reply: FastifyReply) => {
    deadlines.finish(request);
    count(request, reply);
  };
  const app = Fastify({
    // One line per request instead of Fastify's two, and a request's child logger only when it logs more.
    ...(logger ? requestLogging(logger, completed) : { logger: false }),
    bodyLimit: 64 * 1024,
    // Requests that arrive on a connection already open while the server
    // closes are answered in full (with `Connection: close`), not refused:
    // no accepted request is cut off (docs/operator-guide.md, "Readiness and shutdown").
    return503OnClosing: false,
    requestTimeout: REQUEST_TIMEOUT_MS,
    trustProxy: trustProxyOption(config.trustProxy),
    requestIdHeader: false,
    genReqId: requestIdOf,
  });
  declareRequestDeadlines(app);
  // Without a logger Fastify tells no log controller that a request ended
  // (it does not even watch for the end): a hook does the same work then.
  if (!logger) {
    app.addHook('onResponse', (request, reply, done) => {
      completed(request, reply);
      done();
    });
  }

  // From the moment the server is told to stop (while it still serves, then
  // as the app closes), every response ends its connection: a client opens
  // its next one where the load balancer sends it, and no keep-alive
  // connection holds the shutdown open (docs/operator-guide.md, "Readiness
  // and shutdown"). Requests in flight when the app closes get it too.
  let appClosing = false;
  const closing = () => appClosing || draining();
  app.addHook('preClose', (done) => {
    appClosing = true;
    deadlines.forEachUnsent((reply) => reply.header('connection', 'close'));
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    deadlines.close();
    done();
  });

  // The work every request needs when it arrives, in one hook: each hook
  // Fastify runs costs every request, so there is one where there could
  // be four (bench/README.md, "Side by side on one core"). What it needs
  // at its end runs in the log controller (`completed` above).
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(headers);
    // Every response carries the request's ID, errors and 404s included.
    reply.header('x-request-id', request.id);
    if (closing()) reply.header('connection', 'close');
    deadlines.start(request, reply);
    done();
  });

  registerErrorHandling(app, services.outages, { sandbox: config.environment === 'sandbox' });
  refuseControlCharacters(app);

  await app.register(tokenRoutes, { grants: services.grants, authenticate: services.authenticate, dpop: { ...services.dpop, urls: services.urls } });
  await app.register(parRoutes, services.pushes);
  await app.register(journeyRoutes, {
    journey: services.journey,
    environment: config.environment,
    csrfKey,
    sessionTtlSeconds: config.lifetimes.sessionSeconds,
    authUrl: services.urls.authUrl,
    countStep: (step, result) => services.metrics.journeyStep(step, stepOutcome(result)),
  });
  await app.register(customerTokenRoutes, { bearer: services.bearer, refresh: services.refresh, idempotency: services.idempotency, baseUrl: () => services.urls.baseUrl });
  await app.register(tokenStateRoutes, { authenticate: services.authenticate, state: services.tokenState });
  await app.register(customerProfileRoutes, { check: services.customerAccess, customers: storage.customers, baseUrl: () => services.urls.baseUrl });
  await app.register(assetRoutes);
  if (config.environment === 'sandbox') {
    await app.register(sandboxRoutes, {
      outbox: storage.outbox,
      codes: storage.codes,
      findClient: services.findClient,
      urls: services.urls,
      demoKey,
      codeSeconds: config.lifetimes.codeSeconds,
      clock,
    });
  }
  await app.register(wellKnownRoutes, {
    urls: services.urls,
    keyRing: services.keyRing,
    grants: services.grants,
    jwksMaxAgeSeconds: config.lifetimes.jwksMaxAgeSeconds,
    scopesSupported: config.scopesSupported,
  });
  await app.register(healthRoutes, { checks: services.readiness, closing });
  await app.register(openApiRoutes, { urls: services.urls, environment: config.environment });
  return app;
}
