import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Kysely, Migrator, sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { ConfigError } from '../../src/config/load.js';
import { MASTER_KEY_FILE } from '../../src/config/master-key-file.js';
import { fixedClock } from '../../src/core/clock.js';
import { startServer } from '../../src/http/server.js';
import { migrationProvider } from '../../src/storage/kysely/migrations/index.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { DatabaseLocation } from '../../src/core/storage/storage.js';
import { createPostgresDialect } from '../../src/storage/kysely/postgres.js';
import { createSqliteDialect } from '../../src/storage/kysely/sqlite.js';
import { T0 } from '../helpers/build.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../helpers/postgres.js';
import { openRawDatabase } from '../helpers/raw-database.js';

/** The migration before the one that records the environment: a database made by the previous release. */
const BEFORE_RECORD = '2026-11-25T21-00-scopes';

const REFUSED_SANDBOX = 'this database belongs to production; CONNECT_ENVIRONMENT is sandbox (check CONNECT_ENVIRONMENT and DATABASE_URL)';
const REFUSED_PRODUCTION = 'this database belongs to sandbox; CONNECT_ENVIRONMENT is production (check CONNECT_ENVIRONMENT and DATABASE_URL)';

const production = (): Record<string, string> => ({
  CONNECT_ENVIRONMENT: 'production',
  CONNECT_MASTER_KEY: randomBytes(32).toString('base64'),
  CONNECT_AUTH_URL: 'https://auth.connect.example',
  CONNECT_SMS_WEBHOOK_URL: 'https://sms.gateway.example/send',
  CONNECT_SMS_WEBHOOK_SECRET: 'webhook-secret',
});

interface Engine {
  readonly name: 'sqlite' | 'postgres';
  /** A new, empty database for one test, removed when it ends; `undefined` when the engine is not available. */
  database(): Promise<{ location: DatabaseLocation; url: string } | undefined>;
}

const ENGINES: Engine[] = [
  {
    name: 'sqlite',
    async database() {
      const dir = mkdtempSync(join(tmpdir(), 'connect-envdb-'));
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      const path = join(dir, 'connect.db');
      return { location: { engine: 'sqlite', path }, url: `sqlite:${path}` };
    },
  },
  {
    name: 'postgres',
    async database() {
      if (!postgresAdminUrl) {
        noticePostgresSkipped('one database, one environment');
        return undefined;
      }
      const database = await createTestDatabase();
      onTestFinished(() => database.drop());
      return { location: { engine: 'postgres', url: database.url }, url: database.url };
    },
  },
];

/** Runs `connect-auth` in-process with exactly `env` and a fresh data folder. */
async function cli(argv: readonly string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'connect-envcli-'));
  onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { CONNECT_DATA_DIR: dataDir, ...env },
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    clock: fixedClock(T0),
  });
  return { code, stdout, stderr, dataDir };
}

async function clientCount(location: DatabaseLocation): Promise<number> {
  const raw = await openRawDatabase(location);
  try {
    return await raw.count('clients');
  } finally {
    await raw.close();
  }
}

/** A database as the previous release left it (every migration before the record), with these client IDs in it. */
async function previousRelease(location: DatabaseLocation, clientIds: readonly string[]): Promise<void> {
  const dialect = location.engine === 'sqlite' ? createSqliteDialect(location.path).dialect : createPostgresDialect(location.url).dialect;
  const db = new Kysely<any>({ dialect });
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(BEFORE_RECORD);
    if (error) throw error;
    for (const id of clientIds) {
      await sql`insert into clients (id, name, secret_hash, redirect_uri, grants, status, created_at, updated_at)
        values (${id}, 'Shop', 'hash', 'https://shop.example/cb', 'client_credentials', 'active', 0, 0)`.execute(db);
    }
  } finally {
    await db.destroy();
  }
}

