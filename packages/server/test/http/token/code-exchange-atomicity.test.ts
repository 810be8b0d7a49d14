import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { hashCode } from '../../../src/core/codes/authorization-code.js';
import { issueCode } from '../../../src/core/journey/code.js';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import type { DatabaseLocation, Storage } from '../../../src/core/storage/storage.js';
import { build, type TestApp } from '../../helpers/build.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../../helpers/postgres.js';
import { openRawDatabase, type RawDatabase } from '../../helpers/raw-database.js';
import { startTcpProxy, throughProxy } from '../../helpers/tcp-proxy.js';
import { addCustomer, exchangeCode, REDIRECT_URI } from '../../helpers/customer-flow.js';
import { REFRESH_GRANTS } from '../../helpers/token-session.js';
import { expectOAuthError, type Credentials } from '../../helpers/wire.js';

/**
 * A code exchange is all or nothing (docs/journey.md, "The code"): the
 * code is consumed and its token session added in one atomic step, so a
 * fault at any instant of it leaves either an unused code or a consumed
 * code with its complete session, never a consumed code without one.
 * (A `kill -9` of a server process under exchange load:
 * test/cli/exchange-crash.test.ts.)
 */

/** The codes consumed that have no token session: what a crash in the middle of an exchange must never leave. */
const ORPHANS = 'consumed_at is not null and not exists (select 1 from token_sessions s where s.code_hash = authorization_codes.code_hash)';

/** A client, a customer, and a way to issue codes for them straight into the database (no journey needed). */
async function setUp(t: TestApp) {
  const client = await t.createClient({ grants: REFRESH_GRANTS });
  const customer = await addCustomer(t);
  const issue = async () => {
    const location = await issueCode(
      { clientId: client.id, redirectUri: REDIRECT_URI, state: null, codeChallenge: null, scopes: [] },
      customer,
      null,
      t.storage.codes,
      { clock: t.clock, lifetimes: { codeSeconds: 300 }, issuer: 'https://connect.test' },
    );
    return new URL(location).searchParams.get('code') ?? '';
  };
  const exchange = (code: string) => exchangeCode(t.app, client as Credentials, { code, redirect_uri: REDIRECT_URI });
  return { client, issue, exchange };
}

/** How many token sessions a code has, and whether it is consumed. */
async function stateOf(raw: RawDatabase, code: string) {
  const hash = hashCode(code).replaceAll("'", "''");
  return {
    consumed: (await raw.count('authorization_codes', `code_hash = '${hash}' and consumed_at is not null`)) === 1,
    sessions: await raw.count('token_sessions', `code_hash = '${hash}'`),
  };
}

function suite(engine: string, location: () => Promise<DatabaseLocation>) {
  describe(`a code exchange interrupted on ${engine}`, () => {
    it('a failure of the token session insert, after the code was updated in the same step: the code stays unused, and the retry gets tokens', async () => {
      const where = await location();
      const t = await build({ database: where });
      const raw = await openRawDatabase(where);
      const { issue, exchange } = await setUp(t);
      const code = await issue();

      const restore = await raw.failWrites('token_sessions', 'INSERT');
      expectOAuthError(await exchange(code), { status: 503, error: 'temporarily_unavailable' });
      expect(await stateOf(raw, code)).toEqual({ consumed: false, sessions: 0 });

      await restore();
      const retried = await exchange(code);
      expect(retried.statusCode).toBe(200);
      expect(await stateOf(raw, code)).toEqual({ consumed: true, sessions: 1 });
      expect(await raw.count('authorization_codes', ORPHANS)).toBe(0);
    });
  });
}

