import { describe, expect, it } from 'vitest';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { verifyPin } from '../../../src/core/customers/pin.js';
import { build, type TestApp } from '../../helpers/build.js';
import { appWithClient } from '../../helpers/builders.js';
import {
  addCustomer,
  attribute,
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
  inputTag,
  latestOtp,
  LEAK,
  withoutAssets,
  MASKED_MOBILE,
  MOBILE,
  OTHER_MOBILE,
  outbox,
  pageText,
  PIN,
  startLogin,
  submitCredentials,
  type Response,
} from '../../helpers/customer-flow.js';

/** The directives of a Content-Security-Policy header. */
function csp(res: Response): Map<string, string[]> {
  const header = String(res.headers['content-security-policy'] ?? '');
  return new Map(
    header
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name as string, values]),
  );
}

/** The scripts of the passkey pages: @simplewebauthn/browser's bundle, then Connect's own. */
const PASSKEY_SCRIPTS = ['/assets/simplewebauthn-browser.js', '/assets/passkeys.js'];

/**
 * The headers and markup every hosted page must have. `scripts`: the files
 * of Connect's own the page loads, and no other script (`script-src
 * 'self'`, `connect-src 'self'`, nothing inline); other pages allow no script.
 */
function expectHostedPage(res: Response, formActionSources: readonly string[], options: { scripts?: readonly string[] } = {}): void {
  const directives = csp(res);
  expect(directives.get('default-src')).toEqual(["'none'"]);
  const tags = (options.scripts ?? []).map((src) => `<script src="${src}" defer></script>`);
  if (options.scripts) {
    expect([...directives.keys()].filter((d) => d.startsWith('script-src'))).toEqual(['script-src']);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('connect-src')).toEqual(["'self'"]);
    expect(res.body.match(/<script\b[^>]*>[^<]*<\/script>/g)).toEqual(tags);
  } else {
    expect([...directives.keys()].filter((d) => d.startsWith('script-src'))).toEqual([]);
  }
  expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
  expect(directives.get('form-action')).toEqual(formActionSources);
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toMatch(/<html lang="en">/);
  expect(res.body).toMatch(/<meta name="viewport" content="width=device-width, initial-scale=1">/);
  expect(tags.reduce((body, tag) => body.replace(tag, ''), res.body)).not.toMatch(/<script|\son[a-z]+=|javascript:/i);
  // Every visible input has a label.
  const inputs = (res.body.match(/<input\b[^>]*>/g) ?? []).filter((tag) => attribute(tag, 'type') !== 'hidden');
  for (const tag of inputs) {
    const id = attribute(tag, 'id');
    expect(id, tag).toBeTruthy();
    expect(res.body, `a label for ${id}`).toContain(`<label for="${id}">`);
  }
}

/** The names of a page's inputs, in order. */
function inputNames(html: string): string[] {
  return (html.match(/<input\b[^>]*>/g) ?? []).map((tag) => attribute(tag, 'name') ?? '');
}

/** The error shown for `field`: the input is marked invalid and described by the message. */
function fieldError(html: string, field: string): string {
  const input = inputTag(html, field);
  expect(attribute(input, 'aria-invalid'), `${field} aria-invalid`).toBe('true');
  expect(attribute(input, 'aria-describedby')?.split(' ')).toContain(`${field}-error`);
  const element = new RegExp(`<([a-z]+)\\b[^>]*\\sid="${field}-error"[^>]*>`).exec(html);
  expect(element, `#${field}-error`).not.toBeNull();
  const start = (element?.index ?? 0) + (element?.[0].length ?? 0);
  return pageText(html.slice(start, html.indexOf(`</${element?.[1]}>`, start)));
}