describe.each(ENGINES)('one database, one environment ($name)', (engine) => {
  it('a sandbox CLI (CONNECT_ENVIRONMENT unset) is refused on a production database, and writes nothing', async () => {
    const database = await engine.database();
    if (!database) return;
    const prod = { ...production(), DATABASE_URL: database.url };
    expect((await cli(['migrate'], prod)).code).toBe(0);

    const refused = await cli(['clients', 'create', '--name', 'Shop', '--redirect-uri', 'http://localhost:8080/cb'], { DATABASE_URL: database.url });
    expect(refused).toMatchObject({ code: 1, stdout: '', stderr: `connect-auth: ${REFUSED_SANDBOX}\n` });
    expect(await clientCount(database.location)).toBe(0);
    // Not even a sandbox master key was generated for it.
    expect(existsSync(join(refused.dataDir, MASTER_KEY_FILE))).toBe(false);

    // The production CLI still works on it.
    expect((await cli(['clients', 'create', '--name', 'Shop', '--redirect-uri', 'https://shop.example/cb'], prod)).code).toBe(0);
    expect(await clientCount(database.location)).toBe(1);
  });

  it('a sandbox server is refused on a production database with the same line; a production server starts', async () => {
    const database = await engine.database();
    if (!database) return;
    const prod = { ...production(), DATABASE_URL: database.url };
    expect((await cli(['migrate'], prod)).code).toBe(0);
    const dataDir = mkdtempSync(join(tmpdir(), 'connect-envsrv-'));
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));

    const failure = await startServer({ env: { PORT: '0', CONNECT_LOG_LEVEL: 'silent', CONNECT_DATA_DIR: dataDir, DATABASE_URL: database.url }, print: () => {} }).then(
      async (server) => {
        await server.close();
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as Error).message).toBe(REFUSED_SANDBOX);
    // As `connect-auth serve` says it: one line, exit status 1.
    expect(await cli(['serve'], { PORT: '0', CONNECT_LOG_LEVEL: 'silent', DATABASE_URL: database.url })).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `connect-auth: ${REFUSED_SANDBOX}\n`,
    });

    const server = await startServer({ env: { ...prod, PORT: '0', CONNECT_LOG_LEVEL: 'silent', CONNECT_DATA_DIR: dataDir }, print: () => {} });
    await server.close();
  });

  it('a production CLI is refused on a sandbox database', async () => {
    const database = await engine.database();
    if (!database) return;
    expect((await cli(['migrate'], { DATABASE_URL: database.url })).code).toBe(0);
    const refused = await cli(['clients', 'list'], { ...production(), DATABASE_URL: database.url });
    expect(refused).toMatchObject({ code: 1, stdout: '', stderr: `connect-auth: ${REFUSED_PRODUCTION}\n` });
  });

  it('a misspelt CONNECT_ENVIROMENT=production is named with the setting it meant, and the sandbox it left is refused', async () => {
    const database = await engine.database();
    if (!database) return;
    expect((await cli(['migrate'], { ...production(), DATABASE_URL: database.url })).code).toBe(0);
    const { CONNECT_ENVIRONMENT: _unused, ...rest } = production();
    const run = await cli(['clients', 'list'], { ...rest, CONNECT_ENVIROMENT: 'production', DATABASE_URL: database.url });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      [
        'connect-auth: warning: CONNECT_ENVIROMENT is not a Connect setting; did you mean CONNECT_ENVIRONMENT?',
        `connect-auth: ${REFUSED_SANDBOX}`,
        '',
      ].join('\n'),
    );
  });

  it.each([
    { clients: ['cid_production_a'], belongs: 'production' },
    { clients: ['cid_sandbox_a'], belongs: 'sandbox' },
    // A sandbox client written into a production database by mistake does not make it a sandbox one.
    { clients: ['cid_sandbox_a', 'cid_production_b'], belongs: 'production' },
  ])('an upgraded database with clients $clients belongs to $belongs, whichever opens it first', async ({ clients, belongs }) => {
    const database = await engine.database();
    if (!database) return;
    await previousRelease(database.location, clients);
    const other = belongs === 'production' ? {} : production();
    const own = belongs === 'production' ? production() : {};
    // The other environment opens it first: the upgrade records the environment its clients name, and refuses it.
    const refused = await cli(['clients', 'list'], { ...other, DATABASE_URL: database.url });
    expect(refused.stderr).toBe(`connect-auth: ${belongs === 'production' ? REFUSED_SANDBOX : REFUSED_PRODUCTION}\n`);
    expect((await cli(['clients', 'list'], { ...own, DATABASE_URL: database.url })).code).toBe(0);
  });

  it('an upgraded production database opened first by a sandbox CLI: refused before anything is written, not even the new migrations', async () => {
    const database = await engine.database();
    if (!database) return;
    await previousRelease(database.location, ['cid_production_a']);
    const migrated = async () => {
      const raw = await openRawDatabase(database.location);
      try {
        return await raw.count('kysely_migration');
      } finally {
        await raw.close();
      }
    };
    const before = await migrated();
    const refused = await cli(['clients', 'create', '--name', 'Shop', '--redirect-uri', 'http://localhost:8080/cb'], { DATABASE_URL: database.url });
    expect(refused).toMatchObject({ code: 1, stderr: `connect-auth: ${REFUSED_SANDBOX}\n` });
    expect(await migrated()).toBe(before);
    expect(await clientCount(database.location)).toBe(1);
    // The production CLI upgrades it and records it.
    expect((await cli(['clients', 'list'], { ...production(), DATABASE_URL: database.url })).code).toBe(0);
    expect(await migrated()).toBeGreaterThan(before);
  });

  it('an upgraded database without clients belongs to its first opener', async () => {
    const database = await engine.database();
    if (!database) return;
    await previousRelease(database.location, []);
    expect((await cli(['clients', 'list'], { ...production(), DATABASE_URL: database.url })).code).toBe(0);
    expect((await cli(['clients', 'list'], { DATABASE_URL: database.url })).stderr).toBe(`connect-auth: ${REFUSED_SANDBOX}\n`);
  });

  it('two first openers at once: one environment is recorded, and both are told the same', async () => {
    const database = await engine.database();
    if (!database) return;
    const storages = [openStorage(database.location), openStorage(database.location)];
    onTestFinished(async () => {
      for (const storage of storages) await storage.close();
    });
    await storages[0]!.migrate();
    expect(await storages[0]!.recordedEnvironment()).toBeUndefined();
    const [a, b] = await Promise.all([storages[0]!.claimEnvironment('sandbox'), storages[1]!.claimEnvironment('production')]);
    expect(a).toBe(b);
    expect(await storages[1]!.recordedEnvironment()).toBe(a);
  });
});

