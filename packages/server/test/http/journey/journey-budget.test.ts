import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startJourneyPurge } from '../../../src/compose/journey-purge.js';
import { fixedClock } from '../../../src/core/clock.js';
import { AUTHORIZATION_REQUEST_TTL_SECONDS, JOURNEY_PURGE_INTERVAL_SECONDS } from '../../../src/core/lifetimes.js';
import { createLimits } from '../../../src/limits/create-limits.js';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import type { DatabaseLocation, Storage } from '../../../src/core/storage/storage.js';
import { build, T0, type TestApp } from '../../helpers/build.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../../helpers/postgres.js';
import { openRawDatabase } from '../../helpers/raw-database.js';
import { authorizeParams, authorizeUrl, Browser, expectPage, pageText } from '../../helpers/customer-flow.js';

/** Journeys started from one client address per hour in these tests. */
const BUDGET = 3;
const limited = { env: { CONNECT_JOURNEY_LIMIT_PER_ADDRESS: String(BUDGET) } };
const ONE = '192.0.2.10';
const OTHER = '192.0.2.11';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function sqliteFile(): DatabaseLocation {
  const dir = mkdtempSync(join(tmpdir(), 'connect-journey-budget-'));
  dirs.push(dir);
  return { engine: 'sqlite', path: join(dir, 'connect.db') };
}

/** `GET /authorize` of `client` from `address`, in a fresh browser. */
function authorize(t: Pick<TestApp, 'app'>, client: { id: string }, address: string, extra: Record<string, string> = {}) {
  return new Browser(t.app, { remoteAddress: address }).get(authorizeUrl(authorizeParams(client, extra)));
}

/** A journey started: a 303 to the login page. */
function expectStarted(res: Awaited<ReturnType<typeof authorize>>): void {
  expect({ status: res.statusCode, location: String(res.headers.location) }).toMatchObject({ status: 303, location: expect.stringMatching(/^\/login\?request=/) });
}

/** The 429 page, with `Retry-After` in seconds. */
function expectRefused(res: Awaited<ReturnType<typeof authorize>>, retryAfter: number): string {
  expectPage(res, 429);
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  return pageText(res.body);
}

/** `count` journeys created at T0 that expire at T0 + 10. */
async function insertExpiredJourneys(storage: Pick<Storage, 'authorizationRequests'>, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await storage.authorizationRequests.insertAuthorizationRequest({
      idHash: `journey-${i}`, clientId: 'c', redirectUri: 'https://app.example/cb', state: null, codeChallenge: null, loginHint: null,
      browserHash: 'b', createdAt: T0, expiresAt: T0 + 10, completedAt: null, endedBy: null, status: 'pending', profileId: null, uiLocale: null, scopes: [],
      acrValues: [], maxAge: null,
    });
  }
}

describe('journeys started per client address (CONNECT_JOURNEY_LIMIT_PER_ADDRESS)', () => {
  it('the budget, the last one included, then a 429 page with Retry-After that writes nothing; another address has its own; open again after the hour', async () => {
    const location = sqliteFile();
    const t = await build({ ...limited, database: location });
    const raw = await openRawDatabase(location);
    const client = await t.createClient();
    for (let i = 0; i < BUDGET - 1; i++) expectStarted(await authorize(t, client, ONE));
    expectStarted(await authorize(t, client, ONE)); // the last of the budget
    expect(await raw.count('authorization_requests')).toBe(BUDGET);

    const refused = expectRefused(await authorize(t, client, ONE), 3600);
    expect(refused).toContain('Too many sign-ins were started from your network. Please try again in 60 minutes.');
    expect(await raw.count('authorization_requests')).toBe(BUDGET);
    // Filipino, chosen by ui_locales as every hosted page is.
    const filipino = expectRefused(await authorize(t, client, ONE, { ui_locales: 'fil' }), 3600);
    expect(filipino).toContain('Masyadong maraming pag-sign in ang sinimulan mula sa iyong network. Pakisubukang muli pagkalipas ng 60 minuto.');

    expectStarted(await authorize(t, client, OTHER));
    expect(await raw.count('authorization_requests')).toBe(BUDGET + 1);

    t.clock.advance(3599);
    expectRefused(await authorize(t, client, ONE), 1);
    t.clock.advance(1);
    expectStarted(await authorize(t, client, ONE));
  });

  it('a request refused before a journey (unknown client, an error redirect) spends nothing', async () => {
    const t = await build(limited);
    const client = await t.createClient();
    for (let i = 0; i < 2 * BUDGET; i++) {
      expectPage(await authorize(t, { id: 'no-such-client' }, ONE), 400);
      const error = await authorize(t, client, ONE, { response_type: 'token' });
      expect(String(error.headers.location)).toMatch(/[?&]error=unsupported_response_type/);
    }
    for (let i = 0; i < BUDGET; i++) expectStarted(await authorize(t, client, ONE));
  });

  it('fails closed: counters that cannot be reached answer a 503 page, and no journey is written', async () => {
    const location = sqliteFile();
    const counters = openStorage(sqliteFile());
    await counters.migrate();
    const t = await build({
      database: location,
      limits: createLimits({ counters: counters.rateLimitCounters, budgets: { smsLimitPerMobile: 5, smsLimitPerAddress: 100, pinLimitPerAddress: 100, journeyLimitPerAddress: 100 } }),
    });
    const raw = await openRawDatabase(location);
    const client = await t.createClient();
    expectStarted(await authorize(t, client, ONE));
    await counters.close();
    const res = await authorize(t, client, ONE);
    expectPage(res, 503);
    expect(res.headers['retry-after']).toBeDefined();
    expect(await raw.count('authorization_requests')).toBe(1);
  });

  it('two instances on one SQLite database share the budget', async () => {
    const location = sqliteFile();
    const masterKey = randomBytes(32);
    const a = await build({ ...limited, database: location, masterKey });
    const b = await build({ ...limited, database: location, masterKey, clock: a.clock });
    const client = await a.createClient();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => authorize(i % 2 ? b : a, client, ONE)));
    expect(results.filter((res) => res.statusCode === 303)).toHaveLength(BUDGET);
    expect(results.filter((res) => res.statusCode === 429)).toHaveLength(10 - BUDGET);
    expectStarted(await authorize(b, client, OTHER));
  });
});

