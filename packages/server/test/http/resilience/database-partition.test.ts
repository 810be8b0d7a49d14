import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../../helpers/postgres.js';
import { startTcpProxy, throughProxy, type TcpProxy } from '../../helpers/tcp-proxy.js';
import { addCustomer, authorizeParams, Browser, expectPage, expectSeeOther, pageText, PIN, MOBILE, startLogin } from '../../helpers/customer-flow.js';
import { expectRefreshed, introspect, lifecycle, postTokens, refreshAtToken, revoke, type Lifecycle } from '../../helpers/token-session.js';
import { authorizeUrl } from '../../helpers/customer-flow.js';
import { expectOAuthError, obtainToken } from '../../helpers/wire.js';

noticePostgresSkipped('requests during a database partition');

/**
 * A partition between Connect and PostgreSQL: the proxy keeps every
 * connection open and forwards nothing either way (CONTRACT.md, section 2,
 * `CONNECT_DB_TIMEOUT_MS`). PostgreSQL never hears the queries, so only
 * Connect's own bounds can end the wait: each request must answer 503 within
 * the timeout plus a second, and the instance must work again by itself
 * within 5 seconds once the partition heals.
 */
const TIMEOUT_MS = 500;
/** The contract's bound on a 503 during the partition. */
const ANSWER_WITHIN_MS = TIMEOUT_MS + 1000;
/** The contract's bound on recovery after the partition heals. */
const RECOVERED_WITHIN_MS = 5000;

/** An app on a fresh database reached through a proxy; a customer logged in and holding tokens. */
async function setUp(): Promise<Lifecycle & { proxy: TcpProxy }> {
  const database = await createTestDatabase({ migrated: true });
  const target = new URL(database.url);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  onTestFinished(async () => {
    await proxy.close();
    await database.drop();
  });
  const session = await lifecycle({
    database: { engine: 'postgres', url: throughProxy(database.url, proxy) },
    env: { CONNECT_DB_TIMEOUT_MS: String(TIMEOUT_MS) },
  });
  return { ...session, proxy };
}

/** Runs `request` and how long it took, ms. */
async function timed<T>(request: () => Promise<T>): Promise<{ res: T; took: number }> {
  const started = performance.now();
  const res = await request();
  return { res, took: performance.now() - started };
}

/** Repeats `attempt` until it returns true; how long that took, ms (fails past the recovery bound). */
async function recovery(attempt: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (!(await attempt())) {
    expect(performance.now() - started).toBeLessThan(RECOVERED_WITHIN_MS);
    await sleep(50);
  }
  return performance.now() - started;
}

