import { describe, expect, it, vi } from 'vitest';
import type { PinCheckQueue } from '../../../src/core/customers/pin.js';
import { hashLimitKey, LIMIT_KEY_PREFIXES } from '../../../src/limits/create-limits.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { codeOf, smsBench, type SmsBench } from '../../helpers/captured-sms.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import {
  authorizeParams,
  Browser,
  expectClientRedirect,
  expectErrorRedirect,
  expectPage,
  expectSeeOther,
  MOBILE,
  nthMobile,
  pageText,
  PIN,
  startLogin,
  wrongOtp,
  type Response,
} from '../../helpers/customer-flow.js';
import { testPinCheckQueue } from '../../helpers/pin-checks.js';
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

/** An app in production (its default budgets), no customer, its SMS captured. */
const bench = (options: { storage?: Storage; env?: Record<string, string> } = {}): Promise<SmsBench> => smsBench({ ...options, customer: false });

/** A new journey in a new browser at `address`: the registration form for `mobile` posted. */
async function register(b: SmsBench, address: string, mobile: string = MOBILE): Promise<{ browser: Browser; res: Response }> {
  const browser = new Browser(b.t.app, { remoteAddress: address });
  const { requestId } = await startLogin(browser, authorizeParams(b.client));
  const page = await browser.open(`/register?request=${requestId}`);
  expectPage(page, 200);
  return { browser, res: await browser.submit(page, { mobile, pin: PIN, pin_confirmation: PIN, action: 'register' }) };
}

