import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { startServer, type RunningServer } from '../../src/http/server.js';
import { DEMO_CLIENT_NAME, DEMO_SHOP_REDIRECT_URI } from '../../src/demo/seed-demo.js';
import { BROWSER_TEST_MS, browserTestsRun, launchChromium, takeScreenshot } from '../helpers/chromium.js';
import { exchangeCode as exchangeCodeAt } from './exchange-code.js';

/*
 * "Forgot PIN?" in a real browser (docs/hosted-login.md, "Forgot PIN"):
 * Debian's Chromium driven by playwright-core, with JavaScript off, against
 * a real Connect server listening on a port, in English and in Filipino.
 * Each page of the reset is saved as a screenshot (helpers/chromium.ts, SCREENSHOTS; docs/screenshots/ keeps a set).
 */

const CONSUMER_ORIGIN = new URL(DEMO_SHOP_REDIRECT_URI).origin;
const STEP_TIMEOUT_MS = 5_000;
const PHONE = { width: 360, height: 740 };


/** One customer per language, registered as an operator would; each forgets `pin` and chooses `newPin`. */
const CUSTOMERS = {
  en: { mobile: '+639175550201', pin: '482913', newPin: '590316', masked: /^\+63\*+0201$/ },
  fil: { mobile: '+639175550202', pin: '739164', newPin: '640371', masked: /^\+63\*+0202$/ },
} as const;

