import { describe, expect, it } from 'vitest';
import { updateClientSettings } from '../../../src/core/clients/manage-clients.js';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { build, type BuildOptions, type TestApp } from '../../helpers/build.js';
import { changeReached } from '../../helpers/change-reached.js';
import { cliWorkspace } from '../../cli/command-line.js';
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
  formAction,
  inputTag,
  LEAK,
  logIn,
  MASKED_MOBILE,
  MOBILE,
  OTHER_MOBILE,
  pageText,
  PIN,
  requestIdOf,
  submitCredentials,
  type Response,
} from '../../helpers/customer-flow.js';

/**
 * Consent (docs/journey.md): a session signs in silently only to clients
 * the customer approved. Logging in through a client approves it; a live
 * session meeting another client goes to the consent page first.
 */

const B_NAME = 'Bayani Pay';
const B_REDIRECT = 'https://bayani.example/cb';

type Client = { id: string; secret: string; redirectUri?: string };

/** An app, client A (Acme), client B (Bayani Pay) and a browser logged in through A. */
async function loggedInThroughA(options: BuildOptions = {}, existing?: TestApp) {
  const t = existing ?? (await build(options));
  const a: Client = await t.createClient();
  const b: Client = { ...(await t.createClient({ name: B_NAME, redirectUri: B_REDIRECT })), redirectUri: B_REDIRECT };
  const customer = existing ? await t.storage.customers.findCustomerByMobile(MOBILE) : await addCustomer(t);
  const browser = new Browser(t.app);
  await logIn(browser, authorizeParams(a));
  return { t, a, b, browser, profileId: customer?.profileId as string };
}

/** `/authorize` for `client` with the live session: the consent page of a new journey. */
async function consentPage(browser: Browser, client: Client, extra: Record<string, string> = {}): Promise<{ page: Response; requestId: string }> {
  const res = await browser.get(authorizeUrl(authorizeParams(client, extra)));
  const requestId = requestIdOf(expectSeeOther(res, /^\/consent\?request=[A-Za-z0-9_-]{43}$/));
  const page = await browser.follow(res);
  expectPage(page, 200);
  return { page, requestId };
}

function journeyOf(t: TestApp, requestId: string) {
  return t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(requestId));
}

