import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createLocalJWKSet, jwtVerify, type JWTPayload, type ProtectedHeaderParameters } from 'jose';
import { onTestFinished } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { createLogger } from '../../src/http/logger.js';
import { ClientSecretHasher } from '../../src/core/clients/client-secret.js';
import { registerClient, type RegisterClientInput } from '../../src/core/clients/manage-clients.js';
import { fixedClock, type FixedClock } from '../../src/core/clock.js';
import type { Environment } from '../../src/core/environment.js';
import { KeyRing } from '../../src/core/keys/key-ring.js';
import { deriveKey } from '../../src/core/keys/master-key.js';
import { OtpHasher } from '../../src/core/login/one-time-pin.js';
import type { SendLimiter } from '../../src/core/limits/send-limiter.js';
import type { SmsSender } from '../../src/core/sms/sms-sender.js';
import { createLimits } from '../../src/limits/create-limits.js';
import { DEFAULTS } from '../../src/config/schema.js';
import { createOutboxSender } from '../../src/sms/outbox-sender.js';
import { openStorage, type DatabaseLocation } from '../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../src/storage/ports.js';

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
  /** The SMS sender; default: the sandbox outbox of the app's storage. */
  readonly sms?: SmsSender;
  /** The one-time-PIN send limiter; default: in the app's database, on its clock, with the environment's default budgets. */
  readonly sendLimiter?: SendLimiter;
  /** Capture logs (JSON lines) into `logs`. */
  readonly captureLogs?: boolean;
}

/** A built app with the parts a test needs to reach. */
export interface TestApp {
  readonly app: FastifyInstance;
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
  /** Verifies a client access token against the app's JWKS document. */
  verifyAccessToken(token: string): Promise<{ payload: JWTPayload; protectedHeader: ProtectedHeaderParameters }>;
}

/**
 * Builds the app on a fresh in-memory SQLite database (unless told
 * otherwise) with a fixed clock, and closes everything when the test ends.
 */
export async function build(options: BuildOptions = {}): Promise<TestApp> {
  const clock = options.clock ?? fixedClock(T0);
  const environment = options.environment ?? 'sandbox';
  const masterKey = options.masterKey ?? randomBytes(32);
  const storage = options.storage ?? openStorage(options.database ?? { engine: 'sqlite', path: ':memory:' });
  await storage.migrate();
  const hasher = new ClientSecretHasher(deriveKey(masterKey, 'client-secret-hmac'));
  const keyRing = await KeyRing.open({ keys: storage.keys, sealKey: deriveKey(masterKey, 'key-sealing'), clock });
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
  const app = await buildApp({
    environment,
    accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? 3600,
    refreshTokenTtlSeconds: options.refreshTokenTtlSeconds ?? 604_800,
    codeTtlSeconds: options.codeTtlSeconds ?? 300,
    sessionIdleSeconds: options.sessionIdleSeconds ?? 1800,
    sessionTtlSeconds: options.sessionTtlSeconds ?? 43_200,
    trustProxy: false,
    sms: options.sms ?? createOutboxSender(storage.outbox, clock),
    sendLimiter:
      options.sendLimiter ??
      createLimits({
        counters: storage.rateLimitCounters,
        budgets: {
          smsLimitPerMobile: DEFAULTS.smsLimitPerMobile,
          smsLimitPerAddress: DEFAULTS.smsLimitPerAddress[environment],
          pinLimitPerAddress: DEFAULTS.pinLimitPerAddress[environment],
        },
        nowMs: () => clock.nowSeconds() * 1000,
      }).sends,
    otpHasher: new OtpHasher(deriveKey(masterKey, 'otp-hmac')),
    csrfKey: deriveKey(masterKey, 'csrf'),
    idempotencyKey: deriveKey(masterKey, 'idempotency'),
    storage,
    keyRing,
    hasher,
    clock,
    urls: { authUrl: TEST_AUTH_URL, baseUrl: TEST_BASE_URL },
    logger,
  });
  onTestFinished(async () => {
    await app.close();
    if (!options.storage) await storage.close();
  });
  return {
    app,
    storage,
    clock,
    keyRing,
    hasher,
    masterKey,
    environment,
    logs,
    async createClient(input = {}) {
      const { client, clientSecret } = await registerClient(
        { name: 'Acme', redirectUri: 'https://acme.example/callback', ...input },
        { clients: storage.clients, hasher, clock, environment },
      );
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
