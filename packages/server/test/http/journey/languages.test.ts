import { describe, expect, it } from 'vitest';
import { testPinCheckQueue } from '../../helpers/pin-checks.js';
import { CATALOGUES } from '../../../src/http/views/messages/index.js';
import { timeOfDay } from '../../../src/http/views/time-of-day.js';
import { appWithClient } from '../../helpers/builders.js';
import {
  addCustomer,
  approveIfAsked,
  authorizeParams,
  authorizeUrl,
  Browser,
  csrfToken,
  enterOtp,
  expectClientRedirect,
  expectPage,
  expectSeeOther,
  formAction,
  latestOtp,
  logIn,
  MOBILE,
  OTHER_MOBILE,
  pageText,
  PIN,
  startLogin,
  submitCredentials,
  wrongOtp,
  type Response,
} from '../../helpers/customer-flow.js';

// docs/hosted-login.md, "Languages": ui_locales at /authorize, for the whole
// journey; else Accept-Language; else English.

/** The page is in `locale`: `<html lang>`, `Content-Language`, and `Vary: Accept-Language` exactly when that header chose it. */
function expectLanguage(res: Response, locale: 'en' | 'fil', chosenBy: 'ui_locales' | 'Accept-Language'): void {
  expect(res.body).toMatch(new RegExp(`<html lang="${locale}">`));
  expect(res.headers['content-language']).toBe(locale);
  const vary = String(res.headers.vary ?? '');
  if (chosenBy === 'Accept-Language') expect(vary).toMatch(/\bAccept-Language\b/i);
  else expect(vary).not.toMatch(/Accept-Language/i);
}

/** The fixed wording of every English entry (without its placeholders and counts), except what Filipino keeps in English. */
function englishWording(): string[] {
  const found = new Set<string>();
  const walk = (value: unknown, path: string): void => {
    if (path === 'page.pinLabel') return;
    if (typeof value === 'string') for (const part of value.split(/\{\w+\}/)) found.add(part.trim());
    else if (typeof value === 'function') for (const part of String((value as (n: number) => string)(7)).split('7')) found.add(part.trim());
    else if (value && typeof value === 'object') for (const [key, inner] of Object.entries(value)) walk(inner, path ? `${path}.${key}` : key);
  };
  walk(CATALOGUES.en, '');
  return [...found].filter((part) => /[A-Za-z]{3,}/.test(part));
}

const ENGLISH = englishWording();

/** A Filipino page: `lang="fil"`, and none of the English catalogue's wording anywhere in its text (title included). */
function expectFilipino(res: Response, chosenBy: 'ui_locales' | 'Accept-Language' = 'ui_locales'): string {
  expectLanguage(res, 'fil', chosenBy);
  const text = pageText(res.body);
  const english = ENGLISH.filter((part) => text.includes(part));
  expect(english, text).toEqual([]);
  return text;
}

/** The text of the page's form error (the field's, or the summary's). */
function errorText(html: string): string {
  const match = /<p class="field-error"[^>]*>.*?<span>(.*?)<\/span><\/p>|<div class="alert"[^>]*>.*?<p>(.*?)<\/p><\/div>/s.exec(html);
  expect(match, 'an error on the page').not.toBeNull();
  return pageText(match?.[1] ?? match?.[2] ?? '');
}

