import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ConfigError, defaultAuthUrl, isLoopbackHost, loadConfig, unknownSettings } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { PublicUrls } from '../core/tokens/public-urls.js';
import { SANDBOX_CALLBACK_PATH, seedDemo, type DemoCredentials } from '../demo/seed-demo.js';
import { openRuntime } from '../compose/runtime.js';
import { compose } from '../compose/compose.js';
import type { Services } from '../compose/services.js';
import { startHourlyPurge, type HourlyPurge } from '../compose/hourly-purge.js';
import { startJourneyPurge, type JourneyPurge } from '../compose/journey-purge.js';
import { buildApp } from './app.js';
import { acceptQueuedConnections, drainConnections } from './drain-connections.js';
import { serveMetrics } from './metrics-server.js';
import { createLogger } from './logger.js';
import type { DestinationStream } from 'pino';

/** How to start a server. */
export interface StartOptions {
  /** Environment variables to read the configuration from. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Create (or refresh) the sandbox demo client and print its credentials. */
  readonly seedDemo?: boolean;
  /** The demo client's redirect URI; default the sandbox's callback page (`{auth URL}/sandbox/callback`). */
  readonly demoRedirectUri?: string;
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
  /**
   * Starts to stop while still serving: from now on `/readyz` answers 503
   * and every response closes its connection; new connections are still
   * accepted and served until {@link RunningServer.close}.
   */
  drain(): void;
  /** Stops listening, finishes the requests in flight and those already sent, closes the database. */
  close(): Promise<void>;
}

/**
 * Loads the configuration, opens and migrates the database, loads the keys,
 * builds the app and listens. Throws `ConfigError` on bad configuration,
 * listing `--seed-demo` in production among its problems.
 */
export async function startServer(options: StartOptions): Promise<RunningServer> {
  // `--seed-demo` in production is listed with the configuration's own problems.
  const config = loadConfig(options.env, undefined, { seedDemo: options.seedDemo });
  const clock = options.clock ?? systemClock;
  const print = options.print ?? ((text: string) => process.stdout.write(text));
  const logger = createLogger({ level: config.logLevel, ...(options.logDestination ? { destination: options.logDestination } : {}) });
  for (const warning of unknownSettings(options.env)) logger.warn(warning);
  const runtime = await openRuntime(config, clock);
  const { storage } = runtime;
  let services: Services | undefined;
  let app: FastifyInstance | undefined;
  let metricsServer: FastifyInstance | undefined;
  let purge: HourlyPurge | undefined;
  let journeyPurge: JourneyPurge | undefined;
  try {
    const composition = compose(runtime);
    services = await composition.services({ log: logger });
    const { urls } = services;
    let draining = false;
    app = await buildApp({ services, logger, draining: () => draining });
    drainConnections(app.server);

    // Before the public listener: a metrics port in use stops start-up before any request is taken.
    if (config.metricsPort !== undefined) metricsServer = await serveMetrics(services.metrics, config.metricsHost, config.metricsPort);
    await listenOn(app, config.host, config.port);
    const bound = app.server.address() as AddressInfo;
    const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
    const address = `http://${host}:${bound.port}`;
    // Browsers accept passkeys for localhost, never for an IP address (docs/operator-guide.md, "Passkeys").
    urls.authUrl ||= isLoopbackHost(config.host) ? defaultAuthUrl(config.host, bound.port) : address;
    urls.baseUrl ||= urls.authUrl;
    // Once the auth URL is known: the demo client's redirect URI is the sandbox's callback page on it.
    const demo = options.seedDemo
      ? await seedDemo(options.demoRedirectUri ?? `${urls.authUrl}${SANDBOX_CALLBACK_PATH}`, composition.demo)
      : undefined;

    logger.info({ environment: config.environment, address, authUrl: urls.authUrl, engine: storage.engine }, 'Connect is listening');
    purge = startHourlyPurge({
      storage,
      clock,
      log: logger,
      sessionIdleSeconds: config.lifetimes.sessionIdleSeconds,
      auditRetentionDays: config.auditRetentionDays,
    });
    journeyPurge = startJourneyPurge({ storage, clock, log: logger });
    if (demo) print(demoBanner(demo, urls.authUrl));

    const running = app;
    return {
      app: running,
      config,
      urls,
      address,
      demo,
      drain() {
        draining = true;
      },
      async close() {
        await purge?.stop();
        await journeyPurge?.stop();
        await acceptQueuedConnections(running.server);
        await running.close();
        await metricsServer?.close();
        await services?.close();
        await storage.close();
      },
    };
  } catch (error) {
    await app?.close().catch(() => {});
    await metricsServer?.close();
    await purge?.stop();
    await journeyPurge?.stop();
    await services?.close();
    await storage.close().catch(() => {});
    throw error;
  }
}

/**
 * Listens on `host:port`; a `HOST` that names no address of this machine
 * (or no host at all) stops start-up with one line naming `HOST`, never as
 * a failure of the database (whose host lookups fail with the same codes).
 * A port in use is told by the command (`cli/main.ts`).
 */
