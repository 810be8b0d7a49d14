import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestContext } from 'vitest';
import { noteSkipped } from './skip-notices.js';

/**
 * Debian's Chromium for the browser tests, driven by playwright-core: no
 * browser is ever downloaded. Used by the hosted-login tests and by the demo
 * shop's test in examples/consumer.
 */

/**
 * The browser: `CONNECT_TEST_CHROMIUM` if set, else where Debian's chromium
 * package installs it. `CONNECT_TEST_CHROMIUM=none` hides it, as on a
 * machine without Chromium (README.md, "Tests").
 */
export const CHROMIUM = process.env.CONNECT_TEST_CHROMIUM ?? '/usr/bin/chromium';

const chromiumHere = (): boolean => CHROMIUM !== '' && CHROMIUM !== 'none' && existsSync(CHROMIUM);

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Time for one browser test: a few seconds on a quiet machine, but Chromium
 * renders on the same two cores as the test files beside it.
 */
export const BROWSER_TEST_MS = 60_000;

/**
 * Whether the browser tests `what` run here. Without Chromium they are
 * skipped and the run names Chromium once at its end
 * (test/helpers/skip-notices.ts); in CI (`CI` set) they run, and
 * {@link launchChromium} fails, since CI must install Chromium.
 */
export function browserTestsRun(what: string): boolean {
  if (chromiumHere() || process.env.CI) return true;
  noteSkipped('Chromium', what);
  return false;
}

/**
 * Starts headless Chromium. `launch()` gives it a fresh temporary
 * `--user-data-dir` and removes it on close.
 */
export async function launchChromium(): Promise<Browser> {
  if (!chromiumHere()) {
    throw new Error(`${CHROMIUM} is missing: the browser tests need Debian's chromium package (.ci/run installs it)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
}

/** Where the browser tests' screenshots go (git-ignored; docs/screenshots/ keeps a chosen few). */
export const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'browser', '__screenshots__');

/**
 * A full-page screenshot `SCREENSHOTS/<name>.png`, attached to the test and
 * named in its output. Transitions finished and no caret: the same page
 * gives the same picture.
 */
export async function takeScreenshot(page: Page, name: string, context: TestContext): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true, animations: 'disabled', caret: 'hide' });
  const shown = relative(process.cwd(), path);
  await context.annotate(`screenshot: ${shown}`, 'screenshot', { path, contentType: 'image/png' });
  console.info(`screenshot: ${shown}`);
}
