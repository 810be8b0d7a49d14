import { describe, expect, it } from 'vitest';
import { build } from '../../helpers/build.js';
import {
  addCustomer,
  attribute,
  authorizeParams,
  Browser,
  expectPage,
  expectSeeOther,
  inputTag,
  outbox,
  pageText,
  PIN,
  startLogin,
  type Response,
} from '../../helpers/customer-flow.js';

/**
 * Mobile numbers as customers type them (docs/hosted-login.md, "Mobile
 * numbers"): the login, registration and "Forgot PIN?" pages read a number
 * of CONNECT_DEFAULT_COUNTRY without its country code, and every number
 * travels on as E.164.
 */

const PH_MOBILE = '+639171234567';
const SG_MOBILE = '+6591234567';

type Page = 'login' | 'register' | 'reset';

/** The text of the mobile field's error message, or `undefined`. */
function mobileError(body: string): string | undefined {
  const match = /<p class="field-error" id="mobile-error" role="alert">[\s\S]*?<span>([\s\S]*?)<\/span><\/p>/.exec(body);
  return match ? pageText(match[1] as string) : undefined;
}

/** The hint under the mobile field, as text. */
function mobileHint(body: string): string | undefined {
  return /<p class="hint" id="mobile-hint">([\s\S]*?)<\/p>/.exec(body)?.[1]?.replace(/<[^>]*>/g, '');
}

/** Builds an app (with `env`), a client, the customers, and a browser on `page` of a new sign-in. */
async function open(page: Page, env: Record<string, string>, customers: readonly string[]) {
  const t = await build({ env });
  const client = await t.createClient();
  for (const mobile of customers) await addCustomer(t, mobile, PIN);
  const browser = new Browser(t.app);
  const { page: login, requestId } = await startLogin(browser, authorizeParams(client));
  const form = page === 'login' ? login : await browser.open(`/${page === 'register' ? 'register' : 'login/reset'}?request=${requestId}`);
  expectPage(form, 200);
  return { t, browser, form, requestId };
}

function submit(browser: Browser, page: Page, form: Response, mobile: string): Promise<Response> {
  const fields: Record<Page, Record<string, string>> = {
    login: { mobile, pin: PIN, action: 'login' },
    register: { mobile, pin: PIN, pin_confirmation: PIN, action: 'register' },
    reset: { mobile, action: 'send' },
  };
  return browser.submit(form, fields[page]);
}

const NEXT: Record<Page, RegExp> = { login: /^\/login\/otp\?request=/, register: /^\/login\/otp\?request=/, reset: /^\/login\/reset\/otp\?request=/ };

