import { describe, expect, it } from 'vitest';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { timeOfDay } from '../../../src/http/views/time-of-day.js';
import { T0, type TestApp } from '../../helpers/build.js';
import { appWithCustomer } from '../../helpers/builders.js';
import {
  attribute,
  authorizeParams,
  Browser,
  enterOtp,
  expectClientRedirect,
  expectPage,
  findTag,
  inputTag,
  latestOtp,
  MASKED_MOBILE,
  MOBILE,
  OTHER_MOBILE,
  outbox,
  pageText,
  PIN,
  startLogin,
  submitCredentials,
  wrongOtp,
  type Response,
} from '../../helpers/customer-flow.js';

/** The message of a page: the field error when there is one, else the alert. */
function errorOf(html: string): { field: string | undefined; message: string } {
  const element = /<([a-z]+)\b[^>]*\sid="(mobile|pin|pin_confirmation|otp)-error"[^>]*>/.exec(html) ?? /<([a-z]+)\b[^>]*\srole="alert"[^>]*>/.exec(html);
  expect(element, 'an error on the page').not.toBeNull();
  const start = (element?.index ?? 0) + (element?.[0].length ?? 0);
  const field = element?.[0].includes('-error"') ? element[2] : undefined;
  if (field) {
    const input = inputTag(html, field);
    expect(attribute(input, 'aria-invalid')).toBe('true');
    expect(attribute(input, 'aria-describedby')?.split(' ')).toContain(`${field}-error`);
  }
  return { field, message: pageText(html.slice(start, html.indexOf(`</${element?.[1]}>`, start))) };
}

async function postLogin(browser: Browser, page: Response, mobile: string, pin: string): Promise<Response> {
  const res = await browser.submit(page, { mobile, pin, action: 'login' });
  return res;
}

