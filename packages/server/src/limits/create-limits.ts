// Interim: replaced by the shared (database / Redis) limits.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config/schema.js';
import type { PinCheckQueue } from '../core/customers/check-pin.js';
import type { PinAttemptLimiter } from '../core/limits/pin-attempt-limiter.js';
import type { SendLimiter } from '../core/limits/send-limiter.js';
import { TemporarilyUnavailable } from '../core/errors.js';
import { createSendLimiter } from './send-limiter.js';

export function createLimits(deps: { redis: Redis | undefined; config: Config }): { sends: SendLimiter; pinAttempts: PinAttemptLimiter } {
  const perAddress = new RateLimiterMemory({ keyPrefix: 'pin', points: deps.config.environment === 'sandbox' ? 1000 : 50, duration: 3600 });
  return {
    sends: createSendLimiter(deps.redis),
    pinAttempts: {
      async take(address) {
        try {
          await perAddress.consume(address, 1);
          return undefined;
        } catch (rejection) {
          if (rejection instanceof RateLimiterRes) return { retryAfterSeconds: Math.ceil(rejection.msBeforeNext / 1000) };
          throw rejection;
        }
      },
      async giveBack(address) {
        await perAddress.reward(address, 1);
      },
    },
  };
}

export function createPinCheckQueue(options: { concurrency?: number; queueLimit?: number } = {}): PinCheckQueue {
  const concurrency = options.concurrency ?? 2;
  const limit = concurrency + (options.queueLimit ?? 32);
  let active = 0;
  const waiting: Array<() => void> = [];
  return {
    async run(work) {
      if (active + waiting.length >= limit) throw new TemporarilyUnavailable('too many PIN checks at once; try again shortly');
      if (active >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
      active++;
      try {
        return await work();
      } finally {
        active--;
        waiting.shift()?.();
      }
    },
  };
}