describe('hosted pages: markup and headers', () => {
  it('login, registration, one-time PIN and error pages carry the strict headers, labels and the field names of the contract', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const browser = new Browser(t.app);
    const { page: login, requestId } = await startLogin(browser, authorizeParams(client));
    expectHostedPage(login, ["'self'", 'https://acme.example'], { scripts: PASSKEY_SCRIPTS });
    // The form's fields, then the passkey button's CSRF token.
    expect(inputNames(login.body)).toEqual(['csrf_token', 'passkey_capable', 'mobile', 'pin', 'csrf_token']);
    expect(attribute(inputTag(login.body, 'passkey_capable'), 'value')).toBe('');
    expect(findTag(login.body, 'button', 'action', 'cancel')).toBeDefined();
    expect(attribute(inputTag(login.body, 'pin'), 'type')).toBe('password');
    expect(attribute(inputTag(login.body, 'mobile'), 'type')).toBe('tel');
    expect(/<form\b[^>]*>/.exec(login.body)?.[0]).toMatch(/method="post"/);
    expect(formAction(login.body)).toBe(`/login?request=${requestId}`);

    const register = await browser.open(`/register?request=${requestId}`);
    expectPage(register, 200);
    expectHostedPage(register, ["'self'", 'https://acme.example']);
    expect(inputNames(register.body)).toEqual(['csrf_token', 'mobile', 'pin', 'pin_confirmation']);
    expect(findTag(register.body, 'button', 'action', 'cancel')).toBeDefined();
    expect(formAction(register.body)).toBe(`/register?request=${requestId}`);

    const otp = await submitCredentials(browser, login, MOBILE, PIN);
    expectHostedPage(otp, ["'self'", 'https://acme.example'], { scripts: ['/assets/resend-countdown.js', ...PASSKEY_SCRIPTS] });
    expect(inputNames(otp.body)).toEqual(['csrf_token', 'passkey_capable', 'otp']);
    expect(findTag(otp.body, 'button', 'action', 'resend')).toBeDefined();
    expect(findTag(otp.body, 'button', 'action', 'cancel')).toBeDefined();
    expect(attribute(inputTag(otp.body, 'otp'), 'autocomplete')).toBe('one-time-code');
    expect(attribute(inputTag(otp.body, 'otp'), 'inputmode')).toBe('numeric');
    expect(pageText(otp.body)).toContain(MASKED_MOBILE);
    expect(otp.body).not.toContain(MOBILE);
    expect(formAction(otp.body)).toBe(`/login/otp?request=${requestId}`);

    const error = await new Browser(t.app).get(`/login?request=${requestId}`);
    expectPage(error, 400);
    expectHostedPage(error, ["'self'"]);
    expect(inputNames(error.body)).toEqual([]);
  });

  it("form-action allows the client's redirect origin (port included), and only it", async () => {
    const t = await build();
    const client = await t.createClient({ redirectUri: 'https://merchant.example:8443/return/here?x=1' });
    const { page } = await startLogin(new Browser(t.app), authorizeParams({ id: client.id, redirectUri: 'https://merchant.example:8443/return/here?x=1' }));
    expect(csp(page).get('form-action')).toEqual(["'self'", 'https://merchant.example:8443']);
  });

  it('the pages escape what they show', async () => {
    const t = await build();
    const client = await t.createClient({ name: '<b>Acme & "Co"</b>' });
    const browser = new Browser(t.app);
    const { page } = await startLogin(browser, authorizeParams(client));
    expect(page.body).not.toContain('<b>Acme');
    expect(pageText(page.body)).toContain('<b>Acme & "Co"</b>');
    const res = await browser.submit(page, { mobile: '"><img src=x>', pin: PIN, action: 'login' });
    expectPage(res, 400);
    expect(res.body).not.toContain('<img src=x>');
    expect(attribute(inputTag(res.body, 'mobile'), 'value')).toBe('"><img src=x>');
  });
});

