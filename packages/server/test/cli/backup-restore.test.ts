import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openEmbeddedSqlite } from '../../src/storage/kysely/embedded-sqlite.js';
import { basicAuth, form } from '../helpers/build.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../helpers/postgres.js';
import { cliJson, logIn, requireBuiltCli, runProcess, startServe, type CustomerTokens, type ProcessSetting } from '../helpers/processes.js';

/**
 * Backups that restore (docs/operator-guide.md, "Backups and restores"): a
 * real server under load (token requests, refreshes, revocations) is backed
 * up while it serves, on SQLite with `connect-auth backup` and on PostgreSQL
 * with `pg_dump -Fc`; the backup is restored (`connect-auth restore`,
 * `pg_restore`) into a fresh folder or database, and a server started there
 * honours everything issued before the backup: customers log in, the client
 * secret works, access and refresh tokens verify, and revoked tokens stay
 * revoked. The refusals of bad input are in backup-refusals.test.ts.
 */

const REDIRECT_URI = 'https://shop.example/callback';
const PIN = '3817';
/** Customers 1 to 3 hold the sessions checked after the restore; customer 4's session is refreshed by the load. */
const MOBILES = ['+639170000001', '+639170000002', '+639170000003', '+639170000004'];
const MASTER_KEY = randomBytes(32).toString('base64');

interface Client {
  readonly id: string;
  readonly secret: string;
}

