import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { runCli, startServer, type Clock, type RunningServer } from '@connect-auth/server';
import pg from 'pg';

/**
 * The embedded SQLite database by default. With CONNECT_SDK_TEST_POSTGRES_URL
 * (an admin URL such as postgres://postgres@127.0.0.1:5432/postgres) each
 * server gets its own fresh PostgreSQL database instead: that runs this suite
 * on a Node.js version the installed better-sqlite3 build does not match
 * (`npx -y node@22 node_modules/vitest/vitest.mjs run packages/client`).
 */
const POSTGRES_ADMIN_URL = process.env.CONNECT_SDK_TEST_POSTGRES_URL || undefined;

/** A real Connect server on an ephemeral port, with its own data folder. */
export interface TestConnect {
  readonly server: RunningServer;
  readonly authUrl: string;
  readonly baseUrl: string;
  /** The seeded demo client and customer. */
  readonly demo: NonNullable<RunningServer['demo']>;
  /** The environment the server and `connect-auth` commands read. */
  readonly env: Readonly<Record<string, string>>;
  /** Runs a `connect-auth` command with `--json` against this server and returns its JSON output. */
  cli(args: string[]): Promise<unknown>;
  /** Registers a client with `connect-auth clients create --json` (`scopes`: `--scopes`). */
  createClient(options: { redirectUri: string; grants?: string; name?: string; scopes?: string }): Promise<{ clientId: string; clientSecret: string }>;
  /** Registers a resource server with `connect-auth clients create --resource-server --json`. */
  createResourceServer(name?: string): Promise<{ clientId: string; clientSecret: string }>;
  /** Registers a customer with `connect-auth customers create --json`. */
  createCustomer(mobile: string, pin: string): Promise<{ profileId: string; userId: string }>;
  close(): Promise<void>;
}

/** Starts Connect in-process (sandbox, demo data seeded, logs off). */
export async function startConnect(options: { env?: Record<string, string>; clock?: Clock } = {}): Promise<TestConnect> {
  const dataDir = await mkdtemp(join(tmpdir(), 'connect-sdk-'));
  const database = POSTGRES_ADMIN_URL ? await createDatabase(POSTGRES_ADMIN_URL) : undefined;
  const env = {
    PORT: '0',
    CONNECT_DATA_DIR: dataDir,
    CONNECT_LOG_LEVEL: 'silent',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...options.env,
  };
  const cleanUp = async () => {
    await rm(dataDir, { recursive: true, force: true });
    await database?.drop();
  };
  let server: RunningServer;
  try {
    server = await startServer({ env, seedDemo: true, demoRedirectUri: 'http://127.0.0.1:4000/callback', print: () => {}, ...(options.clock ? { clock: options.clock } : {}) });
  } catch (error) {
    await cleanUp();
    throw error;
  }
  const demo = server.demo;
  if (!demo) throw new Error('the demo data was not seeded');
  // The CLI must talk about the same server: same data folder, same public URLs.
  const cliEnv = { ...env, CONNECT_AUTH_URL: server.urls.authUrl, CONNECT_BASE_URL: server.urls.baseUrl };

  async function cli(args: string[]): Promise<unknown> {
    let out = '';
    let err = '';
    const status = await runCli([...args, '--json'], {
      env: cliEnv,
      stdout: (text) => void (out += text),
      stderr: (text) => void (err += text),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    if (status !== 0) throw new Error(`connect-auth ${args.join(' ')} failed: ${err}`);
    return JSON.parse(out) as unknown;
  }

  return {
    server,
    authUrl: server.urls.authUrl,
    baseUrl: server.urls.baseUrl,
    demo,
    env: cliEnv,
    cli,
    async createClient({ redirectUri, grants = 'client_credentials,authorization_code,refresh_token', name = 'SDK Test Shop', scopes }) {
      const scoped = scopes === undefined ? [] : ['--scopes', scopes];
      const created = (await cli(['clients', 'create', '--name', name, '--redirect-uri', redirectUri, '--grants', grants, ...scoped])) as {
        clientId: string;
        clientSecret: string;
      };
      return { clientId: created.clientId, clientSecret: created.clientSecret };
    },
    async createResourceServer(name = 'SDK Test API') {
      const created = (await cli(['clients', 'create', '--name', name, '--resource-server'])) as { clientId: string; clientSecret: string };
      return { clientId: created.clientId, clientSecret: created.clientSecret };
    },
    async createCustomer(mobile, pin) {
      return (await cli(['customers', 'create', '--mobile', mobile, '--pin', pin])) as { profileId: string; userId: string };
    },
    async close() {
      await server.close();
      await cleanUp();
    },
  };
}

/** A new empty database `connect_sdk_test_<random>` on the PostgreSQL server of `adminUrl`. */
async function createDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `connect_sdk_test_${randomBytes(6).toString('hex')}`;
  const admin = async (query: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(query);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.href, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
