import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTestsRun, launchChromium } from '../helpers/chromium.js';
import { requireBuiltCli, startServe, type ProcessSetting, type ServeProcess } from '../helpers/processes.js';

/*
 * The first thing a newcomer does: `npm start` (here `connect-auth serve
 * --seed-demo`, a real process on a port of its own) prints a login link;
 * Chromium follows it, logs in as the printed demo customer, and lands on
 * the sandbox's callback page, whose printed command exchanges the code.
 * Restarted on the same data folder, the demo keeps its credentials.
 */

const STEP_TIMEOUT_MS = 10_000;

/** What the start-up banner printed: the login link and the demo's credentials. */
async function banner(server: ServeProcess) {
  const deadline = performance.now() + 10_000;
  let printed = '';
  while (!/redirect_uri=/.test(printed)) {
    if (performance.now() > deadline) throw new Error(`no login link printed: ${printed}`);
    await delay(25);
    printed = server.stdout();
  }
  const field = (name: string) => new RegExp(`${name}:\\s+(\\S+)`).exec(printed)?.[1] ?? '';
  return {
    link: /^\s+(http:\/\/\S+\/authorize\?\S+)$/m.exec(printed)?.[1] ?? '',
    clientId: field('client ID'),
    clientSecret: field('client secret'),
    mobile: field('mobile'),
    pin: field('PIN'),
  };
}

describe.skipIf(!browserTestsRun("npm start's login link in Chromium"))("npm start's login link, followed in Chromium", () => {
  let dataDir = '';
  let browser: Browser | undefined;

  beforeAll(async () => {
    requireBuiltCli();
    dataDir = await mkdtemp(join(tmpdir(), 'connect-sandbox-'));
    browser = await launchChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close().catch(() => {});
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('ends on the callback page, whose command exchanges the code; a restart keeps the demo credentials', { timeout: 90_000 }, async () => {
    const setting: ProcessSetting = { cwd: dataDir, env: { CONNECT_DATA_DIR: join(dataDir, 'data'), CONNECT_LOG_LEVEL: 'warn' } };
    const server = await startServe(setting, { CONNECT_TRUST_PROXY: 'false' }, ['--seed-demo']);
    const printed = await banner(server);
    // The printed link is on localhost, where browsers accept passkeys (never on an IP address).
    const authUrl = server.address.replace('//127.0.0.1:', '//localhost:');
    expect(printed.link).toMatch(new RegExp(`^${authUrl}/authorize\\?`));
    expect(new URL(printed.link).searchParams.get('redirect_uri')).toBe(`${authUrl}/sandbox/callback`);

    const context = await (browser as Browser).newContext({ javaScriptEnabled: false });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    const page = await context.newPage();
    await page.goto(printed.link);
    await page.fill('input[name="mobile"]', printed.mobile);
    await page.fill('input[name="pin"]', printed.pin);
    await page.click('button[name="action"][value="login"]');
    await page.waitForURL(/\/login\/otp\?/);
    const outbox = (await (await fetch(`${server.address}/sandbox/messages?to=${encodeURIComponent(printed.mobile)}`)).json()) as { messages: Array<{ body: string }> };
    const otp = /\b(\d{6})\b/.exec(outbox.messages[0]?.body ?? '')?.[1] ?? '';
    await page.fill('input[name="otp"]', otp);
    await page.click('button[name="action"][value="verify"]');
    await page.waitForURL(/\/sandbox\/callback\?/);
    expect(await page.locator('h1').textContent()).toBe('A code came back');
    const code = new URL(page.url()).searchParams.get('code') ?? '';
    expect(await page.locator('table.received').textContent()).toContain(code);
    const command = (await page.locator('#exchange-command').textContent()) ?? '';
    expect(command).toContain(printed.clientId);
    await context.close();

    // The printed command, run as printed.
    const { stdout } = await promisify(execFile)('sh', ['-c', command], { timeout: 15_000 });
    const tokens = JSON.parse(stdout) as Record<string, unknown>;
    expect(tokens).toMatchObject({ token_type: 'Bearer', access_token: expect.stringMatching(/^[\w-]+(\.[\w-]*){4}$/), refresh_token: expect.any(String) });

    // Restarted on the same data folder: the same client, secret and PIN.
    await server.stop();
    const again = await startServe(setting, { CONNECT_TRUST_PROXY: 'false' }, ['--seed-demo']);
    const reprinted = await banner(again);
    expect({ clientId: reprinted.clientId, clientSecret: reprinted.clientSecret, pin: reprinted.pin }).toEqual({
      clientId: printed.clientId,
      clientSecret: printed.clientSecret,
      pin: printed.pin,
    });
    const token = await fetch(`${again.address}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${printed.clientId}:${printed.clientSecret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(token.status).toBe(200);
    await again.stop();
  });
});