describe.skipIf(!browserTestsRun('PIN reset in Chromium'))('PIN reset in Chromium', { timeout: BROWSER_TEST_MS }, () => {
  let dataDir: string | undefined;
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'connect-browser-reset-'));
    const env = { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent' };
    for (const customer of Object.values(CUSTOMERS)) {
      let stderr = '';
      const argv = ['customers', 'create', '--mobile', customer.mobile, '--pin', customer.pin, '--json'];
      const code = await runCli(argv, { env, stdout: () => {}, stderr: (text) => void (stderr += text) });
      if (code !== 0) throw new Error(`connect-auth customers create failed (${code}): ${stderr}`);
    }
    server = await startServer({ env, seedDemo: true, demoRedirectUri: DEMO_SHOP_REDIRECT_URI, print: () => {} });
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

  /** A fresh phone-sized browser profile, JavaScript off, with the consumer app answered in place. */
  async function openConsumer() {
    if (!browser) throw new Error('the browser did not start');
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: PHONE });
    contexts.push(context);
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
    let authorizeUrl = '';
    const callbacks: URL[] = [];
    await context.route(`${CONSUMER_ORIGIN}/**`, async (route) => {
      const url = new URL(route.request().url());
      if (url.pathname === '/start') {
        await route.fulfill({ status: 200, contentType: 'text/html', body: `<!doctype html><title>Consumer</title><a id="link" href="${authorizeUrl.replace(/&/g, '&amp;')}">Link your account</a>` });
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
      async start(params: Record<string, string>): Promise<void> {
        authorizeUrl = `${running().server.address}/authorize?${new URLSearchParams(params).toString()}`;
        await page.goto(`${CONSUMER_ORIGIN}/start`);
        await page.locator('#link').click();
      },
    };
  }

  function pkce() {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  }

  /**
   * The code of the newest SMS to `mobile` whose text matches `kind`. A
   * reset code is handed to the gateway once the page has been answered,
   * so it is waited for (briefly).
   */
  async function textedCode(mobile: string, kind: RegExp, notCode?: string): Promise<string> {
    const { server } = running();
    const started = Date.now();
    for (;;) {
      const res = await fetch(`${server.address}/sandbox/messages?to=${encodeURIComponent(mobile)}`, { signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
      expect(res.status).toBe(200);
      const { messages } = (await res.json()) as { messages: { body: string }[] };
      const body = messages.find((m) => kind.test(m.body))?.body ?? '';
      const code = /^(\d{6}) /.exec(body)?.[1];
      if (code && code !== notCode) return code;
      if (Date.now() - started > STEP_TIMEOUT_MS) throw new Error(`no code matching ${kind} texted to ${mobile}`);
      await delay(20);
    }
  }

  async function exchangeCode(code: string, verifier: string): Promise<Record<string, unknown>> {
    const { server, demo } = running();
    return exchangeCodeAt(server.address, demo, { redirectUri: DEMO_SHOP_REDIRECT_URI, code, verifier }, STEP_TIMEOUT_MS);
  }

  /** The text of the elements a field's aria-describedby names. */
  async function description(page: Page, label: string): Promise<string> {
    const field = page.getByLabel(label, { exact: true });
    const ids = (await field.getAttribute('aria-describedby'))?.split(/\s+/).filter(Boolean) ?? [];
    return (await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).innerText()))).join(' ');
  }

  /** What the pages say, per language. */
  const WORDS = {
    en: {
      lang: 'en',
      forgot: 'Forgot PIN?',
      resetHeading: 'Reset your PIN',
      mobile: 'Mobile number',
      send: 'Send code',
      codeHeading: 'Enter the code to reset your PIN',
      codeLead: 'has a Connect account, we sent a 6-digit code to it by SMS.',
      code: 'One-time code',
      verify: 'Verify',
      newPinHeading: 'Choose a new PIN',
      newPin: 'New PIN',
      confirm: 'Enter the new PIN again',
      change: 'Change PIN',
      weak: 'That PIN is too easy to guess: its digits are in order, like 1234 or 9876. Choose another PIN.',
      changed: 'Your PIN has been changed, and you were signed out everywhere. Log in with your new PIN.',
      pin: 'PIN',
      login: 'Continue',
      resetSms: /^\d{6} is your Connect code to reset your PIN\./,
      loginSms: /^\d{6} is your Connect code to link your account to /,
    },
    fil: {
      lang: 'fil',
      forgot: 'Nakalimutan ang PIN?',
      resetHeading: 'I-reset ang iyong PIN',
      mobile: 'Numero ng mobile',
      send: 'Ipadala ang code',
      codeHeading: 'Ilagay ang code para ma-reset ang iyong PIN',
      codeLead: 'nagpadala kami rito ng 6-digit na code sa pamamagitan ng SMS.',
      code: 'Code mula sa SMS',
      verify: 'I-verify',
      newPinHeading: 'Pumili ng bagong PIN',
      newPin: 'Bagong PIN',
      confirm: 'Ilagay muli ang bagong PIN',
      change: 'Palitan ang PIN',
      weak: 'Masyadong madaling hulaan ang PIN na iyan: magkakasunod ang mga digit nito, gaya ng 1234 o 9876. Pumili ng ibang PIN.',
      changed: 'Napalitan na ang iyong PIN, at na-sign out ka sa lahat ng device. Mag-log in gamit ang bago mong PIN.',
      pin: 'PIN',
      login: 'Magpatuloy',
      resetSms: /^\d{6} ang iyong Connect code para i-reset ang iyong PIN\./,
      loginSms: /^\d{6} ang iyong Connect code para i-link ang iyong account sa /,
    },
  } as const;

  /**
   * The whole reset: login page, "Forgot PIN?", the mobile (typed in
   * English; fixed by user_id in Filipino), the texted code, a weak PIN
   * refused, the new PIN; then a login with it completes the
   * authorization, with no second SMS, and its code buys tokens.
   */
  async function resetAndLogIn(language: 'en' | 'fil', context: TestContext): Promise<void> {
    const words = WORDS[language];
    const customer = CUSTOMERS[language];
    const { demo } = running();
    const consumer = await openConsumer();
    const { page } = consumer;
    const { verifier, challenge } = pkce();
    const state = randomBytes(12).toString('base64url');
    const fixed = language === 'fil';
    await consumer.start({
      response_type: 'code',
      client_id: demo.clientId,
      redirect_uri: DEMO_SHOP_REDIRECT_URI,
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...(fixed ? { user_id: customer.mobile, ui_locales: 'fil' } : {}),
    });

    await page.waitForURL((url) => url.pathname === '/login');
    expect(await page.locator('html').getAttribute('lang')).toBe(words.lang);
    await page.getByRole('link', { name: words.forgot }).click();

    // 1. The mobile.
    await page.waitForURL((url) => url.pathname === '/login/reset');
    expect(await page.locator('h1').textContent()).toBe(words.resetHeading);
    await expect(page.locator('main').innerText()).resolves.toContain(DEMO_CLIENT_NAME);
    const mobile = page.getByLabel(words.mobile);
    if (fixed) {
      expect(await mobile.inputValue()).toBe(customer.mobile);
      expect(await mobile.getAttribute('readonly')).not.toBeNull();
    } else {
      expect(await mobile.inputValue()).toBe('');
      await mobile.fill(customer.mobile);
    }
    await takeScreenshot(page, `pin-reset-${language}-1-mobile`, context);
    await page.getByRole('button', { name: words.send }).click();

    // 2. The code.
    await page.waitForURL((url) => url.pathname === '/login/reset/otp');
    expect(await page.locator('h1').textContent()).toBe(words.codeHeading);
    await expect(page.locator('main').innerText()).resolves.toContain(words.codeLead);
    await takeScreenshot(page, `pin-reset-${language}-2-code`, context);
    await page.getByLabel(words.code).fill(await textedCode(customer.mobile, words.resetSms));
    await page.getByRole('button', { name: words.verify }).click();

    // 3. The new PIN: a weak one refused first, with the registration's message.
    await page.waitForURL((url) => url.pathname === '/login/reset/pin');
    expect(await page.locator('h1').textContent()).toBe(words.newPinHeading);
    await takeScreenshot(page, `pin-reset-${language}-3-new-pin`, context);
    await page.getByLabel(words.newPin, { exact: true }).fill('123456');
    await page.getByLabel(words.confirm).fill('123456');
    await page.getByRole('button', { name: words.change }).click();
    await page.waitForURL((url) => url.pathname === '/login/reset/pin');
    expect(await page.getByLabel(words.newPin, { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await description(page, words.newPin)).toContain(words.weak);
    await takeScreenshot(page, `pin-reset-${language}-4-weak-pin`, context);
    await page.getByLabel(words.newPin, { exact: true }).fill(customer.newPin);
    await page.getByLabel(words.confirm).fill(customer.newPin);
    await page.getByRole('button', { name: words.change }).click();

    // 4. Back on the login page of the same sign-in, the mobile prefilled.
    await page.waitForURL((url) => url.pathname === '/login');
    await expect(page.locator('main').innerText()).resolves.toContain(words.changed);
    expect(await page.getByLabel(words.mobile).inputValue()).toBe(customer.mobile);
    await takeScreenshot(page, `pin-reset-${language}-5-login`, context);
    await page.getByLabel(words.pin, { exact: true }).fill(customer.newPin);
    // The reset's code proved the phone minutes ago: no second SMS, straight back to the app
    // (docs/journey.md, "After a PIN reset").
    await page.getByRole('button', { name: words.login }).click();
    await page.waitForURL((url) => url.origin === CONSUMER_ORIGIN && url.pathname === '/callback');

    const params = consumer.callbacks.at(-1)?.searchParams;
    expect(params?.get('state')).toBe(state);
    expect(params?.get('userId')).toMatch(customer.masked);
    const tokens = await exchangeCode(params?.get('code') ?? '', verifier);
    expect(tokens.access_token).toEqual(expect.any(String));
    await expect(page.title()).resolves.toBe('Linked');
  }

  it('in English, with JavaScript off at phone width: the mobile, the texted code, a new PIN, then a login with it', async (context) => {
    await resetAndLogIn('en', context);
  });

  it('in Filipino (ui_locales), the mobile fixed by user_id: every reset page in Filipino, then a login with the new PIN', async (context) => {
    await resetAndLogIn('fil', context);
  });
});
