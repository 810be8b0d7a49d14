import { describe, expect, it } from 'vitest';
import { lockCustomer, unlockCustomer } from '../../../src/core/operator/lock-customer.js';
import { codeOf, smsBench, type SmsBench } from '../../helpers/captured-sms.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
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
  OTHER_MOBILE,
  pageText,
  PIN,
  startLogin,
  submitCredentials,
  wrongOtp,
  type Response,
} from '../../helpers/customer-flow.js';
import { noticeRedisSkipped, redisTestUrl } from '../../helpers/redis.js';

noticePostgresSkipped('the PIN reset budgets, on PostgreSQL');
const redisUrl = redisTestUrl;
noticeRedisSkipped('the PIN reset budgets, in Redis');

/**
 * What a stranger who knows only a mobile number can do with "Forgot PIN?"
 * (docs/journey.md, "A stranger cannot lock the owner out"): lock its PIN
 * login for 15 minutes, send it at most 3 reset codes an hour however many
 * networks they hold, and never stop the owner, on a known device, from
 * resetting the PIN with the code sent to the owner's phone, nor the
 * owner's login codes. And a reset that sends nothing never spends the
 * global SMS budget.
 */

const STRANGER = '198.51.100.7';
const OWNER = '203.0.113.50';
const NEW_PIN = '590316';
const RESET_OTP = /^\/login\/reset\/otp\?request=[A-Za-z0-9_-]{43}$/;
const NEW_PIN_PAGE = /^\/login\/reset\/pin\?request=[A-Za-z0-9_-]{43}$/;
const LOGIN = /^\/login\?request=[A-Za-z0-9_-]{43}$/;