describe('login: mobile and PIN', () => {
  it('without user_id: an unknown mobile and a wrong PIN get the same answer', async () => {
    const { t, client } = await appWithCustomer();
    const browser = new Browser(t.app);
    const { page } = await startLogin(browser, authorizeParams(client));
    const wrongPin = await postLogin(browser, page, MOBILE, '000000');
    const unknown = await postLogin(browser, wrongPin, OTHER_MOBILE, PIN);
    for (const res of [wrongPin, unknown]) {
      expectPage(res, 400);
      expect(errorOf(res.body)).toEqual({ field: 'pin', message: 'The mobile number or PIN is not right.' });
      expect(attribute(inputTag(res.body, 'pin'), 'value')).toBeUndefined();
    }
    // Apart from the mobile echoed back and the CSRF token, the pages are the same.
    const strip = (html: string) => html.replace(/value="[^"]*"/g, 'value=""');
    expect(strip(unknown.body)).toBe(strip(wrongPin.body));
    expect(await outbox(t.app, MOBILE)).toEqual([]);
    expect(await outbox(t.app, OTHER_MOBILE)).toEqual([]);
  });

  it('with user_id: a wrong PIN is named as such', async () => {
    const { t, client } = await appWithCustomer();
    const browser = new Browser(t.app);
    const { page } = await startLogin(browser, authorizeParams(client, { user_id: MOBILE }));
    const res = await postLogin(browser, page, MOBILE, '000000');
    expectPage(res, 400);
    expect(errorOf(res.body)).toEqual({ field: 'pin', message: 'That PIN is not right.' });
    expect(attribute(inputTag(res.body, 'mobile'), 'readonly')).toBe('');
  });

  it('a PIN that is not 4 to 6 digits is refused without counting a failure', async () => {
    const { t, client } = await appWithCustomer();
    const browser = new Browser(t.app);
    let { page } = await startLogin(browser, authorizeParams(client));
    for (const pin of ['', '123', '1234567', 'abcd', '12 34']) {
      const res = await postLogin(browser, page, MOBILE, pin);
      expectPage(res, 400);
      expect(errorOf(res.body)).toEqual({ field: 'pin', message: 'Your PIN is 4 to 6 digits.' });
      page = res;
    }
    expect((await t.storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(0);
  });

  it('5 wrong PINs lock the account for 15 minutes, shown with the time; the right PIN fails during the lock and works after it', async () => {
    const { t, client } = await appWithCustomer();
    const browser = new Browser(t.app);
    let { page } = await startLogin(browser, authorizeParams(client));
    for (let attempt = 1; attempt <= 4; attempt++) {
      page = await postLogin(browser, page, MOBILE, '000000');
      expect(errorOf(page.body)).toEqual({ field: 'pin', message: 'The mobile number or PIN is not right.' });
    }
    expect((await t.storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(4);

    page = await postLogin(browser, page, MOBILE, '000000');
    expectPage(page, 400);
    const locked = 'Too many wrong PINs. For your security, PIN login for this number is locked. Try again in 15 minutes.';
    expect(errorOf(page.body)).toEqual({ field: undefined, message: locked });
    expect((await t.storage.customers.findCustomerByMobile(MOBILE))?.lockedUntil).toBe(T0 + 900);

    // The right PIN, during the lock, in this browser and in another one.
    page = await postLogin(browser, page, MOBILE, PIN);
    expect(errorOf(page.body).message).toBe(locked);
    const other = new Browser(t.app);
    const { page: otherPage } = await startLogin(other, authorizeParams(client, { user_id: MOBILE }));
    expect(errorOf((await postLogin(other, otherPage, MOBILE, PIN)).body).message).toBe(locked);

    t.clock.advance(899);
    page = await postLogin(browser, page, MOBILE, PIN);
    expect(errorOf(page.body).message).toBe('Too many wrong PINs. For your security, PIN login for this number is locked. Try again in 1 minute.');
    expect(await outbox(t.app, MOBILE)).toEqual([]);

    // The lock has lifted (and the 15-minute sign-in page with it: a new one is opened).
    t.clock.advance(1);
    const { page: fresh } = await startLogin(browser, authorizeParams(client));
    const otpPage = await submitCredentials(browser, fresh, MOBILE, PIN);
    expect((await t.storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(0);
    expectClientRedirect(await enterOtp(browser, otpPage, MOBILE));
  });

  it('a right PIN resets the count of wrong ones', async () => {
    const { t, client } = await appWithCustomer();
    const browser = new Browser(t.app);
    let { page } = await startLogin(browser, authorizeParams(client));
    for (let attempt = 1; attempt <= 4; attempt++) page = await postLogin(browser, page, MOBILE, '000000');
    await submitCredentials(browser, page, MOBILE, PIN);
    const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
    expect(customer).toMatchObject({ pinAttempts: 0, lockedUntil: null });
  });
});

describe('one-time PIN', () => {
  async function reachOtp(t: TestApp, client: { id: string }) {
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client));
    const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
    return { browser, otpPage, requestId, code: await latestOtp(t.app, MOBILE) };
  }

  it('a wrong code shows the tries left; the 5th wrong entry ends the challenge and then even the right code fails', async () => {
    const { t, client } = await appWithCustomer();
    const { browser, otpPage, requestId, code } = await reachOtp(t, client);
    let page = otpPage;
    for (const left of ['4 tries', '3 tries', '2 tries', '1 try']) {
      page = await enterOtp(browser, page, MOBILE, wrongOtp(code));
      expectPage(page, 400);
      expect(errorOf(page.body)).toEqual({ field: 'otp', message: `That code is not right. ${left} left.` });
    }
    page = await enterOtp(browser, page, MOBILE, wrongOtp(code));
    expect(errorOf(page.body)).toEqual({ field: 'otp', message: 'Too many wrong codes. Ask for a new code.' });

    const right = await enterOtp(browser, page, MOBILE, code);
    expectPage(right, 400);
    expect(errorOf(right.body)).toEqual({ field: 'otp', message: 'Too many wrong codes. Ask for a new code.' });
    expect(browser.cookies.has('connect_session')).toBe(false);
    expect((await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId)))?.completedAt).toBeNull();

    // The customer asks for a new code: a new challenge, whose code works.
    t.clock.advance(30);
    const resent = await browser.submit(right, { action: 'resend' });
    expectPage(resent, 200);
    expect(pageText(resent.body)).toContain(`We sent a new code to ${MASKED_MOBILE}.`);
    expect(await outbox(t.app, MOBILE)).toHaveLength(2);
    expectClientRedirect(await enterOtp(browser, resent, MOBILE));
  });

  it('resend: refused before 30 s, allowed after; the old code stops working; at most 3 resends', async () => {
    const { t, client } = await appWithCustomer();
    const { browser, otpPage, code: first } = await reachOtp(t, client);
    // The page says when a new code can be asked for: a time of day (Philippine time for a +63 number, rounded up
    // to the minute), which stays true while the page stays open; and the seconds, for the countdown script.
    const time = timeOfDay(t.clock.nowSeconds() + 30, 'PH', 'en').replace(/\s+/gu, ' ');
    expect(pageText(otpPage.body)).toContain(`Didn't get it? You can ask for a new code from ${time} .`);
    expect(otpPage.body).toMatch(/<p class="hint" id="resend-hint" data-resend-in="30" /);

    let page = await browser.submit(otpPage, { action: 'resend' });
    expectPage(page, 400);
    expect(errorOf(page.body)).toEqual({ field: undefined, message: 'You can ask for a new code in 30 seconds.' });
    t.clock.advance(29);
    page = await browser.submit(page, { action: 'resend' });
    expect(errorOf(page.body).message).toMatch(/^You can ask for a new code in 1 seconds?\.$/);
    expect(await outbox(t.app, MOBILE)).toHaveLength(1);

    const codes = [first];
    for (let resend = 1; resend <= 3; resend++) {
      t.clock.advance(resend === 1 ? 1 : 30);
      page = await browser.submit(page, { action: 'resend' });
      expectPage(page, 200);
      expect(pageText(page.body)).toContain(`We sent a new code to ${MASKED_MOBILE}.`);
      const messages = await outbox(t.app, MOBILE);
      expect(messages).toHaveLength(1 + resend);
      codes.push(await latestOtp(t.app, MOBILE));
      expect(findTag(page.body, 'button', 'action', 'resend')?.includes(' disabled')).toBe(resend === 3);
    }

    t.clock.advance(30);
    page = await browser.submit(page, { action: 'resend' });
    expectPage(page, 400);
    expect(errorOf(page.body).message).toBe('No more codes can be sent for this sign-in. Go back to the app and start again.');
    expect(await outbox(t.app, MOBILE)).toHaveLength(4);

    // Every earlier code is dead (a code that happens to repeat the newest is not tried).
    const newest = codes[3] as string;
    let left = 5;
    for (const old of new Set(codes.slice(0, 3).filter((c) => c !== newest))) {
      page = await enterOtp(browser, page, MOBILE, old);
      left -= 1;
      expect(errorOf(page.body).message).toBe(`That code is not right. ${left} ${left === 1 ? 'try' : 'tries'} left.`);
    }
    expectClientRedirect(await enterOtp(browser, page, MOBILE, newest));
  });

  it('the code is valid for 300 s: just before, it works; at 300 s it has expired, and a new one can be asked for', async () => {
    const { t, client } = await appWithCustomer();
    const before = await reachOtp(t, client);
    t.clock.advance(299);
    expectClientRedirect(await enterOtp(before.browser, before.otpPage, MOBILE, before.code));

    const at = await reachOtp(t, client);
    t.clock.advance(300);
    const expired = await enterOtp(at.browser, at.otpPage, MOBILE, at.code);
    expectPage(expired, 400);
    expect(errorOf(expired.body)).toEqual({ field: 'otp', message: 'This code has expired. Ask for a new code.' });
    expect(at.browser.cookies.has('connect_session')).toBe(false);

    const resent = await at.browser.submit(expired, { action: 'resend' });
    expectPage(resent, 200);
    const fresh = await latestOtp(t.app, MOBILE);
    expectClientRedirect(await enterOtp(at.browser, resent, MOBILE, fresh));
  });

  it('a code is single use: the pages of a completed request are closed', async () => {
    const { t, client } = await appWithCustomer();
    const { browser, otpPage, requestId, code } = await reachOtp(t, client);
    expectClientRedirect(await enterOtp(browser, otpPage, MOBILE, code));
    const again = await browser.submit(otpPage, { otp: code });
    expectPage(again, 400);
    expect(pageText(again.body)).toContain('This sign-in has already finished. Go back to the app to continue.');
    for (const path of ['/login', '/register', '/login/otp', '/consent']) expectPage(await browser.get(`${path}?request=${requestId}`), 400);
  });

  it("one request's code does not answer another request's challenge", async () => {
    const { t, client } = await appWithCustomer();
    const first = await reachOtp(t, client);
    t.clock.advance(1);
    const second = await reachOtp(t, client);
    if (first.code !== second.code) {
      const res = await enterOtp(first.browser, first.otpPage, MOBILE, second.code);
      expect(errorOf(res.body).message).toBe('That code is not right. 4 tries left.');
    }
    expectClientRedirect(await enterOtp(second.browser, second.otpPage, MOBILE, second.code));
    expectClientRedirect(await enterOtp(first.browser, first.otpPage, MOBILE, first.code));
  });

  it('going back to the login page and logging in again sends a new code that works', async () => {
    const { t, client } = await appWithCustomer();
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client));
    await submitCredentials(browser, page, MOBILE, PIN);
    t.clock.advance(5);
    const login = await browser.open(`/login?request=${requestId}`);
    const otpPage = await submitCredentials(browser, login, MOBILE, PIN);
    expect(await outbox(t.app, MOBILE)).toHaveLength(2);
    expectClientRedirect(await enterOtp(browser, otpPage, MOBILE));
    expectPage(await browser.get(`/login?request=${requestId}`), 400);
  });
});