describe('consent', () => {
  it('a live session meeting client B: the consent page names B and the customer; approve returns a good code, and B then signs in silently', async () => {
    const { t, b, browser, profileId } = await loggedInThroughA();
    const { page, requestId } = await consentPage(browser, b);

    const text = pageText(page.body);
    expect(text).toContain(`${B_NAME} wants to link your account.`);
    expect(text).toContain(`You are signed in as ${MASKED_MOBILE} .`);
    expect(text).not.toContain('Acme');
    expect(text).not.toContain(MOBILE);
    expect(formAction(page.body)).toBe(`/consent?request=${requestId}`);
    csrfToken(page.body);
    expect(findTag(page.body, 'button', 'action', 'approve')).toBeDefined();
    expect(findTag(page.body, 'button', 'action', 'cancel')).toBeDefined();
    expect(await t.storage.consents.findConsent(profileId, b.id)).toBeUndefined();

    const res = await browser.submit(page, { action: 'approve' });
    const params = expectClientRedirect(res, B_REDIRECT);
    expect([...params.keys()]).toEqual(['code', 'state', 'userId', 'profileId', 'iss']);
    expect(params.get('state')).toBe('xyz-state');
    expect(params.get('userId')).toBe(MASKED_MOBILE);
    expect(params.get('profileId')).toBe(profileId);
    expect((await exchangeCode(t.app, b, { code: params.get('code') as string, redirect_uri: B_REDIRECT })).statusCode).toBe(200);
    expect(await t.storage.consents.findConsent(profileId, b.id)).toMatchObject({ approvedAt: t.clock.nowSeconds() });
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'code_issued' });

    for (const extra of [{}, { prompt: 'none' }]) {
      const again = expectClientRedirect(await browser.get(authorizeUrl(authorizeParams(b, extra))), B_REDIRECT);
      expect(again.get('profileId')).toBe(profileId);
    }
  });

  it('cancel on the consent page → access_denied with state and iss; B is not approved', async () => {
    const { t, b, browser, profileId } = await loggedInThroughA();
    const { page, requestId } = await consentPage(browser, b, { state: 'b-state' });
    expectErrorRedirect(await browser.submit(page, { action: 'cancel' }), 'access_denied', 'b-state', B_REDIRECT);
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'cancelled' });
    expect(await t.storage.consents.findConsent(profileId, b.id)).toBeUndefined();
    await consentPage(browser, b);
  });

  it('prompt=none for an unapproved client → consent_required; the approved client A still signs in silently', async () => {
    const { a, b, browser } = await loggedInThroughA();
    expectErrorRedirect(await browser.get(authorizeUrl(authorizeParams(b, { prompt: 'none' }))), 'consent_required', 'xyz-state', B_REDIRECT);
    expectClientRedirect(await browser.get(authorizeUrl(authorizeParams(a, { prompt: 'none' }))));
  });

  it('a consent POST without or with a wrong CSRF token → 403 page, nothing changed', async () => {
    const { t, a, b, browser, profileId } = await loggedInThroughA();
    const { page, requestId } = await consentPage(browser, b);
    // A valid token of another browser (the same customer's) is no token for this one.
    const other = new Browser(t.app);
    await logIn(other, authorizeParams(a));
    const { page: otherPage } = await consentPage(other, b);
    const tokens: Array<Record<string, string>> = [
      {},
      { csrf_token: '' },
      { csrf_token: 'garbage' },
      { csrf_token: `${csrfToken(page.body)}x` },
      { csrf_token: csrfToken(otherPage.body) },
    ];
    for (const token of tokens) {
      for (const action of ['approve', 'cancel']) {
        const res = await browser.post(formAction(page.body), { ...token, action });
        expectPage(res, 403);
        expect(pageText(res.body)).toContain('This form has expired');
      }
    }
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'consent_required', completedAt: null });
    expect(await t.storage.consents.findConsent(profileId, b.id)).toBeUndefined();
    // The rightful form still works.
    expectClientRedirect(await browser.submit(page, { action: 'approve' }), B_REDIRECT);
  });

  it("a consent POST for another browser's request → dead end, nothing changed", async () => {
    const { t, a, b, browser, profileId } = await loggedInThroughA();
    const { page, requestId } = await consentPage(browser, b);
    // Another browser of the same customer, with its own session and its own valid form.
    const other = new Browser(t.app);
    await logIn(other, authorizeParams(a));
    const { page: otherPage } = await consentPage(other, b);
    for (const action of ['approve', 'cancel']) {
      const res = await other.post(`/consent?request=${requestId}`, { csrf_token: csrfToken(otherPage.body), action });
      expectPage(res, 400);
      expect(pageText(res.body)).toContain('This sign-in page has expired or was opened in another browser.');
    }
    expectPage(await other.get(`/consent?request=${requestId}`), 400);
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'consent_required', completedAt: null });
    expect(await t.storage.consents.findConsent(profileId, b.id)).toBeUndefined();
    expectClientRedirect(await browser.submit(page, { action: 'approve' }), B_REDIRECT);
  });

  it("approve after the session ended → the same journey's login page; completing the login issues B's code", async () => {
    const idle = 600;
    const { t, b, browser, profileId } = await loggedInThroughA({ sessionIdleSeconds: idle });
    const { page, requestId } = await consentPage(browser, b);
    t.clock.advance(idle);

    const res = await browser.submit(page, { action: 'approve' });
    expect(expectSeeOther(res, /^\/login\?request=/)).toBe(`/login?request=${requestId}`);
    expect(await t.storage.consents.findConsent(profileId, b.id)).toBeUndefined();
    const login = await browser.follow(res);
    expectPage(login, 200);
    expect(pageText(login.body)).toContain(`${B_NAME} wants to link your account.`);
    const params = expectClientRedirect(await enterOtp(browser, await submitCredentials(browser, login, MOBILE, PIN), MOBILE), B_REDIRECT);
    expect(params.get('profileId')).toBe(profileId);
    expect((await exchangeCode(t.app, b, { code: params.get('code') as string, redirect_uri: B_REDIRECT })).statusCode).toBe(200);
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'code_issued' });
    expect(await t.storage.consents.findConsent(profileId, b.id)).toBeDefined();
  });

  it("user_id of another mobile than the session's → the login page for that mobile, not consent", async () => {
    const { t, b, browser } = await loggedInThroughA();
    await addCustomer(t, OTHER_MOBILE, PIN);
    const res = await browser.get(authorizeUrl(authorizeParams(b, { user_id: OTHER_MOBILE })));
    expectSeeOther(res, /^\/login\?request=/);
    const page = await browser.follow(res);
    expectPage(page, 200);
    expect(attribute(inputTag(page.body, 'mobile'), 'value')).toBe(OTHER_MOBILE);
    expect(findTag(page.body, 'button', 'action', 'approve')).toBeUndefined();
    // The session's own mobile as user_id is still the consent page.
    await consentPage(browser, b, { user_id: MOBILE });
  });

  it('bad input on the consent page → a 4xx page or the page again, never a 500; nothing approved', async () => {
    const { t, b, browser, profileId } = await loggedInThroughA();
    const { page, requestId } = await consentPage(browser, b);
    const token = csrfToken(page.body);
    const refused = (res: Response, label: string) => {
      expect(res.statusCode, label).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, label).toBeLessThan(500);
      expect(res.headers['content-type'], label).toBe('text/html; charset=utf-8');
      expect(res.headers.location, label).toBeUndefined();
      expect(res.body, label).not.toMatch(LEAK);
    };
    const queries = ['', '?request=', '?request=%zz', `?request=${requestId}&request=${requestId}`, `?request[]=${requestId}`, `?request=${'a'.repeat(10_240)}`, `?request=${requestId}%00`];
    for (const query of queries) {
      refused(await browser.get(`/consent${query}`), `GET ${query.slice(0, 80)}`);
      refused(await browser.post(`/consent${query}`, { csrf_token: token, action: 'approve' }), `POST ${query.slice(0, 80)}`);
    }
    const url = `/consent?request=${requestId}`;
    const bodies: ReadonlyArray<[string, string | Buffer, string?]> = [
      ['100 KB body', `csrf_token=${token}&action=approve&pad=${'a'.repeat(100 * 1024)}`],
      ['invalid UTF-8 bytes', Buffer.concat([Buffer.from(`csrf_token=${token}&action=approve&x=`), Buffer.from([0xff, 0xfe])])],
      ['a bad percent-escape', `csrf_token=${token}&action=appr%zzove`],
      ['action twice', `csrf_token=${token}&action=approve&action=approve`],
      ['csrf_token twice', `csrf_token=${token}&csrf_token=${token}&action=approve`],
      ['JSON', JSON.stringify({ csrf_token: token, action: 'approve' }), 'application/json'],
      ['text/plain', `csrf_token=${token}&action=approve`, 'text/plain'],
    ];
    for (const [label, body, contentType] of bodies) {
      refused(await browser.request({ method: 'POST', url, body, ...(contentType ? { contentType } : {}) }), label);
    }
    // An action that is neither approve nor cancel (or none, or another field) shows the page again.
    const actions = ['', '&action=', '&action=APPROVE', '&action=allow', '&action=approve%20', `&action=${'x'.repeat(5000)}`, '&action[]=approve'];
    for (const action of actions) {
      const res = await browser.request({ method: 'POST', url, body: `csrf_token=${encodeURIComponent(token)}${action}` });
      expect(expectSeeOther(res, /^\//), action.slice(0, 20)).toBe(url);
    }
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'consent_required', completedAt: null });
    expect(await t.storage.consents.findConsent(profileId, b.id)).toBeUndefined();
    expectClientRedirect(await browser.submit(page, { action: 'approve' }), B_REDIRECT);
  });
});

