import { describe, expect, it } from 'vitest';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import type { TestApp } from '../../helpers/build.js';
import { appWithCustomer } from '../../helpers/builders.js';
import {
  authorizeParams,
  authorizeUrl,
  Browser,
  csrfToken,
  enterOtp,
  expectClientRedirect,
  expectPage,
  expectSeeOther,
  latestOtp,
  MOBILE,
  OTHER_MOBILE,
  outbox,
  pageText,
  PIN,
  REDIRECT_URI,
  requestIdOf,
  startLogin,
  submitCredentials,
  type Response,
} from '../../helpers/customer-flow.js';

/**
 * Steps out of order, replayed or from a second tab (docs/journey.md): each
 * page answers from the journey's state, never a second code, never a 500.
 */

const FINISHED = 'This sign-in has already finished. Go back to the app to continue.';
const PAGES = ['/login', '/register', '/login/otp', '/consent'] as const;

/** Every answer of these tests: never a server error. */
function notAServerError(res: Response): Response {
  expect(res.statusCode).toBeLessThan(500);
  return res;
}

/** The "finished" dead end: a 400 page, no form, no redirect. */
function expectFinished(res: Response): void {
  expectPage(notAServerError(res), 400);
  expect(pageText(res.body)).toContain(FINISHED);
  expect(res.body).not.toContain('<form');
}

function journeyOf(t: TestApp, requestId: string) {
  return t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId));
}

