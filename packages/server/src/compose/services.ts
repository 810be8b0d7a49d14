import type { Redis } from 'ioredis';
import { currentRelease } from '../config/release.js';
import { ConfigError } from '../config/load.js';
import { createAuditLog, type AuditLog } from '../core/audit/audit-log.js';
import { auditClientAuthFailures } from '../core/audit/client-auth-failures.js';
import type { ChangeFeed } from '../core/changes/change-feed.js';
import { cacheRevocations } from '../core/tokens/cached-revocations.js';
import { cacheClientLookup } from '../core/clients/cached-client-lookup.js';
import { authenticateClient, type ClientAuthDeps, type ClientAuthInput } from '../core/clients/client-authenticate.js';
import { createClientJwksUriFetcher, type ClientJwksUriFetcher } from '../core/clients/client-jwks-uri.js';
import type { Client } from '../core/clients/client.js';
import { rememberVerifiedSecrets } from '../core/clients/verified-secrets.js';
import type { SecretRenewal } from '../core/clients/client-authenticate.js';
import { followMasterKeys } from './follow-master-keys.js';
import type { IdempotencyDeps } from '../core/customer-tokens/idempotent-refresh.js';
import type { RefreshDeps } from '../core/grants/refresh-token.js';
import { authorizationCodeGrant } from '../core/grants/authorization-code.js';
import { clientCredentialsGrant } from '../core/grants/client-credentials.js';
import { refreshTokenGrant } from '../core/grants/refresh-token.js';
import { bindGrant, createGrantRegistry, type GrantRegistry } from '../core/grants/registry.js';
import { createPinCheckQueue, type PinCheckQueue } from '../core/customers/pin.js';
import type { ScryptParams } from '../core/customers/pin-hash-workers.js';
import type { JourneyDeps } from '../core/journey/deps.js';
import type { PushDeps } from '../core/authorize/pushed-request.js';
import type { KeyRing } from '../core/keys/key-ring.js';
import { SmsDeliveryFailed, type SmsSender } from '../core/sms/sms-sender.js';
import { StorageUnavailable } from '../core/storage-errors.js';
import type { BearerDeps } from '../core/tokens/authenticate-bearer.js';
import { createCustomerAccessCheck, type CustomerAccessCheck } from '../core/tokens/customer-access-check.js';
import { createDpopNonces } from '../core/dpop/dpop-nonce.js';
import type { DpopProofDeps } from '../core/dpop/dpop-proof.js';
import type { TokenStateDeps } from '../core/tokens/introspect-token.js';
import type { TokenSessionStore } from '../core/tokens/token-session-store.js';
import { createLimits, type Limits } from '../limits/create-limits.js';
import { createMetrics, type Metrics } from '../metrics/metrics.js';
import { createSmsSender } from '../sms/create-sms-sender.js';
import { openKeyRing } from './key-ring.js';
import { createAfterAnswer, type AfterAnswer } from './after-answer.js';
import { createOutageLog, describeCause, type Dependency, type OutageLog } from './outage-log.js';
import type { Runtime } from './runtime.js';

