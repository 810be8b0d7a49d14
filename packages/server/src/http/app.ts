import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { createAuditLog } from '../core/audit/audit-log.js';
import { authenticateClient, type ClientAuthInput } from '../core/clients/client-authenticate.js';
import { cacheClientLookup } from '../core/clients/cached-client-lookup.js';
import { rememberVerifiedSecrets } from '../core/clients/verified-secrets.js';
import type { ClientSecretHasher } from '../core/clients/client-secret.js';
import type { Clock } from '../core/clock.js';
import type { Environment } from '../core/environment.js';
import { InvalidClient, TemporarilyUnavailable } from '../core/errors.js';
import { authorizationCodeGrant } from '../core/grants/authorization-code.js';
import { clientCredentialsGrant } from '../core/grants/client-credentials.js';
import { refreshTokenGrant } from '../core/grants/refresh-token.js';
import { createCustomerAccessCheck } from '../core/tokens/customer-access-check.js';
import type { OtpHasher } from '../core/login/one-time-pin.js';
import type { SendLimiter } from '../core/limits/send-limiter.js';
import type { SmsSender } from '../core/sms/sms-sender.js';
import { bindGrant, createGrantRegistry } from '../core/grants/registry.js';
import type { KeyRing } from '../core/keys/key-ring.js';
import type { PublicUrls } from '../core/tokens/public-urls.js';
import type { Storage } from '../storage/ports.js';
import { requestLogging } from './plugins/request-log.js';
import { registerErrorHandling } from './plugins/oauth-errors.js';
import { registerSecurityHeaders } from './plugins/security-headers.js';
import { assetRoutes } from './routes/assets.js';
import { authorizeRoutes } from './routes/authorize.js';
import { customerProfileRoutes } from './routes/customer-profile.js';
import { customerTokenRoutes } from './routes/customer-tokens.js';
import { tokenStateRoutes } from './routes/token-state.js';
import { healthRoutes } from './routes/health.js';
import { loginRoutes } from './routes/login.js';
import { sandboxRoutes } from './routes/sandbox.js';
import { tokenRoutes } from './routes/token.js';
import { wellKnownRoutes } from './routes/well-known.js';

/** Everything the HTTP app is wired from. */
export interface AppDeps {
  readonly environment: Environment;
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  readonly codeTtlSeconds: number;
  readonly sessionIdleSeconds: number;
  readonly sessionTtlSeconds: number;
  /** Read the client address from `X-Forwarded-For` (a proxy in front). */
  readonly trustProxy: boolean;
  readonly storage: Storage;
  /** Delivers one-time PINs. */
  readonly sms: SmsSender;
  readonly sendLimiter: SendLimiter;
  readonly otpHasher: OtpHasher;
  /** Keys the CSRF tokens of the hosted pages. */
  readonly csrfKey: Uint8Array;
  /** Seals the responses `POST /tokens` keeps for idempotent retries. */
  readonly idempotencyKey: Uint8Array;
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
    // One line per request instead of Fastify's two, and a request's child logger only when it logs more.
    ...(deps.logger ? requestLogging(deps.logger) : { logger: false }),
    bodyLimit: 64 * 1024,
    return503OnClosing: true,
    requestTimeout: 30_000,
    trustProxy: deps.trustProxy,
  });

  registerSecurityHeaders(app, { hsts: deps.environment === 'production' });
  registerErrorHandling(app);

  const { storage, clock, urls } = deps;
  const audit = createAuditLog(storage.audit, clock, (error) => app.log.error({ err: error }, 'writing the audit log failed'));
  const tokenDeps = {
    keys: deps.keyRing,
    clock,
    urls,
    accessTokenTtlSeconds: deps.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: deps.refreshTokenTtlSeconds,
  };
  const refreshDeps = { ...tokenDeps, tokenSessions: storage.tokenSessions, audit };
  const grants = createGrantRegistry([
    bindGrant(clientCredentialsGrant, tokenDeps),
    bindGrant(authorizationCodeGrant, { ...tokenDeps, audit, codes: storage.codes, transaction: (work) => storage.transaction(work) }),
    bindGrant(refreshTokenGrant, refreshDeps),
  ]);
  const findClient = cacheClientLookup(async (id) => {
    try {
      return await storage.clients.findClient(id);
    } catch (error) {
      // The database is out of reach: tell the client to retry rather than fail for good.
      throw new TemporarilyUnavailable('the service is temporarily unavailable; retry shortly', { cause: error });
    }
  }, clock);
  // A secret that verified is recognised for the client cache time without a new HMAC.
  const secrets = rememberVerifiedSecrets(deps.hasher, clock);
  const authenticate = async (input: ClientAuthInput) => {
    try {
      return await authenticateClient(input, { findClient, secrets, environment: deps.environment, clock });
    } catch (error) {
      if (error instanceof InvalidClient) {
        await audit.record({
          type: 'client.authentication_failed',
          actor: `ip:${input.ip ?? 'unknown'}`,
          subject: error.claimedClientId ?? null,
          outcome: 'failure',
          details: { method: error.attemptedMethod, reason: error.description },
        });
      }
      throw error;
    }
  };

  const flow = {
    findClient,
    requests: storage.authorizationRequests,
    customers: storage.customers,
    audit,
    sessions: storage.customerSessions,
    codes: storage.codes,
    clock,
    get issuer() {
      return urls.authUrl;
    },
    codeTtlSeconds: deps.codeTtlSeconds,
    sessionIdleSeconds: deps.sessionIdleSeconds,
    sessionTtlSeconds: deps.sessionTtlSeconds,
    otp: { challenges: storage.otpChallenges, hasher: deps.otpHasher, sms: deps.sms, limiter: deps.sendLimiter, clock },
  };

  await app.register(tokenRoutes, { grants, authenticate });
  await app.register(authorizeRoutes, { flow, environment: deps.environment });
  await app.register(loginRoutes, { flow, environment: deps.environment, csrfKey: deps.csrfKey, sessionTtlSeconds: deps.sessionTtlSeconds });
  await app.register(customerTokenRoutes, {
    bearer: { ...tokenDeps, findClient, revokedTokens: storage.revokedTokens },
    refresh: refreshDeps,
    idempotency: { idempotentRequests: storage.idempotentRequests, sealKey: deps.idempotencyKey, clock },
  });
  await app.register(tokenStateRoutes, {
    authenticate,
    state: { ...tokenDeps, tokenSessions: storage.tokenSessions, revokedTokens: storage.revokedTokens },
  });
  const check = createCustomerAccessCheck({ ...tokenDeps, tokenSessions: storage.tokenSessions });
  await app.register(customerProfileRoutes, { check, customers: storage.customers });
  await app.register(assetRoutes);
  if (deps.environment === 'sandbox') await app.register(sandboxRoutes, { outbox: storage.outbox });
  await app.register(wellKnownRoutes, { urls, keyRing: deps.keyRing, grants });
  await app.register(healthRoutes, { storage });
  return app;
}