describe('hosted pages: cancel', () => {
  it.each([
    ['login', '/login'],
    ['registration', '/register'],
    ['one-time PIN', '/login/otp'],
  ])('cancel on the %s page → access_denied with state; the request is then over', async (_name, path) => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const browser = new Browser(t.app);
    const { page: login, requestId } = await startLogin(browser, authorizeParams(client, { state: 'st/ate&=+' }));
    const page = path === '/login' ? login : path === '/register' ? await browser.open(`/register?request=${requestId}`) : await submitCredentials(browser, login, MOBILE, PIN);
    expect(formAction(page.body)).toBe(`${path}?request=${requestId}`);

    const res = await browser.submit(page, { action: 'cancel' });
    expect(expectErrorRedirect(res, 'access_denied', 'st/ate&=+')).toBe('the customer cancelled');
    expect(res.cookies.find((c) => c.name === 'connect_session')).toBeUndefined();
    expectPage(await browser.get(`/login?request=${requestId}`), 400);
    expectPage(await browser.get(`/login/otp?request=${requestId}`), 400);
    expect((await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId)))?.completedAt).toBe(t.clock.nowSeconds());
  });

  it('cancel with the right PIN filled in still cancels, and sends nothing', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const browser = new Browser(t.app);
    const { page } = await startLogin(browser, authorizeParams(client));
    const res = await browser.submit(page, { mobile: MOBILE, pin: PIN, action: 'cancel' });
    expectErrorRedirect(res, 'access_denied', 'xyz-state');
    expect(await outbox(t.app, MOBILE)).toEqual([]);
  });
});