let scratch: string;
beforeAll(() => {
  requireBuiltCli();
  scratch = mkdtempSync(join(tmpdir(), 'connect-backup-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * A port free now. Both servers of a test listen on it, one after the
 * other: the issuer of the tokens is the auth URL, by default
 * `http://localhost:PORT`, and the restored server must be the same issuer.
 */
async function freePort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return String(port);
}

/** A new folder in the test's scratch space. */
function folder(name: string): string {
  const path = join(scratch, `${name}-${randomBytes(3).toString('hex')}`);
  mkdirSync(path);
  return path;
}

async function post(base: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(new URL(path, base), { method: 'POST', headers, body, signal: AbortSignal.timeout(20_000) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** A request of `client` at `/token`, `/introspect` or `/revoke`, authenticated with HTTP Basic. */
function clientRequest(base: string, path: string, client: Client, params: Record<string, string>) {
  return post(base, path, { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' }, form(params));
}

async function clientToken(base: string, client: Client): Promise<string> {
  const res = await clientRequest(base, '/token', client, { grant_type: 'client_credentials' });
  if (res.status !== 200) throw new Error(`client_credentials: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.access_token as string;
}

async function isActive(base: string, client: Client, token: string): Promise<boolean> {
  const res = await clientRequest(base, '/introspect', client, { token });
  expect(res.status).toBe(200);
  return res.body.active === true;
}

async function refreshAtToken(base: string, client: Client, refreshToken: string) {
  return clientRequest(base, '/token', client, { grant_type: 'refresh_token', refresh_token: refreshToken });
}

async function revoke(base: string, client: Client, token: string): Promise<void> {
  expect((await clientRequest(base, '/revoke', client, { token })).status).toBe(200);
}

/** `POST /tokens`: the refresh as the platform's API offers it, with a client access token. */
function refreshAtTokens(base: string, clientAccessToken: string, refreshToken: string) {
  return post(
    base,
    '/tokens',
    {
      authorization: `Bearer ${clientAccessToken}`,
      'content-type': 'application/json',
      accept: 'application/json',
      'request-reference-no': crypto.randomUUID(),
    },
    JSON.stringify({ refreshToken }),
  );
}

/** The client and customers, made with the CLI before the server starts. */
async function seed(setting: ProcessSetting): Promise<Client> {
  const created = await cliJson<{ clientId: string; clientSecret: string }>(setting, [
    'clients',
    'create',
    '--name',
    'Shop',
    '--redirect-uri',
    REDIRECT_URI,
    '--grants',
    'client_credentials,authorization_code,refresh_token',
  ]);
  for (const mobile of MOBILES) await cliJson(setting, ['customers', 'create', '--mobile', mobile, '--pin', PIN]);
  return { id: created.clientId, secret: created.clientSecret };
}

let addresses = 0;
/** A customer login over HTTP, from an address of its own. */
function logInAs(base: string, client: Client, mobile: string): Promise<CustomerTokens> {
  addresses++;
  return logIn(base, `10.7.${addresses >> 8}.${addresses & 0xff}`, client, { mobile, pin: PIN, redirectUri: REDIRECT_URI });
}

/** What was issued, refreshed and revoked before the backup. */
interface Issued {
  /** Customer 1's session, as logged in. */
  readonly kept: CustomerTokens & { readonly refreshToken: string };
  readonly clientAccess: string;
  /** Customer 3's session, refreshed once: its first access token was replaced by `access`. */
  readonly refreshed: { readonly replacedAccess: string; readonly access: string; readonly refreshToken: string };
  /** Customer 2's session, ended by revoking its refresh token; and a revoked client access token. */
  readonly revoked: { readonly refreshToken: string; readonly access: string; readonly clientAccess: string };
}

async function issueBeforeBackup(base: string, client: Client): Promise<Issued> {
  const kept = await logInAs(base, client, MOBILES[0] as string);
  const ended = await logInAs(base, client, MOBILES[1] as string);
  const refreshedSession = await logInAs(base, client, MOBILES[2] as string);
  const refreshed = await refreshAtToken(base, client, refreshedSession.refreshToken as string);
  expect(refreshed.status).toBe(200);
  await revoke(base, client, ended.refreshToken as string);
  const revokedClientAccess = await clientToken(base, client);
  await revoke(base, client, revokedClientAccess);
  const issued: Issued = {
    kept: { ...kept, refreshToken: kept.refreshToken as string },
    clientAccess: await clientToken(base, client),
    refreshed: { replacedAccess: refreshedSession.accessToken, access: refreshed.body.access_token as string, refreshToken: refreshedSession.refreshToken as string },
    revoked: { refreshToken: ended.refreshToken as string, access: ended.accessToken, clientAccess: revokedClientAccess },
  };
  // As they are before the backup, so that the checks after the restore mean something.
  expect(await isActive(base, client, issued.revoked.access)).toBe(false);
  expect(await isActive(base, client, issued.refreshed.replacedAccess)).toBe(false);
  expect(await isActive(base, client, issued.kept.accessToken)).toBe(true);
  return issued;
}

/**
 * Runs `work` while the server answers steady load: client tokens (one in
 * five revoked at once), introspections, and refreshes of customer 4's
 * session. Every load request must succeed: the backup holds no write up.
 */
async function underLoad<T>(base: string, client: Client, work: () => Promise<T>): Promise<{ result: T; requestsDuring: number; failures: string[] }> {
  const session = await logInAs(base, client, MOBILES[3] as string);
  let done = false;
  /** Load requests answered while `work` ran. */
  let requestsDuring = 0;
  const failures: string[] = [];
  const answered = async <R extends { status: number }>(what: string, request: Promise<R>): Promise<R | undefined> => {
    try {
      const res = await request;
      if (!done) requestsDuring++;
      if (res.status !== 200) failures.push(`${what}: ${res.status}`);
      return res;
    } catch (error) {
      failures.push(`${what}: ${(error as Error).message}`);
      return undefined;
    }
  };
  const clientLoad = async () => {
    for (let n = 0; !done || n < 10; n++) {
      const res = await answered('client token', clientRequest(base, '/token', client, { grant_type: 'client_credentials' }));
      const token = res?.body.access_token as string | undefined;
      if (!token) continue;
      await answered('introspection', clientRequest(base, '/introspect', client, { token }));
      if (n % 5 === 0) await answered('revocation', clientRequest(base, '/revoke', client, { token }));
    }
  };
  const refreshLoad = async () => {
    for (let n = 0; !done || n < 10; n++) await answered('refresh', refreshAtToken(base, client, session.refreshToken as string));
  };
  const loads = [clientLoad(), refreshLoad()];
  let result: T;
  try {
    result = await work();
  } finally {
    done = true;
    await Promise.all(loads);
  }
  return { result, requestsDuring, failures };
}

/** The checks on a server started on the restored database. */
async function checkRestored(base: string, client: Client, issued: Issued): Promise<void> {
  // Tokens issued before the backup verify; those replaced or revoked before it stay so.
  expect(await isActive(base, client, issued.kept.accessToken)).toBe(true);
  expect(await isActive(base, client, issued.kept.refreshToken)).toBe(true);
  expect(await isActive(base, client, issued.clientAccess)).toBe(true);
  expect(await isActive(base, client, issued.refreshed.access)).toBe(true);
  expect(await isActive(base, client, issued.refreshed.replacedAccess)).toBe(false);
  expect(await isActive(base, client, issued.revoked.access)).toBe(false);
  expect(await isActive(base, client, issued.revoked.refreshToken)).toBe(false);
  expect(await isActive(base, client, issued.revoked.clientAccess)).toBe(false);
  const refused = await refreshAtToken(base, client, issued.revoked.refreshToken);
  expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

  // The client secret works, and the client token issued before the backup is accepted at POST /tokens.
  await clientToken(base, client);
  const atTokens = await refreshAtTokens(base, issued.clientAccess, issued.kept.refreshToken);
  expect(atTokens.status).toBe(200);
  expect(await isActive(base, client, atTokens.body.accessToken as string)).toBe(true);
  const atToken = await refreshAtToken(base, client, issued.refreshed.refreshToken);
  expect(atToken.status).toBe(200);
  expect(await isActive(base, client, atToken.body.access_token as string)).toBe(true);

  // A customer logs in: PIN, the one-time PIN by SMS, the code exchanged.
  const again = await logInAs(base, client, MOBILES[0] as string);
  expect(await isActive(base, client, again.accessToken)).toBe(true);
}

/** Grows the database by about `megabytes` of audit events, so that its backup takes several steps. */
function grow(databasePath: string, megabytes: number): void {
  const database = openEmbeddedSqlite(databasePath);
  try {
    const insert = database.prepare(`insert into audit_events (id, at, type, actor, subject, outcome, details) values (?, ?, 'test.filler', 'test', null, 'success', ?)`);
    const details = JSON.stringify({ filler: 'x'.repeat(1000) });
    const at = Math.floor(Date.now() / 1000);
    database.exec('begin');
    for (let n = 0; n < megabytes * 1000; n++) insert.run([`filler-${n}`, at, details]);
    database.exec('commit');
  } finally {
    database.close();
  }
}

describe('backup and restore of the embedded database', () => {
  it('backup --out while a server serves under load; restore into a fresh folder; a server there honours what was issued before', { timeout: 60_000 }, async () => {
    const source: ProcessSetting = { cwd: scratch, env: { CONNECT_ENVIRONMENT: 'sandbox', CONNECT_DATA_DIR: folder('source'), CONNECT_MASTER_KEY: MASTER_KEY } };
    const client = await seed(source);
    grow(join(source.env.CONNECT_DATA_DIR as string, 'connect-sandbox.db'), 6);
    const port = await freePort();
    const server = await startServe(source, { PORT: port });
    const issued = await issueBeforeBackup(server.address, client);

    const backups = folder('backups');
    const out = join(backups, 'connect.db');
    const load = await underLoad(server.address, client, () => runProcess(source, ['backup', '--out', out]));
    const backup = load.result;
    expect(backup.code).toBe(0);
    expect(backup.stdout).toMatch(new RegExp(`^backed up the sandbox database \\S+connect-sandbox\\.db to ${out}: \\d+ pages, \\d+\\.\\d MB in \\d+(\\.\\d)? s\\n$`));
    // More than one step: progress on stderr, pages done of the whole.
    const progress = backup.stderr.split('\n').filter(Boolean);
    expect(progress.length).toBeGreaterThan(0);
    for (const line of progress) expect(line).toMatch(/^backup: \d+ of \d+ pages copied \(\d+%\)$/);
    expect(load.failures).toEqual([]);
    expect(load.requestsDuring).toBeGreaterThanOrEqual(10);
    expect(readdirSync(backups)).toEqual(['connect.db']);
    await server.stop();

    // A fresh data folder, not made yet; the same master key.
    const restoredDir = join(folder('restored'), 'data');
    const restored: ProcessSetting = { cwd: scratch, env: { ...source.env, CONNECT_DATA_DIR: restoredDir } };
    const restore = await runProcess(restored, ['restore', '--from', out]);
    expect(restore).toMatchObject({ code: 0, stderr: '' });
    expect(restore.stdout).toMatch(/^restored \S+ to \S+connect-sandbox\.db \(sandbox, \d+\.\d MB\); its schema is up to date\n$/);
    expect(readdirSync(restoredDir)).toEqual(['connect-sandbox.db']);

    const second = await startServe(restored, { PORT: port });
    await checkRestored(second.address, client, issued);
  });
});

/** Runs a PostgreSQL tool; throws with its stderr when it fails. */
function runTool(command: string, args: readonly string[]): Promise<void> {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited ${code}: ${stderr}`))));
  });
}

describe.skipIf(!postgresAdminUrl)('the PostgreSQL procedure of the operator guide', () => {
  noticePostgresSkipped('backup and restore with pg_dump and pg_restore');

  it('pg_dump -Fc while a server serves under load; pg_restore into a new database; a server there honours what was issued before', { timeout: 60_000 }, async () => {
    const sourceDb = await createTestDatabase();
    onTestFinished(() => sourceDb.drop());
    const source: ProcessSetting = {
      cwd: scratch,
      env: { CONNECT_ENVIRONMENT: 'sandbox', CONNECT_DATA_DIR: folder('pg-source'), CONNECT_MASTER_KEY: MASTER_KEY, DATABASE_URL: sourceDb.url },
    };
    // The first command migrates the new database.
    const client = await seed(source);
    const port = await freePort();
    const server = await startServe(source, { PORT: port });
    const issued = await issueBeforeBackup(server.address, client);

    const dump = join(folder('pg-backups'), 'connect.dump');
    const load = await underLoad(server.address, client, () => runTool('pg_dump', ['-Fc', '--no-owner', '-f', dump, sourceDb.url]));
    expect(load.failures).toEqual([]);
    expect(load.requestsDuring).toBeGreaterThanOrEqual(3);
    await server.stop();

    const restoredDb = await createTestDatabase();
    onTestFinished(() => restoredDb.drop());
    await runTool('pg_restore', ['--no-owner', '--exit-on-error', '-d', restoredDb.url, dump]);
    const restored: ProcessSetting = { cwd: scratch, env: { ...source.env, CONNECT_DATA_DIR: folder('pg-restored'), DATABASE_URL: restoredDb.url } };
    const second = await startServe(restored, { PORT: port });
    await checkRestored(second.address, client, issued);
  });
});
