import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhookSender } from '../../../src/sms/webhook-sender.js';
import { build, type TestApp } from '../../helpers/build.js';
import {
  addCustomer,
  addCustomers,
  authorizeParams,
  Browser,
  expectPage,
  expectSeeOther,
  MOBILE,
  nthMobile,
  outbox,
  pageText,
  PIN,
  startLogin,
} from '../../helpers/customer-flow.js';

/**
 * The SMS budgets and destinations of docs/operator-guide.md ("SMS
 * budgets", "The SMS gateway"): the whole deployment's budget, the allowed
 * countries, numbers of no country, and a gateway that fails.
 */

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

async function audited(t: TestApp, type: 'sms.send_failed' | 'sms.budget_spent') {
  return t.storage.audit.listAuditEvents({ type, limit: 100 });
}

/** Signs in `mobile` (a registered customer) from a new browser; the response to the login form. */
async function signIn(t: TestApp, client: Awaited<ReturnType<TestApp['createClient']>>, mobile: string, address = '192.0.2.10') {
  const browser = new Browser(t.app, { remoteAddress: address });
  const { page } = await startLogin(browser, authorizeParams(client));
  return { browser, res: await browser.submit(page, { mobile, pin: PIN, action: 'login' }) };
}

/** Opens the registration page of a new journey and posts it for `mobile`. */
async function register(t: TestApp, client: Awaited<ReturnType<TestApp['createClient']>>, mobile: string) {
  const browser = new Browser(t.app);
  const { requestId } = await startLogin(browser, authorizeParams(client));
  const page = await browser.open(`/register?request=${requestId}`);
  expectPage(page, 200);
  return browser.submit(page, { mobile, pin: PIN, pin_confirmation: PIN, action: 'register' });
}