describe('hosted pages: CSRF', () => {
  /** A 403 page, and the request still usable by its rightful form. */
  function expectForbidden(res: Response): void {
    expectPage(res, 403);
    expect(pageText(res.body)).toContain('This form has expired');
  }

  it('a POST without csrf_token, with a garbage one or with one of another browser is refused with 403 and changes nothing', async () => {
    const { t, client } = await appWithClient();
    const customer = await addCustomer(t);
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client));
    const other = new Browser(t.app);
    const { page: otherPage } = await startLogin(other, authorizeParams(client));
    const url = `/login?request=${requestId}`;
    const tokens: Array<Record<string, string>> = [
      {},
      { csrf_token: '' },
      { csrf_token: 'garbage' },
      { csrf_token: `${csrfToken(page.body)}x` },
      { csrf_token: csrfToken(page.body).slice(1) },
      { csrf_token: csrfToken(otherPage.body) },
      { csrf_token: 'a'.repeat(10_000) },
    ];
    for (const token of tokens) {
      // The right PIN: no SMS may go out. A wrong PIN: no failure may be counted.
      expectForbidden(await browser.post(url, { ...token, mobile: MOBILE, pin: PIN, action: 'login' }));
      expectForbidden(await browser.post(url, { ...token, mobile: MOBILE, pin: '000000', action: 'login' }));
      expectForbidden(await browser.post(url, { ...token, action: 'cancel' }));
      expectForbidden(await browser.post(`/register?request=${requestId}`, { ...token, mobile: OTHER_MOBILE, pin: PIN, pin_confirmation: PIN }));
    }
    expect(await outbox(t.app, MOBILE)).toEqual([]);
    expect(await outbox(t.app, OTHER_MOBILE)).toEqual([]);
    expect(await t.storage.customers.findCustomer(customer.profileId)).toEqual(customer);
    expect(await t.storage.customers.listCustomers()).toHaveLength(1);
    expect((await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId)))?.completedAt).toBeNull();
    // The rightful form still works.
    await submitCredentials(browser, page, MOBILE, PIN);
  });

  it('a POST without the CSRF cookie, or with a token whose cookie was replaced (stale), is refused', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client));
    const stale = csrfToken(page.body);

    const secret = browser.cookies.get('connect_csrf') ?? '';
    browser.cookies.delete('connect_csrf');
    expectForbidden(await browser.post(`/login?request=${requestId}`, { csrf_token: stale, mobile: MOBILE, pin: PIN }));

    // A new page sets a new CSRF secret: the old token is stale from then on.
    const fresh = await browser.open(`/login?request=${requestId}`);
    expect(browser.cookies.get('connect_csrf')).not.toBe(secret);
    expectForbidden(await browser.post(`/login?request=${requestId}`, { csrf_token: stale, mobile: MOBILE, pin: PIN }));
    expect(await outbox(t.app, MOBILE)).toEqual([]);
    await submitCredentials(browser, fresh, MOBILE, PIN);
  });

  it("another browser's CSRF cookie and token together do not pass: the token is bound to the browser cookie", async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const victim = new Browser(t.app);
    const { requestId } = await startLogin(victim, authorizeParams(client));
    const attacker = new Browser(t.app);
    const { page: attackerPage } = await startLogin(attacker, authorizeParams(client));
    // Cookie tossing: the attacker's CSRF secret planted in the victim's browser.
    victim.cookies.set('connect_csrf', attacker.cookies.get('connect_csrf') ?? '');
    expectForbidden(await victim.post(`/login?request=${requestId}`, { csrf_token: csrfToken(attackerPage.body), mobile: MOBILE, pin: PIN }));
    expect(await outbox(t.app, MOBILE)).toEqual([]);
  });

  it('the one-time-PIN form refuses a missing or foreign token without spending a try or completing the login', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client));
    const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
    const code = await latestOtp(t.app, MOBILE);
    const other = new Browser(t.app);
    const { page: otherPage } = await startLogin(other, authorizeParams(client));
    const url = `/login/otp?request=${requestId}`;
    // Late enough for a resend, so one that slipped through would show.
    t.clock.advance(30);
    const tokens: Array<Record<string, string>> = [{}, { csrf_token: 'garbage' }, { csrf_token: csrfToken(otherPage.body) }];
    for (const token of tokens) {
      expectForbidden(await browser.post(url, { ...token, otp: code }));
      expectForbidden(await browser.post(url, { ...token, otp: '000000' }));
      expectForbidden(await browser.post(url, { ...token, action: 'resend' }));
      expectForbidden(await browser.post(url, { ...token, action: 'cancel' }));
    }
    const challenge = await t.storage.otpChallenges.findLatestOtpChallenge(hashCookieValue(requestId));
    expect(challenge).toMatchObject({ attempts: 0, resends: 0, consumedAt: null });
    expect(browser.cookies.has('connect_session')).toBe(false);
    expect(await outbox(t.app, MOBILE)).toHaveLength(1);
    expectClientRedirect(await enterOtp(browser, otpPage, MOBILE, code));
  });

  it('a pending request opened from another browser → 400 page, even with a valid token of that browser', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const owner = new Browser(t.app);
    const { requestId } = await startLogin(owner, authorizeParams(client));
    const stranger = new Browser(t.app);
    for (const path of ['/login', '/register', '/login/otp']) {
      const res = await stranger.get(`${path}?request=${requestId}`);
      expectPage(res, 400);
      expect(pageText(res.body)).toContain('This sign-in page has expired or was opened in another browser.');
    }
    // The stranger has a CSRF secret and token of its own (from its own request).
    const { page: own } = await startLogin(stranger, authorizeParams(client));
    const token = csrfToken(own.body);
    for (const [path, fields] of [
      ['/login', { mobile: MOBILE, pin: PIN }],
      ['/register', { mobile: OTHER_MOBILE, pin: PIN, pin_confirmation: PIN }],
      ['/login/otp', { otp: '123456' }],
      ['/login', { action: 'cancel' }],
    ] as const) {
      const res = await stranger.post(`${path}?request=${requestId}`, { csrf_token: token, ...fields });
      expectPage(res, 400);
    }
    expect(await outbox(t.app, MOBILE)).toEqual([]);
    expect(await outbox(t.app, OTHER_MOBILE)).toEqual([]);
    expect((await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId)))?.completedAt).toBeNull();
    // The owner carries on.
    expectPage(await owner.get(`/login?request=${requestId}`), 200);
  });
});

