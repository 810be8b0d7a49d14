import { describe, expect, it } from 'vitest';
import { verifyPin } from '../../../src/core/customers/pin.js';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import type { SmsMessage, SmsSender } from '../../../src/core/sms/sms-sender.js';
import type { TestApp } from '../../helpers/build.js';
import { appWithClient, appWithCustomer } from '../../helpers/builders.js';
import {
  addCustomer,
  attribute,
  authorizeParams,
  authorizeUrl,
  Browser,
  csrfToken,
  enterOtp,
  exchangeCode,
  expectClientRedirect,
  expectErrorRedirect,
  expectPage,
  expectSeeOther,
  findTag,
  inputTag,
  latestOtp,
  logIn,
  MASKED_MOBILE,
  MOBILE,
  outbox,
  pageText,
  REDIRECT_URI,
  PIN,
  startLogin,
  submitCredentials,
  wrongOtp,
  type Response,
} from '../../helpers/customer-flow.js';
import { expectInactive, expectInvalidToken, getProfile, introspect, lifecycle, postTokens, refreshAtToken } from '../../helpers/token-session.js';
import { expectOAuthError, obtainToken } from '../../helpers/wire.js';

/**
 * "Forgot PIN?" on the hosted pages (docs/hosted-login.md, "Forgot PIN"):
 * the mobile, a 6-digit code by SMS, the new PIN twice, then the login page
 * again. The answers never tell whether the mobile has an account.
 */

const NEW_PIN = '590316';
const RESET_OTP = /^\/login\/reset\/otp\?request=[A-Za-z0-9_-]{43}$/;
const NEW_PIN_PAGE = /^\/login\/reset\/pin\?request=[A-Za-z0-9_-]{43}$/;
const LOGIN = /^\/login\?request=[A-Za-z0-9_-]{43}$/;

/** The "Forgot PIN?" link of a login page. */
function forgotHref(html: string): string {
  const match = /<p class="forgot"><a href="([^"]+)">/.exec(html);
  expect(match, 'a "Forgot PIN?" link').not.toBeNull();
  return (match?.[1] ?? '').replace(/&amp;/g, '&');
}

/** Waits for the SMS handed to the gateway after the answer, then reads the outbox. */
async function sent(t: TestApp, mobile: string = MOBILE) {
  await t.services.afterAnswer.idle();
  return outbox(t.app, mobile);
}

async function resetCode(t: TestApp, mobile: string = MOBILE): Promise<string> {
  await t.services.afterAnswer.idle();
  return latestOtp(t.app, mobile);
}

/** The login page, then "Forgot PIN?": the reset page, and the login page it came from. */
async function openReset(t: TestApp, client: { id: string }, extra: Record<string, string> = {}) {
  const browser = new Browser(t.app);
  const { page: loginPage, requestId } = await startLogin(browser, authorizeParams(client, extra));
  const page = await browser.open(forgotHref(loginPage.body));
  expectPage(page, 200);
  return { browser, loginPage, page, requestId };
}

/** The reset page submitted for `mobile`: the reset code's page. */
async function askCode(browser: Browser, page: Response, mobile: string | undefined = MOBILE): Promise<Response> {
  const res = await browser.submit(page, { ...(mobile === undefined ? {} : { mobile }), action: 'send' });
  expectSeeOther(res, RESET_OTP);
  const codePage = await browser.follow(res);
  expectPage(codePage, 200);
  return codePage;
}

/** The right code entered: the new PIN's page. */
async function enterCode(t: TestApp, browser: Browser, codePage: Response): Promise<Response> {
  const res = await browser.submit(codePage, { otp: await resetCode(t), action: 'verify' });
  expectSeeOther(res, NEW_PIN_PAGE);
  const page = await browser.follow(res);
  expectPage(page, 200);
  return page;
}

/** The new PIN chosen: back on the login page. */
async function choosePin(browser: Browser, page: Response, pin: string = NEW_PIN): Promise<Response> {
  const res = await browser.submit(page, { pin, pin_confirmation: pin, action: 'change' });
  expectSeeOther(res, LOGIN);
  const login = await browser.follow(res);
  expectPage(login, 200);
  return login;
}

