import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import type { UiLocale } from '../../src/core/authorize/ui-locales.js';
import { fixedClock } from '../../src/core/clock.js';
import { RESET_PROVES_PHONE_SECONDS } from '../../src/core/lifetimes.js';
import { runCli } from '../../src/cli/main.js';
import { DEMO_CLIENT_NAME } from '../../src/demo/seed-demo.js';
import { startServer, type RunningServer } from '../../src/http/server.js';
import { CATALOGUES } from '../../src/http/views/messages/index.js';
import { timeOfDay } from '../../src/http/views/time-of-day.js';
import { openEmbeddedSqlite } from '../../src/storage/kysely/embedded-sqlite.js';
import { BROWSER_TEST_MS, browserTestsRun, expectFitsPhone, launchChromium, PHONE, takeScreenshot } from '../helpers/chromium.js';

/*
 * Every hosted page on a phone (docs/hosted-login.md, "On a phone" and
 * "The resend countdown"): Debian's Chromium at 390 x 844, in English and
 * in Filipino, against a real Connect server on a port, whose demo client
 * comes back to the sandbox's callback page. Each page is checked for
 * sideways scrolling and for tap targets under 44 px, and saved as a
 * screenshot (helpers/chromium.ts, SCREENSHOTS; docs/screenshots/ keeps
 * them). The server's clock is a fixed one the test moves, so the resend
 * wait can be brought to its last seconds without waiting 30 of them.
 */

const STEP_TIMEOUT_MS = 10_000;
/** Long enough for every page in one language on a loaded machine. */
const WALK_MS = Math.max(BROWSER_TEST_MS, 150_000);
/** The database's bound for this server: the 503 page comes this long after the database is locked. */
const DB_TIMEOUT_MS = 1_000;

/** Client B, which no customer has approved: its requests show the consent page. */
const CLIENT_B_REDIRECT_URI = 'http://127.0.0.1:4001/callback';

/** One customer per language for the walk (the reset changes the PIN), and one an operator locked. */
const CUSTOMERS = {
  en: { mobile: '+639175550301', pin: '482913', newPin: '590316' },
  fil: { mobile: '+639175550302', pin: '739164', newPin: '640371' },
} as const;
const LOCKED = { mobile: '+639175550309', pin: '815064' };
/** The browser's language per page language: Chromium sends it as Accept-Language. */
const BROWSER_LOCALE: Record<UiLocale, string> = { en: 'en-US', fil: 'fil-PH' };