describe('the language of the hosted pages', () => {
  it('English without ui_locales or Accept-Language, and the page says it depends on Accept-Language', async () => {
    const { t, client } = await appWithClient();
    const { page } = await startLogin(new Browser(t.app), authorizeParams(client));
    expectLanguage(page, 'en', 'Accept-Language');
    expect(pageText(page.body)).toContain('Log in to continue');
  });

  it.each([
    ['fil', 'fil'],
    ['fil-PH', 'fil'],
    ['tl-PH,tl;q=0.9', 'fil'],
    ['en-US,en;q=0.9,fil;q=0.8', 'en'],
    ['fil;q=0.5, en;q=0.8', 'en'],
    ['en;q=0.4, fil-PH;q=0.6', 'fil'],
    ['de, ja;q=0.9, fil;q=0.1', 'fil'],
    ['de, ja', 'en'],
    ['fil;q=0, en;q=0', 'en'],
    ['*', 'en'],
    ['%%% not a header ;;', 'en'],
  ] as const)('Accept-Language %j: %s', async (acceptLanguage, locale) => {
    const { t, client } = await appWithClient();
    const { page } = await startLogin(new Browser(t.app, { acceptLanguage }), authorizeParams(client));
    expectLanguage(page, locale, 'Accept-Language');
  });

  it.each([
    ['fil', 'en', 'fil'],
    ['fil-PH', 'en-US', 'fil'],
    ['tl', undefined, 'fil'],
    ['ja fil en', 'en', 'fil'],
    ['en', 'fil-PH', 'en'],
    ['en-PH fil', 'fil', 'en'],
  ] as const)('ui_locales=%j wins over Accept-Language %j: %s', async (uiLocales, acceptLanguage, locale) => {
    const { t, client } = await appWithClient();
    const browser = new Browser(t.app, acceptLanguage === undefined ? {} : { acceptLanguage });
    const { page } = await startLogin(browser, authorizeParams(client, { ui_locales: uiLocales }));
    expectLanguage(page, locale, 'ui_locales');
  });

  it.each([
    ['ja', 'fil', 'fil'],
    ['x-unknown de', 'fil-PH', 'fil'],
    ['ja', undefined, 'en'],
    ['', 'fil', 'fil'],
  ] as const)('an unknown ui_locales %j is no error: Accept-Language %j decides (%s)', async (uiLocales, acceptLanguage, locale) => {
    const { t, client } = await appWithClient();
    const browser = new Browser(t.app, acceptLanguage === undefined ? {} : { acceptLanguage });
    const { page } = await startLogin(browser, authorizeParams(client, { ui_locales: uiLocales }));
    expectLanguage(page, locale, 'Accept-Language');
  });

  it('ui_locales sticks to every page of the login journey, across POSTs and their redirects, whatever Accept-Language says', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const browser = new Browser(t.app, { acceptLanguage: 'en-US,en;q=0.9' });
    const { page, requestId } = await startLogin(browser, authorizeParams(client, { ui_locales: 'fil-PH' }));
    expect(expectFilipino(page)).toContain('Mag-log in para magpatuloy');
    expect(page.body).toMatch(/<title>Mag-log in · Acme · Connect<\/title>/);

    // A refused form: the page again, in Filipino.
    const wrong = await browser.submit(page, { mobile: MOBILE, pin: '975310', action: 'login' });
    expectPage(wrong, 400);
    expectFilipino(wrong);
    expect(errorText(wrong.body)).toBe('Mali ang numero ng mobile o ang PIN.');

    // The one-time-PIN page, after the POST's 303.
    const otpPage = await submitCredentials(browser, wrong, MOBILE, PIN);
    expect(expectFilipino(otpPage)).toContain('Nagpadala kami ng 6-digit na code sa +63******4567 sa pamamagitan ng SMS.');
    // Without JavaScript the page names the time of day (Philippine time, for a +63 number), rounded up to the minute.
    expect(pageText(otpPage.body)).toContain(`Puwede kang humingi ng bagong code pagsapit ng ${timeOfDay(t.clock.nowSeconds() + 30, 'PH', 'fil').replace(/\s+/gu, ' ')} .`);
    expect(timeOfDay(t.clock.nowSeconds() + 30, 'PH', 'fil')).toMatch(/^\d{1,2}:\d{2}\s[AP]M Oras sa Pilipinas$/u);
    const tooSoon = await browser.submit(otpPage, { action: 'resend' });
    expectFilipino(tooSoon);
    expect(errorText(tooSoon.body)).toMatch(/^Puwede kang humingi ng bagong code pagkalipas ng \d+ segundo\.$/);
    t.clock.advance(30);
    const resent = await browser.submit(tooSoon, { action: 'resend' });
    expect(expectFilipino(resent)).toContain('Nagpadala kami ng bagong code sa +63******4567');
    const wrongCode = await enterOtp(browser, resent, MOBILE, wrongOtp(await latestOtp(t.app, MOBILE)));
    expectPage(wrongCode, 400);
    expectFilipino(wrongCode);
    expect(errorText(wrongCode.body)).toBe('Mali ang code na iyan. 4 subok na lang ang natitira.');
    // A page opened again by its address alone.
    expectFilipino(await browser.get(`/login/otp?request=${requestId}`));

    expectClientRedirect(await enterOtp(browser, wrongCode, MOBILE));
    // Finished: the dead end is in the journey's language too.
    const finished = await browser.get(`/login/otp?request=${requestId}`);
    expectPage(finished, 400);
    expect(expectFilipino(finished)).toContain('Tapos na ang pag-sign in na ito');
  });

  it('ui_locales sticks to the registration page, and a weak PIN is refused in Filipino', async () => {
    const { t, client } = await appWithClient();
    const browser = new Browser(t.app, { acceptLanguage: 'en' });
    const { requestId } = await startLogin(browser, authorizeParams(client, { ui_locales: 'fil' }));
    const page = await browser.open(`/register?request=${requestId}`);
    expectPage(page, 200);
    expect(expectFilipino(page)).toContain('Gawin ang iyong account');
    const cases = [
      ['1111', 'Masyadong madaling hulaan ang PIN na iyan: inuulit nito ang parehong mga digit, gaya ng 1111 o 1212. Pumili ng ibang PIN.'],
      ['6789', 'Masyadong madaling hulaan ang PIN na iyan: magkakasunod ang mga digit nito, gaya ng 1234 o 9876. Pumili ng ibang PIN.'],
      ['2580', 'Isa ang PIN na iyan sa mga pinakakaraniwang PIN at madali itong hulaan. Pumili ng ibang PIN.'],
    ] as const;
    let current = page;
    for (const [pin, message] of cases) {
      current = await browser.submit(current, { mobile: MOBILE, pin, pin_confirmation: pin, action: 'register' });
      expectPage(current, 400);
      expectFilipino(current);
      expect(errorText(current.body)).toBe(message);
    }
    expect(await t.storage.customers.listCustomers()).toEqual([]);
    const otpPage = await browser.follow(await browser.submit(current, { mobile: MOBILE, pin: PIN, pin_confirmation: PIN, action: 'register' }));
    expectFilipino(otpPage);
  });

  it('ui_locales sticks to the PIN reset pages, a weak new PIN refused and the login page after it in Filipino', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const browser = new Browser(t.app, { acceptLanguage: 'en' });
    const { page: login, requestId } = await startLogin(browser, authorizeParams(client, { ui_locales: 'fil' }));
    expect(expectFilipino(login)).toContain('Nakalimutan ang PIN?');
    const reset = await browser.open(`/login/reset?request=${requestId}`);
    expectPage(reset, 200);
    expect(expectFilipino(reset)).toContain('I-reset ang iyong PIN');
    expect(reset.body).toMatch(/<title>I-reset ang PIN · Acme · Connect<\/title>/);
    const invalid = await browser.submit(reset, { mobile: '0917', action: 'send' });
    expectPage(invalid, 400);
    expectFilipino(invalid);
    expect(errorText(invalid.body)).toBe('Hindi iyan numero ng mobile. Ilagay ito gaya ng pag-dial mo, halimbawa 0917 123 4567.');

    const codePage = await browser.follow(await browser.submit(invalid, { mobile: MOBILE, action: 'send' }));
    expect(expectFilipino(codePage)).toContain('Kung may Connect account ang +63******4567 , nagpadala kami rito ng 6-digit na code sa pamamagitan ng SMS.');
    t.clock.advance(30);
    const resent = await browser.submit(codePage, { action: 'resend' });
    expect(expectFilipino(resent)).toContain('Kung may Connect account ang +63******4567, nagpadala kami rito ng bagong code.');
    await t.services.afterAnswer.idle();
    const pinPage = await browser.follow(await browser.submit(resent, { otp: await latestOtp(t.app, MOBILE), action: 'verify' }));
    expectPage(pinPage, 200);
    expect(expectFilipino(pinPage)).toContain('Pumili ng bagong PIN');
    const weak = await browser.submit(pinPage, { pin: '1212', pin_confirmation: '1212', action: 'change' });
    expectPage(weak, 400);
    expectFilipino(weak);
    expect(errorText(weak.body)).toBe('Masyadong madaling hulaan ang PIN na iyan: inuulit nito ang parehong mga digit, gaya ng 1111 o 1212. Pumili ng ibang PIN.');
    const after = await browser.follow(await browser.submit(weak, { pin: '590316', pin_confirmation: '590316', action: 'change' }));
    expectPage(after, 200);
    expect(expectFilipino(after)).toContain('Napalitan na ang iyong PIN, at na-sign out ka sa lahat ng device. Mag-log in gamit ang bago mong PIN.');
  });

  it('ui_locales sticks to the consent page', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const browser = new Browser(t.app);
    await logIn(browser, authorizeParams(client));
    const other = await t.createClient({ name: 'Sari-Sari Pay', redirectUri: 'https://pay.example/cb' });
    const res = await browser.get(authorizeUrl(authorizeParams({ id: other.id, redirectUri: 'https://pay.example/cb' }, { ui_locales: 'fil' })));
    const location = expectSeeOther(res, /^\/consent\?request=/);
    const page = await browser.follow(res);
    expectPage(page, 200);
    const text = expectFilipino(page);
    expect(text).toContain('Payagan ang Sari-Sari Pay?');
    expect(text).toContain('Naka-sign in ka bilang +63******4567 . Para sa app na ito lang ang iyong sagot.');
    expect(page.body).toMatch(/<button[^>]*value="approve"[^>]*>Payagan<\/button>/);
    expectFilipino(await browser.get(location));
    expectClientRedirect(await approveIfAsked(browser, res), 'https://pay.example/cb');
  });

  it('a PIN lock says the wait from now, in minutes, in either language; never a clock time', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const lockedPage = async (options: { uiLocales?: string; acceptLanguage?: string }) => {
      const browser = new Browser(t.app, options.acceptLanguage ? { acceptLanguage: options.acceptLanguage } : {});
      const { page } = await startLogin(browser, authorizeParams(client, { user_id: MOBILE, ui_locales: options.uiLocales }));
      return browser.submit(page, { pin: '975310', action: 'login' });
    };
    for (let i = 0; i < 5; i++) await lockedPage({});
    t.clock.advance(3 * 60 + 10);
    const fil = await lockedPage({ uiLocales: 'fil' });
    expectFilipino(fil);
    expect(errorText(fil.body)).toBe(
      'Masyadong maraming maling PIN. Para sa iyong seguridad, naka-lock ang pag-log in gamit ang PIN para sa numerong ito. Subukang muli pagkalipas ng 12 minuto.',
    );
    const en = await lockedPage({ acceptLanguage: 'en' });
    expectLanguage(en, 'en', 'Accept-Language');
    expect(errorText(en.body)).toBe('Too many wrong PINs. For your security, PIN login for this number is locked. Try again in 12 minutes.');
    for (const res of [fil, en]) expect(pageText(res.body)).not.toMatch(/\b\d{1,2}:\d{2}\b|UTC|\b20\d\d-\d\d-\d\d/);
  });

  it('the error pages of /authorize follow ui_locales, else Accept-Language', async () => {
    const { t, client } = await appWithClient();
    const unknown = await t.app.inject({ method: 'GET', url: authorizeUrl({ client_id: 'cid_sandbox_nobody', redirect_uri: 'https://acme.example/callback', ui_locales: 'fil' }) });
    expectPage(unknown, 400);
    expect(expectFilipino(unknown)).toContain('Hindi kilala ang application na nagpadala sa iyo rito.');
    expect(pageText(unknown.body)).toContain('Hindi magagamit ang link na ito');

    const mismatch = await t.app.inject({
      method: 'GET',
      url: authorizeUrl({ client_id: client.id, redirect_uri: 'https://evil.example/cb' }),
      headers: { 'accept-language': 'fil-PH' },
    });
    expectPage(mismatch, 400);
    expect(expectFilipino(mismatch, 'Accept-Language')).toContain('Hindi ito ang return address na nakarehistro para sa Acme.');

    const english = await t.app.inject({ method: 'GET', url: authorizeUrl({ client_id: 'cid_sandbox_nobody', redirect_uri: 'https://acme.example/callback', ui_locales: 'en' }), headers: { 'accept-language': 'fil' } });
    expectLanguage(english, 'en', 'ui_locales');
    expect(pageText(english.body)).toContain('The application that sent you here is not known.');
  });

  it('pages no journey can be read for follow Accept-Language: an expired link, a stale form, a refused request, a busy server', async () => {
    const queue = testPinCheckQueue({ concurrency: 1, queueLimit: 0 });
    const { t, client } = await appWithClient({ pinChecks: queue });
    await addCustomer(t);
    const browser = new Browser(t.app, { acceptLanguage: 'fil-PH,fil;q=0.9,en;q=0.5' });
    const { page, requestId } = await startLogin(browser, authorizeParams(client));
    expectFilipino(page, 'Accept-Language');

    const expired = await browser.get('/login?request=no-such-journey-at-all-aaaaaaaaaaaaaaaaaaaaaaa');
    expectPage(expired, 400);
    expect(expectFilipino(expired, 'Accept-Language')).toContain('Nag-expire na ang pag-sign in na ito');

    const stale = await browser.post(formAction(page.body), { csrf_token: 'not-the-token', mobile: MOBILE, pin: PIN, action: 'login' });
    expectPage(stale, 403);
    expect(expectFilipino(stale, 'Accept-Language')).toContain('Nag-expire na ang form na ito');

    const refused = await browser.get(`/login?request=${requestId}%00`);
    expectPage(refused, 400);
    const text = expectFilipino(refused, 'Accept-Language');
    expect(text).toContain('Hindi magagamit ang request na ito');
    // The technical details stay as they are, marked as English.
    expect(refused.body).toMatch(/Mga detalye: <code lang="en">request contains a control character<\/code>/);

    const place = queue.reserve();
    try {
      const busy = await browser.post(formAction(page.body), { csrf_token: csrfToken(page.body), mobile: MOBILE, pin: PIN, action: 'login' });
      expectPage(busy, 503);
      expect(expectFilipino(busy, 'Accept-Language')).toContain('Pakisubukang muli sa ilang sandali');
    } finally {
      place.release();
    }
  });

  it('a journey without ui_locales follows each request\'s Accept-Language', async () => {
    const { t, client } = await appWithClient();
    const english = new Browser(t.app, { acceptLanguage: 'en-PH' });
    const { page, requestId } = await startLogin(english, authorizeParams(client, { user_id: OTHER_MOBILE }));
    expectLanguage(page, 'en', 'Accept-Language');
    // The same browser (its cookies), now asking for Filipino.
    const filipino = new Browser(t.app, { acceptLanguage: 'tl' });
    for (const [name, value] of english.cookies) filipino.cookies.set(name, value);
    const again = await filipino.get(`/register?request=${requestId}`);
    expectPage(again, 200);
    expectFilipino(again, 'Accept-Language');
  });
});
