import { describe, expect, it } from 'vitest';
import { appWithCustomer } from '../../helpers/builders.js';
import {
  attribute,
  authorizeParams,
  Browser,
  expectPage,
  inputTag,
  MOBILE,
  OTHER_MOBILE,
  outbox,
  PIN,
  startLogin,
  submitCredentials,
} from '../../helpers/customer-flow.js';

/**
 * The one-time-PIN SMS (docs/hosted-login.md, "SMS delivery"): in the
 * journey's language, worded as the pages word it ("code"), its last line
 * the origin-bound `@<auth host> #<code>` that lets phones fill the code
 * into the page's `autocomplete="one-time-code"` field.
 */

const EN_LOGIN = (code: string) =>
  `${code} is your Connect code to link your account to Acme. It expires in 5 minutes. Never share this code with anyone, not even Connect staff.\n\n@auth.connect.test #${code}`;
const FIL_LOGIN = (code: string) =>
  `${code} ang iyong Connect code para i-link ang iyong account sa Acme. Mag-e-expire ito pagkalipas ng 5 minuto. Huwag itong ibigay kahit kanino, kahit sa staff ng Connect.\n\n@auth.connect.test #${code}`;
const EN_RESET = (code: string) =>
  `${code} is your Connect code to reset your PIN. It expires in 5 minutes. Never share this code with anyone, not even Connect staff. Did not ask for it? Ignore this message: your PIN stays the same.\n\n@auth.connect.test #${code}`;
const FIL_RESET = (code: string) =>
  `${code} ang iyong Connect code para i-reset ang iyong PIN. Mag-e-expire ito pagkalipas ng 5 minuto. Huwag itong ibigay kahit kanino, kahit sa staff ng Connect. Hindi mo ito hiningi? Huwag pansinin ang mensaheng ito: hindi magbabago ang iyong PIN.\n\n@auth.connect.test #${code}`;

/** The newest SMS to `mobile`, and its code (the first 6 digits). */
async function newestSms(app: Parameters<typeof outbox>[0], mobile: string): Promise<{ body: string; code: string }> {
  const [sms] = await outbox(app, mobile);
  const body = sms?.body ?? '';
  const code = /^(\d{6}) /.exec(body)?.[1] ?? '';
  expect(code).toMatch(/^\d{6}$/);
  return { body, code };
}

describe('the one-time-PIN SMS speaks the journey\'s language', () => {
  it.each([
    ['no language asked for', {}, undefined, EN_LOGIN],
    ['ui_locales=fil', { ui_locales: 'fil' }, undefined, FIL_LOGIN],
    ['ui_locales=tl-PH', { ui_locales: 'tl-PH' }, 'en', FIL_LOGIN],
    ['Accept-Language fil-PH', {}, 'fil-PH,en;q=0.5', FIL_LOGIN],
    ['ui_locales=en over Accept-Language fil', { ui_locales: 'en' }, 'fil', EN_LOGIN],
    ['a language the pages do not speak', { ui_locales: 'ja' }, 'ja', EN_LOGIN],
  ])('login, %s', async (_name, query, acceptLanguage, expected) => {
    const { t, client, browser } = await appWithCustomer({ browser: acceptLanguage === undefined ? {} : { acceptLanguage } });
    const { page } = await startLogin(browser, authorizeParams(client, query));
    const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
    const { body, code } = await newestSms(t.app, MOBILE);
    expect(body).toBe(expected(code));
    // The origin-bound line is the last line, and the page's field is the one phones fill.
    expect(body.split('\n').at(-1)).toBe(`@auth.connect.test #${code}`);
    expect(attribute(inputTag(otpPage.body, 'otp'), 'autocomplete')).toBe('one-time-code');
  });

  it('a new code ("Send a new code") and a registration\'s code are in the journey\'s language too', async () => {
    const { t, client, browser } = await appWithCustomer();
    const { page } = await startLogin(browser, authorizeParams(client, { ui_locales: 'fil' }));
    const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
    t.clock.advance(30);
    await browser.submit(otpPage, { action: 'resend' });
    const resent = await newestSms(t.app, MOBILE);
    expect(resent.body).toBe(FIL_LOGIN(resent.code));

    const other = new Browser(t.app);
    const { requestId } = await startLogin(other, authorizeParams(client, { ui_locales: 'fil' }));
    const registration = await other.open(`/register?request=${requestId}`);
    expectPage(registration, 200);
    await other.follow(await other.submit(registration, { mobile: OTHER_MOBILE, pin: PIN, pin_confirmation: PIN, action: 'register' }));
    const registered = await newestSms(t.app, OTHER_MOBILE);
    expect(registered.body).toBe(FIL_LOGIN(registered.code));
  });

  it.each([
    ['en', EN_RESET],
    ['fil', FIL_RESET],
  ])('a PIN reset\'s code, %s; the reset code\'s field is autocomplete="one-time-code"', async (locale, expected) => {
    const { t, client, browser } = await appWithCustomer();
    const { requestId } = await startLogin(browser, authorizeParams(client, { ui_locales: locale }));
    const reset = await browser.open(`/login/reset?request=${requestId}`);
    const codePage = await browser.follow(await browser.submit(reset, { mobile: MOBILE, action: 'send' }));
    expectPage(codePage, 200);
    expect(attribute(inputTag(codePage.body, 'otp'), 'autocomplete')).toBe('one-time-code');
    await t.services.afterAnswer.idle();
    const { body, code } = await newestSms(t.app, MOBILE);
    expect(body).toBe(expected(code));
  });

  it.each([
    ['https://auth.connect.test:8443', '@auth.connect.test'],
    ['https://login.example.ph:8443/connect', '@login.example.ph'],
    ['http://localhost:3000', '@localhost'],
  ])('the last line names the host of CONNECT_AUTH_URL %s without port or path: %s', async (authUrl, host) => {
    const { t, client, browser } = await appWithCustomer({ env: { CONNECT_AUTH_URL: authUrl } });
    const { page } = await startLogin(browser, authorizeParams(client));
    await submitCredentials(browser, page, MOBILE, PIN);
    const { body, code } = await newestSms(t.app, MOBILE);
    expect(body.endsWith(`\n\n${host} #${code}`)).toBe(true);
  });
});