async function listenOn(app: FastifyInstance, host: string, port: number): Promise<void> {
  try {
    await app.listen({ port, host });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EADDRNOTAVAIL') {
      throw new ConfigError(`HOST: ${JSON.stringify(host)} is not an address of this machine (${code})`);
    }
    if (code === 'EACCES') throw new ConfigError(`PORT: no permission to listen on port ${port} of ${host}`);
    throw error;
  }
}

function demoBanner(demo: DemoCredentials, authUrl: string): string {
  const link = `${authUrl}/authorize?response_type=code&client_id=${demo.clientId}&redirect_uri=${encodeURIComponent(demo.redirectUri)}&state=demo`;
  return [
    '',
    `Connect sandbox is running at ${authUrl}`,
    '',
    `Demo client${demo.created ? ' created' : ''} (its ID and secret stay the same for this data folder):`,
    `  client ID:     ${demo.clientId}`,
    `  client secret: ${demo.clientSecret}`,
    `  redirect URI:  ${demo.redirectUri}`,
    '',
    'Demo customer (the same PIN for this data folder):',
    `  mobile:        ${demo.customer.mobile}`,
    `  PIN:           ${demo.customer.pin}`,
    `  profile ID:    ${demo.customer.profileId}`,
    '',
    'Get an access token:',
    `  curl -s -u '${demo.clientId}:${demo.clientSecret}' -d grant_type=client_credentials ${authUrl}/token`,
    '',
    `Verify it against ${authUrl}/.well-known/jwks.json`,
    '',
    'Link the demo customer: open this login link in a browser. The one-time PIN',
    `is at ${authUrl}/sandbox/messages?to=${encodeURIComponent(demo.customer.mobile)};`,
    'the page you land on shows the code and the command that exchanges it.',
    `  ${link}`,
    '',
    'Demo platform API, a resource server (it checks tokens at /introspect and can obtain none;',
    'docs/resource-servers.md):',
    `  ID:            ${demo.resourceServer.clientId}`,
    `  secret:        ${demo.resourceServer.clientSecret}`,
    '',
  ].join('\n');
}

/**
 * Runs the server until SIGTERM or SIGINT, then shuts down gracefully
 * (docs/operator-guide.md, "Readiness and shutdown"): `/readyz` answers 503
 * at once, and every response closes its connection; the server goes on
 * accepting and serving for `CONNECT_SHUTDOWN_DELAY` seconds (none after
 * SIGINT, and a SIGINT during the delay ends it), so that load balancers
 * stop sending it requests; then the listening socket closes. Requests in
 * flight, and those already sent on a connection it accepted, are answered;
 * connections with nothing to answer are closed; then the database closes
 * and the process exits 0. Whatever is still open when
 * `CONNECT_SHUTDOWN_GRACE` (counted from the end of the delay) runs out is
 * closed, and the process exits 0 all the same, within the grace.
 */
export async function main(options: StartOptions): Promise<void> {
  // The handlers come first: a signal that arrives while the server starts
  // (its banner may already be out) is kept and acted on once it is up
  // (start-up is bounded by the database's and Redis's timeouts), never
  // left to end the process by default; a second one ends it at once.
  let stop: ((signal: 'SIGTERM' | 'SIGINT') => void) | undefined;
  const early: ('SIGTERM' | 'SIGINT')[] = [];
  const onSignal = (signal: 'SIGTERM' | 'SIGINT') => {
    if (stop) return stop(signal);
    early.push(signal);
    if (early.length > 1) {
      process.stderr.write(`connect-auth: ${signal} again during start-up; stopping now\n`);
      process.exit(1);
    }
  };
  // `on`, not `once`: a second signal must not end the process by default mid-shutdown.
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  const server = await startServer(options);
  const { shutdownDelaySeconds, shutdownGraceSeconds } = server.config;
  const log = server.app.log;
  let stopping = false;
  let endDelay: (() => void) | undefined;
  stop = (signal: 'SIGTERM' | 'SIGINT') => {
    if (stopping) {
      if (signal === 'SIGINT') endDelay?.();
      return;
    }
    stopping = true;
    server.drain();
    const delaySeconds = signal === 'SIGINT' ? 0 : shutdownDelaySeconds;
    log.info({ signal, delaySeconds, graceSeconds: shutdownGraceSeconds }, 'shutting down');
    const delayed = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delaySeconds * 1000);
      endDelay = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    void delayed.then(() => closeWithinGrace(server, shutdownGraceSeconds * 1000));
  };
  for (const signal of early.splice(0)) stop(signal);
}

/** Stops listening and closes everything; whatever is still open when the grace is nearly over is closed. Exits the process. */
function closeWithinGrace(server: RunningServer, graceMs: number): void {
  server.app.log.info('closing the listener; answering every connection accepted');
  // Leaves a little of the grace for closing the database and exiting.
  const cutOff = setTimeout(() => {
    server.app.log.warn('shutdown grace ran out; closing the connections still open');
    server.app.server.closeAllConnections();
    setTimeout(() => process.exit(0), Math.min(250, graceMs / 4)).unref();
  }, graceMs - Math.min(500, graceMs / 4));
  cutOff.unref();
  server.close().then(
    () => process.exit(0),
    (error: unknown) => {
      server.app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
}
