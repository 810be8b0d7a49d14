import { describe, expect, it } from 'vitest';
import type { SmsMessage, SmsSender } from '../../src/core/sms/sms-sender.js';
import type { Storage } from '../../src/storage/ports.js';
import { build, type TestApp } from '../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../helpers/postgres.js';
import {
  addCustomer,
  addCustomers,
  authorizeParams,
  Browser,
  expectClientRedirect,
  expectPage,
  expectSeeOther,
  MOBILE,
  nthMobile,
  pageText,
  PIN,
  startLogin,
  submitCredentials,
  wrongOtp,
  type Response,
} from './customer-flow.js';
import { noticeRedisSkipped, redisTestUrl } from '../helpers/redis.js';

noticePostgresSkipped('the PIN reset budgets, on PostgreSQL');
const redisUrl = redisTestUrl;
noticeRedisSkipped('the PIN reset budgets, in Redis');

/**
 * What a stranger who knows only a mobile number can do with "Forgot PIN?"
 * (docs/journey.md, "A stranger cannot lock the owner out"): lock its PIN
 * login for 15 minutes, send it at most 3 reset codes an hour from one
 * address, and never stop the owner, on another network and a fresh
 * browser, from resetting the PIN with the code sent to the owner's phone.
 * And a reset that sends nothing never spends the global SMS budget.
 */

const STRANGER = '198.51.100.7';
const OWNER = '203.0.113.50';
const NEW_PIN = '590316';
const RESET_OTP = /^\/login\/reset\/otp\?request=[A-Za-z0-9_-]{43}$/;
const NEW_PIN_PAGE = /^\/login\/reset\/pin\?request=[A-Za-z0-9_-]{43}$/;
const LOGIN = /^\/login\?request=[A-Za-z0-9_-]{43}$/;

interface Bench {
  readonly t: TestApp;
  readonly client: Awaited<ReturnType<TestApp['createClient']>>;
  /** The SMS handed to the gateway, in order (the reset codes once the page was answered). */
  sent(mobile?: string): Promise<SmsMessage[]>;
}

/** An app in production (its default budgets) with one customer, its SMS captured. */
async function bench(options: { storage?: Storage; env?: Record<string, string>; customer?: boolean } = {}): Promise<Bench> {
  const messages: SmsMessage[] = [];
  const sms: SmsSender = {
    async send(message) {
      messages.push(message);
    },
  };
  const t = await build({ environment: 'production', sms, ...(options.storage ? { storage: options.storage } : {}), ...(options.env ? { env: options.env } : {}) });
  const client = await t.createClient();
  if (options.customer !== false) await addCustomer(t);
  return {
    t,
    client,
    async sent(mobile = MOBILE) {
      await t.services.afterAnswer.idle();
      return messages.filter((message) => message.to === mobile);
    },
  };
}

function codeOf(message: SmsMessage | undefined): string {
  const code = /\b(\d{6})\b/.exec(message?.body ?? '')?.[1];
  expect(code).toMatch(/^\d{6}$/);
  return code as string;
}

/** A new journey in a new browser at `address`, on the reset page: the mobile submitted. The response to it. */
async function askReset(b: Bench, address: string, mobile: string = MOBILE): Promise<{ browser: Browser; res: Response }> {
  const browser = new Browser(b.t.app, { remoteAddress: address });
  const { requestId } = await startLogin(browser, authorizeParams(b.client));
  const page = await browser.open(`/login/reset?request=${requestId}`);
  expectPage(page, 200);
  return { browser, res: await browser.submit(page, { mobile, action: 'send' }) };
}

/** The reset code's page after {@link askReset} sent a code. */
async function codePage(browser: Browser, res: Response): Promise<Response> {
  expectSeeOther(res, RESET_OTP);
  const page = await browser.follow(res);
  expectPage(page, 200);
  return page;
}

