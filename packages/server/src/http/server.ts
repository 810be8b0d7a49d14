import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { systemClock, type Clock } from '../core/clock.js';
import { KEY_RELOAD_SECONDS, KeyRing } from '../core/keys/key-ring.js';
import type { PublicUrls } from '../core/tokens/public-urls.js';
import { DEMO_REDIRECT_URI, seedDemo, type DemoCredentials } from '../demo/seed-demo.js';
import { openRuntime } from '../compose/runtime.js';
import { buildApp } from './app.js';
import { createLogger } from './logger.js';
import type { DestinationStream } from 'pino';
import { Redis } from 'ioredis';
import { createLimits } from '../limits/create-limits.js';
import { createSmsSender } from '../sms/create-sms-sender.js';

/** How to start a server. */
export interface StartOptions {
  /** Environment variables to read the configuration from. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Create (or refresh) the sandbox demo client and print its credentials. */
  readonly seedDemo?: boolean;
  readonly clock?: Clock;
  /** Where start-up notes (demo credentials) are written; default stdout. */
  readonly print?: (text: string) => void;
  /** Where JSON logs go; default stdout. */
  readonly logDestination?: DestinationStream;
}

/** A running server. */
export interface RunningServer {
  readonly app: FastifyInstance;
  readonly config: Config;
  readonly urls: PublicUrls;
  /** The address actually bound, e.g. `http://127.0.0.1:3000`. */
  readonly address: string;
  readonly demo: DemoCredentials | undefined;
  /** Stops accepting requests, finishes those in flight, closes the database. */
  close(): Promise<void>;
}

/**
 * Loads the configuration, opens and migrates the database, loads the keys,
 * builds the app and listens. Throws `ConfigError` on bad configuration.
 */
export async function startServer(options: StartOptions): Promise<RunningServer> {
  const config = loadConfig(options.env);
  const clock = options.clock ?? systemClock;
  const print = options.print ?? ((text: string) => process.stdout.write(text));
  if (options.seedDemo && config.environment !== 'sandbox') {
    throw new Error('--seed-demo is for the sandbox only; production starts without demo data');
  }
  const logger = createLogger({ level: config.logLevel, ...(options.logDestination ? { destination: options.logDestination } : {}) });
  const runtime = await openRuntime(config, clock);
  const { storage } = runtime;
  let keyReload: NodeJS.Timeout | undefined;
  let redis: Redis | undefined;
  try {
    const keyRing = await KeyRing.open({ keys: storage.keys, sealKey: runtime.sealKey, clock });
    // With PORT=0 the real port is known after listen; URLs are filled in then.
    const urls = { authUrl: config.authUrl ?? '', baseUrl: config.baseUrl ?? config.authUrl ?? '' };
    redis = config.redisUrl ? new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 }) : undefined;
    redis?.on('error', (error: Error) => logger.warn({ err: error }, 'redis error'));
    const app = await buildApp({
      environment: config.environment,
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
      codeTtlSeconds: config.codeTtlSeconds,
      sessionIdleSeconds: config.sessionIdleSeconds,
      sessionTtlSeconds: config.sessionTtlSeconds,
      trustProxy: config.trustProxy,
      storage,
      keyRing,
      hasher: runtime.hasher,
      otpHasher: runtime.otpHasher,
      csrfKey: runtime.csrfKey,
      idempotencyKey: runtime.idempotencyKey,
      sms: createSmsSender(config, storage, clock),
      sendLimiter: createLimits({ redis, counters: storage.rateLimitCounters, budgets: config }).sends,
      clock,
      urls,
      logger,
    });
    const demo = options.seedDemo ? await seedDemo({ ...runtime, clients: storage.clients, customers: storage.customers, environment: config.environment }) : undefined;

    await app.listen({ port: config.port, host: config.host });
    const bound = app.server.address() as AddressInfo;
    const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
    const address = `http://${host}:${bound.port}`;
    urls.authUrl ||= address;
    urls.baseUrl ||= urls.authUrl;

    keyReload = setInterval(() => {
      keyRing.reload().catch((error: unknown) => logger.error({ err: error }, 'reloading signing keys failed'));
    }, KEY_RELOAD_SECONDS * 1000);
    keyReload.unref();

    logger.info({ environment: config.environment, address, authUrl: urls.authUrl, engine: storage.engine }, 'Connect is listening');
    if (demo) print(demoBanner(demo, urls.authUrl));

    return {
      app,
      config,
      urls,
      address,
      demo,
      async close() {
        clearInterval(keyReload);
        await app.close();
        redis?.disconnect();
        await storage.close();
      },
    };
  } catch (error) {
    clearInterval(keyReload);
    redis?.disconnect();
    await storage.close().catch(() => {});
    throw error;
  }
}

function demoBanner(demo: DemoCredentials, authUrl: string): string {
  return [
    '',
    `Connect sandbox is running at ${authUrl}`,
    '',
    `Demo client ${demo.created ? 'created' : '(existing; a new secret is issued at every seeded start)'}:`,
    `  client ID:     ${demo.clientId}`,
    `  client secret: ${demo.clientSecret}`,
    '',
    'Demo customer (a new PIN at every seeded start):',
    `  mobile:        ${demo.customer.mobile}`,
    `  PIN:           ${demo.customer.pin}`,
    `  profile ID:    ${demo.customer.profileId}`,
    '',
    'Get an access token:',
    `  curl -s -u '${demo.clientId}:${demo.clientSecret}' -d grant_type=client_credentials ${authUrl}/token`,
    '',
    `Verify it against ${authUrl}/.well-known/jwks.json`,
    '',
    'Link the demo customer: open this in a browser (one-time PINs appear at',
    `${authUrl}/sandbox/messages?to=${encodeURIComponent(demo.customer.mobile)}):`,
    `  ${authUrl}/authorize?response_type=code&client_id=${demo.clientId}&redirect_uri=${encodeURIComponent(DEMO_REDIRECT_URI)}&state=demo`,
    '',
  ].join('\n');
}

/** Runs the server until SIGINT or SIGTERM, then shuts down cleanly. */
export async function main(options: StartOptions): Promise<void> {
  const server = await startServer(options);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.app.log.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        server.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}
