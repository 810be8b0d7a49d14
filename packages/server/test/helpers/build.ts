import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createLocalJWKSet, jwtVerify, type JWTPayload, type ProtectedHeaderParameters } from 'jose';
import { onTestFinished } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { createLogger } from '../../src/http/logger.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { compose } from '../../src/compose/compose.js';
import type { ServiceOverrides, Services } from '../../src/compose/services.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import type { ClientSecretHasher } from '../../src/core/clients/client-secret.js';
import { registerClient, registerResourceServer, type RegisterClientInput } from '../../src/core/clients/manage-clients.js';
import { fixedClock, type FixedClock } from '../../src/core/clock.js';
import type { Environment } from '../../src/core/environment.js';
import type { PinCheckQueue } from '../../src/core/customers/pin.js';
import type { ScryptParams } from '../../src/core/customers/pin-hash-workers.js';
import { TEST_PIN_HASH_COST } from './pin-hash.js';
import type { KeyRing } from '../../src/core/keys/key-ring.js';
import type { SmsSender } from '../../src/core/sms/sms-sender.js';
import { createOutboxSender } from '../../src/sms/outbox-sender.js';
import type { DatabaseLocation, Storage } from '../../src/core/storage/storage.js';

/** A start time for fixed clocks: 2026-01-01T00:00:00Z. */
export const T0 = 1_767_225_600;

/** The auth and base URLs test apps pretend to live at. */
export const TEST_AUTH_URL = 'https://auth.connect.test';
export const TEST_BASE_URL = 'https://api.connect.test';

/** What `build` can override. */
export interface BuildOptions {
  readonly clock?: FixedClock;
  readonly environment?: Environment;
  readonly database?: DatabaseLocation;
  /** An already open storage (e.g. shared by two apps); not closed by this helper. */
  readonly storage?: Storage;
  readonly masterKey?: Buffer;
  readonly accessTokenTtlSeconds?: number;
  readonly refreshTokenTtlSeconds?: number;
  readonly codeTtlSeconds?: number;
  readonly sessionIdleSeconds?: number;
  readonly sessionTtlSeconds?: number;
  /** More configuration, as environment variables (e.g. `CONNECT_SMS_LIMIT_PER_ADDRESS`). */
  readonly env?: Readonly<Record<string, string>>;
  /** The SMS sender; default: the sandbox outbox of the app's storage. */
  readonly sms?: SmsSender;
  /** The limits; default: as configured (shared through the database). */
  readonly limits?: ServiceOverrides['limits'];
  /** The PIN-check queue; default: as the server builds it, hashing the PINs customers set at `pinHashCost`. */
  readonly pinChecks?: PinCheckQueue;
  /** The scrypt cost of the PINs customers set; default {@link TEST_PIN_HASH_COST}, `PIN_HASH_COST` for Connect's own. */
  readonly pinHashCost?: ScryptParams;
  /** Capture logs (JSON lines) into `logs`. */
  readonly captureLogs?: boolean;
  /**
   * Leave closing to the caller (`TestApp.close`), for an app that serves
   * every test of a file; by default everything closes when the test that
   * built it ends.
   */
  readonly closedByCaller?: boolean;
}

/** A built app with the parts a test needs to reach. */
export interface TestApp {
  readonly app: FastifyInstance;
  readonly services: Services;
  readonly storage: Storage;
  readonly clock: FixedClock;
  readonly keyRing: KeyRing;
  readonly hasher: ClientSecretHasher;
  readonly masterKey: Buffer;
  readonly environment: Environment;
  /** Log lines written so far (when `captureLogs`). */
  readonly logs: string[];
  /** Registers a client straight through core; returns its ID and secret. */
  createClient(input?: Partial<RegisterClientInput>): Promise<{ id: string; secret: string }>;
  /** Registers a resource server straight through core; returns its ID and secret. */
  createResourceServer(name?: string): Promise<{ id: string; secret: string }>;
  /** Verifies a client access token against the app's JWKS document. */
  verifyAccessToken(token: string): Promise<{ payload: JWTPayload; protectedHeader: ProtectedHeaderParameters }>;
  /** Closes the app, its services and (unless given) its storage; done by itself unless `closedByCaller`. */
  close(): Promise<void>;
}