function attackTests(open: () => Promise<Bench>, engine: { clockMovesCounters: boolean }): void {
  it('after the stranger locks PIN login and spends every reset budget of one address, the owner resets the PIN with the code from their phone and logs in', async () => {
    const b = await open();
    const { t } = b;

    // 5 wrong PINs lock the victim's PIN login for 15 minutes (documented).
    let res: Response | undefined;
    for (let i = 0; i < 5; i++) {
      const browser = new Browser(t.app, { remoteAddress: STRANGER });
      const { page } = await startLogin(browser, authorizeParams(b.client));
      res = await browser.submit(page, { mobile: MOBILE, pin: '190735', action: 'login' });
      expectPage(res, 400);
    }
    expect(pageText(res?.body ?? '')).toContain('PIN login for this number is locked. Try again in 15 minutes.');

    // Two resets of the victim's mobile, 5 wrong codes each.
    for (let round = 0; round < 2; round++) {
      const { browser, res: asked } = await askReset(b, STRANGER);
      let page = await codePage(browser, asked);
      const right = codeOf((await b.sent()).at(-1));
      for (let entry = 0; entry < 5; entry++) page = await browser.submit(page, { otp: wrongOtp(right), action: 'verify' });
      expect(pageText(page.body)).toContain('Too many wrong codes. Ask for a new code.');
    }
    expect(await b.sent()).toHaveLength(2);

    // A third: its code is sent, but the stranger's address has no wrong entries left, and no new code.
    const third = await askReset(b, STRANGER);
    const page = await codePage(third.browser, third.res);
    const refusedEntry = await third.browser.submit(page, { otp: '000000', action: 'verify' });
    expectPage(refusedEntry, 400);
    expect(pageText(refusedEntry.body)).toContain('Too many attempts were made from your network.');
    t.clock.advance(30);
    const resent = await third.browser.submit(refusedEntry, { action: 'resend' });
    expectPage(resent, 400);
    expect(pageText(resent.body)).toContain('Too many codes were sent. Try again in 60 minutes.');
    // And a fourth reset from the same address sends nothing either.
    const fourth = await askReset(b, STRANGER);
    expectPage(fourth.res, 400);
    expect(pageText(fourth.res.body)).toContain('Too many codes were sent.');
    // The victim received 3 unsolicited SMS.
    expect(await b.sent()).toHaveLength(3);

    // The owner, on another network and a fresh browser: PIN login is still locked, as documented.
    const owner = new Browser(t.app, { remoteAddress: OWNER });
    const { page: loginPage, requestId } = await startLogin(owner, authorizeParams(b.client));
    const locked = await owner.submit(loginPage, { mobile: MOBILE, pin: PIN, action: 'login' });
    expectPage(locked, 400);
    expect(pageText(locked.body)).toContain('PIN login for this number is locked.');
    // "Forgot PIN?": a code to the owner's phone, entered right, a new PIN.
    const resetPage = await owner.open(`/login/reset?request=${requestId}`);
    const ownerCodePage = await codePage(owner, await owner.submit(resetPage, { mobile: MOBILE, action: 'send' }));
    const ownerCode = codeOf((await b.sent()).at(-1));
    expect(await b.sent()).toHaveLength(4);
    const verified = await owner.submit(ownerCodePage, { otp: ownerCode, action: 'verify' });
    expectSeeOther(verified, NEW_PIN_PAGE);
    const pinPage = await owner.follow(verified);
    const changed = await owner.submit(pinPage, { pin: NEW_PIN, pin_confirmation: NEW_PIN, action: 'change' });
    expectSeeOther(changed, LOGIN);
    const login = await owner.follow(changed);
    expectPage(login, 200);
    // And logs in with the new PIN: back at the client with a code.
    const otpPage = await submitCredentials(owner, login, MOBILE, NEW_PIN);
    const done = await owner.submit(otpPage, { otp: codeOf((await b.sent()).at(-1)), action: 'verify' });
    expect(expectClientRedirect(done).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    if (!engine.clockMovesCounters) return;
    // An hour later the stranger may do it again, and again at most 3 SMS reach the victim.
    t.clock.advance(3600);
    const before = (await b.sent()).length;
    let sent = 0;
    for (let i = 0; i < 5; i++) {
      const again = await askReset(b, STRANGER);
      if (again.res.statusCode === 303) sent++;
      else expect(pageText(again.res.body)).toContain('Too many codes were sent.');
    }
    expect(sent).toBe(3);
    expect(await b.sent()).toHaveLength(before + 3);
  });

  it("a stranger's wrong reset codes from many addresses never refuse the owner's right code", async () => {
    const b = await open();
    // 4 addresses (2 where the test's clock does not move the counters), 2 resets each with 5 wrong
    // codes: 40 (20) wrong codes for the mobile within the hour, where 10 used to refuse every code.
    const addresses = engine.clockMovesCounters ? 4 : 2;
    for (let address = 0; address < addresses; address++) {
      for (let round = 0; round < 2; round++) {
        const { browser, res } = await askReset(b, `198.51.100.${20 + address}`);
        let page = await codePage(browser, res);
        const right = codeOf((await b.sent()).at(-1));
        for (let entry = 0; entry < 5; entry++) page = await browser.submit(page, { otp: wrongOtp(right), action: 'verify' });
        expect(pageText(page.body)).toContain('Too many wrong codes.');
      }
      // Within the mobile's send budget (CONNECT_SMS_LIMIT_PER_MOBILE, 5 per 15 minutes): a quarter of an hour per address.
      b.t.clock.advance(15 * 60);
    }
    const { browser, res } = await askReset(b, OWNER);
    const page = await codePage(browser, res);
    const right = await browser.submit(page, { otp: codeOf((await b.sent()).at(-1)), action: 'verify' });
    expectSeeOther(right, NEW_PIN_PAGE);
  });
}

function atOnceTests(open: () => Promise<Bench>): void {
  it('the last wrong entry of an address’s budget is taken by one of 5 entries sent at once; the others are refused, uncompared', async () => {
    const b = await open();
    // 9 of the address's 10 wrong entries: 5 on a first code, 4 on a second.
    for (const wrong of [5, 4]) {
      const { browser, res } = await askReset(b, STRANGER);
      let page = await codePage(browser, res);
      const right = codeOf((await b.sent()).at(-1));
      for (let entry = 0; entry < wrong; entry++) page = await browser.submit(page, { otp: wrongOtp(right), action: 'verify' });
    }
    const { browser, res } = await askReset(b, STRANGER);
    const page = await codePage(browser, res);
    const right = codeOf((await b.sent()).at(-1));
    const answers = await Promise.all(Array.from({ length: 5 }, () => browser.submit(page, { otp: wrongOtp(right), action: 'verify' })));
    const texts = answers.map((answer) => pageText(answer.body));
    expect(texts.filter((text) => text.includes('Too many attempts were made from your network.'))).toHaveLength(4);
    expect(texts.filter((text) => text.includes('That code is not right.'))).toHaveLength(1);
  });
}

describe('wrong reset codes per address, at once, on SQLite', () => {
  atOnceTests(() => bench());
});

describe.skipIf(!postgresAdminUrl)('wrong reset codes per address, at once, on PostgreSQL', () => {
  const pg = usePostgresStorage();
  atOnceTests(() => bench({ storage: pg.open() }));
});

describe.skipIf(!redisUrl)('wrong reset codes per address, at once, in Redis', () => {
  atOnceTests(() => bench({ env: { REDIS_URL: redisUrl ?? '' } }));
});

describe('the PIN reset budgets, on SQLite', () => {
  attackTests(() => bench(), { clockMovesCounters: true });
});

describe.skipIf(!postgresAdminUrl)('the PIN reset budgets, on PostgreSQL', () => {
  const pg = usePostgresStorage();
  attackTests(() => bench({ storage: pg.open() }), { clockMovesCounters: true });
});

describe.skipIf(!redisUrl)('the PIN reset budgets, in Redis', () => {
  // Redis keeps its own time: the counters do not move with the test's clock.
  attackTests(() => bench({ env: { REDIS_URL: redisUrl ?? '' } }), { clockMovesCounters: false });
});

describe('CONNECT_SMS_LIMIT_GLOBAL counts only codes sent', () => {
  it('15 resets (and their new codes) for unregistered numbers from rotating addresses leave the global budget untouched: 15 real codes still go out', async () => {
    const b = await bench({ env: { CONNECT_SMS_LIMIT_GLOBAL: '15' }, customer: false });
    const { t } = b;
    for (let i = 0; i < 15; i++) {
      const { browser, res } = await askReset(b, `192.0.2.${100 + i}`, nthMobile(100 + i));
      const page = await codePage(browser, res);
      t.clock.advance(30);
      const resent = await browser.submit(page, { action: 'resend' });
      expectPage(resent, 200);
      expect(pageText(resent.body)).toContain('has a Connect account, we sent a new code to it.');
    }
    for (let i = 0; i < 15; i++) expect(await b.sent(nthMobile(100 + i))).toEqual([]);

    // The whole budget is still there: 15 customers get their reset codes, each from an address of its own.
    const customers = Array.from({ length: 16 }, (_, i) => nthMobile(i));
    await addCustomers(t, customers);
    for (let i = 0; i < 15; i++) {
      const { browser, res } = await askReset(b, `192.0.2.${i + 1}`, customers[i]);
      await codePage(browser, res);
    }
    for (let i = 0; i < 15; i++) expect(await b.sent(customers[i])).toHaveLength(1);

    // Then it is spent: the 16th customer is refused, and so is an unregistered number, with the same page.
    const refused: string[] = [];
    for (const mobile of [customers[15] as string, nthMobile(200)]) {
      const { res } = await askReset(b, '192.0.2.250', mobile);
      expectPage(res, 400);
      expect(pageText(res.body)).toContain('We cannot send codes right now. Try again later.');
      refused.push(pageText(res.body).replace(/\+63\*+\d{4}/g, 'MOBILE'));
    }
    expect(refused[1]).toBe(refused[0]);
    expect(await b.sent(customers[15])).toEqual([]);
  });

  it('once both the global budget and an address’s own are spent, a registered number and an unregistered one get the same page from that address', async () => {
    const b = await bench({ env: { CONNECT_SMS_LIMIT_GLOBAL: '2', CONNECT_SMS_LIMIT_PER_ADDRESS: '3' } });
    // The prober spends its address's budget on numbers without an account (nothing sent).
    for (let i = 0; i < 3; i++) {
      const { browser, res } = await askReset(b, STRANGER, nthMobile(300 + i));
      await codePage(browser, res);
    }
    // Real customers spend the global budget, each from an address of its own.
    for (const address of ['192.0.2.61', '192.0.2.62']) {
      const { browser, res } = await askReset(b, address);
      await codePage(browser, res);
    }
    expect(await b.sent()).toHaveLength(2);

    // Every probe from the spent address now gets one answer, whether the number has an account or not.
    const answers: string[] = [];
    for (const mobile of [MOBILE, nthMobile(400)]) {
      const { res } = await askReset(b, STRANGER, mobile);
      expectPage(res, 400);
      answers.push(pageText(res.body).replace(/\+63\*+\d{4}/g, 'MOBILE'));
    }
    expect(answers[0]).toContain('Too many codes were sent.');
    expect(answers[1]).toBe(answers[0]);
    expect(await b.sent()).toHaveLength(2);
  });
});
