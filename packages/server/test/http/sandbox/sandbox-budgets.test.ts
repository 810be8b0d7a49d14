import { describe, expect, it } from 'vitest';
import { build, T0 } from '../../helpers/build.js';
import {
  addCustomers,
  authorizeParams,
  Browser,
  enterOtp,
  expectClientRedirect,
  expectPage,
  expectSeeOther,
  nthMobile,
  outbox,
  pageText,
  PIN,
  startLogin,
  submitCredentials,
} from '../../helpers/customer-flow.js';

/**
 * The send budgets as configured by default (docs/hosted-login.md): the
 * sandbox leaves room for a consumer's test suite logging in all day from
 * one address; production allows 20 one-time PINs per address and hour.
 */

const ONE_ADDRESS = '192.0.2.10';
/** One-time PINs each of these mobiles receives: within production's budget per mobile (5 per 15 minutes; the sandbox's is 1000). */
const PER_MOBILE = 5;

describe('send budgets with the default configuration', () => {
  // Fifty logins, each with a scrypt PIN check: room for a machine busy with the other test files (100 spawned commands may run beside).
  it('sandbox: 50 complete logins from one client address all succeed', { timeout: 180_000 }, async () => {
    const t = await build();
    const client = await t.createClient();
    const logins = 50;
    const mobiles = Array.from({ length: logins / PER_MOBILE }, (_, i) => nthMobile(i));
    await addCustomers(t, mobiles);
    for (let i = 0; i < logins; i++) {
      const mobile = mobiles[i % mobiles.length] as string;
      // A new browser each time, as a test suite's fresh browser context: every login sends a code.
      const browser = new Browser(t.app, { remoteAddress: ONE_ADDRESS });
      const { page } = await startLogin(browser, authorizeParams(client, { user_id: mobile }));
      const params = expectClientRedirect(await enterOtp(browser, await submitCredentials(browser, page, mobile, PIN), mobile));
      expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
    for (const mobile of mobiles) expect(await outbox(t.app, mobile)).toHaveLength(PER_MOBILE);
  });

  it('production: the 21st one-time PIN from one address within an hour is refused with "too many codes"; an hour later it is sent', { timeout: 180_000 }, async () => {
    const t = await build({ environment: 'production' });
    const client = await t.createClient();
    const mobiles = Array.from({ length: 6 }, (_, i) => nthMobile(i));
    await addCustomers(t, mobiles);
    const signIn = async (mobile: string) => {
      const browser = new Browser(t.app, { remoteAddress: ONE_ADDRESS });
      const { page } = await startLogin(browser, authorizeParams(client, { user_id: mobile }));
      return { browser, res: await browser.submit(page, { mobile, pin: PIN, action: 'login' }) };
    };
    // 20 codes, 4 to each of 5 mobiles (within each mobile's own budget), spread over the hour.
    for (let i = 0; i < 20; i++) {
      const { res } = await signIn(mobiles[i % 5] as string);
      expectSeeOther(res, /^\/login\/otp\?request=/);
      t.clock.advance(170);
    }
    expect(t.clock.nowSeconds()).toBe(T0 + 3400);

    // The 21st, for a mobile that has had none: refused for the address, 200 s before the hour of the first is over.
    const { res } = await signIn(mobiles[5] as string);
    expectPage(res, 400);
    expect(pageText(res.body)).toContain('Too many codes were sent. Try again in 4 minutes.');

    // When the hour of the first code is over, codes are sent again.
    t.clock.advance(200);
    const { browser, res: later } = await signIn(mobiles[5] as string);
    expectSeeOther(later, /^\/login\/otp\?request=/);
    expectPage(await browser.follow(later), 200);
  });
});
