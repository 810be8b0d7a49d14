import { describe, expect, it } from 'vitest';
import { SmsDeliveryFailed, type SmsSender } from '../../../src/core/sms/sms-sender.js';
import { build } from '../../helpers/build.js';
import { addCustomer, authorizeParams, Browser, expectPage, expectSeeOther, nthMobile, pageText, PIN, startLogin } from '../../helpers/customer-flow.js';

/**
 * An SMS gateway that takes no code is an outage of its own
 * (docs/operator-guide.md, "When a dependency fails"): one `error` line when
 * it starts, with the cause, however many customers it fails; never a stack.
 */
describe('the log of an SMS gateway outage', () => {
  it('three sign-ins whose code the gateway refuses: one "SMS gateway unreachable" line with the cause, no stack', async () => {
    let refusing = true;
    const sent: string[] = [];
    const gateway: SmsSender = {
      async send(message) {
        if (refusing) throw new SmsDeliveryFailed('gateway timed out');
        sent.push(message.to);
      },
    };
    const t = await build({ sms: gateway, captureLogs: true });
    const client = await t.createClient();
    for (let i = 0; i < 3; i++) {
      const mobile = nthMobile(i);
      await addCustomer(t, mobile, PIN);
      const browser = new Browser(t.app);
      const { page } = await startLogin(browser, authorizeParams(client, { user_id: mobile }));
      const res = await browser.submit(page, { mobile, pin: PIN, action: 'login' });
      expectSeeOther(res, /^\/login\/otp\?request=/);
      // The customer is told no code went out (docs/operator-guide.md, "The SMS gateway").
      const otp = await browser.follow(res);
      expectPage(otp, 400);
      expect(pageText(otp.body)).toContain('We could not send the code');
    }

    const lines = t.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
    const outage = lines.filter((line) => line.dependency === 'sms_gateway');
    expect(outage).toMatchObject([{ level: 50, outage: 'started', msg: 'SMS gateway unreachable' }]);
    expect(outage[0]?.cause).toBe('SmsDeliveryFailed: SMS not delivered: gateway timed out');
    expect(t.logs.join('\n')).not.toMatch(/"stack"|\bat \S+ \(/);

    // The gateway takes codes again: the next sign-in gets its code.
    refusing = false;
    const mobile = nthMobile(3);
    await addCustomer(t, mobile, PIN);
    const browser = new Browser(t.app);
    const { page } = await startLogin(browser, authorizeParams(client, { user_id: mobile }));
    expectSeeOther(await browser.submit(page, { mobile, pin: PIN, action: 'login' }), /^\/login\/otp\?request=/);
    expect(sent).toEqual([mobile]);
  });

  it('a gateway refusing one message (4xx) is no outage: no outage line, one line for that message; a 5xx answer is one', async () => {
    let answer: 'refuse' | 'fail' = 'refuse';
    const gateway: SmsSender = {
      async send() {
        if (answer === 'refuse') throw new SmsDeliveryFailed('gateway answered HTTP 400', { refused: true });
        throw new SmsDeliveryFailed('gateway answered HTTP 503');
      },
    };
    const t = await build({ sms: gateway, captureLogs: true });
    const client = await t.createClient();
    const signIn = async (i: number) => {
      const mobile = nthMobile(i);
      await addCustomer(t, mobile, PIN);
      const browser = new Browser(t.app);
      const { page } = await startLogin(browser, authorizeParams(client, { user_id: mobile }));
      const res = await browser.submit(page, { mobile, pin: PIN, action: 'login' });
      expectSeeOther(res, /^\/login\/otp\?request=/);
      const otp = await browser.follow(res);
      expect(pageText(otp.body)).toContain('We could not send the code');
    };
    const outageLines = () => t.logs.filter((line) => line.includes('"dependency":"sms_gateway"'));

    await signIn(0);
    expect(outageLines()).toEqual([]);
    const refusals = t.logs.filter((line) => line.includes('the SMS gateway refused it'));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toContain('gateway answered HTTP 400');

    answer = 'fail';
    await signIn(1);
    expect(outageLines()).toHaveLength(1);
    expect(outageLines()[0]).toContain('gateway answered HTTP 503');
  });
});