describe('steps out of order', () => {
  it.each([
    ['login', MOBILE, '/login'],
    ['registration', OTHER_MOBILE, '/register'],
  ] as const)('the one-time-PIN page before the PIN (%s) → the first page', async (_flow, mobile, first) => {
    // user_id of an account opens the login page, of a number without one the registration page.
    const extra = { user_id: mobile };
    const { t, client } = await appWithCustomer();
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client, extra));
    expect(notAServerError(await browser.get(`/login/otp?request=${requestId}`)).headers.location).toBe(`${first}?request=${requestId}`);
    // Posting a code (with the form's own CSRF token) before any was sent leads there too.
    for (const action of ['verify', 'resend']) {
      const res = notAServerError(await browser.post(`/login/otp?request=${requestId}`, { csrf_token: csrfToken(page.body), otp: '123456', action }));
      expect(expectSeeOther(res, /^\//)).toBe(`${first}?request=${requestId}`);
    }
    expect(await outbox(t.app, mobile)).toEqual([]);
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'pending' });
  });

  it('two tabs on one request: a PIN posted again in the second sends a new code, and the first code stops working', async () => {
    const { t, client } = await appWithCustomer();
    const browser = new Browser(t.app);
    const { page: tab1, requestId } = await startLogin(browser, authorizeParams(client));
    const tab2 = await browser.get(`/login?request=${requestId}`);
    expectPage(tab2, 200);

    const otpTab1 = await submitCredentials(browser, tab1, MOBILE, PIN);
    const first = await latestOtp(t.app, MOBILE);
    const again = notAServerError(await browser.submit(tab2, { mobile: MOBILE, pin: PIN, action: 'login' }));
    expect(expectSeeOther(again, /^\//)).toBe(`/login/otp?request=${requestId}`);
    expect(await outbox(t.app, MOBILE)).toHaveLength(2);
    const second = await latestOtp(t.app, MOBILE);
    expect(second).not.toBe(first);

    // Tab 1's code no longer answers; the new one does, on tab 1's page.
    const old = await enterOtp(browser, otpTab1, MOBILE, first);
    expectPage(notAServerError(old), 400);
    expect(pageText(old.body)).toContain('That code is not right.');
    const done = expectClientRedirect(await enterOtp(browser, otpTab1, MOBILE, second));
    expect(done.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('back after success: every page of the finished journey, GET and POST, is the "finished" page, never a second code', async () => {
    const { t, client } = await appWithCustomer();
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client));
    const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
    const code = await latestOtp(t.app, MOBILE);
    expectClientRedirect(await enterOtp(browser, otpPage, MOBILE, code));
    const sent = (await outbox(t.app, MOBILE)).length;
    const token = csrfToken(otpPage.body);

    for (const path of PAGES) expectFinished(await browser.get(`${path}?request=${requestId}`));
    const posts: Array<[string, Record<string, string>]> = [
      ['/login', { mobile: MOBILE, pin: PIN, action: 'login' }],
      ['/register', { mobile: OTHER_MOBILE, pin: PIN, pin_confirmation: PIN, action: 'register' }],
      ['/login/otp', { otp: code, action: 'verify' }],
      ['/login/otp', { action: 'resend' }],
      ['/consent', { action: 'approve' }],
    ];
    for (const [path, fields] of posts) expectFinished(await browser.post(`${path}?request=${requestId}`, { csrf_token: token, ...fields }));
    expect(await outbox(t.app, MOBILE)).toHaveLength(sent);
    expect(await t.storage.customers.findCustomerByMobile(OTHER_MOBILE)).toBeUndefined();
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'code_issued' });
  });

  it('cancel after success: "finished", no access_denied', async () => {
    const { t, client } = await appWithCustomer();
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client));
    const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
    expectClientRedirect(await enterOtp(browser, otpPage, MOBILE));
    for (const path of PAGES) {
      const res = await browser.post(`${path}?request=${requestId}`, { csrf_token: csrfToken(otpPage.body), action: 'cancel' });
      expectFinished(res);
      expect(String(res.headers.location ?? '')).not.toContain(REDIRECT_URI);
    }
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'code_issued' });
  });

  it('the consent page of a login journey, and the login pages of a consent journey, lead to the journey\'s own page', async () => {
    const { t, client } = await appWithCustomer();
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client));
    const token = csrfToken(page.body);
    const login = `/login?request=${requestId}`;
    expect(notAServerError(await browser.get(`/consent?request=${requestId}`)).headers.location).toBe(login);
    expect(expectSeeOther(notAServerError(await browser.post(`/consent?request=${requestId}`, { csrf_token: token, action: 'approve' })), /^\//)).toBe(login);
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'pending' });

    // Once the one-time PIN is sent, its page is the journey's own.
    await submitCredentials(browser, page, MOBILE, PIN);
    const otp = `/login/otp?request=${requestId}`;
    expect(notAServerError(await browser.get(`/consent?request=${requestId}`)).headers.location).toBe(otp);
    expect(expectSeeOther(notAServerError(await browser.post(`/consent?request=${requestId}`, { csrf_token: token, action: 'approve' })), /^\//)).toBe(otp);
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'otp_sent' });
    expectClientRedirect(await enterOtp(browser, await browser.open(otp), MOBILE));

    // A consent journey: a live session meets a client not approved yet.
    const other = await t.createClient({ name: 'Other', redirectUri: 'https://other.example/cb' });
    const res = await browser.get(authorizeUrl(authorizeParams({ id: other.id, redirectUri: 'https://other.example/cb' })));
    const consentId = requestIdOf(expectSeeOther(res, /^\/consent\?request=/));
    const consent = `/consent?request=${consentId}`;
    for (const path of ['/login', '/register', '/login/otp']) {
      expect(notAServerError(await browser.get(`${path}?request=${consentId}`)).headers.location).toBe(consent);
    }
    const posts: Array<[string, Record<string, string>]> = [
      ['/login', { mobile: MOBILE, pin: PIN, action: 'login' }],
      ['/register', { mobile: OTHER_MOBILE, pin: PIN, pin_confirmation: PIN, action: 'register' }],
      ['/login/otp', { otp: '123456', action: 'verify' }],
      ['/login/otp', { action: 'resend' }],
    ];
    const sent = (await outbox(t.app, MOBILE)).length;
    for (const [path, fields] of posts) {
      expect(expectSeeOther(notAServerError(await browser.post(`${path}?request=${consentId}`, { csrf_token: token, ...fields })), /^\//)).toBe(consent);
    }
    expect(await outbox(t.app, MOBILE)).toHaveLength(sent);
    expect(await journeyOf(t, consentId)).toMatchObject({ status: 'consent_required' });
    expectPage(await browser.get(consent), 200);
  });
});
