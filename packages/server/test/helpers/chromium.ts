import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect, type TestContext } from 'vitest';
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

/** The phone the hosted pages are checked on (docs/hosted-login.md, "On a phone"). */
export const PHONE = { width: 390, height: 844 };

/** The smallest tap target, in CSS pixels, both ways. */
export const MIN_TARGET = 44;

/**
 * The page fits the phone: nothing scrolls sideways, nothing sticks out
 * of the viewport, and every visible link, button and field is at least
 * 44 x 44 px. Returns how many targets there were.
 */
export async function expectFitsPhone(page: Page, label: string): Promise<number> {
  // Evaluated in the page (as text: the tests are compiled without the DOM's types).
  const widths = (await page.evaluate(`({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
    bodyScrollWidth: document.body.scrollWidth,
    widest: Math.max(...Array.from(document.querySelectorAll('main *'), (e) => e.getBoundingClientRect().right)),
  })`)) as { scrollWidth: number; clientWidth: number; bodyScrollWidth: number; widest: number };
  expect(widths.scrollWidth, `${label}: no horizontal scroll`).toBeLessThanOrEqual(widths.clientWidth);
  expect(widths.bodyScrollWidth, `${label}: no horizontal scroll`).toBeLessThanOrEqual(widths.clientWidth);
  expect(widths.widest, `${label}: everything inside the viewport`).toBeLessThanOrEqual(PHONE.width);
  const small: string[] = [];
  let targets = 0;
  let smallest = { width: Infinity, height: Infinity };
  for (const target of await page.locator('a[href], button, summary, input:not([type=hidden]), select, textarea').all()) {
    const box = await target.boundingBox();
    if (!box || !(await target.isVisible())) continue;
    targets++;
    smallest = { width: Math.min(smallest.width, box.width), height: Math.min(smallest.height, box.height) };
    if (box.height < MIN_TARGET || box.width < MIN_TARGET) {
      const name = (await target.getAttribute('name')) ?? (await target.innerText()).trim();
      small.push(`"${name}" is ${box.width.toFixed(1)} x ${box.height.toFixed(1)} px`);
    }
  }
  // The figures, for the record: page width, and the smallest target's width and height (not necessarily one element's).
  const sizes = targets === 0 ? 'no targets' : `${targets} targets, the narrowest ${smallest.width.toFixed(1)} px, the lowest ${smallest.height.toFixed(1)} px`;
  console.info(`${label}: ${widths.scrollWidth} px wide in ${widths.clientWidth}; ${sizes}`);
  expect(small, `${label}: tap targets under ${MIN_TARGET} px`).toEqual([]);
  return targets;
}