describe('hosted pages: registration', () => {
  async function openRegistration(t: TestApp, client: { id: string }, extra: Record<string, string> = {}) {
    const browser = new Browser(t.app);
    const { requestId } = await startLogin(browser, authorizeParams(client));
    const page = await browser.open(`/register?request=${requestId}`);
    expectPage(page, 200);
    return { browser, page, requestId, ...extra };
  }

  it.each([
    ['mismatched PINs', { pin: '482613', pin_confirmation: '482614' }, 'pin_confirmation', 'The two PINs are not the same.'],
    ['a PIN with letters', { pin: '12ab56', pin_confirmation: '12ab56' }, 'pin', 'Choose a PIN of 4 to 6 digits.'],
    ['a PIN of 3 digits', { pin: '123', pin_confirmation: '123' }, 'pin', 'Choose a PIN of 4 to 6 digits.'],
    ['a PIN of 7 digits', { pin: '1234567', pin_confirmation: '1234567' }, 'pin', 'Choose a PIN of 4 to 6 digits.'],
    ['a PIN with spaces', { pin: ' 1234 ', pin_confirmation: ' 1234 ' }, 'pin', 'Choose a PIN of 4 to 6 digits.'],
    ['a PIN of full-width digits', { pin: '１２３４', pin_confirmation: '１２３４' }, 'pin', 'Choose a PIN of 4 to 6 digits.'],
    ['no PIN', { pin_confirmation: '482613' }, 'pin', 'Choose a PIN of 4 to 6 digits.'],
    ['no confirmation', { pin: '482613' }, 'pin_confirmation', 'The two PINs are not the same.'],
    ['a PIN of one digit repeated', { pin: '0000', pin_confirmation: '0000' }, 'pin', 'That PIN is too easy to guess: it repeats the same digits, like 1111 or 1212. Choose another PIN.'],
    ['a PIN of a pair repeated', { pin: '696969', pin_confirmation: '696969' }, 'pin', 'That PIN is too easy to guess: it repeats the same digits, like 1111 or 1212. Choose another PIN.'],
    ['a PIN of digits going up', { pin: '123456', pin_confirmation: '123456' }, 'pin', 'That PIN is too easy to guess: its digits are in order, like 1234 or 9876. Choose another PIN.'],
    ['a PIN of digits going down', { pin: '4321', pin_confirmation: '4321' }, 'pin', 'That PIN is too easy to guess: its digits are in order, like 1234 or 9876. Choose another PIN.'],
    ['a common PIN', { pin: '2580', pin_confirmation: '2580' }, 'pin', 'That PIN is one of the most common PINs and easy to guess. Choose another PIN.'],
  ] as const)('%s → the form again, the error tied to its field, no account and no SMS', async (_name, fields, field, message) => {
    const { t, client } = await appWithClient();
    const { browser, page } = await openRegistration(t, client);
    const res = await browser.submit(page, { mobile: MOBILE, ...fields, action: 'register' });
    expectPage(res, 400);
    expect(fieldError(res.body, field)).toBe(message);
    expect(attribute(inputTag(res.body, field === 'pin' ? 'pin_confirmation' : 'pin'), 'aria-invalid')).toBeUndefined();
    // The mobile is kept; the PINs are not sent back.
    expect(attribute(inputTag(res.body, 'mobile'), 'value')).toBe(MOBILE);
    expect(attribute(inputTag(res.body, 'pin'), 'value')).toBeUndefined();
    expect(attribute(inputTag(res.body, 'pin_confirmation'), 'value')).toBeUndefined();
    expect(await t.storage.customers.listCustomers()).toEqual([]);
    expect(await outbox(t.app, MOBILE)).toEqual([]);
    // The refreshed form can be submitted again.
    expectSeeOther(await browser.submit(res, { mobile: MOBILE, pin: PIN, pin_confirmation: PIN }), /^\/login\/otp\?request=/);
  });

  it.each(['0917123456', 'abc', '+1', '', '+6328123456', '0917+1234567'])('mobile %j → a mobile field error', async (mobile) => {
    const { t, client } = await appWithClient();
    const { browser, page } = await openRegistration(t, client);
    const res = await browser.submit(page, { mobile, pin: PIN, pin_confirmation: PIN });
    expectPage(res, 400);
    expect(fieldError(res.body, 'mobile')).toBe('That is not a mobile number. Enter it as you would dial it, for example 0917 123 4567.');
    expect(await t.storage.customers.listCustomers()).toEqual([]);
  });

  it('the account exists only once the one-time PIN is entered, with the PIN chosen', async () => {
    const { t, client } = await appWithClient();
    const { browser, page, requestId } = await openRegistration(t, client);
    const res = await browser.submit(page, { mobile: '+63 917 123 4567', pin: '3817', pin_confirmation: '3817', action: 'register' });
    expectSeeOther(res, new RegExp(`^/login/otp\\?request=${requestId}$`));
    expect(await t.storage.customers.findCustomerByMobile(MOBILE)).toBeUndefined();
    expect(await t.storage.customers.listCustomers()).toEqual([]);
    const otpPage = await browser.follow(res);
    expectPage(otpPage, 200);
    expect(pageText(otpPage.body)).toContain(MASKED_MOBILE);
    expect(await t.storage.customers.listCustomers()).toEqual([]);

    const done = await enterOtp(browser, otpPage, MOBILE);
    const params = expectClientRedirect(done);
    const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
    expect(customer).toBeDefined();
    expect(await t.storage.customers.listCustomers()).toHaveLength(1);
    expect(params.get('profileId')).toBe(customer?.profileId);
    expect(params.get('userId')).toBe(MASKED_MOBILE);
    expect(customer).toMatchObject({ mobile: MOBILE, status: 'active', pinAttempts: 0, lockedUntil: null, createdAt: t.clock.nowSeconds() });
    expect(await verifyPin('3817', customer?.pinHash ?? '')).toBe(true);
    expect(browser.cookies.get('connect_session')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('a PIN chosen before the weak-PIN rules, and weak by them, still logs in', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t, MOBILE, '1234', { chosenBeforeTheRules: true });
    const browser = new Browser(t.app);
    const { page } = await startLogin(browser, authorizeParams(client));
    const otpPage = await submitCredentials(browser, page, MOBILE, '1234');
    expectClientRedirect(await enterOtp(browser, otpPage, MOBILE));
  });

  it('a wrong one-time PIN creates no account', async () => {
    const { t, client } = await appWithClient();
    const { browser, page } = await openRegistration(t, client);
    const otpPage = await browser.follow(await browser.submit(page, { mobile: MOBILE, pin: PIN, pin_confirmation: PIN }));
    const code = await latestOtp(t.app, MOBILE);
    const res = await enterOtp(browser, otpPage, MOBILE, String((Number(code) + 1) % 1_000_000).padStart(6, '0'));
    expectPage(res, 400);
    expect(await t.storage.customers.listCustomers()).toEqual([]);
  });

  it('a mobile already registered is refused, and nothing is sent', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const { browser, page } = await openRegistration(t, client);
    const res = await browser.submit(page, { mobile: MOBILE, pin: '5930', pin_confirmation: '5930' });
    expectPage(res, 400);
    expect(fieldError(res.body, 'mobile')).toBe('This mobile number already has an account. Log in instead.');
    expect(await outbox(t.app, MOBILE)).toEqual([]);
    expect(await t.storage.customers.listCustomers()).toHaveLength(1);
  });

  it('a mobile registered while the one-time PIN was pending is refused at the end, and the other account is untouched', async () => {
    const { t, client } = await appWithClient();
    const { browser, page } = await openRegistration(t, client);
    const otpPage = await browser.follow(await browser.submit(page, { mobile: MOBILE, pin: '5930', pin_confirmation: '5930' }));
    const existing = await addCustomer(t);
    const res = await enterOtp(browser, otpPage, MOBILE);
    expectPage(res, 400);
    expect(fieldError(res.body, 'mobile')).toBe('This mobile number already has an account. Log in instead.');
    expect(await t.storage.customers.listCustomers()).toEqual([existing]);
    expect(browser.cookies.has('connect_session')).toBe(false);
  });

  it('with a user_id, the server registers that mobile whatever mobile is posted', async () => {
    const { t, client } = await appWithClient();
    const browser = new Browser(t.app);
    const res = await browser.get(authorizeUrl(authorizeParams(client, { user_id: MOBILE })));
    const page = await browser.follow(res);
    expect(formAction(page.body)).toMatch(/^\/register\?/);
    const otpPage = await browser.follow(await browser.submit(page, { mobile: OTHER_MOBILE, pin: PIN, pin_confirmation: PIN }));
    expect(await outbox(t.app, OTHER_MOBILE)).toEqual([]);
    expectClientRedirect(await enterOtp(browser, otpPage, MOBILE));
    expect((await t.storage.customers.listCustomers()).map((c) => c.mobile)).toEqual([MOBILE]);
  });
});