noticePostgresSkipped('journey budget on PostgreSQL');

describe.skipIf(!postgresAdminUrl)('journeys per client address on PostgreSQL', () => {
  it('two instances with their own connection pools share the budget, also at once', async () => {
    const database = await createTestDatabase({ migrated: true });
    try {
      const location: DatabaseLocation = { engine: 'postgres', url: database.url };
      const masterKey = randomBytes(32);
      const a = await build({ ...limited, database: location, masterKey, closedByCaller: true });
      const b = await build({ ...limited, database: location, masterKey, clock: a.clock, closedByCaller: true });
      try {
        const client = await a.createClient();
        const results = await Promise.all(Array.from({ length: 10 }, (_, i) => authorize(i % 2 ? b : a, client, ONE)));
        expect(results.filter((res) => res.statusCode === 303)).toHaveLength(BUDGET);
        expect(results.filter((res) => res.statusCode === 429)).toHaveLength(10 - BUDGET);
        expectStarted(await authorize(a, client, OTHER));
        const raw = await openRawDatabase(location);
        expect(await raw.count('authorization_requests')).toBe(BUDGET + 1);
        await raw.close();
      } finally {
        await a.close();
        await b.close();
      }
    } finally {
      await database.drop();
    }
  });

  it('with a pool of one connection (CONNECT_DB_POOL_SIZE=1) a sweep deletes on the connection that holds its lock: it neither waits for a second one nor holds up requests', async () => {
    const database = await createTestDatabase({ migrated: true });
    const storage = openStorage({ engine: 'postgres', url: database.url }, { maxConnections: 1, timeoutMs: 2000 });
    try {
      await insertExpiredJourneys(storage, 5);
      const errors: string[] = [];
      const sweep = startJourneyPurge({ storage, clock: fixedClock(T0 + 100), log: { info: () => {}, error: (_, message) => errors.push(message) }, tickMs: 0, batchSize: 2 });
      expect(await sweep.runOnce()).toEqual({ ran: true, deleted: 5 });
      expect(errors).toEqual([]);
      await sweep.stop();
    } finally {
      await storage.close();
      await database.drop();
    }
  });

  it('two instances sweeping at once: one at a time, every expired journey deleted once', async () => {
    const database = await createTestDatabase({ migrated: true });
    const a = openStorage({ engine: 'postgres', url: database.url });
    const b = openStorage({ engine: 'postgres', url: database.url });
    try {
      await insertExpiredJourneys(a, 40);
      const clock = fixedClock(T0 + 100);
      const log = { info: () => {}, error: () => {} };
      const sweeps = [a, b].map((storage) => startJourneyPurge({ storage, clock, log, tickMs: 0, batchSize: 1 }));
      const runs = await Promise.all(sweeps.map((sweep) => sweep.runOnce()));
      const deleted = runs.map((run) => (run.ran ? run.deleted : 0));
      expect(deleted.reduce((sum, n) => sum + n, 0)).toBe(40);
      for (const run of runs) if (!run.ran) expect(run.reason).toBe('locked');
      for (const sweep of sweeps) await sweep.stop();
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });
});

describe('expired journeys are deleted within minutes (JOURNEY_PURGE_INTERVAL_SECONDS)', () => {
  it('a journey is gone within the interval after it expired, by the clock, on a timer that looks every second; a live one stays', async () => {
    const location = sqliteFile();
    const t = await build({ database: location });
    const raw = await openRawDatabase(location);
    const client = await t.createClient();
    const logs: string[] = [];
    const log = { info: (_: object, message: string) => logs.push(message), error: (_: object, message: string) => logs.push(message) };
    const sweep = startJourneyPurge({ storage: t.storage, clock: t.clock, log, tickMs: 0 });
    try {
      expect(await sweep.tick()).toEqual({ ran: true, deleted: 0 });
      // Not due again before the interval has passed on the clock.
      t.clock.advance(JOURNEY_PURGE_INTERVAL_SECONDS - 1);
      expect(await sweep.tick()).toEqual({ ran: false, reason: 'not_due' });
      t.clock.set(T0);

      expectStarted(await authorize(t, client, ONE));
      const expiresAt = T0 + AUTHORIZATION_REQUEST_TTL_SECONDS;
      t.clock.advance(120);
      expectStarted(await authorize(t, client, ONE)); // expires two minutes after the first

      // The timer's looks at the clock, one a second, from T0 + 120 until the first journey is gone.
      let goneAt: number | undefined;
      while (goneAt === undefined && t.clock.nowSeconds() <= expiresAt + 2 * JOURNEY_PURGE_INTERVAL_SECONDS) {
        t.clock.advance(1);
        await sweep.tick();
        if ((await raw.count('authorization_requests')) === 1) goneAt = t.clock.nowSeconds();
      }
      expect(goneAt).toBeGreaterThanOrEqual(expiresAt);
      expect(goneAt).toBeLessThanOrEqual(expiresAt + JOURNEY_PURGE_INTERVAL_SECONDS);
      expect(logs).toContain('expired journeys deleted');

      // The second one, still live then, goes within the interval after its own expiry.
      t.clock.set(expiresAt + 120 + JOURNEY_PURGE_INTERVAL_SECONDS);
      await sweep.tick();
      expect(await raw.count('authorization_requests')).toBe(0);
    } finally {
      await sweep.stop();
    }
  });

  it('deletes a flood in bounded batches per sweep; the next sweeps finish it', async () => {
    const clock = fixedClock(T0);
    const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
    await storage.migrate();
    try {
      await insertExpiredJourneys(storage, 25);
      const log = { info: () => {}, error: () => {} };
      const sweep = startJourneyPurge({ storage, clock, log, tickMs: 0, intervalSeconds: 30, batchSize: 4, maxBatches: 3 });
      clock.advance(10);
      expect(await sweep.tick()).toEqual({ ran: true, deleted: 12 });
      clock.advance(30);
      expect(await sweep.tick()).toEqual({ ran: true, deleted: 12 });
      clock.advance(30);
      expect(await sweep.tick()).toEqual({ ran: true, deleted: 1 });
      await sweep.stop();
    } finally {
      await storage.close();
    }
  });

  it('sweeps by itself on its timer, which never keeps the process alive, until stopped', async () => {
    const clock = fixedClock(T0 + 100);
    const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
    await storage.migrate();
    try {
      await insertExpiredJourneys(storage, 3);
      const deleted: number[] = [];
      const sweep = startJourneyPurge({ storage, clock, log: { info: (details) => void deleted.push((details as { deleted: number }).deleted), error: () => {} }, tickMs: 5 });
      const deadline = Date.now() + 5000;
      while (deleted.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(deleted).toEqual([3]);
      await sweep.stop();
    } finally {
      await storage.close();
    }
  });

  it('fails without throwing, and logs it, when the database is gone', async () => {
    const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
    await storage.migrate();
    await storage.close();
    const errors: string[] = [];
    const sweep = startJourneyPurge({ storage, clock: fixedClock(T0), log: { info: () => {}, error: (_, message) => errors.push(message) }, tickMs: 0 });
    expect(await sweep.runOnce()).toEqual({ ran: false, reason: 'failed' });
    expect(errors).toEqual(['deleting expired journeys failed; trying again at the next sweep']);
    await sweep.stop();
  });
});
