import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium for the browser tests, driven by playwright-core: no
 * browser is ever downloaded. Used by the hosted-login tests and by the demo
 * shop's test in examples/consumer.
 */

/** Where Debian's chromium package installs the browser. */
export const CHROMIUM = '/usr/bin/chromium';

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
 * Whether the browser tests `what` run here. Without Chromium they are
 * skipped with a loud warning on a developer machine; in CI (`CI` set) they
 * run, and {@link launchChromium} fails, since CI must install Chromium.
 */
export function browserTestsRun(what: string): boolean {
  if (existsSync(CHROMIUM) || process.env.CI) return true;
  console.warn(
    [
      '',
      '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!',
      `!!  SKIPPED (${what}): ${CHROMIUM} is not installed.`,
      '!!  Install it with: apt-get update && apt-get install -y chromium',
      '!!  (In CI, where CI is set, these tests fail instead of skipping.)',
      '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!',
      '',
    ].join('\n'),
  );
  return false;
}

/**
 * Starts headless Chromium. `launch()` gives it a fresh temporary
 * `--user-data-dir` and removes it on close.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the browser tests need Debian's chromium package (.ci/run installs it)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
}
