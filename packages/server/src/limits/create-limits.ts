import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { PIN_PER_ADDRESS_WINDOW_SECONDS, SMS_PER_ADDRESS_WINDOW_SECONDS, SMS_PER_MOBILE_WINDOW_SECONDS } from '../core/lifetimes.js';
import type { PinAttemptLimiter } from '../core/limits/pin-attempt-limiter.js';
import type { RateLimitCounterStore } from '../core/limits/rate-limit-counter-store.js';
import type { SendLimiter } from '../core/limits/send-limiter.js';
import { StorageUnavailable } from '../core/storage-errors.js';
import { RateLimiterDatabase } from './rate-limiter-database.js';

/** The budgets, as the configuration names them (`config/schema.ts`). */
export interface LimitBudgets {
  /** One-time PINs sent to one mobile per 15 minutes. */
  readonly smsLimitPerMobile: number;
  /** One-time PINs requested from one client address per hour. */
  readonly smsLimitPerAddress: number;
  /** Failed PIN checks from one client address per hour. */
  readonly pinLimitPerAddress: number;
}

/** Where the counters live, and the budgets. */
export interface LimitsOptions {
  /** Redis, when `REDIS_URL` is set: the counters live there. */
  readonly redis?: Redis | undefined;
  /** Otherwise the database's counters (`storage.rateLimitCounters`). */
  readonly counters: RateLimitCounterStore;
  readonly budgets: LimitBudgets;
  /** The clock of the database counters, epoch milliseconds; default the system time (Redis keeps its own). */
  readonly nowMs?: () => number;
}

/** Every limit of the server. */
export interface Limits {
  readonly sends: SendLimiter;
  readonly pinAttempts: PinAttemptLimiter;
}

/** The prefixes under which the counters are stored, each followed by `:` and a {@link hashLimitKey}. */
export const LIMIT_KEY_PREFIXES = {
  smsPerMobile: 'connect:sms:mobile',
  smsPerAddress: 'connect:sms:address',
  pinPerAddress: 'connect:pin:address',
} as const;

/**
 * A mobile number or client address as it is stored in a counter's key:
 * its SHA-256, base64url, so the counters hold neither.
 */
export function hashLimitKey(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/**
 * Builds every limit on rate-limiter-flexible: in Redis when a client is
 * given, otherwise in the database, so that all instances count against
 * the same budgets; never in the memory of one process. The limits fail
 * closed: when Redis or the database cannot be reached they throw
 * `StorageUnavailable` and nothing goes ahead.
 *
 * @example
 * const limits = createLimits({ redis, counters: storage.rateLimitCounters, budgets: config });
 */
export function createLimits(options: LimitsOptions): Limits {
  const limiter = (keyPrefix: string, points: number, duration: number): RateLimiterAbstract =>
    options.redis
      ? new RateLimiterRedis({ storeClient: options.redis, keyPrefix, points, duration, useRedisPackage: false, rejectIfRedisNotReady: true })
      : new RateLimiterDatabase({ counters: options.counters, keyPrefix, points, duration, ...(options.nowMs ? { nowMs: options.nowMs } : {}) });
  const { budgets } = options;
  const smsPerMobile = limiter(LIMIT_KEY_PREFIXES.smsPerMobile, budgets.smsLimitPerMobile, SMS_PER_MOBILE_WINDOW_SECONDS);
  const smsPerAddress = limiter(LIMIT_KEY_PREFIXES.smsPerAddress, budgets.smsLimitPerAddress, SMS_PER_ADDRESS_WINDOW_SECONDS);
  const pinPerAddress = limiter(LIMIT_KEY_PREFIXES.pinPerAddress, budgets.pinLimitPerAddress, PIN_PER_ADDRESS_WINDOW_SECONDS);

  return {
    sends: {
      async take(mobile, ip) {
        const mobileKey = hashLimitKey(mobile);
        const refused = await take(smsPerMobile, mobileKey);
        if (refused) return refused;
        const refusedAddress = await take(smsPerAddress, hashLimitKey(ip));
        if (refusedAddress) {
          await giveBack(smsPerMobile, mobileKey);
          return refusedAddress;
        }
        return undefined;
      },
    },
    pinAttempts: {
      take: (address) => take(pinPerAddress, hashLimitKey(address)),
      giveBack: (address) => giveBack(pinPerAddress, hashLimitKey(address)),
    },
  };
}

/**
 * Takes one point from `key`'s budget. A refusal takes nothing: the library
 * counted the point before it refused, so it is given back, and refused
 * requests never push the count further.
 */
async function take(limiter: RateLimiterAbstract, key: string): Promise<{ retryAfterSeconds: number } | undefined> {
  try {
    await limiter.consume(key, 1);
    return undefined;
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw unavailable(rejection);
    await giveBack(limiter, key);
    return { retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
  }
}

async function giveBack(limiter: RateLimiterAbstract, key: string): Promise<void> {
  try {
    await limiter.reward(key, 1);
  } catch (error) {
    throw unavailable(error);
  }
}

function unavailable(cause: unknown): StorageUnavailable {
  return cause instanceof StorageUnavailable ? cause : new StorageUnavailable('the rate-limit counters cannot be reached', { cause });
}
