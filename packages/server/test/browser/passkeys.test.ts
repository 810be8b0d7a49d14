import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/http/server.js';
import { DEMO_SHOP_REDIRECT_URI } from '../../src/demo/seed-demo.js';
import { BROWSER_TEST_MS, browserTestsRun, expectFitsPhone, launchChromium, PHONE, takeScreenshot } from '../helpers/chromium.js';
import { exchangeCode as exchangeCodeAt } from './exchange-code.js';

/*
 * Passkeys on the hosted pages in Debian's Chromium, with a CDP virtual
 * authenticator standing in for the phone's fingerprint reader. The server
 * listens on a loopback address and its pages are opened at
 * http://localhost:<port> (browsers accept passkeys for localhost, never
 * for an IP address). The tests run in order: the first adds the passkey
 * the others use.
 */

const CONSUMER_ORIGIN = new URL(DEMO_SHOP_REDIRECT_URI).origin;
const STEP_TIMEOUT_MS = 8_000;

type Credential = Record<string, unknown>;

describe.skipIf(!browserTestsRun('passkeys in Chromium'))('passkeys in Chromium', { timeout: BROWSER_TEST_MS }, () => {
  let dataDir: string | undefined;
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  /** The passkey the first test added, as the virtual authenticator holds it. */
  let added: Credential | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'connect-passkeys-'));
    server = await startServer({
      env: { PORT: '0', HOST: '127.0.0.1', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent' },
      seedDemo: true,
      demoRedirectUri: DEMO_SHOP_REDIRECT_URI,
      print: () => {},
    });
    browser = await launchChromium();
  }, 30_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close().catch(() => {});
    await server?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 15_000);

  function running() {
    if (!server?.demo) throw new Error('the server did not start');
    return { server, demo: server.demo, authUrl: server.urls.authUrl };
  }

  /** A fresh browser profile with a virtual platform authenticator, and the consumer app answered in place. */
  async function openConsumer(options: { locale?: string; userVerified?: boolean; credential?: Credential } = {}) {
    if (!browser) throw new Error('the browser did not start');
    const context = await browser.newContext({ viewport: PHONE, ...(options.locale ? { locale: options.locale } : {}) });
    contexts.push(context);
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
    const callbacks: URL[] = [];
    await context.route(`${CONSUMER_ORIGIN}/**`, async (route) => {
      const url = new URL(route.request().url());
      if (url.pathname === '/callback') callbacks.push(url);
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Linked</title><h1>Linked</h1>' });
    });
    const page = await context.newPage();
    const cdp: CDPSession = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: options.userVerified ?? true },
    });
    if (options.credential) await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: options.credential as never });
    return {
      page,
      callbacks,
      async credentials(): Promise<Credential[]> {
        return (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials as unknown as Credential[];
      },
      async start(params: Record<string, string>) {
        const { authUrl } = running();
        await page.goto(`${authUrl}/authorize?${new URLSearchParams(params).toString()}`);
      },
    };
  }

  function authorize(extra: Record<string, string> = {}) {
    const { demo } = running();
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(12).toString('base64url');
    const params = {
      response_type: 'code',
      client_id: demo.clientId,
      redirect_uri: DEMO_SHOP_REDIRECT_URI,
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      ...extra,
    };
    return { verifier, state, params };
  }

  async function messagesTo(mobile: string): Promise<string[]> {
    const { authUrl } = running();
    const res = await fetch(`${authUrl}/sandbox/messages?to=${encodeURIComponent(mobile)}`, { signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
    expect(res.status).toBe(200);
    return ((await res.json()) as { messages: { body: string }[] }).messages.map((m) => m.body);
  }

  async function latestOtp(mobile: string): Promise<string> {
    const code = /\b(\d{6})\b/.exec((await messagesTo(mobile))[0] ?? '')?.[1];
    if (!code) throw new Error(`no one-time PIN texted to ${mobile}`);
    return code;
  }

  /** The code the callback brought, exchanged: the `acr` its refresh token carries (docs/tokens.md). */
  async function acrOf(callback: URL | undefined, state: string, verifier: string): Promise<unknown> {
    expect(callback?.searchParams.get('error')).toBeNull();
    expect(callback?.searchParams.get('state')).toBe(state);
    const { authUrl, demo } = running();
    const tokens = await exchangeCodeAt(authUrl, demo, { redirectUri: DEMO_SHOP_REDIRECT_URI, code: callback?.searchParams.get('code') ?? '', verifier }, STEP_TIMEOUT_MS);
    const payload = JSON.parse(Buffer.from(String(tokens.refresh_token).split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    return payload.acr;
  }

  async function pinAndCode(page: Page, mobile: string, pin: string, labels = { pin: 'PIN', submit: 'Continue', otp: 'One-time code', verify: 'Verify' }) {
    await page.getByLabel(labels.pin, { exact: true }).fill(pin);
    await page.getByRole('button', { name: labels.submit }).click();
    await page.waitForURL((url) => url.pathname === '/login/otp');
    // The page's script found the platform authenticator.
    await expect.poll(() => page.locator('input[name="passkey_capable"]').inputValue()).toBe('1');
    await page.getByLabel(labels.otp).fill(await latestOtp(mobile));
    await page.getByRole('button', { name: labels.verify }).click();
  }

  const onCallback = (page: Page) => page.waitForURL((url) => url.origin === CONSUMER_ORIGIN && url.pathname === '/callback');

  it('offers a passkey after a PIN + SMS sign-in, and adds it', async (context) => {
    const { demo } = running();
    const consumer = await openConsumer();
    const { page } = consumer;
    const { params } = authorize();
    await consumer.start(params);
    await page.waitForURL((url) => url.pathname === '/login');
    // Without a named mobile the passkey is offered below the PIN form.
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor({ state: 'visible' });
    await page.getByLabel('Mobile number').fill(demo.customer.mobile);
    await pinAndCode(page, demo.customer.mobile, demo.customer.pin);

    await page.waitForURL((url) => url.pathname === '/login/otp' && url.searchParams.has('request'));
    await expect.poll(() => page.locator('h1').innerText()).toBe('Sign in faster and safer next time with a passkey');
    expect(await page.getByRole('link', { name: 'Not now' }).getAttribute('href')).toMatch(new RegExp(`^${CONSUMER_ORIGIN}/callback\\?`));
    await expectFitsPhone(page, 'passkey offer (en)');
    await takeScreenshot(page, 'passkey-offer-en', context);
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    await onCallback(page);
    expect(consumer.callbacks).toHaveLength(1);
    const credentials = await consumer.credentials();
    expect(credentials).toHaveLength(1);
    added = credentials[0];
  });

  it('signs in with the passkey, no SMS sent, in English (acr phr out of its hold)', async (context) => {
    const { demo } = running();
    if (!added) throw new Error('no passkey was added');
    const consumer = await openConsumer({ credential: added });
    const { page } = consumer;
    const { params, state, verifier } = authorize({ user_id: demo.customer.mobile });
    const sent = (await messagesTo(demo.customer.mobile)).length;
    await consumer.start(params);
    await page.waitForURL((url) => url.pathname === '/login');
    const button = page.getByRole('button', { name: 'Sign in with a passkey' });
    await button.waitFor({ state: 'visible' });
    // The PIN form folds under "Use my PIN and an SMS code instead".
    await page.getByLabel('PIN', { exact: true }).waitFor({ state: 'hidden' });
    await page.getByText('Use my PIN and an SMS code instead').waitFor({ state: 'visible' });
    await expectFitsPhone(page, 'login, passkey first (en)');
    await takeScreenshot(page, 'passkey-login-en', context);
    await button.click();
    await onCallback(page);
    expect((await messagesTo(demo.customer.mobile)).length).toBe(sent);
    expect(await acrOf(consumer.callbacks.at(-1), state, verifier)).toBe('phr');
    // The authenticator's signature counter moved on: the next browser gets the passkey as it is now.
    added = (await consumer.credentials())[0];
  });

  it('signs in with the passkey in Filipino (ui_locales), no SMS sent', async (context) => {
    const { demo } = running();
    if (!added) throw new Error('no passkey was added');
    const consumer = await openConsumer({ credential: added });
    const { page } = consumer;
    const { params, state, verifier } = authorize({ user_id: demo.customer.mobile, ui_locales: 'fil' });
    const sent = (await messagesTo(demo.customer.mobile)).length;
    await consumer.start(params);
    await page.waitForURL((url) => url.pathname === '/login');
    await page.getByText('Gamitin na lang ang aking PIN at isang SMS code').waitFor({ state: 'visible' });
    await expectFitsPhone(page, 'login, passkey first (fil)');
    await takeScreenshot(page, 'passkey-login-fil', context);
    await page.getByRole('button', { name: 'Mag-sign in gamit ang passkey' }).click();
    await onCallback(page);
    expect((await messagesTo(demo.customer.mobile)).length).toBe(sent);
    expect(await acrOf(consumer.callbacks.at(-1), state, verifier)).toBe('phr');
    added = (await consumer.credentials())[0];
  });

  it('a request for phr (acr_values) offers only the passkey, in English and Filipino, and the passkey signs in with phr', async (context) => {
    const { demo } = running();
    for (const language of [
      { ui: 'en', heading: 'Sign in with a passkey', button: 'Sign in with a passkey', noPasskey: "I can't use a passkey" },
      { ui: 'fil', heading: undefined, button: 'Mag-sign in gamit ang passkey', noPasskey: 'Hindi ako makagamit ng passkey' },
    ]) {
      if (!added) throw new Error('no passkey was added');
      const consumer = await openConsumer({ credential: added });
      const { page } = consumer;
      const { params, state, verifier } = authorize({ acr_values: 'phr', ui_locales: language.ui });
      await consumer.start(params);
      await page.waitForURL((url) => url.pathname === '/login');
      await page.getByRole('button', { name: language.button }).waitFor({ state: 'visible' });
      await page.getByRole('button', { name: language.noPasskey }).waitFor({ state: 'visible' });
      // No PIN form, and the note for a browser without WebAuthn is hidden by the script.
      expect(await page.locator('input[name="pin"], input[name="mobile"]').count()).toBe(0);
      await page.locator('[data-passkey-unsupported]').waitFor({ state: 'hidden' });
      if (language.heading) expect(await page.locator('h1').innerText()).toBe(language.heading);
      await expectFitsPhone(page, `passkey required (${language.ui})`);
      await takeScreenshot(page, `passkey-required-${language.ui}`, context);
      const sent = (await messagesTo(demo.customer.mobile)).length;
      await page.getByRole('button', { name: language.button }).click();
      await onCallback(page);
      expect((await messagesTo(demo.customer.mobile)).length).toBe(sent);
      expect(await acrOf(consumer.callbacks.at(-1), state, verifier)).toBe('phr');
      added = (await consumer.credentials())[0];
    }
  });

  it('refuses an authenticator without the passkey, with the page\'s message; the PIN form stays', async (context) => {
    const consumer = await openConsumer({ locale: 'fil-PH' });
    const { page } = consumer;
    await consumer.start(authorize().params);
    await page.waitForURL((url) => url.pathname === '/login');
    await page.getByRole('button', { name: 'Mag-sign in gamit ang passkey' }).click();
    await expect.poll(() => page.locator('#passkey-error').innerText()).toBe('Walang passkey na nagamit. Subukang muli, o gamitin na lang ang iyong PIN at isang SMS code.');
    await expectFitsPhone(page, 'passkey refused (fil)');
    await takeScreenshot(page, 'passkey-refused-fil', context);
    expect(page.url()).toMatch(/\/login\?/);
    expect(consumer.callbacks).toHaveLength(0);
    await page.getByLabel('PIN', { exact: true }).waitFor({ state: 'visible' });
  });

  it('refuses the passkey when the user is not verified', async () => {
    const { demo } = running();
    if (!added) throw new Error('no passkey was added');
    const consumer = await openConsumer({ credential: added, userVerified: false });
    const { page } = consumer;
    await consumer.start(authorize({ user_id: demo.customer.mobile }).params);
    await page.waitForURL((url) => url.pathname === '/login');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.locator('#passkey-error').waitFor({ state: 'visible' });
    await expect.poll(() => page.locator('#passkey-error').innerText()).toContain('use your PIN and an SMS code instead');
    expect(consumer.callbacks).toHaveLength(0);
  });

  it('falls back to PIN + SMS under the passkey: acr of PIN + SMS', async () => {
    const { demo } = running();
    if (!added) throw new Error('no passkey was added');
    const consumer = await openConsumer({ credential: added });
    const { page } = consumer;
    const { params, state, verifier } = authorize({ user_id: demo.customer.mobile });
    await consumer.start(params);
    await page.waitForURL((url) => url.pathname === '/login');
    await page.getByText('Use my PIN and an SMS code instead').click();
    await pinAndCode(page, demo.customer.mobile, demo.customer.pin);
    // The customer has a passkey: no offer, straight back to the app.
    await onCallback(page);
    expect(await acrOf(consumer.callbacks.at(-1), state, verifier)).toBe('urn:connect:acr:pin-sms');
  });

  it('offers a passkey after a registration, in Filipino; "Hindi muna" goes back to the app with the code', async (context) => {
    const mobile = '+639171234571';
    const consumer = await openConsumer();
    const { page } = consumer;
    const { params, state, verifier } = authorize({ user_id: mobile, ui_locales: 'fil' });
    await consumer.start(params);
    await page.waitForURL((url) => url.pathname === '/register');
    await page.getByLabel('Pumili ng PIN').fill('258025');
    await page.getByLabel('Ilagay muli ang PIN').fill('258025');
    await page.getByRole('button', { name: 'Gumawa ng account' }).click();
    await page.waitForURL((url) => url.pathname === '/login/otp');
    await expect.poll(() => page.locator('input[name="passkey_capable"]').inputValue()).toBe('1');
    await page.getByLabel('Code mula sa SMS').fill(await latestOtp(mobile));
    await page.getByRole('button', { name: 'I-verify' }).click();
    await expect.poll(() => page.locator('h1').innerText()).toBe('Mag-sign in nang mas mabilis at mas ligtas sa susunod gamit ang passkey');
    await page.getByRole('button', { name: 'Gumawa ng passkey' }).waitFor({ state: 'visible' });
    await expectFitsPhone(page, 'passkey offer (fil)');
    await takeScreenshot(page, 'passkey-offer-fil', context);
    await page.getByRole('link', { name: 'Hindi muna' }).click();
    await onCallback(page);
    expect(await acrOf(consumer.callbacks.at(-1), state, verifier)).toBe('urn:connect:acr:pin-sms');
    expect(await consumer.credentials()).toHaveLength(0);
  });
});
