import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { SENDS_PER_IP, SENDS_PER_MOBILE, type SendLimiter } from '../core/limits/send-limiter.js';

/**
 * The one-time-PIN send limits, with rate-limiter-flexible: in memory (one
 * server), or in Redis when a client is given so every instance shares them.
 */
export function createSendLimiter(redis?: Redis): SendLimiter {
  const make = (keyPrefix: string, budget: { points: number; windowSeconds: number }): RateLimiterAbstract =>
    redis
      ? new RateLimiterRedis({ storeClient: redis, keyPrefix, points: budget.points, duration: budget.windowSeconds, useRedisPackage: false })
      : new RateLimiterMemory({ keyPrefix, points: budget.points, duration: budget.windowSeconds });
  const perMobile = make('connect:otp:mobile', SENDS_PER_MOBILE);
  const perIp = make('connect:otp:ip', SENDS_PER_IP);

  return {
    async take(mobile, ip) {
      const refused = await consume(perMobile, mobile);
      if (refused) return refused;
      const refusedIp = await consume(perIp, ip);
      if (refusedIp) {
        await perMobile.reward(mobile, 1);
        return refusedIp;
      }
      return undefined;
    },
  };
}

async function consume(limiter: RateLimiterAbstract, key: string): Promise<{ retryAfterSeconds: number } | undefined> {
  try {
    await limiter.consume(key, 1);
    return undefined;
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return { retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
    throw rejection;
  }
}
