import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/http/server.js';
import { DEMO_CLIENT_NAME, DEMO_SHOP_REDIRECT_URI } from '../../src/demo/seed-demo.js';
import { BROWSER_TEST_MS, browserTestsRun, launchChromium, takeScreenshot } from '../helpers/chromium.js';
import { exchangeCode as exchangeCodeAt } from './exchange-code.js';

/*
 * The hosted pages in a real browser: Debian's Chromium driven by
 * playwright-core, against a real Connect server listening on a port.
 * The consumer app lives at the demo client's address (127.0.0.1:4000);
 * the browser's requests there are answered by Playwright, not a server.
 */

const CONSUMER_ORIGIN = new URL(DEMO_SHOP_REDIRECT_URI).origin;
const UNREGISTERED_MOBILE = '+639171234568';
const STEP_TIMEOUT_MS = 5_000;

describe.skipIf(!browserTestsRun('customer login in Chromium'))('customer login in Chromium', { timeout: BROWSER_TEST_MS }, () => {
  let dataDir: string | undefined;
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'connect-browser-'));
    server = await startServer({
      env: { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent' },
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

  function running(): { server: RunningServer; demo: NonNullable<RunningServer['demo']> } {
    if (!server?.demo) throw new Error('the server did not start');
    return { server, demo: server.demo };
  }

  /** A fresh browser profile (own cookies) with the consumer app answered in place. */
  async function openConsumer(options: { javaScriptEnabled?: boolean; locale?: string } = {}) {
    if (!browser) throw new Error('the browser did not start');
    const context = await browser.newContext({
      javaScriptEnabled: options.javaScriptEnabled ?? true,
      viewport: { width: 360, height: 740 },
      // The browser's language: Chromium sends it as Accept-Language.
      ...(options.locale ? { locale: options.locale } : {}),
    });
    contexts.push(context);
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
    let authorizeUrl = '';
    const callbacks: URL[] = [];
    await context.route(`${CONSUMER_ORIGIN}/**`, async (route) => {
      const url = new URL(route.request().url());
      if (url.pathname === '/start') {
        // The consumer's page: a link to /authorize, and a script that marks the page when scripts run.
        const body = `<!doctype html><title>Consumer</title><a id="link" href="${authorizeUrl.replace(/&/g, '&amp;')}">Link your account</a>
<script>document.getElementById('link').dataset.script = 'ran';</script>`;
        await route.fulfill({ status: 200, contentType: 'text/html', body });
      } else if (url.pathname === '/callback') {
        callbacks.push(url);
        await route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Linked</title><h1>Linked</h1>' });
      } else {
        await route.fulfill({ status: 404, body: 'not found' });
      }
    });
    const page = await context.newPage();
    return {
      page,
      callbacks,
      /** The consumer sends the browser to /authorize with these parameters. */
      async start(params: Record<string, string>): Promise<{ scriptsRan: boolean }> {
        const { server } = running();
        authorizeUrl = `${server.address}/authorize?${new URLSearchParams(params).toString()}`;
        await page.goto(`${CONSUMER_ORIGIN}/start`);
        const scripts = await page.locator('#link').getAttribute('data-script');
        await page.locator('#link').click();
        return { scriptsRan: scripts === 'ran' };
      },
    };
  }

  function pkce() {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    return { verifier, challenge };
  }

  function authorizeParams(challenge: string, state: string, extra: Record<string, string> = {}) {
    const { demo } = running();
    return {
      response_type: 'code',
      client_id: demo.clientId,
      redirect_uri: DEMO_SHOP_REDIRECT_URI,
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    };
  }

  /** The newest one-time PIN texted to `mobile`, from the sandbox outbox. */
  async function latestOtp(mobile: string): Promise<string> {
    const { server } = running();
    const res = await fetch(`${server.address}/sandbox/messages?to=${encodeURIComponent(mobile)}`, {
      signal: AbortSignal.timeout(STEP_TIMEOUT_MS),
    });
    expect(res.status).toBe(200);
    const { messages } = (await res.json()) as { messages: { to: string; body: string }[] };
    const body = messages[0]?.body ?? '';
    const code = /\b(\d{6})\b/.exec(body)?.[1];
    if (!code) throw new Error(`no one-time PIN texted to ${mobile}`);
    return code;
  }

  async function exchangeCode(code: string, verifier: string) {
    const { server, demo } = running();
    return exchangeCodeAt(server.address, demo, { redirectUri: DEMO_SHOP_REDIRECT_URI, code, verifier }, STEP_TIMEOUT_MS);
  }

  async function enterOtp(page: Page, mobile: string, submit: 'click' | 'enter'): Promise<void> {
    await page.waitForURL((url) => url.pathname === '/login/otp');
    await expect(page.locator('h1').textContent()).resolves.toMatch(/code/i);
    const otp = page.getByLabel('One-time code');
    await otp.fill(await latestOtp(mobile));
    if (submit === 'enter') await otp.press('Enter');
    else await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL((url) => url.origin === CONSUMER_ORIGIN && url.pathname === '/callback');
  }

  /** The text of the elements a field's aria-describedby names. */
  async function description(field: Locator): Promise<string> {
    const ids = (await field.getAttribute('aria-describedby'))?.split(/\s+/).filter(Boolean) ?? [];
    const texts = await Promise.all(ids.map((id) => field.page().locator(`[id="${id}"]`).innerText()));
    return texts.join(' ');
  }

  function expectCodeRedirect(callback: URL | undefined, state: string, maskedUserId: RegExp) {
    expect(callback).toBeDefined();
    const params = callback?.searchParams;
    expect(params?.get('error')).toBeNull();
    expect(params?.get('code')).toMatch(/^\S{20,}$/);
    expect(params?.get('state')).toBe(state);
    expect(params?.get('userId')).toMatch(maskedUserId);
    expect(params?.get('profileId')).toMatch(/^\d+$/);
    return { code: params?.get('code') ?? '', profileId: params?.get('profileId') ?? '' };
  }

  it('logs a registered customer in: mobile + PIN, one-time PIN, back to the app with a code that buys tokens', async () => {
    const { demo } = running();
    const consumer = await openConsumer();
    const { page } = consumer;
    const { verifier, challenge } = pkce();
    const state = randomBytes(12).toString('base64url');
    expect(await consumer.start(authorizeParams(challenge, state))).toEqual({ scriptsRan: true });

    await page.waitForURL((url) => url.pathname === '/login');
    expect(await page.title()).toMatch(/log in/i);
    await expect(page.locator('main').innerText()).resolves.toContain(`${DEMO_CLIENT_NAME} wants to link your account`);
    const mobile = page.getByLabel('Mobile number');
    expect(await mobile.inputValue()).toBe('');
    expect(await mobile.getAttribute('readonly')).toBeNull();

    await mobile.fill(demo.customer.mobile);
    await page.getByLabel('PIN', { exact: true }).fill(demo.customer.pin);
    await page.getByRole('button', { name: 'Continue' }).click();

    await enterOtp(page, demo.customer.mobile, 'click');
    const { code, profileId } = expectCodeRedirect(consumer.callbacks.at(-1), state, /^\+63\*+4567$/);
    expect(profileId).toBe(demo.customer.profileId);

    const tokens = await exchangeCode(code, verifier);
    expect(tokens.access_token).toEqual(expect.any(String));
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(tokens.token_type).toMatch(/^bearer$/i);
  });

  it('registers a new customer named by user_id: prefilled readonly mobile, PIN twice, one-time PIN, code', async () => {
    const consumer = await openConsumer();
    const { page } = consumer;
    const { verifier, challenge } = pkce();
    const state = randomBytes(12).toString('base64url');
    await consumer.start(authorizeParams(challenge, state, { user_id: UNREGISTERED_MOBILE }));

    await page.waitForURL((url) => url.pathname === '/register');
    await expect(page.locator('main').innerText()).resolves.toContain(`${DEMO_CLIENT_NAME} wants to link your account`);
    const mobile = page.getByLabel('Mobile number');
    expect(await mobile.inputValue()).toBe(UNREGISTERED_MOBILE);
    expect(await mobile.getAttribute('readonly')).not.toBeNull();

    // Two different PINs: the error is tied to the confirmation field.
    await page.getByLabel('Choose a PIN').fill('3817');
    await page.getByLabel('Enter the PIN again').fill('3818');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL((url) => url.pathname === '/register');
    const confirmation = page.getByLabel('Enter the PIN again');
    expect(await confirmation.getAttribute('aria-invalid')).toBe('true');
    expect(await description(confirmation)).toContain('The two PINs are not the same.');

    await page.getByLabel('Choose a PIN').fill('258025');
    await confirmation.fill('258025');
    await confirmation.press('Enter');

    await enterOtp(page, UNREGISTERED_MOBILE, 'enter');
    const { code } = expectCodeRedirect(consumer.callbacks.at(-1), state, /^\+63\*+4568$/);
    const tokens = await exchangeCode(code, verifier);
    expect(tokens.access_token).toEqual(expect.any(String));
  });

  it('works with JavaScript turned off, end to end', async () => {
    const { demo } = running();
    const consumer = await openConsumer({ javaScriptEnabled: false });
    const { page } = consumer;
    const { verifier, challenge } = pkce();
    const state = randomBytes(12).toString('base64url');
    const { scriptsRan } = await consumer.start(authorizeParams(challenge, state, { user_id: demo.customer.mobile }));
    expect(scriptsRan).toBe(false);

    await page.waitForURL((url) => url.pathname === '/login');
    const mobile = page.getByLabel('Mobile number');
    expect(await mobile.inputValue()).toBe(demo.customer.mobile);
    expect(await mobile.getAttribute('readonly')).not.toBeNull();

    // A PIN that is too short: the error sits on the PIN field.
    await page.getByLabel('PIN', { exact: true }).fill('12');
    await page.getByLabel('PIN', { exact: true }).press('Enter');
    await page.waitForURL((url) => url.pathname === '/login');
    const pin = page.getByLabel('PIN', { exact: true });
    expect(await pin.getAttribute('aria-invalid')).toBe('true');
    expect(await description(pin)).toContain('Your PIN is 4 to 6 digits.');

    await pin.fill(demo.customer.pin);
    await page.getByRole('button', { name: 'Continue' }).click();
    await enterOtp(page, demo.customer.mobile, 'click');
    const { code } = expectCodeRedirect(consumer.callbacks.at(-1), state, /^\+63\*+4567$/);
    const tokens = await exchangeCode(code, verifier);
    expect(tokens.refresh_token).toEqual(expect.any(String));
  });

  it('in Filipino when the browser asks for it: labels, buttons, a weak PIN refused, the code entered, back to the app', async (context) => {
    const mobile = '+639171234569';
    const consumer = await openConsumer({ javaScriptEnabled: false, locale: 'fil-PH' });
    const { page } = consumer;
    const { verifier, challenge } = pkce();
    const state = randomBytes(12).toString('base64url');
    await consumer.start(authorizeParams(challenge, state, { user_id: mobile }));

    await page.waitForURL((url) => url.pathname === '/register');
    expect(await page.locator('html').getAttribute('lang')).toBe('fil');
    expect(await page.title()).toBe(`Gumawa ng account · ${DEMO_CLIENT_NAME} · Connect`);
    await expect(page.locator('main').innerText()).resolves.toContain(`Gustong i-link ng ${DEMO_CLIENT_NAME} ang iyong account.`);
    expect(await page.getByLabel('Numero ng mobile').inputValue()).toBe(mobile);

    await page.getByLabel('Pumili ng PIN').fill('2580');
    await page.getByLabel('Ilagay muli ang PIN').fill('2580');
    await page.getByRole('button', { name: 'Gumawa ng account' }).click();
    await page.waitForURL((url) => url.pathname === '/register');
    const pin = page.getByLabel('Pumili ng PIN');
    expect(await pin.getAttribute('aria-invalid')).toBe('true');
    expect(await description(pin)).toContain('Isa ang PIN na iyan sa mga pinakakaraniwang PIN at madali itong hulaan. Pumili ng ibang PIN.');
    await takeScreenshot(page, 'fil-1-register-weak-pin', context);

    await pin.fill('3817');
    await page.getByLabel('Ilagay muli ang PIN').fill('3817');
    await page.getByRole('button', { name: 'Gumawa ng account' }).click();
    await page.waitForURL((url) => url.pathname === '/login/otp');
    expect(await page.locator('h1').textContent()).toBe('Ilagay ang code na ipinadala namin sa SMS');
    await takeScreenshot(page, 'fil-2-one-time-pin', context);
    await page.getByLabel('Code mula sa SMS').fill(await latestOtp(mobile));
    await page.getByRole('button', { name: 'I-verify' }).click();
    await page.waitForURL((url) => url.origin === CONSUMER_ORIGIN && url.pathname === '/callback');
    const { code } = expectCodeRedirect(consumer.callbacks.at(-1), state, /^\+63\*+4569$/);
    expect((await exchangeCode(code, verifier)).access_token).toEqual(expect.any(String));
  });
});
