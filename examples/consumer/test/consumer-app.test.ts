import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, startServer, type RunningServer } from '@connect-auth/server';
import { exportJWK, generateKeyPair } from 'jose';
import type { ConnectOptions } from '@connect-auth/client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTestsRun, launchChromium } from '../../../packages/server/test/helpers/chromium.js';
import { createConsumerApp } from '../src/consumer-app.js';
import { startPlatformApi } from '../src/platform-api.js';

/*
 * The demo shop in Debian's Chromium (playwright-core), against a real
 * Connect server: Link my account → Connect's login page → mobile + PIN →
 * the one-time PIN from the sandbox outbox → back at the shop with userId,
 * profileId and the answer of the example platform API (a resource server
 * checking the token at /introspect) → Refresh now shows a new token. All
 * listen on free ports; the shop's client is registered with its actual
 * redirect URI. The same walk runs for a shop with a client secret and for
 * one that is a FAPI 2.0 client (a private key and DPoP; only its
 * `connect` options differ).
 */

const STEP_TIMEOUT_MS = 10_000;

describe.skipIf(!browserTestsRun('the demo shop in Chromium')).each(['secret', 'fapi2'] as const)('the demo shop in Chromium, client %s', (profile) => {
  let dataDir: string | undefined;
  let connect: RunningServer | undefined;
  let shop: Server | undefined;
  let api: Awaited<ReturnType<typeof startPlatformApi>> | undefined;
  let shopUrl = '';
  let shopClientId = '';
  let browser: Browser | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'connect-shop-'));
    const env = { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent' };
    connect = await startServer({ env, seedDemo: true, print: () => {} });

    // The shop's port first, so its client can be registered with the exact redirect URI.
    shop = createServer();
    await new Promise<void>((resolve) => shop?.listen(0, '127.0.0.1', resolve));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
    let out = '';
    // A FAPI 2.0 shop registers the public half of its signing key and keeps the private half.
    const signing = await generateKeyPair('ES256');
    const jwksFile = join(dataDir, 'shop-jwks.json');
    await writeFile(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(signing.publicKey)), kid: 'shop', alg: 'ES256', use: 'sig' }] }));
    const fapi = profile === 'fapi2' ? ['--profile', 'fapi2', '--jwks', jwksFile] : [];
    const status = await runCli(
      ['clients', 'create', '--name', 'Demo Shop (test)', '--redirect-uri', `${shopUrl}/callback`, '--grants', 'client_credentials,authorization_code,refresh_token', ...fapi, '--json'],
      { env: { ...env, CONNECT_AUTH_URL: connect.urls.authUrl }, stdout: (text) => void (out += text), stderr: () => {} },
    );
    expect(status).toBe(0);
    const client = JSON.parse(out) as { clientId: string; clientSecret?: string };
    shopClientId = client.clientId;
    out = '';
    const registered = await runCli(['clients', 'create', '--name', 'Platform API (test)', '--resource-server', '--json'], {
      env: { ...env, CONNECT_AUTH_URL: connect.urls.authUrl },
      stdout: (text) => void (out += text),
      stderr: () => {},
    });
    expect(registered).toBe(0);
    const resourceServer = JSON.parse(out) as { clientId: string; clientSecret: string };
    api = await startPlatformApi({ connect: { authUrl: connect.urls.authUrl, ...resourceServer }, port: 0 });
    const app = createConsumerApp({
      connect: {
        authUrl: connect.urls.authUrl,
        baseUrl: connect.urls.baseUrl,
        clientId: client.clientId,
        ...(profile === 'fapi2' ? { privateKey: signing.privateKey, dpop: true } : { clientSecret: client.clientSecret ?? '' }),
      } as ConnectOptions,
      redirectUri: `${shopUrl}/callback`,
      profileUrl: `${api.url}/customer/profile`,
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

  async function latestOtp(mobile: string): Promise<string> {
    const response = await fetch(`${connect?.address}/sandbox/messages?to=${encodeURIComponent(mobile)}`, { signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
    const { messages } = (await response.json()) as { messages: Array<{ body: string }> };
    const code = /\b(\d{6})\b/.exec(messages[0]?.body ?? '')?.[1];
    if (!code) throw new Error(`no one-time PIN was texted to ${mobile}`);
    return code;
  }

  const text = (page: Page, selector: string) => page.locator(selector).innerText();

  it('links the demo customer, shows who it is and the profile, and refreshes on demand', async () => {
    if (!browser || !connect?.demo) throw new Error('set-up failed');
    const { customer } = connect.demo;
    const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    const page = await context.newPage();
    try {
      await page.goto(shopUrl);
      await page.getByRole('button', { name: 'Link my account' }).click();

      await page.waitForURL((url) => url.origin === new URL(connect?.urls.authUrl ?? '').origin && url.pathname === '/login');
      await page.getByLabel('Mobile number').fill(customer.mobile);
      await page.getByLabel('PIN', { exact: true }).fill(customer.pin);
      await page.getByRole('button', { name: 'Continue' }).click();

      await page.waitForURL((url) => url.pathname === '/login/otp');
      await page.getByLabel('One-time code').fill(await latestOtp(customer.mobile));
      await page.getByRole('button', { name: 'Verify' }).click();

      await page.waitForURL(`${shopUrl}/account`);
      expect(await text(page, '#user-id')).toBe('+63******4567');
      expect(await text(page, '#profile-id')).toBe(customer.profileId);
      const profile = JSON.parse(await text(page, '#profile-result')) as Record<string, unknown>;
      expect(profile).toMatchObject({ profileId: customer.profileId, clientId: shopClientId, checkedBy: 'introspection' });
      const firstToken = await text(page, '#token-id');
      expect(firstToken).toMatch(/^[\w-]{12}$/);

      // The shop's own cookie is HttpOnly: invisible to scripts.
      expect(await page.evaluate(() => document.cookie)).not.toContain('shop_session');

      await page.getByRole('button', { name: 'Refresh now' }).click();
      await page.waitForURL(`${shopUrl}/account`);
      await page.locator('#refresh-result').waitFor();
      expect(await text(page, '#old-token')).toBe(firstToken);
      const newToken = await text(page, '#new-token');
      expect(newToken).not.toBe(firstToken);
      expect(await text(page, '#token-id')).toBe(newToken);
      // The profile API accepts the new token.
      expect(JSON.parse(await text(page, '#profile-result'))).toMatchObject({ profileId: customer.profileId });
    } finally {
      await context.close();
    }
  });
});
