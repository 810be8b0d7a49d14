import { describe, expect, it } from 'vitest';
import { build } from '../../helpers/build.js';
import { addCustomer, authorizeParams, Browser, enterOtp, expectPage, MOBILE, pageText, PIN, startLogin, submitCredentials } from '../../helpers/customer-flow.js';

/**
 * A locked account's pages say whose customer support to contact: that of
 * the service the customer came from, the client (docs/journey.md, "PIN guessing").
 */

describe('a locked account names the support of the client the customer came from', () => {
  it('the login page of an account locked by an operator, in English and Filipino, the name escaped', async () => {
    const t = await build();
    const client = await t.createClient({ name: 'Kape & Co' });
    const customer = await addCustomer(t);
    await t.storage.customers.lockCustomer(customer.profileId, t.clock.nowSeconds());
    for (const [uiLocales, sentence] of [
      [undefined, 'This account is locked. Please contact the customer support of Kape & Co.'],
      ['fil', 'Naka-lock ang account na ito. Makipag-ugnayan sa customer support ng Kape & Co.'],
    ] as const) {
      const browser = new Browser(t.app);
      const { page } = await startLogin(browser, authorizeParams(client, { ui_locales: uiLocales }));
      const res = await browser.submit(page, { mobile: MOBILE, pin: PIN, action: 'login' });
      expectPage(res, 400);
      expect(pageText(res.body)).toContain(sentence);
      expect(res.body).toContain('Kape &amp; Co');
    }
  });

  it('an account locked during its sign-in: the dead end names the client too', async () => {
    const t = await build();
    const client = await t.createClient({ name: 'Kape & Co' });
    const customer = await addCustomer(t);
    const browser = new Browser(t.app);
    const { page } = await startLogin(browser, authorizeParams(client));
    const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
    await t.storage.customers.lockCustomer(customer.profileId, t.clock.nowSeconds());
    const res = await enterOtp(browser, otpPage, MOBILE);
    expectPage(res, 400);
    expect(pageText(res.body)).toMatch(/This account cannot sign in right now\. Please contact the customer support of Kape & Co ?\./);
    expect(res.body).toContain('<strong>Kape &amp; Co</strong>');
  });
});