/** Where composed services report what they cannot throw (an unexpected failure of background work, an outage: `outage-log.ts`). */
export interface ServiceLog {
  error(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** What a test (or a benchmark) may put in place of the configured parts. */
export interface ServiceOverrides {
  readonly sms?: SmsSender;
  readonly limits?: Limits;
  readonly pinChecks?: PinCheckQueue;
  /** The scrypt cost of the PINs customers set, when `pinChecks` is not given; by default `PIN_HASH_COST`. */
  readonly pinHashCost?: ScryptParams;
  readonly log?: ServiceLog;
  /** The change signal; by default the database's own (`Storage.openChangeFeed`). */
  readonly changes?: ChangeFeed;
  /** The metrics to count into; by default a registry of the services' own. */
  readonly metrics?: Metrics;
  /** The log of outages; by default one writing to `log` on the process's clock. */
  readonly outages?: OutageLog;
  /** Where the keys of clients registered with a `jwks_uri` come from; by default fetched over HTTP(S) with the documented limits. */
  readonly jwksUri?: ClientJwksUriFetcher;
}

/** Everything the HTTP app is built from, composed once. */
export interface Services {
  readonly runtime: Runtime;
  readonly keyRing: KeyRing;
  /**
   * The public URLs. Mutable until the server listens: with `PORT=0` the
   * auth URL is known only then (`http/server.ts` fills it in).
   */
  readonly urls: { authUrl: string; baseUrl: string };
  readonly audit: AuditLog;
  /** The change signal every cache of clients, sessions and keys listens to. */
  readonly changes: ChangeFeed;
  /** What the instance counts for Prometheus (`CONNECT_METRICS_PORT`). */
  readonly metrics: Metrics;
  /** Where failures of the database, Redis and the SMS gateway are counted and logged once per outage. */
  readonly outages: OutageLog;
  findClient(id: string): Promise<Client | undefined>;
  /** Client authentication at `/token`, `/introspect`, `/revoke` and `/par` (secrets or `private_key_jwt`); failures are audited. */
  authenticate(input: ClientAuthInput): Promise<Client>;
  readonly grants: GrantRegistry;
  readonly journey: JourneyDeps;
  /** `POST /par`: client authentication as at `/token`, the pushed requests and each client's budget of them. */
  readonly pushes: PushDeps;
  readonly refresh: RefreshDeps;
  readonly bearer: BearerDeps;
  readonly tokenState: TokenStateDeps;
  readonly customerAccess: CustomerAccessCheck;
  /** DPoP proof checks and server nonces (docs/resource-servers.md, "DPoP-bound tokens"). */
  readonly dpop: DpopProofDeps;
  readonly idempotency: IdempotencyDeps;
  /** Work run after a request's answer (a PIN reset's SMS); `idle()` waits for it. */
  readonly afterAnswer: AfterAnswer;
  /** What `/readyz` checks, by the name it reports when one fails: the database, and Redis when configured. */
  readonly readiness: Readonly<Record<string, () => Promise<unknown>>>;
  /** Closes what the services opened (Redis, the change signal); the runtime's storage is closed by its owner. */
  close(): Promise<void>;
}

/**
 * The server's part of the composition root (`compose.ts` hands it out as
 * `Composition.services`): builds every dependency of the HTTP app
 * from the runtime and the configuration, once, in one place.
 */
export async function composeServices(runtime: Runtime, overrides: ServiceOverrides = {}): Promise<Services> {
  const { config, clock, storage } = runtime;
  const log: ServiceLog = overrides.log ?? { error: () => {}, warn: () => {} };
  let signalLost = false;
  const changes =
    overrides.changes ??
    storage.openChangeFeed({
      onState: (state, error) => {
        if (state === 'lost' && !signalLost) log.warn({ cause: describeCause(error) }, 'change signal lost; caches read the database until it is back');
        else if (state === 'listening' && signalLost) log.warn({}, 'change signal back');
        signalLost = state === 'lost';
      },
    });
  try {
    return await assembleServices(runtime, overrides, log, changes);
  } catch (error) {
    // Nothing may keep the process alive after a failed start (the signal's connection would).
    if (!overrides.changes) await changes.close();
    throw error;
  }
}

/** {@link composeServices} once the change signal is open. */
async function assembleServices(runtime: Runtime, overrides: ServiceOverrides, log: ServiceLog, changes: ChangeFeed): Promise<Services> {
  const { config, clock, storage } = runtime;
  const outages = overrides.outages ?? createOutageLog(log);
  const stopObserving = storage.observeAvailability({
    unavailable: (error) => outages.failed('database', error),
    available: () => outages.succeeded('database'),
  });
  try {
    return await assembleObservedServices(runtime, overrides, log, changes, outages, stopObserving);
  } catch (error) {
    stopObserving();
    throw error;
  }
}

/** {@link assembleServices} once the storage's availability is observed. */
async function assembleObservedServices(
  runtime: Runtime,
  overrides: ServiceOverrides,
  log: ServiceLog,
  changes: ChangeFeed,
  outages: OutageLog,
  stopObserving: () => void,
): Promise<Services> {
  const { config, clock, storage } = runtime;
  /** Logs `error` as `message`, unless it is an unavailable dependency, which the log of outages counts instead. */
  const logFailure = (message: string) => (error: unknown) => {
    if (!(error instanceof StorageUnavailable)) log.error({ err: error }, message);
  };
  const keys = await openKeyRing({
    keys: storage.keys,
    sealKey: runtime.sealKey,
    clock,
    changes,
    onReloadFailure: logFailure('reading the keys failed; trying again in a second'),
  });
  const { keyRing } = keys;
  const tokenSessions = announcingLocally(storage.tokenSessions, changes);
  const urls = { authUrl: config.authUrl ?? '', baseUrl: config.baseUrl ?? config.authUrl ?? '' };
  const redis = config.redisUrl && !overrides.limits ? await connectRedis(config.redisUrl, config.redisTimeoutMs, outages) : undefined;

  const metrics = overrides.metrics ?? createMetrics({ poolStats: () => storage.poolStats(), release: currentRelease() });
  const audit = countedAudit(
    createAuditLog(storage.audit, clock, logFailure('writing the audit log failed')),
    metrics,
  );
  const tokens = { keys: keyRing, clock, urls, lifetimes: config.lifetimes };
  // Proof jtis are recorded in the database, so a proof is accepted once across instances; nonces are keyed from the master key.
  const dpop: DpopProofDeps = { clock, replay: storage.usedJtis, nonces: createDpopNonces(runtime.dpopNonceKey, clock) };
  const refresh: RefreshDeps = { ...tokens, tokenSessions, audit, reuse: { seconds: config.lifetimes.refreshReuseSeconds, sealKey: runtime.refreshReuseKey } };
  const grants = createGrantRegistry([
    bindGrant(clientCredentialsGrant, tokens),
    bindGrant(authorizationCodeGrant, { ...tokens, audit, codes: storage.codes, transaction: (work) => storage.transaction(work) }),
    bindGrant(refreshTokenGrant, refresh),
  ]);
  const findClient = cacheClientLookup((id) => storage.clients.findClient(id), changes);
  // A secret that verified is recognised for a few seconds without a new HMAC.
  const secrets = rememberVerifiedSecrets(runtime.hasher, clock);
  // docs/operator-guide.md, "Replacing the master key": the change signal
  // brings a rotation or a retirement; remembered secrets are checked again.
  const stopFollowingMasterKeys = followMasterKeys(
    storage.masterKeys,
    runtime.masterKeys,
    changes,
    logFailure('reading the master keys failed; trying again in a second'),
  );
  const stopForgetting = runtime.masterKeys.onChange(() => secrets.forget());
  const secretRenewal: SecretRenewal = {
    isCurrent: (hash) => runtime.hasher.isCurrent(hash),
    hash: (secret) => runtime.hasher.hash(secret),
    renewSecretHash: (id, which, expected, replacement) => storage.clients.renewSecretHash(id, which, expected, replacement),
  };
  const assertions: ClientAuthDeps['assertions'] = {
    get issuer() {
      return urls.authUrl;
    },
    usedJtis: storage.usedJtis,
    jwksUri:
      overrides.jwksUri ??
      createClientJwksUriFetcher({
        clock,
        allowHttp: config.environment === 'sandbox',
        // The client, the URI and why; never an assertion.
        onFetchFailure: (clientId, uri, reason) => log.warn({ client: clientId, jwksUri: uri, reason }, 'fetching the keys of a client from its jwks_uri failed'),
      }),
  };
  // One dependencies object for every request, not one made per request.
  const authDeps: ClientAuthDeps = { findClient, secrets, environment: config.environment, clock, assertions, secretRenewal };
  const authenticate = auditClientAuthFailures(
    (input: ClientAuthInput) => authenticateClient(input, authDeps),
    audit,
    clock,
  );

  // The database's counters are read on the service's clock (Redis keeps its own).
  const limits = overrides.limits ?? createLimits({
      redis,
      counters: storage.rateLimitCounters,
      budgets: config,
      keySecret: runtime.limitKey,
      nowMs: () => clock.nowSeconds() * 1000,
      redisAvailability: { unavailable: (error) => outages.failed('redis', error), available: () => outages.succeeded('redis') },
    });
  const afterAnswer = createAfterAnswer(logFailure('work after the answer failed'));
  // PIN hashes run on worker threads of the queue's own, ended with the services.
  const pinChecks = overrides.pinChecks ?? createPinCheckQueue({ hashCost: overrides.pinHashCost });
  const journey: JourneyDeps = {
    db: storage,
    findClient,
    clock,
    lifetimes: config.lifetimes,
    get issuer() {
      return urls.authUrl;
    },
    pinChecks,
    pinAttempts: limits.pinAttempts,
    journeyStarts: limits.journeyStarts,
    otpEntries: limits.otpEntries,
    resetSends: limits.resetSends,
    resetOtpEntries: limits.resetOtpEntries,
    sends: limits.sends,
    sms: observedSms(overrides.sms ?? createSmsSender(config, storage, clock), outages),
    otpHasher: runtime.otpHasher,
    knownDeviceKey: runtime.knownDeviceKey,
    audit,
    log,
    smsCountries: config.smsCountries,
    defaultCountry: config.defaultCountry,
    later: (work) => afterAnswer.run(work),
    webauthn: {
      rpId: config.webauthnRpId,
      // The auth URL's origin (known once the server listens), then CONNECT_WEBAUTHN_ORIGINS: matched exactly.
      get origins() {
        return webauthnOrigins(urls.authUrl, config.webauthnOrigins);
      },
      holdSeconds: config.passkeyHoldSeconds,
    },
    countSignIn: (method) => metrics.signIn(method),
  };

  const customerAccess = createCustomerAccessCheck({ ...tokens, tokenSessions: storage.tokenSessions, changes, dpop });
  const revokedTokens = cacheRevocations(storage.revokedTokens, changes);
  return {
    runtime,
    keyRing,
    urls,
    audit,
    changes,
    metrics,
    outages,
    findClient,
    authenticate,
    grants,
    journey,
    pushes: { authenticate, pushedRequests: storage.pushedRequests, pushes: limits.pushedRequests, clock, smsCountries: config.smsCountries, dpop: { ...dpop, urls } },
    refresh,
    bearer: { ...tokens, findClient, revokedTokens, dpop },
    dpop,
    tokenState: { ...tokens, tokenSessions, revokedTokens, findClient },
    customerAccess,
    idempotency: { idempotentRequests: storage.idempotentRequests, sealKey: runtime.idempotencyKey, clock },
    afterAnswer,
    readiness: {
      database: () => storage.ping(),
      ...(redis ? { redis: () => observed(redis.ping(), 'redis', outages) } : {}),
    },
    async close() {
      // An SMS still being handed to the gateway goes out before the storage closes.
      await afterAnswer.idle();
      findClient.close();
      stopFollowingMasterKeys();
      stopForgetting();
      revokedTokens.close();
      keys.close();
      customerAccess.close();
      if (!overrides.pinChecks) await pinChecks.close();
      if (!overrides.changes) await changes.close();
      redis?.disconnect();
      stopObserving();
    },
  };
}

/**
 * The token-session store, telling this instance's caches at once of a
 * session it changed (a refresh, a revocation): the database's own signal
 * reaches every instance, this one included, a moment later
 * (docs/tokens.md, "Refresh").
 */
function announcingLocally(store: TokenSessionStore, changes: ChangeFeed): TokenSessionStore {
  const told = (sid: string, changed: boolean) => {
    if (changed) changes.heard({ kind: 'session', key: sid });
    return changed;
  };
  return {
    ...store,
    replaceAccessToken: async (sid, update) => {
      const replaced = await store.replaceAccessToken(sid, update);
      // A reused token changed nothing.
      told(sid, replaced?.reused === false);
      return replaced;
    },
    revokeTokenSession: async (sid, now) => told(sid, await store.revokeTokenSession(sid, now)),
    revokeAccessToken: async (sid, accessJti) => told(sid, await store.revokeAccessToken(sid, accessJti)),
  };
}

/** The audit log, counting every event it records by type and outcome (SMS failures, lockouts, replays). */
function countedAudit(log: AuditLog, metrics: Metrics): AuditLog {
  return {
    record(event) {
      metrics.auditEvent(event.type, event.outcome);
      return log.record(event);
    },
    recordRepeated(event) {
      metrics.auditEvent(event.type, event.outcome);
      return log.recordRepeated(event);
    },
    recordIn(store, event) {
      metrics.auditEvent(event.type, event.outcome);
      return log.recordIn(store, event);
    },
  };
}

/** `operation`, its end told to the log of outages as `dependency`'s. */
async function observed<T>(operation: Promise<T>, dependency: Dependency, outages: OutageLog): Promise<T> {
  try {
    const result = await operation;
    outages.succeeded(dependency);
    return result;
  } catch (error) {
    outages.failed(dependency, error);
    throw error;
  }
}

/**
 * The SMS sender, telling the log of outages how each send to the gateway
 * ends. A send cut off because its request was already answered says
 * nothing about the gateway; a message the gateway answered and refused (a
 * 4xx) shows it reachable: only network errors, timeouts and 5xx count as
 * its outage.
 */
function observedSms(sender: SmsSender, outages: OutageLog): SmsSender {
  return {
    async send(message, options) {
      try {
        await sender.send(message, options);
      } catch (error) {
        if (error instanceof SmsDeliveryFailed && error.refused) outages.succeeded('sms_gateway');
        else if (!options?.signal?.aborted) outages.failed('sms_gateway', error);
        throw error;
      }
      outages.succeeded('sms_gateway');
    },
  };
}

/** Initial delay of TCP keep-alive probes on the Redis connection, ms. */
const REDIS_KEEP_ALIVE_MS = 10_000;

/**
 * Connects to Redis and asks it once: an unreachable Redis at start-up stops
 * start-up with a message naming `REDIS_URL` (never its password). Every
 * command afterwards is bounded by `timeoutMs` (`CONNECT_REDIS_TIMEOUT_MS`):
 * past it the limit throws and the request gets a 503; the client
 * reconnects by itself, a silent connection included.
 */
async function connectRedis(url: string, timeoutMs: number, outages: OutageLog): Promise<Redis> {
  // Loaded only when REDIS_URL is set: commands and a server without Redis start without it.
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    // A connection that owes an answer and receives nothing for this long is
    // silent (a partition): it is closed and a new one opened, so that the
    // instance works again as soon as the network does.
    socketTimeout: timeoutMs,
    keepAlive: REDIS_KEEP_ALIVE_MS,
  });
  let cause: Error | undefined;
  const firstError = (error: Error) => {
    cause ??= error;
  };
  redis.on('error', firstError);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    const { hostname, port } = new URL(url);
    throw new ConfigError(`REDIS_URL: cannot reach Redis at ${hostname}:${port || 6379} (${oneLineMessage(cause ?? error)})`);
  }
  // ioredis selects the database the URL names and, when Redis refuses it,
  // goes on in database 0 as if nothing happened: selected again here, a
  // database this Redis does not have stops start-up.
  const db = redis.options.db ?? 0;
  if (db !== 0) {
    try {
      await redis.select(db);
    } catch (error) {
      redis.disconnect();
      const { hostname, port } = new URL(url);
      throw new ConfigError(`REDIS_URL: Redis at ${hostname}:${port || 6379} has no database ${db} (${oneLineMessage(error)})`);
    }
  }
  redis.off('error', firstError);
  // Each failed reconnection says so: counted in the outage, not logged one by one.
  redis.on('error', (error: Error) => outages.failed('redis', error));
  redis.on('ready', () => outages.succeeded('redis'));
  return redis;
}

function oneLineMessage(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
}

/** The origins passkeys are accepted from: the auth URL's own, then the configured others, each once. */
function webauthnOrigins(authUrl: string, others: readonly string[]): readonly string[] {
  let own: string | undefined;
  try {
    own = authUrl === '' ? undefined : new URL(authUrl).origin;
  } catch {
    own = undefined;
  }
  return [...new Set([...(own ? [own] : []), ...others])];
}
