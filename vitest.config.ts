import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'bench/test/**/*.test.js'],
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
  },
});