function sqliteFile(): Promise<DatabaseLocation> {
  const dir = mkdtempSync(join(tmpdir(), 'connect-exchange-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return Promise.resolve({ engine: 'sqlite', path: join(dir, 'connect.db') });
}

async function postgresDatabase(): Promise<DatabaseLocation> {
  const database = await createTestDatabase({ migrated: true });
  onTestFinished(() => database.drop());
  return { engine: 'postgres', url: database.url };
}

suite('SQLite', sqliteFile);
noticePostgresSkipped('code exchange atomicity');
if (postgresAdminUrl) suite('PostgreSQL', postgresDatabase);

/**
 * Resolves once every connection to the database opened before `cutAtMs`
 * (epoch milliseconds) is gone (within 10 s): a statement the server had
 * received runs to its end, and commits, even once its client is gone;
 * only then does the server close that connection.
 */
async function settled(raw: RawDatabase, cutAtMs: number): Promise<void> {
  const before = `datname = current_database() and pid <> pg_backend_pid() and backend_start < to_timestamp(${cutAtMs / 1000})`;
  for (const deadline = performance.now() + 10_000; (await raw.count('pg_stat_activity', before)) > 0; await delay(10)) {
    if (performance.now() > deadline) throw new Error('a connection cut 10 s ago is still open');
  }
}

/** Exchanges whose connection is cut this many milliseconds after the atomic step was sent (0: at once, in the same turn). */
const CUT_AFTER_MS = [0, 0, 0, 1, 1, 2, 3, 5, 8, 13];

describe.skipIf(!postgresAdminUrl)('a code exchange whose database connection is cut during its atomic step, on PostgreSQL', () => {
  it(`${CUT_AFTER_MS.length} cuts at different instants: each code is either unused or consumed with its one session`, { timeout: 60_000 }, async () => {
    const where = (await postgresDatabase()) as { engine: 'postgres'; url: string };
    const proxy = await startTcpProxy({ host: new URL(where.url).hostname, port: Number(new URL(where.url).port || 5432) });
    onTestFinished(() => proxy.close());
    const inner = openStorage({ engine: 'postgres', url: throughProxy(where.url, proxy) }, { timeoutMs: 2000 });
    let cutAfterMs: number | undefined;
    let cuts = 0;
    let cutting: Promise<void> = Promise.resolve();
    // The connection breaks while the statement is on its way or running: the client never hears the outcome.
    const storage: Storage = {
      ...inner,
      codes: {
        ...inner.codes,
        redeemAuthorizationCode(...args) {
          const redeeming = inner.codes.redeemAuthorizationCode(...args);
          if (cutAfterMs !== undefined) {
            const after = cutAfterMs;
            cuts++;
            cutting = (after === 0 ? Promise.resolve() : delay(after)).then(() => proxy.cut());
          }
          return redeeming;
        },
      },
    };
    onTestFinished(() => inner.close());
    const t = await build({ storage });
    const raw = await openRawDatabase(where);
    const { issue, exchange } = await setUp(t);

    const outcomes: Array<{ status: number; consumed: boolean; sessions: number }> = [];
    for (const after of CUT_AFTER_MS) {
      const code = await issue();
      // A connection of the pool broken by the cut before fails the read first (503, code untouched): again.
      for (let tries = 0, reached = cuts; cuts === reached; tries++) {
        expect(tries).toBeLessThan(5);
        cutAfterMs = after;
        const res = await exchange(code);
        cutAfterMs = undefined;
        // Cut (maybe after the answer came back); new connections are refused until the restore.
        await cutting;
        const cutAtMs = Date.now();
        await proxy.restore();
        await settled(raw, cutAtMs);
        const state = await stateOf(raw, code);
        // All or nothing, whatever the client heard.
        expect(state.sessions).toBe(state.consumed ? 1 : 0);
        if (res.statusCode === 200) expect(state).toEqual({ consumed: true, sessions: 1 });
        else expectOAuthError(res, { status: 503, error: 'temporarily_unavailable' });
        if (cuts === reached) continue;
        outcomes.push({ status: res.statusCode, ...state });
        // An unused code is still good: the client's retry gets tokens.
        if (!state.consumed) expect((await exchange(code)).statusCode).toBe(200);
      }
    }
    expect(cuts).toBe(CUT_AFTER_MS.length);
    // Some exchanges were cut before their answer came back.
    expect(outcomes.filter((o) => o.status === 503).length).toBeGreaterThan(0);
    expect(await raw.count('authorization_codes', ORPHANS)).toBe(0);
  });
});