describe('hosted pages: bad input', () => {
  /** Every response: a client error, an HTML page (or a redirect), nothing internal. */
  function expectRefused(res: Response, label: string): void {
    expect(res.statusCode, label).toBeGreaterThanOrEqual(400);
    expect(res.statusCode, label).toBeLessThan(500);
    expect(res.headers['content-type'], label).toBe('text/html; charset=utf-8');
    expect(res.headers.location, label).toBeUndefined();
    expect(withoutAssets(res.body), label).not.toMatch(LEAK);
  }

  it('malformed query strings, bodies and field types → 4xx pages, never a 500; no account, challenge or code', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t, OTHER_MOBILE, PIN);
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client));
    const token = csrfToken(page.body);
    const queries = ['', '?request=', '?request=%zz', `?request=${requestId}&request=${requestId}`, `?request[]=${requestId}`, `?request=${'a'.repeat(10_240)}`, '?%zz', `?request=${requestId}%00`];
    for (const path of ['/login', '/register', '/login/otp']) {
      for (const query of queries) {
        expectRefused(await browser.get(`${path}${query}`), `GET ${path}${query.slice(0, 80)}`);
        expectRefused(await browser.post(`${path}${query}`, { csrf_token: token, mobile: MOBILE, pin: PIN, pin_confirmation: PIN, otp: '123456' }), `POST ${path}${query.slice(0, 80)}`);
      }
    }

    const bodies: ReadonlyArray<[string, string | Buffer, string?]> = [
      ['100 KB body', `csrf_token=${token}&mobile=${encodeURIComponent(MOBILE)}&pin=${PIN}&pad=${'a'.repeat(100 * 1024)}`],
      ['invalid UTF-8 bytes', Buffer.concat([Buffer.from(`csrf_token=${token}&pin=${PIN}&mobile=`), Buffer.from([0xff, 0xfe, 0xc3])])],
      ['a percent-escaped invalid UTF-8 byte', `csrf_token=${token}&pin=${PIN}&mobile=%ff`],
      ['a truncated UTF-8 sequence', `csrf_token=${token}&pin=%e2%82&mobile=${encodeURIComponent(MOBILE)}`],
      ['a bad percent-escape', `csrf_token=${token}&pin=${PIN}&mobile=%zz`],
      ['a bad percent-escape in a name', `csrf_token=${token}&%zz=1`],
      ['pin twice', `csrf_token=${token}&mobile=${encodeURIComponent(MOBILE)}&pin=${PIN}&pin=${PIN}`],
      ['csrf_token twice', `csrf_token=${token}&csrf_token=${token}&mobile=${encodeURIComponent(MOBILE)}&pin=${PIN}`],
      ['JSON', JSON.stringify({ csrf_token: token, mobile: MOBILE, pin: PIN }), 'application/json'],
      ['multipart', `--b\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n${token}\r\n--b--\r\n`, 'multipart/form-data; boundary=b'],
      ['text/plain', `csrf_token=${token}&mobile=${MOBILE}&pin=${PIN}`, 'text/plain'],
      ['pin[] (array syntax)', `csrf_token=${token}&mobile=${encodeURIComponent(MOBILE)}&pin[]=${PIN}`],
      ['mobile[a] (object syntax)', `csrf_token=${token}&mobile[a]=${encodeURIComponent(MOBILE)}&pin=${PIN}`],
      ['a 10 KB mobile', `csrf_token=${token}&mobile=${'9'.repeat(10_240)}&pin=${PIN}`],
      ['a 10 KB PIN', `csrf_token=${token}&mobile=${encodeURIComponent(MOBILE)}&pin=${'1'.repeat(10_240)}`],
      ['NUL bytes', `csrf_token=${token}&mobile=%2B63917%001234567&pin=1234%00`],
      ['a full-width-digit PIN', `csrf_token=${token}&mobile=${encodeURIComponent(MOBILE)}&pin=${encodeURIComponent('１２３４５６')}`],
      ['an unknown mobile', `csrf_token=${token}&mobile=${encodeURIComponent(MOBILE)}&pin=${PIN}`],
    ];
    for (const path of ['/login', '/register']) {
      for (const [label, body, contentType] of bodies) {
        const res = await browser.request({ method: 'POST', url: `${path}?request=${requestId}`, body, ...(contentType ? { contentType } : {}) });
        expectRefused(res, `${path}: ${label}`);
      }
    }
    const bodyless = await browser.request({ method: 'POST', url: `/login?request=${requestId}` });
    expectRefused(bodyless, 'no body');

    // The registration attempt above ("an unknown mobile" on /register) was refused too: MOBILE is not
    // registered, but the posted PINs had no confirmation. Nothing exists that was not there before.
    expect((await t.storage.customers.listCustomers()).map((c) => c.mobile)).toEqual([OTHER_MOBILE]);
    expect(await t.storage.otpChallenges.findLatestOtpChallenge(hashCookieValue(requestId))).toBeUndefined();
    expect(await outbox(t.app, MOBILE)).toEqual([]);
    expect(await outbox(t.app, OTHER_MOBILE)).toEqual([]);
    expect((await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId)))?.completedAt).toBeNull();
    expect(browser.cookies.has('connect_session')).toBe(false);
    expect((await t.storage.customers.findCustomerByMobile(OTHER_MOBILE))?.pinAttempts).toBe(0);
  });

  it('bad one-time-PIN input → 4xx pages; malformed codes spend no try; nothing completes', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client));
    const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
    const token = csrfToken(otpPage.body);
    const url = `/login/otp?request=${requestId}`;
    const bodies: ReadonlyArray<[string, string | Buffer, number]> = [
      ['100 KB body', `csrf_token=${token}&otp=123456&pad=${'a'.repeat(100 * 1024)}`, 413],
      ['invalid UTF-8 bytes', Buffer.concat([Buffer.from(`csrf_token=${token}&otp=`), Buffer.from([0xff, 0xfe])]), 400],
      ['otp twice', `csrf_token=${token}&otp=123456&otp=123456`, 400],
      ['otp[]', `csrf_token=${token}&otp[]=123456`, 400],
      ['no otp', `csrf_token=${token}`, 400],
      ['5 digits', `csrf_token=${token}&otp=12345`, 400],
      ['7 digits', `csrf_token=${token}&otp=1234567`, 400],
      ['letters', `csrf_token=${token}&otp=12345a`, 400],
      ['full-width digits', `csrf_token=${token}&otp=${encodeURIComponent('１２３４５６')}`, 400],
      ['a 10 KB otp', `csrf_token=${token}&otp=${'1'.repeat(10_240)}`, 400],
      ['NUL byte', `csrf_token=${token}&otp=12345%00`, 400],
      ['unknown action', `csrf_token=${token}&action=${'x'.repeat(5000)}`, 400],
    ];
    for (const [label, body, status] of bodies) {
      const res = await browser.request({ method: 'POST', url, body });
      expectRefused(res, label);
      expect(res.statusCode, label).toBe(status);
    }
    const enterCode = await browser.post(url, { csrf_token: token, otp: '12345' });
    expect(fieldError(enterCode.body, 'otp')).toBe('Enter the 6-digit code from the SMS.');
    expect(await t.storage.otpChallenges.findLatestOtpChallenge(hashCookieValue(requestId))).toMatchObject({ attempts: 0, consumedAt: null });
    expect(browser.cookies.has('connect_session')).toBe(false);
    expect(await outbox(t.app, MOBILE)).toHaveLength(1);
    // The right code still works.
    expectClientRedirect(await enterOtp(browser, otpPage, MOBILE));
  });

  it('a customer who is not the one-time PIN page yet is sent to the first page', async () => {
    const { t, client } = await appWithClient();
    const browser = new Browser(t.app);
    const { requestId } = await startLogin(browser, authorizeParams(client));
    expectSeeOther(await browser.get(`/login/otp?request=${requestId}`), new RegExp(`^/login\\?request=${requestId}$`));
    expect(formAction((await browser.open(`/login/otp?request=${requestId}`)).body)).toBe(`/login?request=${requestId}`);
  });
});