describe.skipIf(!postgresAdminUrl)('a PostgreSQL partition (the network holds the bytes)', () => {
  it('a refresh answers 503 temporarily_unavailable with Retry-After within the timeout plus a second, and succeeds again within 5 s of the healing', async () => {
    const { t, client, tokens, proxy } = await setUp();
    // Several connections in the pool, idle when the partition begins.
    await Promise.all(Array.from({ length: 6 }, () => t.storage.ping()));
    expect(t.storage.poolStats()?.idle).toBeGreaterThan(2);
    proxy.silence();

    for (let i = 0; i < 2; i++) {
      // The second goes through a fresh connection, which hangs in its turn.
      const { res, took } = await timed(() => refreshAtToken(t.app, client, tokens.refreshToken));
      expectOAuthError(res, { status: 503, error: 'temporarily_unavailable' });
      expect(res.headers['retry-after']).toBe('5');
      expect(took).toBeLessThan(ANSWER_WITHIN_MS);
    }

    // The connections open across the partition stay silent for good. Idle
    // ones that did not answer since the silence are not trusted: the very
    // first refresh after the healing goes through new connections.
    await proxy.restore({ abandon: true });
    const first = await timed(() => refreshAtToken(t.app, client, tokens.refreshToken));
    expectRefreshed(first.res);
    expect(first.took).toBeLessThan(RECOVERED_WITHIN_MS);
  });

  it('a login step (the hosted page POST) answers the 503 page within the timeout plus a second, and goes on within 5 s of the healing', async () => {
    const { t, client, proxy } = await setUp();
    const mobile = '+639170000001';
    await addCustomer(t, mobile, PIN);
    const browser = new Browser(t.app);
    const { page } = await startLogin(browser, authorizeParams(client, { user_id: mobile }));
    proxy.silence();

    const { res, took } = await timed(() => browser.submit(page, { mobile, pin: PIN, action: 'login' }));
    expectPage(res, 503);
    expect(res.headers['retry-after']).toBe('5');
    expect(pageText(res.body)).toMatch(/try again shortly/i);
    expect(took).toBeLessThan(ANSWER_WITHIN_MS);

    await proxy.restore();
    let last = res;
    await recovery(async () => {
      last = await browser.submit(page, { mobile, pin: PIN, action: 'login' });
      return last.statusCode !== 503;
    });
    expectSeeOther(last, /^\/login\/otp\?request=/);
    expect(await t.storage.customers.findCustomerByMobile(MOBILE)).toBeDefined();
  });

  it('/readyz answers 503 naming the database within the timeout plus a second, and 200 again within 5 s of the healing', async () => {
    const { t, proxy } = await setUp();
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    proxy.silence();

    for (let i = 0; i < 2; i++) {
      const { res, took } = await timed(() => t.app.inject({ method: 'GET', url: '/readyz' }));
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ status: 'unavailable', failed: ['database'] });
      expect(took).toBeLessThan(ANSWER_WITHIN_MS);
    }

    await proxy.restore();
    await recovery(async () => (await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200);
  });

  it('every other endpoint that needs the database: /introspect, /revoke, /tokens (503 JSON) and a hosted page (503 page), each within the timeout plus a second', async () => {
    const { t, client, tokens, proxy } = await setUp();
    const bearer = await obtainToken(t, client);
    proxy.silence();

    const api = {
      '/introspect': () => introspect(t.app, client, tokens.accessToken),
      '/revoke': () => revoke(t.app, client, tokens.refreshToken),
      '/tokens': () => postTokens(t.app, { bearer, body: { refreshToken: tokens.refreshToken } }),
    };
    for (const [name, request] of Object.entries(api)) {
      const { res, took } = await timed(request);
      expect({ name, status: res.statusCode }).toEqual({ name, status: 503 });
      expect(res.json()).toMatchObject({ error: 'temporarily_unavailable' });
      expect(res.headers['retry-after']).toBe('5');
      expect({ name, fast: took < ANSWER_WITHIN_MS }).toEqual({ name, fast: true });
    }
    const { res, took } = await timed(() => t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client)) }));
    expectPage(res, 503);
    expect(res.headers['retry-after']).toBe('5');
    expect(took).toBeLessThan(ANSWER_WITHIN_MS);
    await proxy.restore();
  });

  it('connections that hung are closed, not handed to the next request: the pool refills with working ones', async () => {
    const { t, client, tokens, proxy } = await setUp();
    proxy.silence();
    // Several at once: each holds a pooled connection that never answers.
    const refused = await Promise.all([0, 1, 2, 3].map(() => refreshAtToken(t.app, client, tokens.refreshToken)));
    for (const res of refused) expect(res.statusCode).toBe(503);
    // None went back to the pool idle, with its answer still owed.
    expect(t.storage.poolStats()?.idle).toBe(0);

    await proxy.restore();
    // Every refresh after the healing works: none meets a connection still owing an answer.
    await recovery(async () => (await refreshAtToken(t.app, client, tokens.refreshToken)).statusCode === 200);
    const after = await Promise.all([0, 1, 2, 3].map(() => refreshAtToken(t.app, client, tokens.refreshToken)));
    for (const res of after) expect(res.statusCode).toBe(200);
  });
});
