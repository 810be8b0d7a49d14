import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'bench/test/**/*.test.js'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Tests create their own databases; files may run in parallel.
    pool: 'forks',
    reporters: ['default'],
  },
});
