import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedClock, startServer, type RunningServer } from '@connect-auth/server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTestsRun, launchChromium } from '../../../packages/server/test/helpers/chromium.js';
import { createConsumerApp } from '../src/consumer-app.js';
import { startPlatformApi } from '../src/platform-api.js';

/*
 * The demo shop's step-up with a passkey, in Debian's Chromium with a
 * virtual authenticator (the DevTools protocol's WebAuthn domain), on one
 * injected clock and a passkey hold of an hour: the customer links with
 * PIN + SMS and creates a passkey when offered; "Send a payout" is answered
 * by the platform API with the RFC 9470 challenge (phr within 300 s); the
 * shop sends the customer back through Connect with acr_values=phr and
 * max_age=300. While the passkey is held its sign-in cannot meet phr and
 * comes back unmet; once the hold is over the passkey signs in with phr and
 * no SMS, and the shop sends the payout again, which the API accepts.
 */

const STEP_TIMEOUT_MS = 10_000;
const HOLD_SECONDS = 3600;
const clock = fixedClock(Math.floor(Date.now() / 1000));

describe.skipIf(!browserTestsRun('the demo shop step-up with a passkey in Chromium'))('the demo shop step-up with a passkey in Chromium', () => {
  let dataDir: string | undefined;
  let connect: RunningServer | undefined;
  let shop: Server | undefined;
  let api: Awaited<ReturnType<typeof startPlatformApi>> | undefined;
  let shopUrl = '';
  let browser: Browser | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'connect-step-up-passkey-'));
    shop = createServer();
    await new Promise<void>((resolve) => shop?.listen(0, '127.0.0.1', resolve));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
    // The sandbox serves at http://localhost:<port>: a relying party ID must be a name, not an address.
    connect = await startServer({
      env: { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent', CONNECT_PASSKEY_HOLD: String(HOLD_SECONDS) },
      seedDemo: true,
      demoRedirectUri: `${shopUrl}/callback`,
      print: () => {},
      clock,
    });
    const demo = connect.demo;
    if (!demo) throw new Error('no demo credentials');
    api = await startPlatformApi({ connect: { authUrl: connect.urls.authUrl, ...demo.resourceServer }, port: 0, clock });
    const app = createConsumerApp({
      connect: { authUrl: connect.urls.authUrl, baseUrl: connect.urls.baseUrl, clientId: demo.clientId, clientSecret: demo.clientSecret },
      redirectUri: `${shopUrl}/callback`,
      clock,
      profileUrl: `${api.url}/customer/profile`,
      payoutsUrl: `${api.url}/payouts`,
    });
    shop.on('request', app.handle);
    browser = await launchChromium();
  }, 40_000);

  afterAll(async () => {
    await browser?.close().catch(() => {});
    shop?.closeAllConnections();
    await new Promise<void>((resolve) => (shop ? shop.close(() => resolve()) : resolve()));
    await api?.close();
    await connect?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 20_000);

  async function messagesTo(mobile: string): Promise<Array<{ body: string }>> {
    const response = await fetch(`${connect?.address}/sandbox/messages?to=${encodeURIComponent(mobile)}`, { signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
    return ((await response.json()) as { messages: Array<{ body: string }> }).messages;
  }

  it('links with PIN + SMS and a new passkey; a payout challenged for phr: unmet while the passkey is held, sent after a passkey sign-in once the hold is over, with no second SMS', async () => {
    if (!browser || !connect?.demo) throw new Error('set-up failed');
    const { customer } = connect.demo;
    const authOrigin = new URL(connect.urls.authUrl).origin;
    const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    try {
      await page.goto(shopUrl);
      await page.getByRole('button', { name: 'Link my account' }).click();
      await page.waitForURL((url) => url.origin === authOrigin && url.pathname === '/login');
      await page.getByLabel('Mobile number').fill(customer.mobile);
      await page.getByLabel('PIN', { exact: true }).fill(customer.pin);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL((url) => url.pathname === '/login/otp');
      const [code] = (await messagesTo(customer.mobile)).map((m) => /\b(\d{6})\b/.exec(m.body)?.[1]);
      await page.getByLabel('One-time code').fill(code ?? '');
      await page.getByRole('button', { name: 'Verify' }).click();

      // The offer after a PIN + SMS sign-in: the passkey is created, then on to the shop.
      await page.getByRole('button', { name: 'Create a passkey' }).click();
      await page.waitForURL(`${shopUrl}/account`);
      expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1);
      const smsBefore = (await messagesTo(customer.mobile)).length;

      // The payout: challenged for phr within 300 s, so back through Connect, which asks for a passkey.
      const stepUp = async () => {
        await page.getByRole('button', { name: 'Send a payout' }).click();
        await page.waitForURL((url) => url.origin === authOrigin && url.pathname === '/login');
        await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
        await page.waitForURL(`${shopUrl}/account`);
        return page.locator('#payout-result').innerText();
      };
      // Held: the passkey signs in, but not phishing-resistantly; Connect says so and the shop sends nothing.
      clock.advance(HOLD_SECONDS - 1);
      expect(await stepUp()).toBe('The payout needs a sign-in with a passkey, and you could not use one.');
      // Out of its hold: phr, and the payout goes through.
      clock.advance(1);
      const payout = JSON.parse(await stepUp()) as Record<string, unknown>;
      expect(payout).toMatchObject({ payout: 'accepted', profileId: customer.profileId, acr: 'phr', authTime: clock.nowSeconds() });
      // No SMS for either passkey sign-in.
      expect(await messagesTo(customer.mobile)).toHaveLength(smsBefore);
    } finally {
      await context.close();
    }
  });
});