describe('national numbers on the mobile fields', () => {
  // [page, settings, as typed, E.164 the code goes to]
  const ACCEPTED: ReadonlyArray<readonly [Page, Record<string, string>, string, string]> = [
    ['login', {}, '0917 123 4567', PH_MOBILE],
    ['login', {}, '09171234567', PH_MOBILE],
    ['login', {}, '+63 917 123 4567', PH_MOBILE],
    ['login', {}, '(0917) 123-4567', PH_MOBILE],
    ['login', { CONNECT_DEFAULT_COUNTRY: 'SG' }, '9123 4567', SG_MOBILE],
    ['login', { CONNECT_DEFAULT_COUNTRY: 'SG' }, '+63 917 123 4567', PH_MOBILE],
    ['register', {}, '0917 123 4567', PH_MOBILE],
    ['register', {}, '917-123-4567', PH_MOBILE],
    ['register', { CONNECT_DEFAULT_COUNTRY: 'SG', CONNECT_SMS_COUNTRIES: 'SG,PH' }, '9123 4567', SG_MOBILE],
    ['reset', {}, '0917 123 4567', PH_MOBILE],
    ['reset', { CONNECT_DEFAULT_COUNTRY: 'sg' }, '9123-4567', SG_MOBILE],
  ];

  it.each(ACCEPTED)('%s with %j: %j is %s, and the code goes there', async (page, env, typed, e164) => {
    // Registration is for a number without an account; login and reset for one with it.
    const { t, browser, form } = await open(page, env, page === 'register' ? [] : [e164]);
    const res = await submit(browser, page, form, typed);
    expectSeeOther(res, NEXT[page]);
    const next = await browser.follow(res);
    expectPage(next, 200);
    await t.services.afterAnswer.idle();
    const [sms] = await outbox(t.app, e164);
    expect(sms?.to).toBe(e164);
    expect(sms?.body).toMatch(/\b\d{6}\b/);
    if (page === 'register') {
      // The account is made with the E.164 number once the code is entered; until then nothing is stored.
      expect(await t.storage.customers.listCustomers()).toEqual([]);
    }
  });

  // [page, settings, as typed, the example the message shows]
  const REFUSED: ReadonlyArray<readonly [Page, Record<string, string>, string, string]> = [
    ['login', {}, '0917 123 456', '0917 123 4567'],
    ['login', {}, '0917 123 45678', '0917 123 4567'],
    ['login', {}, '02 8123 4567', '0917 123 4567'],
    ['login', {}, '0917+1234567', '0917 123 4567'],
    ['login', {}, 'abc', '0917 123 4567'],
    ['register', {}, '0917 ABC 4567', '0917 123 4567'],
    ['register', { CONNECT_DEFAULT_COUNTRY: 'SG' }, '0917 123 4567', '8123 4567'],
    ['reset', {}, '1234', '0917 123 4567'],
    ['reset', { CONNECT_DEFAULT_COUNTRY: 'SG' }, '6123 4567', '8123 4567'],
  ];

  it.each(REFUSED)('%s with %j: %j is refused on the field, with an example in the national form (%s)', async (page, env, typed, example) => {
    const { t, browser, form } = await open(page, env, []);
    const res = await submit(browser, page, form, typed);
    expectPage(res, 400);
    expect(mobileError(res.body)).toBe(`That is not a mobile number. Enter it as you would dial it, for example ${example}.`);
    // What was typed is shown back, to be corrected.
    expect(attribute(inputTag(res.body, 'mobile'), 'value')).toBe(typed);
    expect(await t.storage.customers.listCustomers()).toEqual([]);
  });

  it('a number of a country CONNECT_SMS_COUNTRIES does not list is refused as such, whatever the default country', async () => {
    const { browser, form } = await open('login', { CONNECT_SMS_COUNTRIES: 'PH' }, []);
    const res = await submit(browser, 'login', form, '+65 9123 4567');
    expectPage(res, 400);
    expect(mobileError(res.body)).toBe('We cannot send codes to this mobile number. Use a mobile number of a country this service supports.');
    // Shown back in E.164, as every number that could be read.
    expect(attribute(inputTag(res.body, 'mobile'), 'value')).toBe(SG_MOBILE);
  });

  it('with CONNECT_SMS_COUNTRIES=SG,MY and no default country set, national numbers are Singapore\'s', async () => {
    const { t, browser, form } = await open('login', { CONNECT_SMS_COUNTRIES: 'SG,MY' }, [SG_MOBILE]);
    expect(mobileHint(form.body)).toBe('For example 8123 4567, or with the country code, +65 8123 4567');
    expectSeeOther(await submit(browser, 'login', form, '9123 4567'), NEXT.login);
    expect((await outbox(t.app, SG_MOBILE))[0]?.to).toBe(SG_MOBILE);
  });

  it('a number shown back after another field\'s error is E.164', async () => {
    const { browser, form } = await open('login', {}, [PH_MOBILE]);
    const res = await browser.submit(form, { mobile: '0917 123 4567', pin: '12', action: 'login' });
    expectPage(res, 400);
    expect(attribute(inputTag(res.body, 'mobile'), 'value')).toBe(PH_MOBILE);
  });

  it('the hint shows the default country\'s example, in English and Filipino', async () => {
    const { form } = await open('login', {}, []);
    expect(mobileHint(form.body)).toBe('For example 0917 123 4567, or with the country code, +63 917 123 4567');
    const t = await build({ env: { CONNECT_DEFAULT_COUNTRY: 'SG' } });
    const client = await t.createClient();
    const { page } = await startLogin(new Browser(t.app), authorizeParams(client, { ui_locales: 'fil' }));
    expect(mobileHint(page.body)).toBe('Halimbawa 8123 4567, o kasama ang country code, +65 8123 4567');
  });

  it('user_id stays E.164: a national number there is refused', async () => {
    const t = await build();
    const client = await t.createClient();
    const res = await new Browser(t.app).get(`/authorize?${new URLSearchParams({ ...authorizeParams(client), user_id: '09171234567' } as Record<string, string>)}`);
    expect(res.statusCode).toBe(303);
    expect(new URL(String(res.headers.location)).searchParams.get('error')).toBe('invalid_request');
  });
});