/** A new journey in a new browser at `address`, on the reset page: the mobile submitted. The response to it. */
async function askReset(b: SmsBench, address: string, mobile: string = MOBILE): Promise<{ browser: Browser; res: Response }> {
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

/** The owner signs in from `browser` (a login's one-time PIN from the captured SMS): the browser becomes a known device. */
async function signIn(b: SmsBench, browser: Browser, pin: string = PIN, mobile: string = MOBILE): Promise<void> {
  const { page } = await startLogin(browser, authorizeParams(b.client, { prompt: 'login' }));
  const otpPage = await submitCredentials(browser, page, mobile, pin);
  const done = await browser.submit(otpPage, { otp: codeOf((await b.sent(mobile)).at(-1)), action: 'verify' });
  expect(expectClientRedirect(done).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
}

/** The known-device cookie's name in production (docs/journey.md, "A stranger cannot lock the owner out"). */
const DEVICE_COOKIE = '__Host-connect_device';

/** An internet café where the owner once signed in. */
const CAFE = '192.0.2.77';

/** "Forgot PIN?" for `mobile` in a new journey of `browser` (which keeps its cookies). The response to the mobile submitted. */
async function askResetIn(b: SmsBench, browser: Browser, mobile: string = MOBILE): Promise<Response> {
  const { requestId } = await startLogin(browser, authorizeParams(b.client, { prompt: 'login' }));
  const resetPage = await browser.open(`/login/reset?request=${requestId}`);
  expectPage(resetPage, 200);
  return browser.submit(resetPage, { mobile, action: 'send' });
}

/** The PIN reset in `browser` after `asked` sent its code: the code from the SMS, then {@link NEW_PIN}; back at the login page. */
async function resetPin(b: SmsBench, browser: Browser, asked: Response): Promise<void> {
  const page = await codePage(browser, asked);
  const verified = await browser.submit(page, { otp: codeOf((await b.sent()).at(-1)), action: 'verify' });
  expectSeeOther(verified, NEW_PIN_PAGE);
  const changed = await browser.submit(await browser.follow(verified), { pin: NEW_PIN, pin_confirmation: NEW_PIN, action: 'change' });
  expectSeeOther(changed, LOGIN);
}

/** The 4 networks of the stranger. */
const STRANGER_NETWORKS = ['198.51.100.7', '198.51.100.8', '203.0.113.9', '192.0.2.10'];

function attackTests(open: () => Promise<SmsBench>, engine: { clockMovesCounters: boolean }): void {
  it('a stranger on 4 networks locks PIN login and asks for resets all hour: the phone gets 3 codes; the owner, on a known device, resets the PIN and logs in (no second SMS), and a later login code is sent', async () => {
    const b = await open();
    const { t } = b;
    // The owner signed in on this phone's browser before: a known device.
    const ownerBrowser = new Browser(t.app, { remoteAddress: OWNER });
    await signIn(b, ownerBrowser);
    const device = ownerBrowser.setCookies.find((cookie) => cookie.name === DEVICE_COOKIE);
    expect(device).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/', maxAge: 180 * 24 * 3600 });
    const loginCodes = (await b.sent()).length;
    expect(loginCodes).toBe(1);

    // 5 wrong PINs lock the victim's PIN login for 15 minutes (documented).
    let res: Response | undefined;
    for (let i = 0; i < 5; i++) {
      const browser = new Browser(t.app, { remoteAddress: STRANGER_NETWORKS[i % 4] });
      const { page } = await startLogin(browser, authorizeParams(b.client));
      res = await browser.submit(page, { mobile: MOBILE, pin: '190735', action: 'login' });
      expectPage(res, 400);
    }
    expect(pageText(res?.body ?? '')).toContain('PIN login for this number is locked. Try again in 15 minutes.');

    // Resets from each of the 4 networks, 3 rounds within the hour, each with a "send a new code".
    const answers: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (const network of STRANGER_NETWORKS) {
        const { browser, res: asked } = await askReset(b, network);
        answers.push(asked.statusCode);
        if (asked.statusCode !== 303) {
          expectPage(asked, 400);
          expect(pageText(asked.body)).toContain('Too many codes were sent.');
          continue;
        }
        const page = await codePage(browser, asked);
        t.clock.advance(30);
        const resent = await browser.submit(page, { action: 'resend' });
        answers.push(resent.statusCode);
        if (resent.statusCode === 400) expect(pageText(resent.body)).toContain('Too many codes were sent.');
      }
      // Within the PIN lock's 15 minutes.
      t.clock.advance(2 * 60);
    }
    // 3 unsolicited codes in all (a first code, its new one, a second network's first), however many networks asked.
    expect(answers.slice(0, 4)).toEqual([303, 200, 303, 400]);
    expect(answers.slice(4).every((status) => status === 400)).toBe(true);
    expect(await b.sent()).toHaveLength(loginCodes + 3);

    // The owner on a brand-new device must wait for the unsolicited budget (documented).
    const fresh = await askReset(b, OWNER);
    expectPage(fresh.res, 400);
    expect(pageText(fresh.res.body)).toContain('Too many codes were sent.');
    expect(await b.sent()).toHaveLength(loginCodes + 3);

    // The owner on the known device: PIN login locked, as documented; "Forgot PIN?" sends a code to the phone.
    const { page: loginPage, requestId } = await startLogin(ownerBrowser, authorizeParams(b.client, { prompt: 'login' }));
    const locked = await ownerBrowser.submit(loginPage, { mobile: MOBILE, pin: PIN, action: 'login' });
    expect(pageText(locked.body)).toContain('PIN login for this number is locked.');
    const resetPage = await ownerBrowser.open(`/login/reset?request=${requestId}`);
    const ownerCodePage = await codePage(ownerBrowser, await ownerBrowser.submit(resetPage, { mobile: MOBILE, action: 'send' }));
    expect(await b.sent()).toHaveLength(loginCodes + 4);
    const verified = await ownerBrowser.submit(ownerCodePage, { otp: codeOf((await b.sent()).at(-1)), action: 'verify' });
    expectSeeOther(verified, NEW_PIN_PAGE);
    const pinPage = await ownerBrowser.follow(verified);
    const changed = await ownerBrowser.submit(pinPage, { pin: NEW_PIN, pin_confirmation: NEW_PIN, action: 'change' });
    expectSeeOther(changed, LOGIN);
    // Logs in with the new PIN in the same sign-in: the reset's code proved the phone, no second SMS.
    const afterReset = await ownerBrowser.follow(changed);
    const back = await ownerBrowser.submit(afterReset, { mobile: MOBILE, pin: NEW_PIN, action: 'login' });
    expect(expectClientRedirect(back).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await b.sent()).toHaveLength(loginCodes + 4);

    // And signs in with the new PIN in a new sign-in of the app: its one-time PIN is sent.
    t.clock.advance(15 * 60);
    await signIn(b, ownerBrowser, NEW_PIN);
    expect(await b.sent()).toHaveLength(loginCodes + 5);

    if (!engine.clockMovesCounters) return;
    // An hour after the first, the stranger may do it again: again at most 3 reach the victim.
    t.clock.advance(3600);
    const before = (await b.sent()).length;
    let sent = 0;
    for (let i = 0; i < 8; i++) {
      const again = await askReset(b, STRANGER_NETWORKS[i % 4] as string);
      if (again.res.statusCode === 303) sent++;
      else expect(pageText(again.res.body)).toContain('Too many codes were sent.');
    }
    expect(sent).toBe(3);
    expect(await b.sent()).toHaveLength(before + 3);
  });

  it("a stranger's wrong reset codes from many networks never refuse the owner's right code from a known device", async () => {
    const b = await open();
    const ownerBrowser = new Browser(b.t.app, { remoteAddress: OWNER });
    await signIn(b, ownerBrowser);
    // Every code the stranger gets sent (3, from 3 networks), 5 wrong entries each.
    for (const network of STRANGER_NETWORKS.slice(0, 3)) {
      const { browser, res } = await askReset(b, network);
      let page = await codePage(browser, res);
      const right = codeOf((await b.sent()).at(-1));
      for (let entry = 0; entry < 5; entry++) page = await browser.submit(page, { otp: wrongOtp(right), action: 'verify' });
      expect(pageText(page.body)).toContain('Too many wrong codes.');
    }
    const { requestId } = await startLogin(ownerBrowser, authorizeParams(b.client, { prompt: 'login' }));
    const resetPage = await ownerBrowser.open(`/login/reset?request=${requestId}`);
    const page = await codePage(ownerBrowser, await ownerBrowser.submit(resetPage, { mobile: MOBILE, action: 'send' }));
    const right = await ownerBrowser.submit(page, { otp: codeOf((await b.sent()).at(-1)), action: 'verify' });
    expectSeeOther(right, NEW_PIN_PAGE);
  });

  it.runIf(engine.clockMovesCounters)("6 unsolicited codes at the turn of the hour, then PIN login locked: the owner's known device still gets its reset code", async () => {
    const b = await open();
    const { t } = b;
    const ownerBrowser = new Browser(t.app, { remoteAddress: OWNER });
    await signIn(b, ownerBrowser);
    const before = (await b.sent()).length;
    const networks = ['198.51.100.21', '198.51.100.22', '198.51.100.23', '198.51.100.24', '198.51.100.25', '198.51.100.26'];
    // One code starts the number's unsolicited hour; two more in its last seconds, three in the next hour's first.
    const ask = async (network: string) => expectSeeOther((await askReset(b, network)).res, RESET_OTP);
    await ask(networks[0] as string);
    t.clock.advance(59 * 60 + 50);
    for (const network of networks.slice(1, 3)) await ask(network);
    t.clock.advance(11);
    for (const network of networks.slice(3)) await ask(network);
    expect(await b.sent()).toHaveLength(before + 6);
    for (let i = 0; i < 5; i++) {
      const browser = new Browser(t.app, { remoteAddress: networks[i] });
      const { page } = await startLogin(browser, authorizeParams(b.client));
      expectPage(await browser.submit(page, { mobile: MOBILE, pin: '190735', action: 'login' }), 400);
    }
    // PIN login is locked; "Forgot PIN?" on the owner's known device sends the code, and the owner resets the PIN.
    await resetPin(b, ownerBrowser, await askResetIn(b, ownerBrowser));
    expect(await b.sent()).toHaveLength(before + 7);
  });

  it('a known-device cookie tampered with, forged, or proved for another customer gives no budget of its own', async () => {
    const b = await open();
    const { t } = b;
    await addCustomer(t, OTHER_MOBILE);
    const ownerBrowser = new Browser(t.app, { remoteAddress: OWNER });
    await signIn(b, ownerBrowser);
    const genuine = ownerBrowser.cookies.get(DEVICE_COOKIE) ?? '';
    expect(genuine).toMatch(/^[A-Za-z0-9_-]{22}\.\d+~[A-Za-z0-9_-]{43}$/);
    // The cookie of a browser where another customer signed in.
    const otherBrowser = new Browser(t.app, { remoteAddress: OWNER });
    await signIn(b, otherBrowser, PIN, OTHER_MOBILE);
    const otherCustomers = otherBrowser.cookies.get(DEVICE_COOKIE) ?? '';

    // The stranger spends the unsolicited budget.
    for (const network of STRANGER_NETWORKS.slice(0, 3)) {
      const { browser, res } = await askReset(b, network);
      await codePage(browser, res);
    }
    const sent = (await b.sent()).length;

    const [deviceId, entry] = genuine.split('.') as [string, string];
    const [expiry, tag] = entry.split('~') as [string, string];
    const flipped = `${tag.slice(0, -1)}${tag.endsWith('A') ? 'B' : 'A'}`;
    const cookies = {
      tampered: `${deviceId}.${expiry}~${flipped}`,
      'moved to another device ID': `${'x'.repeat(22)}.${expiry}~${tag}`,
      'a later expiry': `${deviceId}.${Number(expiry) + 1}~${tag}`,
      forged: `${'f'.repeat(22)}.${Number(expiry)}~${'A'.repeat(43)}`,
      "another customer's": otherCustomers,
      malformed: `${genuine}.junk`,
    };
    for (const [kind, value] of Object.entries(cookies)) {
      const browser = new Browser(t.app, { remoteAddress: OWNER });
      browser.cookies.set(DEVICE_COOKIE, value);
      const { requestId } = await startLogin(browser, authorizeParams(b.client));
      const resetPage = await browser.open(`/login/reset?request=${requestId}`);
      const refused = await browser.submit(resetPage, { mobile: MOBILE, action: 'send' });
      expect(refused.statusCode, kind).toBe(400);
      expect(pageText(refused.body), kind).toContain('Too many codes were sent.');
    }
    expect(await b.sent()).toHaveLength(sent);

    // The genuine one still has its own.
    const { requestId } = await startLogin(ownerBrowser, authorizeParams(b.client, { prompt: 'login' }));
    const resetPage = await ownerBrowser.open(`/login/reset?request=${requestId}`);
    await codePage(ownerBrowser, await ownerBrowser.submit(resetPage, { mobile: MOBILE, action: 'send' }));
    expect(await b.sent()).toHaveLength(sent + 1);
  });

  it('a PIN reset in another browser ends the own budget of every browser known before it; the browser that reset the PIN has one', async () => {
    const b = await open();
    // The owner once signed in at an internet café: a known device, for 180 days.
    const cafe = new Browser(b.t.app, { remoteAddress: CAFE });
    await signIn(b, cafe);
    // Later the owner resets the PIN at home, from a browser that was not known (an unsolicited code).
    const home = new Browser(b.t.app, { remoteAddress: OWNER });
    await resetPin(b, home, await askResetIn(b, home));
    // A stranger spends the rest of the unsolicited budget.
    for (const network of STRANGER_NETWORKS.slice(0, 2)) {
      const { browser, res } = await askReset(b, network);
      await codePage(browser, res);
    }
    const sent = (await b.sent()).length;

    // The café's proof was made before the reset: it gives no budget of its own any more.
    const refused = await askResetIn(b, cafe);
    expectPage(refused, 400);
    expect(pageText(refused.body)).toContain('Too many codes were sent.');
    expect(await b.sent()).toHaveLength(sent);
    // The home browser's proof, made by the reset, does.
    await codePage(home, await askResetIn(b, home));
    expect(await b.sent()).toHaveLength(sent + 1);
  });

  it('customers lock and unlock end the own budget of every browser known before; a sign-in after the unlock makes it known again', async () => {
    const b = await open();
    const { t } = b;
    const cafe = new Browser(t.app, { remoteAddress: CAFE });
    await signIn(b, cafe);
    const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
    await lockCustomer(customer?.profileId ?? '', t.storage, t.clock.nowSeconds());
    await unlockCustomer(customer?.profileId ?? '', t.storage, t.clock.nowSeconds());
    for (const network of STRANGER_NETWORKS.slice(0, 3)) {
      const { browser, res } = await askReset(b, network);
      await codePage(browser, res);
    }
    const sent = (await b.sent()).length;

    const refused = await askResetIn(b, cafe);
    expectPage(refused, 400);
    expect(pageText(refused.body)).toContain('Too many codes were sent.');
    expect(await b.sent()).toHaveLength(sent);
    // Signed in again after the unlock: known again, with its own budget.
    await signIn(b, cafe);
    await codePage(cafe, await askResetIn(b, cafe));
    expect(await b.sent()).toHaveLength(sent + 2);
  });

  it('a registered number and an unregistered one get the same answers, in the same order, from the same networks and browsers', async () => {
    const b = await open();
    // A browser known to the customer asks for other numbers: it is not their known device.
    const ownerBrowser = new Browser(b.t.app, { remoteAddress: OWNER });
    await signIn(b, ownerBrowser);
    const answersFor = async (mobile: string): Promise<string[]> => {
      const answers: string[] = [];
      for (let i = 0; i < 6; i++) {
        const browser = i === 5 ? new Browser(b.t.app, { remoteAddress: OWNER }) : new Browser(b.t.app, { remoteAddress: STRANGER_NETWORKS[i % 4] });
        if (i === 5) browser.cookies.set(DEVICE_COOKIE, ownerBrowser.cookies.get(DEVICE_COOKIE) ?? '');
        const { requestId } = await startLogin(browser, authorizeParams(b.client));
        const resetPage = await browser.open(`/login/reset?request=${requestId}`);
        const res = await browser.submit(resetPage, { mobile, action: 'send' });
        const page = res.statusCode === 303 ? await browser.follow(res) : res;
        answers.push(`${res.statusCode} ${pageText(page.body).replace(/\+63\*+\d{4}/g, 'MOBILE')}`);
      }
      return answers;
    };
    await addCustomer(b.t, nthMobile(600));
    const registered = await answersFor(nthMobile(600));
    const unregistered = await answersFor(nthMobile(601));
    expect(unregistered).toEqual(registered);
    expect(registered.map((answer) => answer.slice(0, 3))).toEqual(['303', '303', '303', '400', '400', '400']);
    expect(await b.sent(nthMobile(600))).toHaveLength(3);
    expect(await b.sent(nthMobile(601))).toHaveLength(0);
  });
}

function atOnceTests(open: () => Promise<SmsBench>): void {
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
  atOnceTests(() => smsBench());
});