function attackTests(open: (env?: Record<string, string>) => Promise<SmsBench>, engine: { clockMovesCounters: boolean }): void {
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

  it('a code used up by 5 wrong entries is replaced by a new challenge within the same 3: no 4th code', async () => {
    const b = await open();
    const { browser, res } = await register(b, STRANGER_NETWORKS[0] as string);
    expectSeeOther(res, OTP_PAGE);
    let page = await browser.follow(res);
    const statuses: number[] = [];
    for (let challenge = 0; challenge < 4; challenge++) {
      const right = codeOf((await b.sent()).at(-1));
      for (let entry = 0; entry < 5; entry++) page = await browser.submit(page, { otp: wrongOtp(right), action: 'verify' });
      expect(pageText(page.body)).toContain('Too many wrong codes.');
      b.t.clock.advance(30);
      page = await browser.submit(page, { action: 'resend' });
      statuses.push(page.statusCode);
    }
    // Two new challenges, then refused: 3 codes in all.
    expect(statuses).toEqual([200, 200, 400, 400]);
    expect(pageText(page.body)).toContain('Too many codes were sent.');
    expect(await b.sent()).toHaveLength(3);
  });

  it('resets of the number while it has no account spend the same 3 (though they send nothing)', async () => {
    const b = await open();
    for (const network of STRANGER_NETWORKS.slice(0, 2)) {
      const browser = new Browser(b.t.app, { remoteAddress: network });
      const { requestId } = await startLogin(browser, authorizeParams(b.client));
      const page = await browser.open(`/login/reset?request=${requestId}`);
      expectSeeOther(await browser.submit(page, { mobile: MOBILE, action: 'send' }), /^\/login\/reset\/otp\?request=/);
    }
    expect(await b.sent()).toHaveLength(0);
    expectSeeOther((await register(b, STRANGER_NETWORKS[2] as string)).res, OTP_PAGE);
    const refused = await register(b, STRANGER_NETWORKS[3] as string);
    expectPage(refused.res, 400);
    expect(pageText(refused.res.body)).toContain('Too many codes were sent.');
    expect(await b.sent()).toHaveLength(1);
  });

  it('a registration overtaken by the owner\'s sends no more codes: "Send a new code" says the number has an account', async () => {
    const b = await open();
    const stranger = await register(b, STRANGER_NETWORKS[0] as string);
    expectSeeOther(stranger.res, OTP_PAGE);
    const strangerPage = await stranger.browser.follow(stranger.res);
    const { browser, res } = await register(b, OWNER);
    const done = await browser.submit(await browser.follow(res), { otp: codeOf((await b.sent()).at(-1)), action: 'verify' });
    expect(expectClientRedirect(done).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    b.t.clock.advance(30);
    const resent = await stranger.browser.submit(strangerPage, { action: 'resend' });
    expectPage(resent, 400);
    expect(pageText(resent.body)).toContain('This mobile number already has an account.');
    expect(await b.sent()).toHaveLength(2);
  });

  it("while a stranger keeps the number's codes spent, the owner's refused registrations cost the owner's address no attempt", async () => {
    const b = await open({ CONNECT_PIN_LIMIT_PER_ADDRESS: '3' });
    for (const network of STRANGER_NETWORKS.slice(0, 3)) expectSeeOther((await register(b, network)).res, OTP_PAGE);
    for (let i = 0; i < 5; i++) {
      const { res } = await register(b, OWNER);
      expectPage(res, 400);
      expect(pageText(res.body)).toContain('Too many codes were sent.');
    }
    expect(await b.sent()).toHaveLength(3);
  });

  it("once the address's own SMS budget is spent, each registration form it posts costs it a PIN-check attempt: probing numbers is not free", async () => {
    const b = await open({ CONNECT_SMS_LIMIT_PER_ADDRESS: '1', CONNECT_PIN_LIMIT_PER_ADDRESS: '3' });
    const prober = STRANGER_NETWORKS[0] as string;
    expectSeeOther((await register(b, prober, nthMobile(1))).res, OTP_PAGE);
    for (let i = 2; i <= 4; i++) {
      const { res } = await register(b, prober, nthMobile(i));
      expectPage(res, 400);
      expect(pageText(res.body)).toContain('Too many codes were sent.');
    }
    const { res } = await register(b, prober, nthMobile(5));
    expectPage(res, 400);
    expect(pageText(res.body)).toContain('Too many attempts were made from your network.');
  });

  it('"Send a new code" clicked twice at once sends one code and spends one: the number still gets its 3', async () => {
    const b = await open();
    const { browser, res } = await register(b, OWNER);
    expectSeeOther(res, OTP_PAGE);
    const page = await browser.follow(res);
    b.t.clock.advance(30);
    const both = await Promise.all([browser.submit(page, { action: 'resend' }), browser.submit(page, { action: 'resend' })]);
    expect(both.map((answer) => answer.statusCode).sort()).toEqual([200, 400]);
    expect(await b.sent()).toHaveLength(2);
    b.t.clock.advance(30);
    const third = await browser.submit(page, { action: 'resend' });
    expectPage(third, 200);
    expect(await b.sent()).toHaveLength(3);
    const done = await browser.submit(third, { otp: codeOf((await b.sent()).at(-1)), action: 'verify' });
    expect(expectClientRedirect(done).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
}

/** The server's PIN-check queue, each `run` held until the test lets it go; `arrived` resolves when one waits. */
function heldPinChecks(): { pinChecks: PinCheckQueue; arrived: () => Promise<void>; letGo: () => void } {
  const real = testPinCheckQueue();
  const waiting: Array<() => void> = [];
  let onArrival: (() => void) | undefined;
  return {
    pinChecks: {
      async run(work) {
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          onArrival?.();
        });
        return real.run(work);
      },
      reserve: () => real.reserve(),
      close: () => real.close(),
    },
    arrived: () => new Promise<void>((resolve) => (onArrival = resolve)),
    letGo: () => waiting.shift()?.(),
  };
}

describe('the registration budgets while the new PIN is hashed', () => {
  it('a journey cancelled while its new PIN was hashed keeps the address\'s attempt: forms posted and cancelled at once hash no PINs for free', async () => {
    const held = heldPinChecks();
    const b = await smsBench({ customer: false, pinChecks: held.pinChecks, env: { CONNECT_PIN_LIMIT_PER_ADDRESS: '3' } });
    const prober = STRANGER_NETWORKS[0] as string;
    for (let i = 1; i <= 3; i++) {
      const browser = new Browser(b.t.app, { remoteAddress: prober });
      const { requestId } = await startLogin(browser, authorizeParams(b.client));
      const page = await browser.open(`/register?request=${requestId}`);
      const arrived = held.arrived();
      const posted = browser.submit(page, { mobile: nthMobile(i), pin: PIN, pin_confirmation: PIN, action: 'register' });
      await arrived;
      expectErrorRedirect(await browser.submit(page, { action: 'cancel' }), 'access_denied', 'xyz-state');
      held.letGo();
      const ended = await posted;
      expectPage(ended, 400);
      expect(pageText(ended.body)).toContain('This sign-in is finished');
    }
    const { res } = await register(b, prober, nthMobile(4));
    expectPage(res, 400);
    expect(pageText(res.body)).toContain('Too many attempts were made from your network.');
    for (let i = 1; i <= 4; i++) expect(await b.sent(nthMobile(i))).toEqual([]);
  });

  it('a registration answered 503 at its deadline while its new PIN waited gives back what its code took', async () => {
    const held = heldPinChecks();
    const b = await smsBench({ customer: false, pinChecks: held.pinChecks, env: { CONNECT_REQUEST_TIMEOUT_MS: '300' } });
    const unsolicited = `${LIMIT_KEY_PREFIXES.resetSmsUnsolicited}:${hashLimitKey(MOBILE, b.t.services.runtime.limitKey)}`;
    const taken = async () => (await b.t.storage.rateLimitCounters.findRateLimitCounter(unsolicited, b.t.clock.nowSeconds() * 1000))?.points;
    const arrived = held.arrived();
    const answered = register(b, STRANGER_NETWORKS[0] as string);
    await arrived;
    expect(await taken()).toBe(1);
    expectPage((await answered).res, 503);
    held.letGo();
    await vi.waitFor(async () => expect(await taken()).toBe(0), { timeout: 5000 });
    expect(await b.sent()).toEqual([]);
  });

  it('a busy server answers 503 and gives back what the code took: the number still gets its 3', async () => {
    const pinChecks = testPinCheckQueue({ concurrency: 1, queueLimit: 0 });
    const b = await smsBench({ customer: false, pinChecks });
    const place = pinChecks.reserve();
    try {
      for (const network of STRANGER_NETWORKS.slice(0, 2)) expectPage((await register(b, network)).res, 503);
    } finally {
      place.release();
    }
    for (const network of STRANGER_NETWORKS.slice(0, 3)) expectSeeOther((await register(b, network)).res, OTP_PAGE);
    expect(await b.sent()).toHaveLength(3);
  });
});

describe('the registration budgets, on SQLite', () => {
  attackTests((env) => bench({ env: { ...env } }), { clockMovesCounters: true });
});

describe.skipIf(!postgresAdminUrl)('the registration budgets, on PostgreSQL', () => {
  const pg = usePostgresStorage();
  attackTests((env) => bench({ storage: pg.open(), env: { ...env } }), { clockMovesCounters: true });
});

describe.skipIf(!redisUrl)('the registration budgets, in Redis', () => {
  // Redis keeps its own time: the counters do not move with the test's clock.
  attackTests((env) => bench({ env: { ...env, REDIS_URL: redisUrl ?? '' } }), { clockMovesCounters: false });
});
