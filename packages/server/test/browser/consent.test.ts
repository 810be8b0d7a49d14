import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { startServer, type RunningServer } from '../../src/http/server.js';
import { DEMO_CLIENT_NAME, DEMO_SHOP_REDIRECT_URI } from '../../src/demo/seed-demo.js';
import { BROWSER_TEST_MS, browserTestsRun, launchChromium, takeScreenshot } from '../helpers/chromium.js';
import { exchangeCode as exchangeCodeAt } from './exchange-code.js';

/*
 * The consent page in a real browser: Debian's Chromium driven by
 * playwright-core, against a real Connect server listening on a port. A
 * customer logs in through client A (the sandbox demo client), then the same
 * browser is sent to /authorize by client B, which the customer has never
 * approved. Both consumer apps live at their redirect URIs' origins; the
 * browser's requests there are answered by Playwright, not a server.
 */

const CLIENT_A_ORIGIN = new URL(DEMO_SHOP_REDIRECT_URI).origin;
/** Client B's registered name: an ampersand, so the page must escape it. */
const CLIENT_B_NAME = 'Bayside Rewards & Co.';
const CLIENT_B_REDIRECT_URI = 'http://127.0.0.1:4001/callback';
const CLIENT_B_ORIGIN = new URL(CLIENT_B_REDIRECT_URI).origin;
const STEP_TIMEOUT_MS = 5_000;

const PHONE = { width: 360, height: 740 };
const DESKTOP = { width: 1280, height: 800 };
/** The smallest comfortable touch target, in CSS pixels. */
const MIN_TOUCH_TARGET = 44;


interface Customer {
  readonly mobile: string;
  readonly pin: string;
  /** The mobile as the pages and `userId` show it. */
  readonly masked: RegExp;
}

/** One customer per test, so that one test's approval does not change another's journey. */
const CUSTOMERS = {
  allow: { mobile: '+639175550101', pin: '482913', masked: /^\+63\*+0101$/ },
  cancel: { mobile: '+639175550102', pin: '739164', masked: /^\+63\*+0102$/ },
} satisfies Record<string, Customer>;

