import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedSqlite } from '../../../src/storage/kysely/embedded-sqlite.js';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import { basicAuth, build, form, type TestApp } from '../../helpers/build.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../../helpers/postgres.js';
import { startTcpProxy, throughProxy } from '../../helpers/tcp-proxy.js';
import { authorizeParams, authorizeUrl, expectPage, pageText } from '../../helpers/customer-flow.js';
import { expectOAuthError } from '../../helpers/wire.js';

noticePostgresSkipped('503 when PostgreSQL fails');

/** RFC 6749 §5.2: printable ASCII without `"` and `\`. */
const DESCRIPTION = /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/;

/** The 503 of an API route: `temporarily_unavailable`, never cached, with `Retry-After`. */
function expectTemporarilyUnavailable(res: LightMyRequestResponse): void {
  const description = expectOAuthError(res, { status: 503, error: 'temporarily_unavailable' });
  expect(description).toMatch(DESCRIPTION);
  expect(res.headers['retry-after']).toBe('5');
}

/** The 503 page of a hosted page: asks the customer to try again shortly. */
function expectTryAgainPage(res: LightMyRequestResponse): void {
  expectPage(res, 503);
  expect(res.headers['retry-after']).toBe('5');
  expect(res.body).toMatch(/<title>[^<]*Please try again in a moment/);
  expect(pageText(res.body)).toMatch(/try again shortly/i);
}

function clientCredentials(t: TestApp, client: { id: string; secret: string }) {
  return t.app.inject({
    method: 'POST',
    url: '/token',
    headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    payload: form({ grant_type: 'client_credentials' }),
  });
}

function revoke(t: TestApp, client: { id: string; secret: string }, token: string) {
  return t.app.inject({
    method: 'POST',
    url: '/revoke',
    headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    payload: form({ token }),
  });
}

describe('SQLite: another process holds the write lock past the busy timeout', () => {
  /** An app on a database file whose write lock a second connection (another process) can take. */
  async function setUp() {
    const dir = mkdtempSync(join(tmpdir(), 'connect-503-'));
    const path = join(dir, 'connect.db');
    const storage = openStorage({ engine: 'sqlite', path }, { timeoutMs: 50 });
    const t = await build({ storage, captureLogs: true });
    const other = openEmbeddedSqlite(path);
    onTestFinished(async () => {
      if (other.inTransaction) other.exec('rollback');
      other.close();
      await t.app.close();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return {
      t,
      lock: () => other.exec('begin immediate'),
      unlock: () => other.exec('rollback'),
    };
  }

  it('an API route answers 503 temporarily_unavailable with Retry-After, logs the outage once with its cause, and works again once the lock is free', async () => {
    const { t, lock, unlock } = await setUp();
    const client = await t.createClient();
    const issued = await clientCredentials(t, client);
    expect(issued.statusCode).toBe(200);
    const token = issued.json<{ access_token: string }>().access_token;

    lock();
    const refused = await revoke(t, client, token);
    expectTemporarilyUnavailable(refused);

    // One line for the outage, with its cause; the request's own line names the database; no stack.
    const entries = t.logs.map((line) => JSON.parse(line) as Record<string, any>);
    const failures = entries.filter((entry) => entry.level === 50);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ msg: 'database unreachable', dependency: 'database', outage: 'started' });
    expect(failures[0]?.cause).toContain('SQLITE_BUSY');
    expect(entries.filter((entry) => entry.statusCode === 503)).toMatchObject([{ path: '/revoke', unavailable: 'database' }]);
    const logged = t.logs.join('\n');
    expect(logged).not.toMatch(/"stack"|\bat \S+ \(/);
    expect(logged).not.toContain(client.secret);
    expect(logged).not.toContain(token);

    unlock();
    expect((await revoke(t, client, token)).statusCode).toBe(200);
  });

  it('a hosted page answers with the 503 page asking to try again shortly, and works again once the lock is free', async () => {
    const { t, lock, unlock } = await setUp();
    const client = await t.createClient();
    const url = authorizeUrl(authorizeParams(client));

    lock();
    expectTryAgainPage(await t.app.inject({ method: 'GET', url }));

    unlock();
    const started = await t.app.inject({ method: 'GET', url });
    expect(started.statusCode).toBe(303);
  });
});

describe.skipIf(!postgresAdminUrl)('PostgreSQL: the connection to the database is lost', () => {
  /** An app on a fresh database, reached through a proxy the test can cut. */
  async function setUp() {
    const database = await createTestDatabase();
    const target = new URL(database.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const storage = openStorage({ engine: 'postgres', url: throughProxy(database.url, proxy) });
    const t = await build({ storage });
    onTestFinished(async () => {
      await t.app.close();
      await storage.close();
      await proxy.close();
      await database.drop();
    });
    return { t, proxy };
  }

  it('an API route answers 503 temporarily_unavailable with Retry-After, and works again once the database is back', async () => {
    const { t, proxy } = await setUp();
    const client = await t.createClient();

    await proxy.cut();
    expectTemporarilyUnavailable(await clientCredentials(t, client));

    await proxy.restore();
    expect((await clientCredentials(t, client)).statusCode).toBe(200);
  });

  it('a hosted page answers with the 503 page, and works again once the database is back', async () => {
    const { t, proxy } = await setUp();
    const client = await t.createClient();
    const url = authorizeUrl(authorizeParams(client));

    await proxy.cut();
    expectTryAgainPage(await t.app.inject({ method: 'GET', url }));

    await proxy.restore();
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(303);
  });
});