describe.skipIf(!postgresAdminUrl)('wrong reset codes per address, at once, on PostgreSQL', () => {
  const pg = usePostgresStorage();
  atOnceTests(() => smsBench({ storage: pg.open() }));
});

describe.skipIf(!redisUrl)('wrong reset codes per address, at once, in Redis', () => {
  atOnceTests(() => smsBench({ env: { REDIS_URL: redisUrl ?? '' } }));
});

describe('the PIN reset budgets, on SQLite', () => {
  attackTests(() => smsBench(), { clockMovesCounters: true });
});

describe.skipIf(!postgresAdminUrl)('the PIN reset budgets, on PostgreSQL', () => {
  const pg = usePostgresStorage();
  attackTests(() => smsBench({ storage: pg.open() }), { clockMovesCounters: true });
});

describe.skipIf(!redisUrl)('the PIN reset budgets, in Redis', () => {
  // Redis keeps its own time: the counters do not move with the test's clock.
  attackTests(() => smsBench({ env: { REDIS_URL: redisUrl ?? '' } }), { clockMovesCounters: false });
});

describe('CONNECT_SMS_LIMIT_GLOBAL counts only codes sent', () => {
  it('15 resets (and their new codes) for unregistered numbers from rotating addresses leave the global budget untouched: 15 real codes still go out', async () => {
    const b = await smsBench({ env: { CONNECT_SMS_LIMIT_GLOBAL: '15' }, customer: false });
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
    const b = await smsBench({ env: { CONNECT_SMS_LIMIT_GLOBAL: '2', CONNECT_SMS_LIMIT_PER_ADDRESS: '3' } });
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