describe('what the consent page says is granted', () => {
  /** The items of the page's list of what approving grants, as text. */
  function grantItems(body: string): string[] {
    const list = /<ul class="grant-list">([\s\S]*?)<\/ul>/.exec(body)?.[1] ?? '';
    return [...list.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => pageText(m[1] as string));
  }

  const SCOPES = 'payments:read payments:write openid read:balance payment_history.view https://api.bayani.example/x admin';

  async function withScopes(t: TestApp, clientId: string) {
    await updateClientSettings(
      clientId,
      { scopes: SCOPES, scopeDescriptions: ['payments:write=Send payments <b>for you</b> & more', 'admin=Pamahalaan ang iyong wallet'] },
      { clients: t.storage.clients, hasher: t.hasher, clock: t.clock, environment: t.environment },
    );
  }

  it.each([
    [
      'en',
      'Bayani Pay will be able to:',
      [
        'Know that it is you: your Connect ID, and your mobile number with only its country code and last 4 digits',
        'See your payments payments:read',
        'Send payments <b>for you</b> & more payments:write',
        'Confirm who you are openid',
        'See your balance read:balance',
        'See your payment history payment_history.view',
        'Use the access named “https://api.bayani.example/x” https://api.bayani.example/x',
        'Pamahalaan ang iyong wallet admin',
      ],
    ],
    [
      'fil',
      'Magagawa ng Bayani Pay na:',
      [
        'Malaman na ikaw ito: ang iyong Connect ID, at ang iyong numero ng mobile na country code at huling 4 na digit lang ang makikita',
        'Makita ang iyong payments payments:read',
        'Send payments <b>for you</b> & more payments:write',
        'Kumpirmahin kung sino ka openid',
        'Makita ang iyong balance read:balance',
        'Makita ang iyong payment history payment_history.view',
        'Gamitin ang access na “https://api.bayani.example/x” https://api.bayani.example/x',
        'Pamahalaan ang iyong wallet admin',
      ],
    ],
  ])('in %s: every scope of the client, in the operator\'s words as written or the default wording, escaped', async (locale, heading, items) => {
    const { t, b, browser } = await loggedInThroughA();
    await withScopes(t, b.id);
    // The request asks for one scope: the approval covers them all, so all are listed.
    const { page } = await consentPage(browser, b, { ui_locales: locale, scope: 'payments:read' });
    expect(pageText(page.body)).toContain(heading);
    expect(grantItems(page.body)).toEqual(items);
    expect(page.body).toContain('Send payments &lt;b&gt;for you&lt;/b&gt; &amp; more');
    expect(page.body).not.toContain('<b>for you</b>');
  });

  it('a client without scopes: the list says only that it learns who the customer is', async () => {
    const { b, browser } = await loggedInThroughA();
    const { page } = await consentPage(browser, b);
    expect(grantItems(page.body)).toEqual(['Know that it is you: your Connect ID, and your mobile number with only its country code and last 4 digits']);
  });

  it('a description the operator changes reaches the consent page within a second', async () => {
    const { t, b, browser } = await loggedInThroughA();
    await withScopes(t, b.id);
    expect(grantItems((await consentPage(browser, b)).page.body)).toContain('See your payments payments:read');
    await updateClientSettings(b.id, { scopeDescriptions: ['payments:read=Tingnan ang kasaysayan ng iyong bayad'] }, {
      clients: t.storage.clients,
      hasher: t.hasher,
      clock: t.clock,
      environment: t.environment,
    });
    await changeReached(async () => grantItems((await consentPage(browser, b)).page.body).includes('Tingnan ang kasaysayan ng iyong bayad payments:read'), 5000);
  });
});