describe('unknown CONNECT_* variables', () => {
  it('are named on stderr with the closest setting; the command still runs', async () => {
    const run = await cli(['clients', 'list', '--json'], { DATABASE_URL: 'sqlite::memory:', CONNECT_ACCES_TOKEN_TTL: '60', CONNECT_METRICS_HOTS: '10.0.0.1' });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([]);
    expect(run.stderr).toBe(
      [
        'connect-auth: warning: CONNECT_ACCES_TOKEN_TTL is not a Connect setting; did you mean CONNECT_ACCESS_TOKEN_TTL?',
        'connect-auth: warning: CONNECT_METRICS_HOTS is not a Connect setting; did you mean CONNECT_METRICS_HOST?',
        '',
      ].join('\n'),
    );
  });

  it('are logged once by the server, as a warning', async () => {
    const warnings = await startUpWarnings({ CONNECT_ENVIROMENT: 'production' });
    expect(warnings).toEqual(['CONNECT_ENVIROMENT is not a Connect setting; did you mean CONNECT_ENVIRONMENT?']);
  });
});

/** The server's start-up in `env` (an in-memory database, any port): the messages it logged as warnings. */
async function startUpWarnings(env: Record<string, string>): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'connect-envsrv-'));
  onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const server = await startServer({
    env: { PORT: '0', CONNECT_DATA_DIR: dataDir, DATABASE_URL: 'sqlite::memory:', ...env },
    print: () => {},
    logDestination: destination,
  });
  await server.close();
  return lines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((entry) => entry.level === 40).map((entry) => entry.msg);
}
