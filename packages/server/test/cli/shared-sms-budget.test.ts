import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../helpers/postgres.js';
import { HttpBrowser, cliJson, requireBuiltCli, serve, type ProcessSetting } from '../helpers/processes.js';
import { noticeRedisSkipped, redisTestUrl } from '../helpers/redis.js';

/**
 * Two `connect-auth serve` processes on one PostgreSQL database, as behind a
 * load balancer, spend ONE SMS budget (docs/operator-guide.md, "Rate
 * limits"): with `CONNECT_SMS_LIMIT_PER_MOBILE=3`, codes asked for one mobile
 * alternately on each instance, each from another client address, are
 * sent three times in all, and every later request is refused, on either
 * instance. Counted in the database without `REDIS_URL`, in Redis with it.
 */

noticePostgresSkipped('one SMS budget for two instances');

const REDIRECT_URI = 'https://shop.example/callback';
const PIN = '3817';
const BUDGET = 3;
const redisUrl = redisTestUrl;
noticeRedisSkipped('one SMS budget for two instances, in Redis');

beforeAll(requireBuiltCli);

const cli = cliJson;

/** Asks for a one-time PIN on `base`: `/authorize`, then mobile and PIN. The login form's answer. */
async function askForCode(base: string, address: string, client: { id: string }, mobile: string) {
  const browser = new HttpBrowser(base, address);
  const query = new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: REDIRECT_URI, state: address });
  const started = await browser.request('GET', `/authorize?${query}`);
  expect(started.status).toBe(303);
  const page = await browser.request('GET', started.location);
  expect(page.status).toBe(200);
  return browser.submit(page.body, { mobile, pin: PIN });
}

async function sentTo(base: string, mobile: string): Promise<number> {
  const res = await fetch(new URL(`/sandbox/messages?to=${encodeURIComponent(mobile)}`, base));
  return ((await res.json()) as { messages: unknown[] }).messages.length;
}

describe.skipIf(!postgresAdminUrl).each([
  ['in the database (no REDIS_URL)', undefined],
  ['in Redis (REDIS_URL)', redisUrl],
])('two instances on one PostgreSQL database spend one per-mobile SMS budget, counted %s', (_where, redis) => {
  it.skipIf(_where.startsWith('in Redis') && !redis)(`the ${BUDGET + 1}th code, asked on either instance, is refused`, { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'connect-sms-budget-'));
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    const database = await createTestDatabase();
    onTestFinished(() => database.drop());
    const s: ProcessSetting = {
      cwd: dataDir,
      env: {
        CONNECT_DATA_DIR: dataDir,
        CONNECT_ENVIRONMENT: 'sandbox',
        // A fresh key: the counters' keys (keyed hashes) are this test's own, even in a shared Redis.
        CONNECT_MASTER_KEY: randomBytes(32).toString('base64'),
        CONNECT_AUTH_URL: 'http://connect.test',
        DATABASE_URL: database.url,
        CONNECT_SMS_LIMIT_PER_MOBILE: String(BUDGET),
        ...(redis ? { REDIS_URL: redis } : {}),
      },
    };
    await cli(s, ['migrate']);
    const created = await cli<{ clientId: string }>(s, ['clients', 'create', '--name', 'Shop', '--redirect-uri', REDIRECT_URI, '--grants', 'authorization_code']);
    const client = { id: created.clientId };
    const mobile = '+639170000002';
    await cli(s, ['customers', 'create', '--mobile', mobile, '--pin', PIN]);
    const [a, b] = await Promise.all([serve(s), serve(s)]);

    const instances = [a, b] as const;
    const answers: { on: string; status: number; location: string; body: string }[] = [];
    for (let i = 0; i < BUDGET + 3; i++) {
      const on = instances[i % 2] as string;
      answers.push({ on, ...(await askForCode(on, `10.0.1.${i + 1}`, client, mobile)) });
    }

    // The first three, on a, b, a: each sent a code.
    for (const answer of answers.slice(0, BUDGET)) {
      expect(answer.status, `on ${answer.on}`).toBe(303);
      expect(answer.location).toMatch(/^\/login\/otp\?request=/);
    }
    // Every later one, on b, a, b: refused, the budget is spent for both.
    const refused = answers.slice(BUDGET);
    expect(new Set(refused.map((answer) => answer.on))).toEqual(new Set([a, b]));
    for (const answer of refused) {
      expect(answer.status, `on ${answer.on}`).toBe(400);
      expect(answer.body).toContain('Too many codes were sent.');
    }
    // Three messages in all, whichever instance is asked.
    expect(await sentTo(a, mobile)).toBe(BUDGET);
    expect(await sentTo(b, mobile)).toBe(BUDGET);
  });
});
