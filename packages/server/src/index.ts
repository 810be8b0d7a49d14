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