/** The configuration of a test app: the server's own loader over test settings. */
export function testConfig(options: BuildOptions & { masterKey: Buffer }): Config {
  const database = options.database ?? { engine: 'sqlite', path: ':memory:' };
  const env: Record<string, string> = {
    CONNECT_ENVIRONMENT: options.environment ?? 'sandbox',
    DATABASE_URL: database.engine === 'sqlite' ? `sqlite:${database.path}` : database.url,
    CONNECT_MASTER_KEY: options.masterKey.toString('base64'),
    CONNECT_AUTH_URL: TEST_AUTH_URL,
    CONNECT_BASE_URL: TEST_BASE_URL,
    // Production requires a gateway; the tests replace the sender (`sms`) all the same.
    ...(options.environment === 'production'
      ? { CONNECT_SMS_WEBHOOK_URL: 'https://sms.connect.test/send', CONNECT_SMS_WEBHOOK_SECRET: 'test-webhook-secret' }
      : {}),
    ...options.env,
  };
  const ttl = (name: string, value: number | undefined) => {
    if (value !== undefined) env[name] = String(value);
  };
  ttl('CONNECT_ACCESS_TOKEN_TTL', options.accessTokenTtlSeconds);
  ttl('CONNECT_REFRESH_TOKEN_TTL', options.refreshTokenTtlSeconds);
  ttl('CONNECT_CODE_TTL', options.codeTtlSeconds);
  ttl('CONNECT_SESSION_IDLE_TTL', options.sessionIdleSeconds);
  ttl('CONNECT_SESSION_TTL', options.sessionTtlSeconds);
  return loadConfig(env);
}

/**
 * Builds the app the way the server does (the composition root), on a fresh
 * in-memory SQLite database (unless told otherwise) with a fixed clock, and
 * closes everything when the test ends.
 */
export async function build(options: BuildOptions = {}): Promise<TestApp> {
  const clock = options.clock ?? fixedClock(T0);
  const environment = options.environment ?? 'sandbox';
  const masterKey = options.masterKey ?? randomBytes(32);
  const config = testConfig({ ...options, masterKey });
  const runtime = await openRuntime(config, clock, options.storage ? { storage: options.storage } : {});
  const { storage } = runtime;
  const logs: string[] = [];
  const logger = options.captureLogs
    ? createLogger({
        level: 'debug',
        destination: new Writable({
          write(chunk, _encoding, done) {
            logs.push(String(chunk));
            done();
          },
        }),
      })
    : false;
  const services = await compose(runtime).services({
    sms: options.sms ?? createOutboxSender(storage.outbox, clock),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.pinChecks ? { pinChecks: options.pinChecks } : {}),
    pinHashCost: options.pinHashCost ?? TEST_PIN_HASH_COST,
    ...(logger ? { log: logger } : {}),
  });
  const app = await buildApp({ services, logger });
  const close = async () => {
    await app.close();
    await services.close();
    if (!options.storage) await storage.close();
  };
  if (!options.closedByCaller) onTestFinished(close);
  const { keyRing, runtime: { hasher } } = services;
  return {
    app,
    services,
    storage,
    clock,
    keyRing,
    hasher,
    masterKey,
    environment,
    logs,
    close,
    async createClient(input = {}) {
      const { client, clientSecret } = await registerClient(
        { name: 'Acme', redirectUri: 'https://acme.example/callback', ...input },
        { clients: storage.clients, hasher, clock, environment },
      );
      // A fapi2 client has no secret.
      return { id: client.id, secret: clientSecret ?? '' };
    },
    async createResourceServer(name = 'Payments API') {
      const { client, clientSecret } = await registerResourceServer({ name }, { clients: storage.clients, hasher, clock, environment });
      return { id: client.id, secret: clientSecret };
    },
    async verifyAccessToken(token) {
      const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(keyRing.jwks()), {
        issuer: TEST_AUTH_URL,
        audience: TEST_BASE_URL,
        typ: 'at+jwt',
        algorithms: ['ES256'],
        currentDate: new Date(clock.nowSeconds() * 1000),
      });
      return { payload, protectedHeader };
    },
  };
}

/** `Basic base64(id:secret)` with both parts form-encoded (RFC 6749 §2.3.1). */
export function basicAuth(id: string, secret: string): string {
  const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}

/** A form body from pairs (pairs, so tests can repeat a parameter). */
export function form(pairs: Record<string, string> | ReadonlyArray<readonly [string, string]>): string {
  const entries = Array.isArray(pairs) ? pairs : Object.entries(pairs);
  return new URLSearchParams(entries as [string, string][]).toString();
}