describe.skipIf(!browserTestsRun('consent page in Chromium'))('consent page in Chromium', { timeout: BROWSER_TEST_MS }, () => {
  let dataDir: string | undefined;
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  let clientB: { clientId: string; clientSecret: string } | undefined;
  const contexts: BrowserContext[] = [];

  /** Runs `connect-auth ...argv --json` on the server's data folder; returns its JSON output. */
  async function cli<T>(env: Record<string, string>, argv: string[]): Promise<T> {
    let stdout = '';
    let stderr = '';
    const code = await runCli([...argv, '--json'], { env, stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
    if (code !== 0) throw new Error(`connect-auth ${argv.join(' ')} failed (${code}): ${stderr}`);
    return JSON.parse(stdout) as T;
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'connect-browser-consent-'));
    const env = { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent' };
    // Client B and the customers are registered the way an operator would, before the server starts.
    clientB = await cli<{ clientId: string; clientSecret: string }>(env, [
      'clients',
      'create',
      '--name',
      CLIENT_B_NAME,
      '--redirect-uri',
      CLIENT_B_REDIRECT_URI,
      '--grants',
      'authorization_code,refresh_token',
      '--scopes',
      'rewards:read rewards:write',
    ]);
    await cli(env, ['clients', 'update', clientB.clientId, '--scope-description', 'rewards:write=Redeem your points for vouchers']);
    for (const customer of Object.values(CUSTOMERS)) {
      await cli(env, ['customers', 'create', '--mobile', customer.mobile, '--pin', customer.pin]);
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

  function running() {
    if (!server?.demo || !clientB) throw new Error('the server did not start');
    return { server, demo: server.demo, clientB };
  }

  /**
   * A fresh browser profile (own cookies) with both consumer apps answered
   * in place: `/start` links to the next /authorize URL (and a script marks
   * the link when scripts run); `/callback` records where the browser landed.
   */
  async function openBrowser(options: { javaScriptEnabled: boolean; viewport: { width: number; height: number } }) {
    if (!browser) throw new Error('the browser did not start');
    const context = await browser.newContext(options);
    contexts.push(context);
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
    let authorizeUrl = '';
    const callbacks: URL[] = [];
    for (const origin of [CLIENT_A_ORIGIN, CLIENT_B_ORIGIN]) {
      await context.route(`${origin}/**`, async (route) => {
        const url = new URL(route.request().url());
        if (url.pathname === '/start') {
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
    }
    const page = await context.newPage();
    return {
      page,
      callbacks,
      /** The app at `origin` sends the browser to /authorize with these parameters. */
      async start(origin: string, params: Record<string, string>): Promise<{ scriptsRan: boolean }> {
        const { server } = running();
        authorizeUrl = `${server.address}/authorize?${new URLSearchParams(params).toString()}`;
        await page.goto(`${origin}/start`);
        const scripts = await page.locator('#link').getAttribute('data-script');
        await page.locator('#link').click();
        return { scriptsRan: scripts === 'ran' };
      },
      /** Where the browser landed at `origin` last. */
      async landed(origin: string): Promise<URL> {
        await page.waitForURL((url) => url.origin === origin && url.pathname === '/callback');
        const callback = callbacks.at(-1);
        expect(callback?.origin).toBe(origin);
        return callback as URL;
      },
    };
  }

  type Consumer = Awaited<ReturnType<typeof openBrowser>>;

  function pkce() {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    return { verifier, challenge };
  }

  function authorizeParams(clientId: string, redirectUri: string, challenge: string, state: string) {
    return { response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state, code_challenge: challenge, code_challenge_method: 'S256' };
  }

  /** The newest one-time PIN texted to `mobile`, from the sandbox outbox. */
  async function latestOtp(mobile: string): Promise<string> {
    const { server } = running();
    const res = await fetch(`${server.address}/sandbox/messages?to=${encodeURIComponent(mobile)}`, { signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
    expect(res.status).toBe(200);
    const { messages } = (await res.json()) as { messages: { to: string; body: string }[] };
    const code = /\b(\d{6})\b/.exec(messages[0]?.body ?? '')?.[1];
    if (!code) throw new Error(`no one-time PIN texted to ${mobile}`);
    return code;
  }

  async function exchangeCode(client: { clientId: string; clientSecret: string }, redirectUri: string, code: string, verifier: string) {
    return exchangeCodeAt(running().server.address, client, { redirectUri, code, verifier }, STEP_TIMEOUT_MS);
  }

  /** Logs `customer` in through client A, the whole way: mobile + PIN, one-time PIN, back at A with a code. */
  async function logInThroughA(consumer: Consumer, customer: Customer, screenshot?: { name: string; context: TestContext }) {
    const { demo } = running();
    const { page } = consumer;
    const state = randomBytes(12).toString('base64url');
    await consumer.start(CLIENT_A_ORIGIN, authorizeParams(demo.clientId, DEMO_SHOP_REDIRECT_URI, pkce().challenge, state));
    await page.waitForURL((url) => url.pathname === '/login');
    await expect(page.locator('main').innerText()).resolves.toContain(`${DEMO_CLIENT_NAME} wants to link your account`);
    if (screenshot) await takeScreenshot(page, screenshot.name, screenshot.context);
    await page.getByLabel('Mobile number').fill(customer.mobile);
    await page.getByLabel('PIN', { exact: true }).fill(customer.pin);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.pathname === '/login/otp');
    await page.getByLabel('One-time code').fill(await latestOtp(customer.mobile));
    await page.getByRole('button', { name: 'Verify' }).click();
    const callback = await consumer.landed(CLIENT_A_ORIGIN);
    expect(callback.searchParams.get('code')).toMatch(/^\S{20,}$/);
    expect(callback.searchParams.get('state')).toBe(state);
  }

  /** Client B sends the (signed-in) browser to /authorize; returns the consent page's response. */
  async function startAtB(consumer: Consumer, state: string, challenge: string): Promise<{ response: Response; scriptsRan: boolean }> {
    const { clientB } = running();
    const { page } = consumer;
    const consentResponse = page.waitForResponse((r) => new URL(r.url()).pathname === '/consent' && r.request().method() === 'GET');
    const { scriptsRan } = await consumer.start(CLIENT_B_ORIGIN, authorizeParams(clientB.clientId, CLIENT_B_REDIRECT_URI, challenge, state));
    await page.waitForURL((url) => url.pathname === '/consent');
    return { response: await consentResponse, scriptsRan };
  }

  /** What the consent page says: the heading, B's name and the masked mobile, and its two buttons. */
  async function expectConsentPage(page: Page, customer: Customer) {
    expect(await page.title()).toContain(CLIENT_B_NAME);
    await expect(page.getByRole('heading', { level: 1 }).innerText()).resolves.toBe(`Allow ${CLIENT_B_NAME}?`);
    // The header shows B's initial, as the login page shows A's.
    await expect(page.locator('.party-client').innerText()).resolves.toBe('B');
    const text = await page.locator('main').innerText();
    expect(text).toContain(CLIENT_B_NAME);
    expect(text).not.toContain(DEMO_CLIENT_NAME);
    const shown = /\+63\*+\d{4}/.exec(text)?.[0];
    expect(shown).toMatch(customer.masked);
    // What approving grants: who the customer is, then B's scopes, in the default wording or the operator's.
    await expect(page.getByRole('region', { name: `${CLIENT_B_NAME} will be able to:` }).locator('li').allInnerTexts()).resolves.toEqual([
      'Know that it is you: your Connect ID, and your mobile number with only its country code and last 4 digits',
      'See your rewards\nrewards:read',
      'Redeem your points for vouchers\nrewards:write',
    ]);
    const allow = page.getByRole('button', { name: 'Allow', exact: true });
    const cancel = page.getByRole('button', { name: 'Cancel', exact: true });
    expect(await allow.getAttribute('name')).toBe('action');
    expect(await allow.getAttribute('value')).toBe('approve');
    expect(await cancel.getAttribute('name')).toBe('action');
    expect(await cancel.getAttribute('value')).toBe('cancel');
    expect(await allow.getAttribute('class')).toContain('primary');
    expect(await cancel.getAttribute('class')).toContain('secondary');
    const form = page.locator('form');
    await expect(form.count()).resolves.toBe(1);
    await expect(form.locator('input[type=hidden][name=csrf_token]').getAttribute('value')).resolves.toMatch(/\S{16,}/);
    // The primary action comes first, in the page and so in the tab order; "Not you?" last, a button of the same form.
    await expect(form.locator('button').allInnerTexts()).resolves.toEqual(['Allow', 'Cancel', 'Use another account']);
    const other = page.getByRole('button', { name: 'Use another account', exact: true });
    expect(await other.getAttribute('name')).toBe('action');
    expect(await other.getAttribute('value')).toBe('switch_account');
    // The page has no script of its own.
    await expect(page.locator('script').count()).resolves.toBe(0);
  }

  /** The CSP of the consent page forbids every script (`'none'` for script elements, by `default-src` or their own directive). */
  function expectNoScriptsAllowed(response: Response) {
    const csp = response.headers()['content-security-policy'] ?? '';
    const directives = new Map(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .filter((parts) => parts[0])
        .map(([name, ...values]) => [name as string, values]),
    );
    const scripts = directives.get('script-src-elem') ?? directives.get('script-src') ?? directives.get('default-src');
    expect(scripts, csp).toEqual(["'none'"]);
    // The form may post only here and, after the redirect, to B (browsers check form-action on redirects).
    expect(directives.get('form-action'), csp).toEqual(["'self'", CLIENT_B_ORIGIN]);
  }

  /**
   * Whether an inline script added to the page runs. The evaluation itself
   * comes from the test (the CSP does not apply to it); the script it adds
   * is the page's, and an inline script runs as it is inserted unless the
   * page's CSP forbids it.
   */
  async function inlineScriptRuns(page: Page): Promise<boolean> {
    const marker = `m${randomBytes(6).toString('hex')}`;
    const ran = await page.evaluate(`(() => {
      const script = document.createElement('script');
      script.textContent = 'document.documentElement.dataset.${marker} = "ran"';
      document.body.append(script);
      return document.documentElement.dataset.${marker} === 'ran';
    })()`);
    return ran === true;
  }

  /**
   * Usable at this width: nothing wider than the viewport (no horizontal
   * scrolling), and both buttons fully on screen once scrolled to, side by
   * side with nothing, and big enough to tap.
   */
  async function expectUsableAt(page: Page, viewport: { width: number; height: number }) {
    await page.setViewportSize(viewport);
    const widths = (await page.evaluate(
      '({ scroll: document.documentElement.scrollWidth, body: document.body.scrollWidth, client: document.documentElement.clientWidth, inner: window.innerWidth })',
    )) as { scroll: number; body: number; client: number; inner: number };
    expect(widths.inner).toBe(viewport.width);
    expect(widths.scroll, JSON.stringify(widths)).toBeLessThanOrEqual(widths.client);
    expect(widths.body, JSON.stringify(widths)).toBeLessThanOrEqual(widths.client);
    for (const name of ['Allow', 'Cancel', 'Use another account']) {
      const button = page.getByRole('button', { name, exact: true });
      await button.scrollIntoViewIfNeeded();
      const box = await button.boundingBox();
      expect(box, name).not.toBeNull();
      if (!box) continue;
      expect(box.x, name).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, name).toBeLessThanOrEqual(viewport.width);
      expect(box.y, name).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height, name).toBeLessThanOrEqual(viewport.height);
      expect(box.height, name).toBeGreaterThanOrEqual(MIN_TOUCH_TARGET);
      expect(box.width, name).toBeGreaterThanOrEqual(MIN_TOUCH_TARGET);
    }
    // The heading and the masked mobile fit, too.
    for (const locator of [page.getByRole('heading', { level: 1 }), page.locator('main strong.nowrap')]) {
      const box = await locator.boundingBox();
      expect(box).not.toBeNull();
      if (box) expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
    }
    await page.evaluate('window.scrollTo(0, 0)');
  }

  it('with JavaScript off, at phone and desktop width: the consent page names B; Allow lands at B with code, state and iss', async (context) => {
    const { server, clientB } = running();
    const customer = CUSTOMERS.allow;
    const consumer = await openBrowser({ javaScriptEnabled: false, viewport: PHONE });
    const { page } = consumer;
    await logInThroughA(consumer, customer, { name: 'login-phone', context });

    const { verifier, challenge } = pkce();
    const state = randomBytes(12).toString('base64url');
    const { response, scriptsRan } = await startAtB(consumer, state, challenge);
    // Scripts are off in this browser: the consumer's own script did not run.
    expect(scriptsRan).toBe(false);
    expect(response.status()).toBe(200);
    expectNoScriptsAllowed(response);
    await expectConsentPage(page, customer);

    await expectUsableAt(page, PHONE);
    await takeScreenshot(page, 'consent-phone', context);
    await expectUsableAt(page, DESKTOP);
    await takeScreenshot(page, 'consent-desktop', context);

    await page.getByRole('button', { name: 'Allow', exact: true }).click();
    const callback = await consumer.landed(CLIENT_B_ORIGIN);
    expect(callback.searchParams.get('error')).toBeNull();
    expect(callback.searchParams.get('code')).toMatch(/^\S{20,}$/);
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.get('iss')).toBe(server.urls.authUrl);
    expect(callback.searchParams.get('userId')).toMatch(customer.masked);

    // The code is B's: B's credentials buy tokens with it.
    const tokens = await exchangeCode(clientB, CLIENT_B_REDIRECT_URI, callback.searchParams.get('code') ?? '', verifier);
    expect(tokens.access_token).toEqual(expect.any(String));

    // B is approved now: the next authorization comes straight back with a code, no page in between.
    const again = randomBytes(12).toString('base64url');
    await consumer.start(CLIENT_B_ORIGIN, authorizeParams(clientB.clientId, CLIENT_B_REDIRECT_URI, pkce().challenge, again));
    const silent = await consumer.landed(CLIENT_B_ORIGIN);
    expect(silent.searchParams.get('state')).toBe(again);
    expect(silent.searchParams.get('code')).toMatch(/^\S{20,}$/);
  });

  it('with JavaScript on, at desktop width: the CSP stops scripts; Cancel lands at B with access_denied, and B is still not approved', async () => {
    const { server } = running();
    const customer = CUSTOMERS.cancel;
    const consumer = await openBrowser({ javaScriptEnabled: true, viewport: DESKTOP });
    const { page } = consumer;
    await logInThroughA(consumer, customer);

    const state = randomBytes(12).toString('base64url');
    const { challenge } = pkce();
    // Scripts run in this browser: on the consumer's page (no CSP) an inserted inline script runs.
    await page.goto(`${CLIENT_B_ORIGIN}/start`);
    expect(await inlineScriptRuns(page)).toBe(true);

    const { response, scriptsRan } = await startAtB(consumer, state, challenge);
    expect(scriptsRan).toBe(true);
    expectNoScriptsAllowed(response);
    await expectConsentPage(page, customer);
    // ... and on the consent page the CSP stops it.
    expect(await inlineScriptRuns(page)).toBe(false);
    await expectUsableAt(page, DESKTOP);

    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    const callback = await consumer.landed(CLIENT_B_ORIGIN);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('code')).toBeNull();
    expect(callback.searchParams.get('state')).toBe(state);
    expect(callback.searchParams.get('iss')).toBe(server.urls.authUrl);

    // Cancelling approved nothing: B asks again.
    const again = randomBytes(12).toString('base64url');
    await startAtB(consumer, again, pkce().challenge);
    await expect(page.getByRole('heading', { level: 1 }).innerText()).resolves.toBe(`Allow ${CLIENT_B_NAME}?`);
  });
});
