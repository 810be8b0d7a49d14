import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseLocation } from '../../../src/core/storage/storage.js';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { build, type TestApp } from '../../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import { openRawDatabase, type RawDatabase } from '../../helpers/raw-database.js';
import {
  addCustomer,
  authorizeParams,
  authorizeUrl,
  Browser,
  csrfToken,
  enterOtp,
  expectClientRedirect,
  expectErrorRedirect,
  expectPage,
  expectSeeOther,
  findTag,
  formAction,
  logIn,
  MOBILE,
  OTHER_MOBILE,
  outbox,
  pageText,
  PIN,
  requestIdOf,
  startLogin,
  submitCredentials,
  type Response,
} from '../../helpers/customer-flow.js';
import { accessClaims, redeem, REFRESH_GRANTS } from '../../helpers/token-session.js';

/**
 * `acr_values` and `max_age` at `/authorize` (docs/journey.md, "`acr_values`
 * and `max_age`"; OpenID Connect Core §3.1.2.1): stored with the journey,
 * checked wherever it completes; `acr_values=phr` offers no PIN form and
 * ends in `unmet_authentication_requirements`; unknown values are ignored;
 * a bad `max_age` is `invalid_request`. On SQLite and PostgreSQL.
 */

const PIN_SMS = 'urn:connect:acr:pin-sms';
const PASSKEY_LEAD = 'the app asks you to sign in with a passkey';
const NO_PASSKEY = "I can't use a passkey";

type Client = { id: string; secret: string; redirectUri?: string };

function journeyOf(t: TestApp, requestId: string) {
  return t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId));
}

/** The session cookie's value, if the browser has one. */
function sessionCookie(browser: Browser): string | undefined {
  return [...browser.cookies].find(([name]) => /session/i.test(name))?.[1];
}

/**
 * A page that asks for a passkey: no mobile or PIN field, "I can't use a
 * passkey" and cancel; on the login page "Sign in with a passkey" (its box,
 * shown by the pages' script) with the passkey script, on the registration
 * page (a new account has no passkey) none.
 */
function expectPasskeyRequired(page: Response): void {
  expectPage(page, 200);
  const registration = formAction(page.body).startsWith('/register');
  expect(page.body.includes('data-passkey="sign_in"')).toBe(!registration);
  expect(page.body.includes('<script src="/assets/passkeys.js"')).toBe(!registration);
  expect(findTag(page.body, 'input', 'pin')).toBeUndefined();
  expect(findTag(page.body, 'input', 'pin_confirmation')).toBeUndefined();
  expect(findTag(page.body, 'input', 'mobile')).toBeUndefined();
  expect(findTag(page.body, 'button', 'action', 'no_passkey')).toBeDefined();
  expect(findTag(page.body, 'button', 'action', 'cancel')).toBeDefined();
  expect(page.body).not.toContain('Forgot PIN?');
}

