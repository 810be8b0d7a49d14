import { describe, expect, it } from 'vitest';
import type { SmsMessage, SmsSender } from '../../../src/core/sms/sms-sender.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { build, type TestApp } from '../../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import {
  authorizeParams,
  Browser,
  expectClientRedirect,
  expectPage,
  expectSeeOther,
  MOBILE,
  pageText,
  PIN,
  startLogin,
  wrongOtp,
  type Response,
} from '../../helpers/customer-flow.js';
import { noticeRedisSkipped, redisTestUrl } from '../../helpers/redis.js';

noticePostgresSkipped('the registration budgets, on PostgreSQL');
const redisUrl = redisTestUrl;
noticeRedisSkipped('the registration budgets, in Redis');

/**
 * What a stranger who knows only a mobile number without an account can do
 * with the registration form (docs/journey.md, "Registration"): send it at
 * most 3 codes an hour however many networks they hold (the budgets of
 * unsolicited PIN-reset codes), and never refuse the owner's right code
 * with wrong entries of their own.
 */

const OWNER = '203.0.113.50';
const STRANGER_NETWORKS = ['198.51.100.7', '198.51.100.8', '203.0.113.9', '192.0.2.10'];
const OTP_PAGE = /^\/login\/otp\?request=[A-Za-z0-9_-]{43}$/;

interface Bench {
  readonly t: TestApp;
  readonly client: Awaited<ReturnType<TestApp['createClient']>>;
  /** The SMS handed to the gateway for {@link MOBILE}, in order. */
  sent(): Promise<SmsMessage[]>;
}

/** An app in production (its default budgets), no customer, its SMS captured. */
async function bench(options: { storage?: Storage; env?: Record<string, string> } = {}): Promise<Bench> {
  const messages: SmsMessage[] = [];
  const sms: SmsSender = {
    async send(message) {
      messages.push(message);
    },
  };
  const t = await build({ environment: 'production', sms, ...(options.storage ? { storage: options.storage } : {}), ...(options.env ? { env: options.env } : {}) });
  const client = await t.createClient();
  return {
    t,
    client,
    async sent() {
      await t.services.afterAnswer.idle();
      return messages.filter((message) => message.to === MOBILE);
    },
  };
}

function codeOf(message: SmsMessage | undefined): string {
  const code = /\b(\d{6})\b/.exec(message?.body ?? '')?.[1];
  expect(code).toMatch(/^\d{6}$/);
  return code as string;
}

/** A new journey in a new browser at `address`: the registration form for {@link MOBILE} posted. */
async function register(b: Bench, address: string): Promise<{ browser: Browser; res: Response }> {
  const browser = new Browser(b.t.app, { remoteAddress: address });
  const { requestId } = await startLogin(browser, authorizeParams(b.client));
  const page = await browser.open(`/register?request=${requestId}`);
  expectPage(page, 200);
  return { browser, res: await browser.submit(page, { mobile: MOBILE, pin: PIN, pin_confirmation: PIN, action: 'register' }) };
}

function attackTests(open: () => Promise<Bench>, engine: { clockMovesCounters: boolean }): void {
  it('a stranger on 4 networks registers the number all hour, with new codes: the phone gets 3 codes, and the owner registers once the hour frees one', async () => {
    const b = await open();
    const { t } = b;
    const answers: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (const network of STRANGER_NETWORKS) {
        const { browser, res } = await register(b, network);
        answers.push(res.statusCode);
        if (res.statusCode !== 303) {
          expectPage(res, 400);
          expect(pageText(res.body)).toContain('Too many codes were sent.');
          continue;
        }
        expectSeeOther(res, OTP_PAGE);
        const page = await browser.follow(res);
        t.clock.advance(30);
        const resent = await browser.submit(page, { action: 'resend' });
        answers.push(resent.statusCode);
        if (resent.statusCode === 400) expect(pageText(resent.body)).toContain('Too many codes were sent.');
      }
      t.clock.advance(5 * 60);
    }
    // 3 codes in all (a first code, its new one, a second network's first), however many networks asked.
    expect(answers.slice(0, 4)).toEqual([303, 200, 303, 400]);
    expect(answers.slice(4).every((status) => status === 400)).toBe(true);
    expect(await b.sent()).toHaveLength(3);

    // The owner's registration waits for the hour like any other browser's (documented), then goes through.
    const early = await register(b, OWNER);
    expectPage(early.res, 400);
    expect(pageText(early.res.body)).toContain('Too many codes were sent.');
    expect(await b.sent()).toHaveLength(3);
    if (!engine.clockMovesCounters) return;
    t.clock.advance(3600);
    const { browser, res } = await register(b, OWNER);
    expectSeeOther(res, OTP_PAGE);
    const done = await browser.submit(await browser.follow(res), { otp: codeOf((await b.sent()).at(-1)), action: 'verify' });
    expect(expectClientRedirect(done).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await b.sent()).toHaveLength(4);
  });

  it("a stranger's wrong registration codes never refuse the owner's right one", async () => {
    const b = await open();
    // Two codes to the stranger's journeys, 5 wrong entries each: 10 wrong codes for the number.
    for (const network of STRANGER_NETWORKS.slice(0, 2)) {
      const { browser, res } = await register(b, network);
      expectSeeOther(res, OTP_PAGE);
      let page = await browser.follow(res);
      const right = codeOf((await b.sent()).at(-1));
      for (let entry = 0; entry < 5; entry++) page = await browser.submit(page, { otp: wrongOtp(right), action: 'verify' });
      expect(pageText(page.body)).toContain('Too many wrong codes.');
    }
    // The owner, the third code of the hour: the right code registers the number.
    const { browser, res } = await register(b, OWNER);
    expectSeeOther(res, OTP_PAGE);
    const done = await browser.submit(await browser.follow(res), { otp: codeOf((await b.sent()).at(-1)), action: 'verify' });
    expect(expectClientRedirect(done).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await b.t.storage.customers.findCustomerByMobile(MOBILE)).toMatchObject({ mobile: MOBILE, status: 'active' });
  });
}

describe('the registration budgets, on SQLite', () => {
  attackTests(() => bench(), { clockMovesCounters: true });
});

describe.skipIf(!postgresAdminUrl)('the registration budgets, on PostgreSQL', () => {
  const pg = usePostgresStorage();
  attackTests(() => bench({ storage: pg.open() }), { clockMovesCounters: true });
});

describe.skipIf(!redisUrl)('the registration budgets, in Redis', () => {
  // Redis keeps its own time: the counters do not move with the test's clock.
  attackTests(() => bench({ env: { REDIS_URL: redisUrl ?? '' } }), { clockMovesCounters: false });
});
