import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Folder where test files note the suites they skipped for want of a service; empty outside a run. */
    skipNotices: string;
  }
}

/**
 * A service some suites need and a fresh clone may not have. Each missing
 * one is named once per run, after the last file, however many suites it
 * skipped (README.md, "Tests").
 */
export type SkippedService = 'PostgreSQL' | 'Redis' | 'Chromium' | 'GnuPG';

const HOW_TO_RUN: Readonly<Record<SkippedService, string>> = {
  PostgreSQL: 'set CONNECT_TEST_POSTGRES_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres) to run them',
  Redis: 'set CONNECT_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379) to run them',
  Chromium: 'install Debian\'s chromium package (apt-get install -y chromium) or point CONNECT_TEST_CHROMIUM at a Chromium to run them',
  GnuPG: 'install the Debian package gnupg to run them',
};

/** The whole notice for one service and the suites it skipped. */
export function skipNotice(service: SkippedService, suites: readonly string[]): string {
  const count = `${suites.length} suite${suites.length === 1 ? '' : 's'}`;
  return `NOTICE: ${service} not available: ${count} SKIPPED; ${HOW_TO_RUN[service]}.`;
}

/** Notes in a test file that `suite` is skipped because `service` is missing. */
export function noteSkipped(service: SkippedService, suite: string): void {
  const folder = inject('skipNotices');
  if (folder) {
    appendFileSync(join(folder, service), `${suite.replace(/\n/g, ' ')}\n`);
  } else {
    process.stderr.write(`\n${skipNotice(service, [suite])}\n\n`);
  }
}

/**
 * Global set-up of the test run: a folder for the files' notes, and at the
 * end of the run one notice per missing service.
 */
export default function setup(project: TestProject): () => void {
  const folder = mkdtempSync(join(tmpdir(), 'connect-skipped-'));
  project.provide('skipNotices', folder);
  return () => {
    const notices = readdirSync(folder)
      .sort()
      .map((service) => {
        const suites = [...new Set(readFileSync(join(folder, service), 'utf8').split('\n').filter(Boolean))];
        return skipNotice(service as SkippedService, suites);
      });
    rmSync(folder, { recursive: true, force: true });
    if (notices.length > 0) process.stdout.write(`\n${notices.join('\n')}\n\n`);
  };
}