describe('"Not you? Use another account" on the consent page', () => {
  it('ends the session, shows the login page of the same request, and another customer signs in and approves B', async () => {
    const { t, a, b, browser, profileId } = await loggedInThroughA();
    const other = await addCustomer(t, OTHER_MOBILE, PIN);
    const { page, requestId } = await consentPage(browser, b, { state: 'b-state' });
    const button = findTag(page.body, 'button', 'action', 'switch_account');
    expect(button).toBeDefined();
    expect(pageText(page.body)).toContain('Not you? Use another account');
    const sessionCookie = [...browser.cookies.keys()].find((name) => name.endsWith('connect_session')) as string;
    const oldSession = browser.cookies.get(sessionCookie) as string;

    const res = await browser.submit(page, { action: 'switch_account' });
    expect(expectSeeOther(res, /^\/login\?request=/)).toBe(`/login?request=${requestId}`);
    // The cookie is cleared, and the session itself is over (a copy of the cookie no longer signs in).
    expect(browser.cookies.has(sessionCookie)).toBe(false);
    expect(await t.storage.customerSessions.useCustomerSession(hashCookieValue(oldSession), t.clock.nowSeconds(), 1800)).toBeUndefined();
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'pending', profileId: null });
    expect(await t.storage.consents.findConsent(profileId, b.id)).toBeUndefined();

    const login = await browser.follow(res);
    expectPage(login, 200);
    expect(pageText(login.body)).toContain(`${B_NAME} wants to link your account.`);
    expect(attribute(inputTag(login.body, 'mobile'), 'readonly')).toBeUndefined();
    expect(attribute(inputTag(login.body, 'mobile'), 'value')).toBe('');

    const params = expectClientRedirect(await enterOtp(browser, await submitCredentials(browser, login, OTHER_MOBILE, PIN), OTHER_MOBILE), B_REDIRECT);
    expect(params.get('state')).toBe('b-state');
    expect(params.get('profileId')).toBe(other.profileId);
    expect((await exchangeCode(t.app, b, { code: params.get('code') as string, redirect_uri: B_REDIRECT })).statusCode).toBe(200);
    expect(await t.storage.consents.findConsent(other.profileId, b.id)).toBeDefined();
    expect(await t.storage.consents.findConsent(profileId, b.id)).toBeUndefined();
    // The browser is now the other customer's: A, which only the first customer approved, asks for consent.
    expectErrorRedirect(await browser.get(authorizeUrl(authorizeParams(a, { prompt: 'none' }))), 'consent_required', 'xyz-state');
  });

  it('works in Filipino and without JavaScript: a submit button of the consent form itself', async () => {
    const { b, browser } = await loggedInThroughA();
    const { page } = await consentPage(browser, b, { ui_locales: 'fil' });
    expect(pageText(page.body)).toContain('Hindi ikaw? Gumamit ng ibang account');
    const form = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(page.body);
    expect(form?.[2]).toContain('name="csrf_token"');
    expect(form?.[2]).toMatch(/<button type="submit" name="action" value="switch_account"/);
  });

  it('not offered when the client named the mobile (user_id); posted anyway, it changes nothing', async () => {
    const { t, b, browser } = await loggedInThroughA();
    const { page, requestId } = await consentPage(browser, b, { user_id: MOBILE });
    expect(findTag(page.body, 'button', 'action', 'switch_account')).toBeUndefined();
    const res = await browser.submit(page, { action: 'switch_account' });
    expect(expectSeeOther(res, /^\//)).toBe(`/consent?request=${requestId}`);
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'consent_required' });
    expectClientRedirect(await browser.submit(page, { action: 'approve' }), B_REDIRECT);
  });

  it('after the journey was approved in another tab, it changes nothing: the sign-in is finished', async () => {
    const { t, b, browser, profileId } = await loggedInThroughA();
    const { page, requestId } = await consentPage(browser, b);
    expectClientRedirect(await browser.submit(page, { action: 'approve' }), B_REDIRECT);
    const res = await browser.submit(page, { action: 'switch_account' });
    expectPage(res, 400);
    expect(await journeyOf(t, requestId)).toMatchObject({ status: 'code_issued', profileId });
    // The session lives on: B now signs in silently.
    expectClientRedirect(await browser.get(authorizeUrl(authorizeParams(b, { prompt: 'none' }))), B_REDIRECT);
  });
});