describe.skipIf(!browserTestsRun('the hosted pages on a phone in Chromium'))('the hosted pages on a phone (390 x 844) in Chromium', () => {
  let dataDir: string | undefined;
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let clientB: { clientId: string } | undefined;
  const clock = fixedClock(Math.floor(Date.now() / 1000));
  const contexts: BrowserContext[] = [];

  async function cli<T>(env: Record<string, string>, argv: string[]): Promise<T> {
    let stdout = '';
    let stderr = '';
    const code = await runCli([...argv, '--json'], { env, stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
    if (code !== 0) throw new Error(`connect-auth ${argv.join(' ')} failed (${code}): ${stderr}`);
    return JSON.parse(stdout) as T;
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'connect-browser-phone-'));
    const env = { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent', CONNECT_DB_TIMEOUT_MS: String(DB_TIMEOUT_MS) };
    clientB = await cli<{ clientId: string }>(env, ['clients', 'create', '--name', 'Bayside Rewards', '--redirect-uri', CLIENT_B_REDIRECT_URI]);
    for (const customer of [...Object.values(CUSTOMERS), LOCKED]) await cli(env, ['customers', 'create', '--mobile', customer.mobile, '--pin', customer.pin]);
    await cli(env, ['customers', 'lock', LOCKED.mobile]);
    // The demo client comes back to the sandbox's callback page.
    server = await startServer({ env, seedDemo: true, clock, print: () => {} });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close().catch(() => {});
    await server?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 15_000);

  function running() {
    if (!server?.demo || !clientB) throw new Error('the server did not start');
    return { server, demo: server.demo, clientB };
  }

  async function phone(language: UiLocale, javaScriptEnabled: boolean): Promise<Page> {
    if (!browser) throw new Error('the browser did not start');
    const context = await browser.newContext({ javaScriptEnabled, viewport: PHONE, locale: BROWSER_LOCALE[language] });
    contexts.push(context);
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
    return context.newPage();
  }

  function authorizeUrl(language: UiLocale, extra: Record<string, string> = {}, client?: { clientId: string; redirectUri: string }): string {
    const { server, demo } = running();
    const { clientId, redirectUri } = client ?? demo;
    const params = { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: randomBytes(9).toString('base64url'), ui_locales: language, ...extra };
    return `${server.address}/authorize?${new URLSearchParams(params).toString()}`;
  }

  /** The newest code texted to `mobile` whose message matches `kind` (a reset code leaves once the page is answered). */
  async function textedCode(mobile: string, kind: RegExp, notCode?: string): Promise<string> {
    const started = Date.now();
    for (;;) {
      const res = await fetch(`${running().server.address}/sandbox/messages?to=${encodeURIComponent(mobile)}`, { signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
      const { messages } = (await res.json()) as { messages: { body: string }[] };
      const code = /^(\d{6}) /.exec(messages.find((m) => kind.test(m.body))?.body ?? '')?.[1];
      if (code && code !== notCode) return code;
      if (Date.now() - started > STEP_TIMEOUT_MS) throw new Error(`no code matching ${kind} texted to ${mobile}`);
      await delay(20);
    }
  }

  /** Checked, then saved as `<name>-<language>.png`. */
  async function check(page: Page, name: string, language: UiLocale, context: TestContext, options: { targets?: boolean; screenshot?: boolean } = {}) {
    expect(await page.locator('html').getAttribute('lang'), name).toBe(name === 'callback' ? 'en' : language);
    const targets = await expectFitsPhone(page, `${name} (${language})`);
    if (options.targets ?? true) expect(targets, `${name}: links, buttons or fields to check`).toBeGreaterThan(0);
    if (options.screenshot ?? true) await takeScreenshot(page, `${name}-${language}`, context);
  }

  /** The resend hint with its space characters made plain (ICU may put a narrow no-break space before AM/PM). */
  async function resendHint(page: Page): Promise<string> {
    return ((await page.locator('#resend-hint').innerText()) ?? '').replace(/\s+/gu, ' ').trim();
  }

  /** Every page of a sign-in with JavaScript off, in `language`: the error pages, the locked account, the forgotten PIN, the code, the callback, consent and 503. */
  async function walk(language: UiLocale, context: TestContext): Promise<void> {
    const text = CATALOGUES[language];
    const customer = CUSTOMERS[language];
    const { server, demo, clientB } = running();
    const page = await phone(language, false);

    // Error pages: a link of an unknown client, and a journey that is not (or no longer) there.
    await page.goto(`${server.address}/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'cid_sandbox_nobody', redirect_uri: 'https://nowhere.example/cb', ui_locales: language })}`);
    await expect(page.locator('h1').innerText()).resolves.toBe(text.linkErrors.title);
    await check(page, 'error', language, context, { targets: false });
    await page.goto(`${server.address}/login?request=${'x'.repeat(43)}`);
    await expect(page.locator('h1').innerText()).resolves.toBe(text.deadEnds.expired.title);
    await check(page, 'expired', language, context, { targets: false });

    // The locked account's page.
    await page.goto(authorizeUrl(language, { prompt: 'login' }));
    await page.waitForURL((url) => url.pathname === '/login');
    await page.locator('input[name=mobile]').fill(LOCKED.mobile);
    await page.locator('input[name=pin]').fill(LOCKED.pin);
    await page.getByRole('button', { name: text.login.submit }).click();
    await expect(page.locator('main').innerText()).resolves.toContain(text.problems.account_locked.replace('{client}', DEMO_CLIENT_NAME));
    await check(page, 'locked', language, context);

    // Login, registration and back: the links between them.
    await page.goto(authorizeUrl(language));
    await page.waitForURL((url) => url.pathname === '/login');
    await check(page, 'login', language, context);
    await page.getByRole('link', { name: text.login.toRegister }).click();
    await page.waitForURL((url) => url.pathname === '/register');
    await check(page, 'register', language, context);
    await page.getByRole('link', { name: text.register.toLogin, exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/login');

    // Forgot PIN: the mobile, the code (its hint names a time), the new PIN.
    await page.getByRole('link', { name: text.login.forgotPin }).click();
    await page.waitForURL((url) => url.pathname === '/login/reset');
    await check(page, 'reset', language, context);
    await page.locator('input[name=mobile]').fill(customer.mobile);
    await page.getByRole('button', { name: text.reset.submit }).click();
    await page.waitForURL((url) => url.pathname === '/login/reset/otp');
    expect(await resendHint(page)).toBe(text.otp.resendFrom.replace('{time}', timeOfDay(clock.nowSeconds() + 30, 'PH', language).replace(/\s+/gu, ' ')));
    await check(page, 'reset-code', language, context);
    await page.locator('input[name=otp]').fill(await textedCode(customer.mobile, /to reset your PIN|i-reset ang iyong PIN/));
    await page.getByRole('button', { name: text.otp.submit }).click();
    await page.waitForURL((url) => url.pathname === '/login/reset/pin');
    await check(page, 'new-pin', language, context);
    await page.locator('input[name=pin]').fill(customer.newPin);
    await page.locator('input[name=pin_confirmation]').fill(customer.newPin);
    await page.getByRole('button', { name: text.newPin.submit }).click();
    await page.waitForURL((url) => url.pathname === '/login');
    await expectFitsPhone(page, `login after a reset (${language})`);

    // The one-time PIN without JavaScript: the hint names the time of day a new code can be asked for.
    // Past the minutes in which the reset's code still proves the phone, the login texts a code again.
    clock.advance(RESET_PROVES_PHONE_SECONDS + 1);
    await page.locator('input[name=pin]').fill(customer.newPin);
    await page.getByRole('button', { name: text.login.submit }).click();
    await page.waitForURL((url) => url.pathname === '/login/otp');
    const time = timeOfDay(clock.nowSeconds() + 30, 'PH', language).replace(/\s+/gu, ' ');
    expect(time).toMatch(/^\d{1,2}:\d{2} [AP]M \S/);
    expect(await resendHint(page)).toBe(text.otp.resendFrom.replace('{time}', time));
    await expect(page.getByRole('button', { name: text.otp.resend }).isEnabled()).resolves.toBe(true);
    await check(page, 'otp', language, context);

    // The code comes back to the sandbox's callback page: its code and command wrap.
    await page.locator('input[name=otp]').fill(await textedCode(customer.mobile, /code to link|para i-link/));
    await page.getByRole('button', { name: text.otp.submit }).click();
    await page.waitForURL((url) => url.pathname === '/sandbox/callback');
    await expect(page.locator('#exchange-command').innerText()).resolves.toContain(demo.clientId);
    // A page for developers, in English only: one screenshot.
    await check(page, 'callback', language, context, { targets: false, screenshot: language === 'en' });

    // Signed in, a client the customer has not approved: consent.
    await page.goto(authorizeUrl(language, {}, { clientId: clientB.clientId, redirectUri: CLIENT_B_REDIRECT_URI }));
    await page.waitForURL((url) => url.pathname === '/consent');
    await check(page, 'consent', language, context);

    // The database does not answer: the 503 page, in the browser's language.
    const database = openEmbeddedSqlite(join(dataDir as string, 'connect-sandbox.db'));
    try {
      database.exec('begin immediate');
      const response = await page.goto(authorizeUrl(language, { prompt: 'login' }));
      expect(response?.status()).toBe(503);
    } finally {
      if (database.inTransaction) database.exec('rollback');
      database.close();
    }
    await expect(page.locator('h1').innerText()).resolves.toBe(text.failures.unavailable.title);
    await check(page, 'unavailable', language, context, { targets: false });
  }

  /** The one-time PIN with JavaScript: the countdown counts, then enables "Send a new code", which sends one. */
  async function countdown(language: UiLocale, context: TestContext): Promise<void> {
    const text = CATALOGUES[language];
    const { demo } = running();
    const page = await phone(language, true);
    await page.goto(authorizeUrl(language, { user_id: demo.customer.mobile, prompt: 'login' }));
    await page.waitForURL((url) => url.pathname === '/login');
    await page.locator('input[name=pin]').fill(demo.customer.pin);
    await page.getByRole('button', { name: text.login.submit }).click();
    await page.waitForURL((url) => url.pathname === '/login/otp');
    const resend = page.getByRole('button', { name: text.otp.resend });
    const counting = (seconds: number) => (seconds === 1 ? text.otp.countdown.one : text.otp.countdown.other).replace('{seconds}', String(seconds));
    const secondsShown = async () => {
      const hint = await resendHint(page);
      const seconds = Number(/(\d+)/.exec(hint)?.[1]);
      expect(hint).toBe(counting(seconds));
      return seconds;
    };

    // The script replaced the time of day with the seconds left, and holds the button until they are over.
    const first = await secondsShown();
    expect(first).toBeGreaterThan(20);
    expect(first).toBeLessThanOrEqual(30);
    await expect(resend.isDisabled()).resolves.toBe(true);
    await check(page, 'otp-countdown', language, context);
    await expect.poll(secondsShown, { timeout: STEP_TIMEOUT_MS, interval: 250 }).toBeLessThan(first);

    // 27 s later at the server, the page again: 3 s to count, then the button works.
    clock.advance(27);
    await page.reload();
    expect(await secondsShown()).toBeLessThanOrEqual(3);
    await expect(resend.isDisabled()).resolves.toBe(true);
    await expect.poll(() => resend.isEnabled(), { timeout: STEP_TIMEOUT_MS, interval: 250 }).toBe(true);
    expect(await resendHint(page)).toBe(text.otp.resendNow);
    await expectFitsPhone(page, `otp, countdown over (${language})`);

    // The server's wait is over too: a new code is sent, and the count starts again.
    clock.advance(5);
    await resend.click();
    await page.waitForURL((url) => url.pathname === '/login/otp');
    await expect(page.locator('[role=status]').innerText()).resolves.toContain((text.otp.codeSent.split('{mobile}')[0] as string).trim());
    expect(await secondsShown()).toBeGreaterThan(20);
    await expect(resend.isDisabled()).resolves.toBe(true);
  }

  for (const language of ['en', 'fil'] as const) {
    it(`${language}: every page fits 390 px, with tap targets of 44 px, JavaScript off; the resend hint names a time`, { timeout: WALK_MS }, async (context) => {
      await walk(language, context);
    });

    it(`${language}: with JavaScript the resend hint counts down and then enables "Send a new code"`, { timeout: WALK_MS }, async (context) => {
      await countdown(language, context);
    });
  }
});