describe('Forgot PIN: the pages', () => {
  it('the login page links to the reset page of the same journey, a plain link; the reset page asks for the mobile', async () => {
    const { t, client } = await appWithCustomer();
    const { loginPage, page, requestId } = await openReset(t, client);
    expect(forgotHref(loginPage.body)).toBe(`/login/reset?request=${requestId}`);
    expect(pageText(loginPage.body)).toContain('Forgot PIN?');
    expect(attribute(inputTag(page.body, 'mobile'), 'readonly')).toBeUndefined();
    expect(attribute(inputTag(page.body, 'mobile'), 'value')).toBe('');
    csrfToken(page.body);
    expect(findTag(page.body, 'button', 'action', 'send')).toBeDefined();
    expect(findTag(page.body, 'button', 'action', 'cancel')).toBeDefined();
    expect(page.body).toContain(`href="/login?request=${requestId}"`);
    expect(pageText(page.body)).toContain('Reset your PIN');
  });

  it('with user_id naming an account: the mobile prefilled and readonly, and the server uses it whatever is posted', async () => {
    const { t, client } = await appWithCustomer();
    const { browser, page } = await openReset(t, client, { user_id: MOBILE });
    const field = inputTag(page.body, 'mobile');
    expect(attribute(field, 'value')).toBe(MOBILE);
    expect(attribute(field, 'readonly')).toBeDefined();
    await askCode(browser, page, '+639181234321');
    expect(await sent(t)).toHaveLength(1);
    expect(await sent(t, '+639181234321')).toEqual([]);
  });

  it('the whole reset: code by SMS, new PIN twice; back to login with the mobile prefilled and a notice; the new PIN logs in, the old no longer', async () => {
    const { t, client } = await appWithCustomer();
    const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
    const { browser, page, requestId } = await openReset(t, client);
    const codePage = await askCode(browser, page);
    expect(pageText(codePage.body)).toContain(`If ${MASKED_MOBILE} has a Connect account, we sent a 6-digit code to it by SMS.`);
    expect(attribute(inputTag(codePage.body, 'otp'), 'autocomplete')).toBe('one-time-code');
    expect(findTag(codePage.body, 'button', 'action', 'resend')).toBeDefined();
    expect(findTag(codePage.body, 'button', 'action', 'cancel')).toBeDefined();
    const [sms] = await sent(t);
    expect(sms?.body).toMatch(/^\d{6} is your Connect code to reset your PIN\./);

    const pinPage = await enterCode(t, browser, codePage);
    expect(pageText(pinPage.body)).toContain(`Choose a new PIN For ${MASKED_MOBILE}`);
    for (const name of ['pin', 'pin_confirmation']) expect(attribute(inputTag(pinPage.body, name), 'type')).toBe('password');
    csrfToken(pinPage.body);
    // The registration's rules and messages.
    const weak = await browser.submit(pinPage, { pin: '123456', pin_confirmation: '123456', action: 'change' });
    expectPage(weak, 400);
    expect(pageText(weak.body)).toContain('That PIN is too easy to guess: its digits are in order, like 1234 or 9876. Choose another PIN.');
    const mismatch = await browser.submit(weak, { pin: NEW_PIN, pin_confirmation: '590317', action: 'change' });
    expectPage(mismatch, 400);
    expect(pageText(mismatch.body)).toContain('The two PINs are not the same.');

    const res = await browser.submit(mismatch, { pin: NEW_PIN, pin_confirmation: NEW_PIN, action: 'change' });
    expectSeeOther(res, LOGIN);
    expect(String(res.headers.location)).toBe(`/login?request=${requestId}`);
    const login = await browser.follow(res);
    expectPage(login, 200);
    expect(pageText(login.body)).toContain('Your PIN has been changed, and you were signed out everywhere. Log in with your new PIN.');
    expect(attribute(inputTag(login.body, 'mobile'), 'value')).toBe(MOBILE);
    expect(attribute(inputTag(login.body, 'mobile'), 'readonly')).toBeUndefined();

    const updated = await t.storage.customers.findCustomer(customer?.profileId ?? '');
    expect(await verifyPin(NEW_PIN, updated?.pinHash ?? '')).toBe(true);
    const [event] = await t.storage.audit.listAuditEvents({ type: 'customer.pin_reset', limit: 10 });
    expect(event).toMatchObject({ subject: customer?.profileId, outcome: 'success', requestId: res.headers['x-request-id'] });
    expect(JSON.stringify(event)).not.toContain(NEW_PIN);

    // The old PIN is wrong now; the new one logs in, through the same journey, with no second
    // SMS: the reset's code proved the phone minutes ago (docs/journey.md, "After a PIN reset").
    const old = await browser.submit(login, { mobile: MOBILE, pin: PIN, action: 'login' });
    expectPage(old, 400);
    expect(pageText(old.body)).toContain('The mobile number or PIN is not right.');
    const done = expectClientRedirect(await browser.submit(old, { mobile: MOBILE, pin: NEW_PIN, action: 'login' }));
    expect(done.get('profileId')).toBe(customer?.profileId);
    expect(await sent(t)).toHaveLength(1);
    // The code it brought back is a code like any other.
    expect((await exchangeCode(t.app, client, { code: done.get('code') ?? '', redirect_uri: REDIRECT_URI })).statusCode).toBe(200);
  });

  it("a login in the same journey after the reset's code stopped proving the phone (10 minutes) gets a one-time PIN first, as before", async () => {
    const { t, client } = await appWithCustomer();
    const { browser, page } = await openReset(t, client);
    const codePage = await askCode(browser, page);
    const pinPage = await enterCode(t, browser, codePage);
    t.clock.advance(299);
    const login = await browser.follow(await browser.submit(pinPage, { pin: NEW_PIN, pin_confirmation: NEW_PIN, action: 'change' }));
    t.clock.advance(301);
    const otpPage = await submitCredentials(browser, login, MOBILE, NEW_PIN);
    expect(await sent(t)).toHaveLength(2);
    expectClientRedirect(await enterOtp(browser, otpPage, MOBILE));
  });

  it('the SMS is handed to the gateway after the answer: a slow gateway does not hold the page', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const messages: SmsMessage[] = [];
    const slow: SmsSender = {
      async send(message) {
        await gate;
        messages.push(message);
      },
    };
    const { t, client } = await appWithCustomer({ sms: slow });
    const { browser, page } = await openReset(t, client);
    // Answered while the gateway still holds the code.
    await askCode(browser, page);
    expect(messages).toEqual([]);
    release();
    await t.services.afterAnswer.idle();
    expect(messages.map((m) => m.to)).toEqual([MOBILE]);
  });

  it.each([
    ['has no account', async (_t: TestApp) => {}],
    ['is locked by an operator', async (t: TestApp) => void (await t.storage.customers.lockCustomer((await addCustomer(t)).profileId, t.clock.nowSeconds()))],
  ])('a mobile that %s: every answer is the one a registered mobile gets (but for CSRF token and IDs), and no SMS', async (_what, arrange) => {
    const registered = await appWithCustomer();
    const other = await appWithClient();
    await arrange(other.t);

    async function walk({ t, client }: { t: TestApp; client: { id: string } }) {
      const { browser, loginPage, page, requestId } = await openReset(t, client);
      const asked = await browser.submit(page, { mobile: MOBILE, action: 'send' });
      const codePage = await browser.follow(asked);
      const wrong = await browser.submit(codePage, { otp: '000000', action: 'verify' });
      const tooSoon = await browser.submit(wrong, { action: 'resend' });
      t.clock.advance(30);
      const resent = await browser.submit(tooSoon, { action: 'resend' });
      const same = (res: Response) => ({
        status: res.statusCode,
        location: res.headers.location?.toString().replaceAll(requestId, 'ID'),
        body: res.body.replaceAll(requestId, 'ID').replace(/name="csrf_token" value="[^"]*"/g, 'name="csrf_token" value="CSRF"'),
      });
      return [loginPage, page, asked, codePage, wrong, tooSoon, resent].map(same);
    }
    const a = await walk(registered);
    const b = await walk(other);
    expect(b).toEqual(a);
    expect(a.map((r) => r.status)).toEqual([200, 200, 303, 200, 400, 400, 200]);
    expect(await sent(registered.t)).toHaveLength(2);
    expect(await sent(other.t)).toEqual([]);
  });

  it('the per-mobile SMS budget holds for resets, and its refusal reads the same for every mobile', async () => {
    const env = { CONNECT_SMS_LIMIT_PER_MOBILE: '2' };
    const pages: string[] = [];
    for (const customer of [true, false]) {
      const { t, client } = customer ? await appWithCustomer({ env }) : await appWithClient({ env });
      const { browser, page, requestId } = await openReset(t, client);
      await askCode(browser, page);
      await askCode(browser, await browser.open(`/login/reset?request=${requestId}`));
      const refused = await browser.submit(await browser.open(`/login/reset?request=${requestId}`), { mobile: MOBILE, action: 'send' });
      expectPage(refused, 400);
      expect(pageText(refused.body)).toContain('Too many codes were sent. Try again in 15 minutes.');
      pages.push(pageText(refused.body).replaceAll(requestId, 'ID'));
      expect(await sent(t)).toHaveLength(customer ? 2 : 0);
    }
    expect(pages[1]).toBe(pages[0]);
  });

  it('the code is valid 5 minutes, and 5 wrong entries end it: even the right code then fails', async () => {
    const { t, client } = await appWithCustomer();
    const { browser, page, requestId } = await openReset(t, client);
    const codePage = await askCode(browser, page);
    const code = await resetCode(t);
    t.clock.advance(300);
    const late = await browser.submit(codePage, { otp: code, action: 'verify' });
    expectPage(late, 400);
    expect(pageText(late.body)).toContain('This code has expired. Ask for a new code.');

    let current = await askCode(browser, await browser.open(`/login/reset?request=${requestId}`));
    const right = await resetCode(t);
    for (const left of ['4 tries', '3 tries', '2 tries', '1 try']) {
      current = await browser.submit(current, { otp: wrongOtp(right), action: 'verify' });
      expectPage(current, 400);
      expect(pageText(current.body)).toContain(`That code is not right. ${left} left.`);
    }
    for (const otp of [wrongOtp(right), right]) {
      current = await browser.submit(current, { otp, action: 'verify' });
      expectPage(current, 400);
      expect(pageText(current.body)).toContain('Too many wrong codes. Ask for a new code.');
    }
    expect((await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId)))?.status).toBe('reset_otp_sent');
  });

  it('cancel on every reset page: back to the client with access_denied', async () => {
    const { t, client } = await appWithCustomer();
    const onPage = [
      async (browser: Browser, page: Response) => page,
      async (browser: Browser, page: Response) => askCode(browser, page),
      async (browser: Browser, page: Response) => enterCode(t, browser, await askCode(browser, page)),
    ];
    for (const reach of onPage) {
      const { browser, page } = await openReset(t, client);
      const at = await reach(browser, page);
      expectErrorRedirect(await browser.submit(at, { action: 'cancel' }), 'access_denied', 'xyz-state');
    }
    expect(await t.storage.audit.listAuditEvents({ type: 'customer.pin_reset', limit: 10 })).toEqual([]);
  });

  it('a POST without a valid CSRF token is refused on every reset page and changes nothing', async () => {
    const { t, client } = await appWithCustomer();
    const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
    const { browser, page, requestId } = await openReset(t, client);
    const forbidden = async (path: string, fields: Record<string, string>) => {
      for (const token of [{}, { csrf_token: 'garbage' }] as Array<Record<string, string>>) {
        const res = await browser.post(`${path}?request=${requestId}`, { ...token, ...fields });
        expectPage(res, 403);
        expect(pageText(res.body)).toContain('This form has expired');
      }
    };
    await forbidden('/login/reset', { mobile: MOBILE, action: 'send' });
    await forbidden('/login/reset', { action: 'cancel' });
    expect(await sent(t)).toEqual([]);
    const codePage = await askCode(browser, page);
    const code = await resetCode(t);
    await forbidden('/login/reset/otp', { otp: code, action: 'verify' });
    await forbidden('/login/reset/otp', { action: 'resend' });
    const pinPage = await enterCode(t, browser, codePage);
    await forbidden('/login/reset/pin', { pin: NEW_PIN, pin_confirmation: NEW_PIN, action: 'change' });
    expect(await t.storage.customers.findCustomerByMobile(MOBILE)).toEqual(customer);
    // The rightful form still works.
    await choosePin(browser, pinPage);
  });

  it("ends every session and token of the customer: refresh and access tokens refused, on every client, and the old browser's session gone", async () => {
    const life = await lifecycle();
    const { t, client, tokens } = life;
    const bearer = await obtainToken(t, client);
    expect((await getProfile(t.app, tokens.accessToken)).statusCode).toBe(200);

    // On another device.
    const browser = new Browser(t.app);
    const { page: loginPage } = await startLogin(browser, authorizeParams(client));
    const resetPage = await browser.open(forgotHref(loginPage.body));
    const pinPage = await enterCode(t, browser, await askCode(browser, resetPage));
    t.clock.advance(1);
    await choosePin(browser, pinPage);

    expectOAuthError(await refreshAtToken(t.app, client, tokens.refreshToken), { status: 400, error: 'invalid_grant' });
    expectInactive(await introspect(t.app, client, tokens.accessToken));
    expectInactive(await introspect(t.app, client, tokens.refreshToken));
    expectInvalidToken(await getProfile(t.app, tokens.accessToken));
    expectOAuthError(await postTokens(t.app, { bearer, body: { refreshToken: tokens.refreshToken } }), { status: 400, error: 'invalid_grant' });
    const [event] = await t.storage.audit.listAuditEvents({ type: 'customer.pin_reset', limit: 10 });
    expect(event?.details).toMatchObject({ sessions_ended: 1, token_sessions_revoked: 1 });

    // The first browser's session ended: the client's next request asks for the PIN again.
    const again = await life.browser.get(authorizeUrl(authorizeParams(client)));
    expectSeeOther(again, LOGIN);
    // And the new PIN works there.
    const params = await logIn(new Browser(t.app), authorizeParams(client), { mobile: MOBILE, pin: NEW_PIN });
    expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('Forgot PIN: what anyone asking for a reset cannot do to the customer', () => {
  it("wrong reset codes for a mobile, from anyone, never refuse that customer's own login code", async () => {
    const { t, client } = await appWithCustomer();
    // Two reset codes, five wrong entries each: a whole hour's budget of wrong entries for the mobile.
    for (let round = 0; round < 2; round++) {
      const { browser, page } = await openReset(t, client);
      const codePage = await askCode(browser, page);
      const code = await resetCode(t);
      for (let entry = 0; entry < 5; entry++) await browser.submit(codePage, { otp: wrongOtp(code), action: 'verify' });
    }
    const params = await logIn(new Browser(t.app), authorizeParams(client));
    expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('a new PIN ends the one-time PINs of sign-ins begun with the old one: their right code signs in no more', async () => {
    const { t, client } = await appWithCustomer();
    const other = new Browser(t.app);
    const { page } = await startLogin(other, authorizeParams(client));
    const otpPage = await submitCredentials(other, page, MOBILE, PIN);
    const loginCode = await latestOtp(t.app, MOBILE);

    const { browser, page: resetPage } = await openReset(t, client);
    await choosePin(browser, await enterCode(t, browser, await askCode(browser, resetPage)));

    const res = await other.submit(otpPage, { otp: loginCode, action: 'verify' });
    // Not back at the client: the code page again, or the login page.
    expect(String(res.headers.location ?? '')).not.toMatch(/^https:\/\/acme\.example\//);
    expect([200, 303, 400]).toContain(res.statusCode);
  });
});
