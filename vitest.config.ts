import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Test files that replace a module (`vi.mock`): each runs in a fresh module
 * registry of its own, so the replacement reaches no other file.
 */
const MOCKING_FILES = ['packages/server/test/unit/otp/generate-otp-range.test.ts'];

/**
 * The files that take longest (two releases side by side, PostgreSQL's
 * storage contract, commands run as processes, Chromium, the budgets),
 * most expensive first. They start before the rest, so that no long file
 * is left running alone at the end while the other worker has nothing to
 * do.
 */
const SLOW_FIRST = [
  /\/cli\/mixed-versions\.test\.ts$/,
  /\/storage\/postgres\.test\.ts$/,
  /\/cli\/(two-instances|cli-beside-server|shutdown|serve)\.test\.ts$/,
  /\/browser\//,
  /\/(customer-tokens-endpoint|reset-budgets|sandbox-budgets|acr-max-age|journey\/passkeys)\.test\.ts$/,
  /\/limits\/postgres\.test\.ts$/,
  /\/cli\//,
];

/** Vitest's own order (by size, or by the last run's times when it has them), with {@link SLOW_FIRST} first. */
class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = SLOW_FIRST.findIndex((pattern) => pattern.test(file.moduleId));
      return at === -1 ? SLOW_FIRST.length : at;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    // One migrated PostgreSQL database that the tests copy; one notice per
    // service (PostgreSQL, Redis, Chromium, GnuPG) whose suites were skipped.
    globalSetup: ['packages/server/test/helpers/postgres-template.ts', 'packages/server/test/helpers/skip-notices.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Tests create their own databases; files may run in parallel.
    pool: 'forks',
    // Two files at a time on the 2-core machines: much of a test's time is
    // spent waiting on PostgreSQL, Redis or a child process.
    maxWorkers: 2,
    reporters: ['default'],
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'bench/test/**/*.test.js'],
          exclude: [...configDefaults.exclude, ...MOCKING_FILES],
          // A worker's files share the modules they import (Fastify, Kysely, pg …),
          // loaded once per worker instead of once per file: every file builds
          // its own servers, databases and clocks, and none replaces a module.
          isolate: false,
        },
      },
      { extends: true, test: { name: 'mocking', include: MOCKING_FILES } },
    ],
  },
});
