import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACR_PIN_SMS, fixedClock, startServer, type RunningServer } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from '../../../packages/client/test/support/browser-session.js';
import { createConsumerApp } from '../src/consumer-app.js';
import { startPlatformApi } from '../src/platform-api.js';

/*
 * The demo shop's step-up, over real HTTP against a real Connect and the
 * example platform API, all on one injected clock: "Send a payout" is
 * answered with the RFC 9470 challenge, and the shop sends the customer
 * back through /authorize with its acr_values and max_age, then sends the
 * payout again from the callback, once.
 */

const clock = fixedClock(Math.floor(Date.now() / 1000));

describe("the demo shop's step-up", () => {
  let dataDir: string | undefined;
  let connect: RunningServer | undefined;
  let shop: Server | undefined;
  let shopUrl = '';
  let handler: (request: IncomingMessage, response: ServerResponse) => void = () => {};
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'connect-step-up-'));
    shop = createServer((request, response) => handler(request, response));
    await new Promise<void>((resolve) => shop?.listen(0, '127.0.0.1', resolve));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
    connect = await startServer({ env: { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent' }, seedDemo: true, demoRedirectUri: `${shopUrl}/callback`, print: () => {}, clock });
  }, 30_000);

  afterAll(async () => {
    for (const close of closers) await close();
    shop?.closeAllConnections();
    await new Promise<void>((resolve) => (shop ? shop.close(() => resolve()) : resolve()));
    await connect?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** A shop whose payouts go to a platform API requiring `payoutSignIn` (default: phr within 300 s). */
  async function openShop(payoutSignIn?: { acr: string[]; maxAge: number }) {
    const demo = connect?.demo;
    if (!connect || !demo) throw new Error('set-up failed');
    const api = await startPlatformApi({ connect: { authUrl: connect.urls.authUrl, ...demo.resourceServer }, port: 0, clock, ...(payoutSignIn ? { payoutSignIn } : {}) });
    closers.push(() => api.close());
    const app = createConsumerApp({
      connect: { authUrl: connect.urls.authUrl, baseUrl: connect.urls.baseUrl, clientId: demo.clientId, clientSecret: demo.clientSecret },
      redirectUri: `${shopUrl}/callback`,
      clock,
      profileUrl: `${api.url}/customer/profile`,
      payoutsUrl: `${api.url}/payouts`,
    });
    handler = app.handle;
    let cookie = '';
    const browser = new BrowserSession(connect.urls.authUrl);
    const visit = async (path: string, method = 'GET') => {
      const response = await fetch(new URL(path, shopUrl), { method, redirect: 'manual', headers: cookie ? { cookie } : {}, signal: AbortSignal.timeout(10_000) });
      const set = response.headers.get('set-cookie');
      if (set) cookie = set.split(';')[0] as string;
      return response;
    };
    /** Follows an authorization URL through Connect (signing in when asked) and back to the shop's callback. */
    const throughConnect = async (authorizeUrl: string, choice: 'login' | 'no_passkey' = 'login') => {
      const callback = new URL(await browser.authorize(authorizeUrl, demo.customer, choice));
      expect(callback.origin).toBe(shopUrl);
      return visit(callback.pathname + callback.search);
    };
    const link = async () => {
      const started = await visit('/link', 'POST');
      expect(started.status).toBe(303);
      const back = await throughConnect(started.headers.get('location') as string);
      expect(back.headers.get('location')).toBe('/account');
    };
    const payoutResult = async () =>
      /<[a-z]+ id="payout-result"[^>]*>([^<]*)</.exec(await (await visit('/account')).text())?.[1]?.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
    return { visit, throughConnect, link, payoutResult };
  }

  it('a payout challenged for phr within 300 s sends the customer through /authorize with acr_values=phr and max_age=300; without a passkey, no payout and the shop says why', async () => {
    const customer = await openShop();
    await customer.link();
    const answer = await customer.visit('/payout', 'POST');
    expect(answer.status).toBe(303);
    const authorize = new URL(answer.headers.get('location') as string);
    expect(authorize.origin + authorize.pathname).toBe(`${connect?.urls.authUrl}/authorize`);
    expect(authorize.searchParams.get('acr_values')).toBe('phr');
    expect(authorize.searchParams.get('max_age')).toBe('300');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    // Connect offers no PIN sign-in for phr: "I can't use a passkey" comes back as unmet_authentication_requirements,
    // and the shop says so instead of sending the payout or looping.
    const back = await customer.throughConnect(authorize.href, 'no_passkey');
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe('/account');
    expect(await customer.payoutResult()).toBe('The payout needs a sign-in with a passkey, and you could not use one.');
  }, 60_000);

  it('a step-up the customer abandons sends no payout later: a plain "Link my account" afterwards only links', async () => {
    const customer = await openShop();
    await customer.link();
    const challenged = await customer.visit('/payout', 'POST');
    expect(new URL(challenged.headers.get('location') as string).searchParams.get('acr_values')).toBe('phr');
    // The customer never goes to Connect; later they link again, the plain way.
    const before = await customer.payoutResult();
    await customer.link();
    expect(await customer.payoutResult()).toBe(before);
  }, 60_000);

  it('a sign-in that meets the requirement pays out; 301 s later (injected clock) the shop steps up with max_age=300, and pays out after the new sign-in', async () => {
    const customer = await openShop({ acr: [ACR_PIN_SMS], maxAge: 300 });
    const signedIn = clock.nowSeconds();
    await customer.link();
    clock.set(signedIn + 300);
    expect((await customer.visit('/payout', 'POST')).headers.get('location')).toBe('/account');
    expect(await customer.payoutResult()).toContain('"payout": "accepted"');
    clock.set(signedIn + 301);
    const answer = await customer.visit('/payout', 'POST');
    const authorize = new URL(answer.headers.get('location') as string);
    expect(authorize.searchParams.get('acr_values')).toBe(ACR_PIN_SMS);
    expect(authorize.searchParams.get('max_age')).toBe('300');
    // The step-up asks for a new sign-in (prompt=login): a silent one would keep the session's auth_time.
    expect(authorize.searchParams.get('prompt')).toBe('login');
    const back = await customer.throughConnect(authorize.href);
    expect(back.headers.get('location')).toBe('/account');
    expect(await customer.payoutResult()).toContain('"payout": "accepted"');
  }, 60_000);
});
