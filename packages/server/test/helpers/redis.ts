import { noteSkipped } from './skip-notices.js';

/**
 * The Redis server the tests use, from `CONNECT_TEST_REDIS_URL`
 * (e.g. `redis://127.0.0.1:6379`). Without it the Redis suites are skipped
 * and the run names Redis once at its end (test/helpers/skip-notices.ts).
 */
export const redisTestUrl: string | undefined = process.env.CONNECT_TEST_REDIS_URL || undefined;

/** Notes that the Redis suite `suite` did not run. */
export function noticeRedisSkipped(suite: string): void {
  if (!redisTestUrl) noteSkipped('Redis', suite);
}

if (!redisTestUrl && process.env.CI) {
  throw new Error('CONNECT_TEST_REDIS_URL must be set in CI: the Redis suites are required there');
}