describe('consent and customers lock', () => {
  it('customers lock removes the approvals: after unlock and a login through A, B asks again', async () => {
    const ws = cliWorkspace();
    await ws.cliJson(['customers', 'create', '--mobile', MOBILE, '--pin', PIN]);
    const t = await ws.app();
    const { a, b, browser, profileId } = await loggedInThroughA({}, t);
    const { page: first } = await consentPage(browser, b);
    expectClientRedirect(await browser.submit(first, { action: 'approve' }), B_REDIRECT);
    const approved = (view: { approvedClients: Array<{ clientId: string }> }) => view.approvedClients.map((c) => c.clientId).sort();
    expect(approved(await ws.cliJson(['customers', 'show', MOBILE]))).toEqual([a.id, b.id].sort());

    await ws.cliJson(['customers', 'lock', MOBILE]);
    expect(await t.storage.consents.listConsents(profileId)).toEqual([]);
    expect(approved(await ws.cliJson(['customers', 'show', MOBILE]))).toEqual([]);
    // The lock ended the session too.
    expectErrorRedirect(await browser.get(authorizeUrl(authorizeParams(b, { prompt: 'none' }))), 'login_required', 'xyz-state', B_REDIRECT);

    await ws.cliJson(['customers', 'unlock', MOBILE]);
    await logIn(browser, authorizeParams(a));
    expect(approved(await ws.cliJson(['customers', 'show', MOBILE]))).toEqual([a.id]);
    expectErrorRedirect(await browser.get(authorizeUrl(authorizeParams(b, { prompt: 'none' }))), 'consent_required', 'xyz-state', B_REDIRECT);
    const { page } = await consentPage(browser, b);
    expectClientRedirect(await browser.submit(page, { action: 'approve' }), B_REDIRECT);
  });
});