function defineTests(engine: string, makeApp: () => Promise<TestApp>): void {
  /** An app, a client, the customer, and a fresh browser. */
  async function setUp() {
    const t = await makeApp();
    const client: Client = await t.createClient({ grants: REFRESH_GRANTS });
    await addCustomer(t);
    return { t, client, browser: new Browser(t.app) };
  }

  /** The same, with the browser signed in through the client at the current time. */
  async function signedIn() {
    const s = await setUp();
    await logIn(s.browser, authorizeParams(s.client));
    return { ...s, signedInAt: s.t.clock.nowSeconds() };
  }

  describe(`acr_values on ${engine}`, () => {
    it('unknown acr_values are ignored: the usual login page, the usual sign-in; with a session, silent', async () => {
      const { t, client, browser } = await setUp();
      const params = authorizeParams(client, { acr_values: 'urn:example:gold silver loa3' });
      const { page, requestId } = await startLogin(browser, params);
      expect(findTag(page.body, 'input', 'pin')).toBeDefined();
      expect(await journeyOf(t, requestId)).toMatchObject({ acrValues: [], maxAge: null });
      const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
      expectClientRedirect(await enterOtp(browser, otpPage, MOBILE));
      // And a session serves it silently.
      const silent = expectClientRedirect(await browser.get(authorizeUrl(params)));
      expect(silent.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it(`${PIN_SMS} (alone, or listed with phr) is met by the usual PIN + SMS sign-in`, async () => {
      const { t, client, browser } = await setUp();
      const code = (await logIn(browser, authorizeParams(client, { acr_values: PIN_SMS }))).get('code') ?? '';
      const tokens = await redeem(t.app, client, code);
      expect((await accessClaims(t, tokens.accessToken)).acr).toBe(PIN_SMS);
      const other = new Browser(t.app);
      const { page, requestId } = await startLogin(other, authorizeParams(client, { acr_values: `phr ${PIN_SMS}`, prompt: 'login' }));
      expect(findTag(page.body, 'input', 'pin')).toBeDefined();
      expect(await journeyOf(t, requestId)).toMatchObject({ acrValues: ['phr', PIN_SMS] });
      expectClientRedirect(await enterOtp(other, await submitCredentials(other, page, MOBILE, PIN), MOBILE));
    });

    it(`phr: the login page offers no PIN form; "${NO_PASSKEY}" goes back with unmet_authentication_requirements, state and iss`, async () => {
      const { t, client, browser } = await setUp();
      const { page, requestId } = await startLogin(browser, authorizeParams(client, { acr_values: 'bogus phr' }));
      expectPasskeyRequired(page);
      expect(pageText(page.body)).toContain(PASSKEY_LEAD);
      expect(pageText(page.body)).toContain(NO_PASSKEY);
      const description = expectErrorRedirect(await browser.submit(page, { action: 'no_passkey' }), 'unmet_authentication_requirements', 'xyz-state');
      expect(description).toBe('the customer cannot sign in as acr_values requires');
      expect(await journeyOf(t, requestId)).toMatchObject({ status: 'cancelled', acrValues: ['phr'] });
      // The journey is over: its page is a dead end now.
      expectPage(await browser.get(`/login?request=${requestId}`), 400);
    });

    it('phr: in Filipino too', async () => {
      const { client, browser } = await setUp();
      const { page } = await startLogin(browser, authorizeParams(client, { acr_values: 'phr', ui_locales: 'fil' }));
      expectPasskeyRequired(page);
      expect(pageText(page.body)).toContain('hinihiling ng app na mag-sign in ka gamit ang passkey');
      expect(pageText(page.body)).toContain('Hindi ako makagamit ng passkey');
      expect(pageText(page.body)).not.toContain(NO_PASSKEY);
    });

    it('phr: a PIN form posted anyway → unmet_authentication_requirements; no PIN is checked and no SMS is sent', async () => {
      const { t, client, browser } = await setUp();
      const { page, requestId } = await startLogin(browser, authorizeParams(client, { acr_values: 'phr', user_id: MOBILE }));
      expectPasskeyRequired(page);
      const res = await browser.submit(page, { mobile: MOBILE, pin: '000000', action: 'login' });
      expectErrorRedirect(res, 'unmet_authentication_requirements', 'xyz-state');
      expect(await journeyOf(t, requestId)).toMatchObject({ status: 'cancelled', profileId: null });
      // A wrong PIN was not even counted.
      expect((await t.storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(0);
      // And the right one gets no further on a second try of the same kind.
      const again = await startLogin(browser, authorizeParams(client, { acr_values: 'phr' }));
      expectErrorRedirect(await browser.submit(again.page, { mobile: MOBILE, pin: PIN, action: 'login' }), 'unmet_authentication_requirements', 'xyz-state');
      await t.services.afterAnswer.idle();
      expect(await outbox(t.app, MOBILE)).toEqual([]);
    });

    it('phr: the registration page (user_id of no account) offers no PIN form either; posted anyway, no SMS and no account', async () => {
      const { t, client, browser } = await setUp();
      const res = await browser.get(authorizeUrl(authorizeParams(client, { acr_values: 'phr', user_id: OTHER_MOBILE })));
      const page = await browser.follow(res);
      expectPasskeyRequired(page);
      expect(formAction(page.body)).toMatch(/^\/register\?request=/);
      const posted = await browser.submit(page, { mobile: OTHER_MOBILE, pin: '590316', pin_confirmation: '590316', action: 'register' });
      expectErrorRedirect(posted, 'unmet_authentication_requirements', 'xyz-state');
      await t.services.afterAnswer.idle();
      expect(await outbox(t.app, OTHER_MOBILE)).toEqual([]);
      expect(await t.storage.customers.findCustomerByMobile(OTHER_MOBILE)).toBeUndefined();
    });

    it('phr: "Forgot PIN?" opened by its address shows the passkey page; a reset form posted anyway → unmet_authentication_requirements, no SMS', async () => {
      const { t, client, browser } = await setUp();
      const { page, requestId } = await startLogin(browser, authorizeParams(client, { acr_values: 'phr' }));
      expectPasskeyRequired(page);
      const opened = await browser.get(`/login/reset?request=${requestId}`);
      expectSeeOther(opened, new RegExp(`^/login\\?request=${requestId}$`));
      expectPasskeyRequired(await browser.follow(opened));
      const posted = await browser.post(`/login/reset?request=${requestId}`, { csrf_token: csrfToken(page.body), mobile: MOBILE, action: 'send' });
      expectErrorRedirect(posted, 'unmet_authentication_requirements', 'xyz-state');
      expect(await journeyOf(t, requestId)).toMatchObject({ status: 'cancelled' });
      await t.services.afterAnswer.idle();
      expect(await outbox(t.app, MOBILE)).toEqual([]);
    });

    it('phr: cancel still means access_denied', async () => {
      const { client, browser } = await setUp();
      const { page } = await startLogin(browser, authorizeParams(client, { acr_values: 'phr' }));
      expectErrorRedirect(await browser.submit(page, { action: 'cancel' }), 'access_denied', 'xyz-state');
    });

    it('phr with a PIN + SMS session: no silent sign-in but the passkey page; with prompt=none, login_required', async () => {
      const { client, browser } = await signedIn();
      const session = sessionCookie(browser);
      expect(session).toBeDefined();
      expectErrorRedirect(await browser.get(authorizeUrl(authorizeParams(client, { acr_values: 'phr', prompt: 'none' }))), 'login_required', 'xyz-state');
      const { page } = await startLogin(browser, authorizeParams(client, { acr_values: 'phr' }));
      expectPasskeyRequired(page);
      // The session stays: a request without phr is still served silently.
      expect(sessionCookie(browser)).toBe(session);
      expectClientRedirect(await browser.get(authorizeUrl(authorizeParams(client))));
    });

    it('the parameters survive in the stored journey', async () => {
      const { t, client, browser } = await setUp();
      const res = await browser.get(authorizeUrl(authorizeParams(client, { acr_values: `x phr ${PIN_SMS} phr`, max_age: '120' })));
      const requestId = requestIdOf(expectSeeOther(res, /^\/login\?request=/));
      expect(await journeyOf(t, requestId)).toMatchObject({ status: 'pending', acrValues: ['phr', PIN_SMS], maxAge: 120 });
      const plain = await browser.get(authorizeUrl(authorizeParams(client)));
      expect(await journeyOf(t, requestIdOf(expectSeeOther(plain, /^\/login\?request=/)))).toMatchObject({ acrValues: [], maxAge: null });
    });
  });

  describe(`max_age on ${engine}`, () => {
    it.each([
      ['not a number', 'soon'],
      ['negative', '-1'],
      ['a fraction', '1.5'],
      ['an exponent', '1e3'],
      ['signed', '+300'],
      ['with a space', ' 300'],
      ['too large', '2147483648'],
    ])('max_age %s → invalid_request with a clear description, back to the client', async (_name, value) => {
      const { client, browser } = await setUp();
      const description = expectErrorRedirect(await browser.get(authorizeUrl(authorizeParams(client, { max_age: value }))), 'invalid_request', 'xyz-state');
      expect(description).toBe('max_age must be a whole number of seconds from 0 to 2147483647');
    });

    it('max_age repeated → invalid_request', async () => {
      const { client, browser } = await setUp();
      const url = `${authorizeUrl(authorizeParams(client))}&max_age=60&max_age=60`;
      expect(expectErrorRedirect(await browser.get(url), 'invalid_request', 'xyz-state')).toBe('max_age is repeated');
    });

    it('a session signed in longer ago than max_age signs in again (a new auth_time); younger, a silent code carrying the old one', async () => {
      const { t, client, browser, signedInAt } = await signedIn();
      t.clock.advance(400);
      // 400 s since the sign-in: max_age 400 is still met, to the second.
      const silent = expectClientRedirect(await browser.get(authorizeUrl(authorizeParams(client, { max_age: '400' }))));
      const silentTokens = await redeem(t.app, client, silent.get('code') ?? '');
      expect((await accessClaims(t, silentTokens.accessToken)).auth_time).toBe(signedInAt);
      // max_age 399: too old, the login page.
      const session = sessionCookie(browser);
      const { page, requestId } = await startLogin(browser, authorizeParams(client, { max_age: '399' }));
      expect(findTag(page.body, 'input', 'pin')).toBeDefined();
      expect(await journeyOf(t, requestId)).toMatchObject({ maxAge: 399, status: 'pending' });
      // The session is kept until the new sign-in replaces it.
      expect(sessionCookie(browser)).toBe(session);
      t.clock.advance(5);
      const done = expectClientRedirect(await enterOtp(browser, await submitCredentials(browser, page, MOBILE, PIN), MOBILE));
      const fresh = await redeem(t.app, client, done.get('code') ?? '');
      expect((await accessClaims(t, fresh.accessToken)).auth_time).toBe(t.clock.nowSeconds());
      expect(sessionCookie(browser)).not.toBe(session);
    });

    it('max_age older than the session with prompt=none → login_required; younger → a code', async () => {
      const { t, client, browser } = await signedIn();
      t.clock.advance(301);
      expectErrorRedirect(await browser.get(authorizeUrl(authorizeParams(client, { max_age: '300', prompt: 'none' }))), 'login_required', 'xyz-state');
      expectClientRedirect(await browser.get(authorizeUrl(authorizeParams(client, { max_age: '301', prompt: 'none' }))));
    });

    it('max_age=0 with prompt=none → login_required, and the session lives on: an answer that shows no page ends nothing', async () => {
      const { client, browser } = await signedIn();
      const session = sessionCookie(browser);
      const res = await browser.get(authorizeUrl(authorizeParams(client, { max_age: '0', prompt: 'none' })));
      expectErrorRedirect(res, 'login_required', 'xyz-state');
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(sessionCookie(browser)).toBe(session);
      const silent = expectClientRedirect(await browser.get(authorizeUrl(authorizeParams(client, { prompt: 'none' }))));
      expect(silent.get('error')).toBeNull();
      expect(silent.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it('max_age=0 acts as prompt=login: the session ends and the customer signs in again, even in the second of the sign-in', async () => {
      const { client, browser } = await signedIn();
      const { page } = await startLogin(browser, authorizeParams(client, { max_age: '0' }));
      expect(findTag(page.body, 'input', 'pin')).toBeDefined();
      expect(sessionCookie(browser)).toBeUndefined();
      // The session is over: prompt=none now finds none.
      expectErrorRedirect(await browser.get(authorizeUrl(authorizeParams(client, { prompt: 'none' }))), 'login_required', 'xyz-state');
      expectClientRedirect(await enterOtp(browser, await submitCredentials(browser, page, MOBILE, PIN), MOBILE));
    });

    it('the consent page: a session that grew older than max_age while the page was open cannot approve; the customer signs in', async () => {
      const { t, browser } = await signedIn();
      const b: Client = { ...(await t.createClient({ name: 'Bayani Pay', redirectUri: 'https://bayani.example/cb' })), redirectUri: 'https://bayani.example/cb' };
      t.clock.advance(200);
      const res = await browser.get(authorizeUrl(authorizeParams(b, { max_age: '300' })));
      const requestId = requestIdOf(expectSeeOther(res, /^\/consent\?request=/));
      const page = await browser.follow(res);
      expectPage(page, 200);
      t.clock.advance(101);
      const approved = await browser.submit(page, { action: 'approve' });
      expectSeeOther(approved, new RegExp(`^/login\\?request=${requestId}$`));
      expect(await journeyOf(t, requestId)).toMatchObject({ status: 'pending', profileId: null });
      expect(await t.storage.consents.findConsent((await t.storage.customers.findCustomerByMobile(MOBILE))?.profileId ?? '', b.id)).toBeUndefined();
      // The customer signs in on that journey: B's code, approved by the sign-in.
      const loginPage = await browser.follow(approved);
      expectPage(loginPage, 200);
      expectClientRedirect(await enterOtp(browser, await submitCredentials(browser, loginPage, MOBILE, PIN), MOBILE), b.redirectUri);
    });

    it('the consent page: a session still within max_age approves as usual', async () => {
      const { t, browser } = await signedIn();
      const b: Client = { ...(await t.createClient({ name: 'Bayani Pay', redirectUri: 'https://bayani.example/cb' })), redirectUri: 'https://bayani.example/cb' };
      t.clock.advance(200);
      const res = await browser.get(authorizeUrl(authorizeParams(b, { max_age: '300' })));
      expectSeeOther(res, /^\/consent\?request=/);
      const page = await browser.follow(res);
      t.clock.advance(100);
      expectClientRedirect(await browser.submit(page, { action: 'approve' }), b.redirectUri);
    });
  });
}

/**
 * What only a change behind the app's back can reach: a journey that came
 * to require `phr` after its PIN was checked, and a session from before
 * Connect recorded how it was signed in.
 */
function defineRawTests(engine: string, makeApp: () => Promise<{ t: TestApp; raw: RawDatabase }>): void {
  describe(`what the stores hold, on ${engine}`, () => {
    it('a one-time PIN entered on a journey requiring phr completes nothing: unmet_authentication_requirements, no session, no code', async () => {
      const { t, raw } = await makeApp();
      const client = await t.createClient();
      await addCustomer(t);
      const browser = new Browser(t.app);
      const { page, requestId } = await startLogin(browser, authorizeParams(client));
      const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
      await raw.exec(`update authorization_requests set acr_values = 'phr'`);
      expectErrorRedirect(await enterOtp(browser, otpPage, MOBILE), 'unmet_authentication_requirements', 'xyz-state');
      expect(await journeyOf(t, requestId)).toMatchObject({ status: 'cancelled', acrValues: ['phr'] });
      expect(await raw.count('customer_sessions')).toBe(0);
      expect(await raw.count('authorization_codes')).toBe(0);
      expect(sessionCookie(browser)).toBeUndefined();
    });

    it('a session whose sign-in is not recorded meets no max_age (a new sign-in), yet serves a request without one', async () => {
      const { t, raw } = await makeApp();
      const client = await t.createClient();
      await addCustomer(t);
      const browser = new Browser(t.app);
      await logIn(browser, authorizeParams(client));
      await raw.exec('update customer_sessions set acr = null, amr = null, auth_time = null');
      expectErrorRedirect(await browser.get(authorizeUrl(authorizeParams(client, { max_age: '86400', prompt: 'none' }))), 'login_required', 'xyz-state');
      expectErrorRedirect(await browser.get(authorizeUrl(authorizeParams(client, { acr_values: 'phr', prompt: 'none' }))), 'login_required', 'xyz-state');
      expectClientRedirect(await browser.get(authorizeUrl(authorizeParams(client, { acr_values: PIN_SMS, prompt: 'none' }))));
    });
  });
}

defineTests('SQLite', () => build());

describe('SQLite file', () => {
  let dir = '';
  let n = 0;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'connect-acr-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  defineRawTests('SQLite', async () => {
    const database: DatabaseLocation = { engine: 'sqlite', path: join(dir, `connect-${n++}.db`) };
    const t = await build({ database });
    return { t, raw: await openRawDatabase(database) };
  });
});

noticePostgresSkipped('acr_values and max_age on PostgreSQL');

describe.skipIf(!postgresAdminUrl)('PostgreSQL', () => {
  const { open, databaseUrl } = usePostgresStorage();
  defineTests('PostgreSQL', () => build({ storage: open() }));
  defineRawTests('PostgreSQL', async () => {
    const t = await build({ storage: open() });
    return { t, raw: await openRawDatabase({ engine: 'postgres', url: databaseUrl() }) };
  });
});