describe('CONNECT_SMS_LIMIT_GLOBAL', () => {
  it('past the whole deployment\'s budget no code is sent to anyone: a clear page, an audit event and a log line without the mobile', async () => {
    const t = await build({ env: { CONNECT_SMS_LIMIT_GLOBAL: '3' }, captureLogs: true });
    const client = await t.createClient();
    const mobiles = Array.from({ length: 4 }, (_, i) => nthMobile(i));
    await addCustomers(t, mobiles);
    // Three codes, each to another mobile from another address: within their own budgets.
    for (let i = 0; i < 3; i++) expectSeeOther((await signIn(t, client, mobiles[i] as string, `192.0.2.${20 + i}`)).res, /^\/login\/otp\?request=/);

    const { res } = await signIn(t, client, mobiles[3] as string, '192.0.2.99');
    expectPage(res, 400);
    expect(pageText(res.body)).toContain('We cannot send codes right now. Try again later.');
    expect(await outbox(t.app, mobiles[3] as string)).toHaveLength(0);
    expect(await audited(t, 'sms.budget_spent')).toMatchObject([
      { actor: 'ip:192.0.2.99', subject: null, outcome: 'failure', details: { client_id: client.id, budget: 'global' } },
    ]);
    const lines = t.logs.filter((line) => line.includes('CONNECT_SMS_LIMIT_GLOBAL'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain((mobiles[3] as string).slice(1));

    // An hour after the first code the budget has room again.
    t.clock.advance(3600);
    expectSeeOther((await signIn(t, client, mobiles[3] as string, '192.0.2.99')).res, /^\/login\/otp\?request=/);
  });

  it('the sandbox has no global budget by default', async () => {
    const t = await build();
    expect(t.services.runtime.config.smsLimitGlobal).toBeUndefined();
  });
});

describe('CONNECT_SMS_COUNTRIES and numbers of no country', () => {
  it('a mobile of a country not listed can neither register nor sign in: a clear message, nothing sent or counted', async () => {
    const t = await build({ env: { CONNECT_SMS_COUNTRIES: 'SG' } });
    const client = await t.createClient();
    // Registered before the list was set.
    await addCustomer(t, MOBILE);
    const { res } = await signIn(t, client, MOBILE);
    expectPage(res, 400);
    expect(pageText(res.body)).toContain('We cannot send codes to this mobile number.');
    const refused = await register(t, client, '+639181234321');
    expectPage(refused, 400);
    expect(pageText(refused.body)).toContain('We cannot send codes to this mobile number.');
    expect(await outbox(t.app, MOBILE)).toHaveLength(0);
    expect(await outbox(t.app, '+639181234321')).toHaveLength(0);
    // A listed country's mobile registers.
    expectSeeOther(await register(t, client, '+6591234567'), /^\/login\/otp\?request=/);
  });

  it.each([
    ['an Iridium satellite phone', '+881631234567'],
    ['an international network number', '+8823123456789'],
  ])('%s cannot register, with no list of countries', async (_why, mobile) => {
    const t = await build();
    const client = await t.createClient();
    const res = await register(t, client, mobile);
    expectPage(res, 400);
    expect(pageText(res.body)).toContain('We cannot send codes to this mobile number.');
    expect(await outbox(t.app, mobile)).toHaveLength(0);
  });

  it.each([
    ['a US premium-rate number', '+19005550123'],
    ['a French shared-cost number', '+33810123456'],
  ])('%s is no mobile number', async (_why, mobile) => {
    const t = await build();
    const client = await t.createClient();
    const res = await register(t, client, mobile);
    expectPage(res, 400);
    expect(pageText(res.body)).not.toContain('We cannot send codes');
  });
});

describe('the SMS gateway fails', () => {
  /** A gateway that answers every call with `status`; counts the calls. */
  async function gateway(status: number): Promise<{ url: string; calls: () => number }> {
    let calls = 0;
    const server = createServer((request, response) => {
      calls++;
      request.resume();
      request.on('end', () => response.writeHead(status).end());
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/send`, calls: () => calls };
  }

  it.each([500, 400])('gateway answers %i: "we could not send the code, try again" (never a 500 page), logged without the code or the mobile, audited', async (status) => {
    const down = await gateway(status);
    const sms = createWebhookSender({ url: down.url, secret: 's', backoffMs: () => 0 });
    const t = await build({ sms, captureLogs: true });
    const client = await t.createClient();
    const customer = await addCustomer(t, MOBILE);
    const { browser, res } = await signIn(t, client, MOBILE);
    expectSeeOther(res, /^\/login\/otp\?request=/);
    const page = await browser.follow(res);
    expectPage(page, 400);
    expect(pageText(page.body)).toContain('We could not send the code. Try again: ask for a new code.');
    expect(down.calls()).toBe(status === 500 ? 3 : 1);
    expect(await audited(t, 'sms.send_failed')).toMatchObject([
      { actor: 'ip:192.0.2.10', subject: customer.profileId, outcome: 'failure', details: { client_id: client.id, reason: `gateway answered HTTP ${status}` } },
    ]);
    // A 400 refuses this one message: one line for it. A 500 is the gateway's outage: no line per code, one for the outage.
    const lines = t.logs.filter((line) => line.includes('one-time PIN not sent'));
    const outage = t.logs.filter((line) => line.includes('"dependency":"sms_gateway"'));
    expect(lines).toHaveLength(status === 400 ? 1 : 0);
    expect(outage).toHaveLength(status === 400 ? 0 : 1);
    for (const line of [...lines, ...outage]) {
      expect(line).not.toContain(MOBILE.slice(1));
      expect(line).not.toMatch(/\b\d{6}\b/);
    }
    if (status === 400) expect(lines[0]).toContain('+63******4567');

    // "Send a new code" fails the same way, as a page.
    const again = await browser.submit(page, { action: 'resend' });
    expect(again.statusCode).toBeLessThan(500);
    expect(pageText(again.body)).toContain('We could not send the code. Try again: ask for a new code.');
    expect(await audited(t, 'sms.send_failed')).toHaveLength(2);
  });

  it('an unreachable gateway is a page too', async () => {
    const down = await gateway(500);
    const url = down.url;
    await new Promise((resolve) => servers.pop()?.close(resolve));
    const t = await build({ sms: createWebhookSender({ url, secret: 's', retries: 0 }) });
    const client = await t.createClient();
    await addCustomer(t, MOBILE);
    const { browser, res } = await signIn(t, client, MOBILE);
    const page = await browser.follow(res);
    expectPage(page, 400);
    expect(pageText(page.body)).toContain('We could not send the code.');
    expect(await audited(t, 'sms.send_failed')).toMatchObject([{ details: { reason: 'gateway unreachable' } }]);
  });
});
