import { createHash, createHmac } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import {
  OTP_WRONG_ENTRIES_PER_MOBILE,
  OTP_WRONG_ENTRIES_WINDOW_SECONDS,
  JOURNEY_PER_ADDRESS_WINDOW_SECONDS,
  PUSHED_REQUESTS_PER_CLIENT,
  PUSHED_REQUESTS_PER_CLIENT_WINDOW_SECONDS,
  PIN_PER_ADDRESS_WINDOW_SECONDS,
  RESET_OTP_WRONG_ENTRIES_PER_ADDRESS,
  RESET_OTP_WRONG_ENTRIES_WINDOW_SECONDS,
  RESET_SMS_PER_DEVICE,
  RESET_SMS_PER_DEVICE_WINDOW_SECONDS,
  RESET_SMS_PER_REQUESTER,
  RESET_SMS_PER_REQUESTER_WINDOW_SECONDS,
  RESET_SMS_UNSOLICITED_PER_MOBILE,
  RESET_SMS_UNSOLICITED_WINDOW_SECONDS,
  SMS_GLOBAL_WINDOW_SECONDS,
  SMS_PER_ADDRESS_WINDOW_SECONDS,
  SMS_PER_MOBILE_WINDOW_SECONDS,
} from '../core/lifetimes.js';
import type { ClientAddress } from '../core/client-address.js';
import type { AttemptLimiter, ClientBudget, StartLimiter, WrongEntryCounter } from '../core/limits/attempt-limiter.js';
import type { RateLimitCounterStore } from '../core/limits/rate-limit-counter-store.js';
import type { SendLimiter, SendOptions, SendRefused } from '../core/limits/send-limiter.js';
import { StorageUnavailable } from '../core/storage-errors.js';
import type { AvailabilityObserver } from '../core/storage/storage.js';
import { RateLimiterDatabase } from './rate-limiter-database.js';

/** The budgets, as the configuration names them (`config/schema.ts`). */
export interface LimitBudgets {
  /** One-time PINs sent to one mobile per 15 minutes. */
  readonly smsLimitPerMobile: number;
  /** One-time PINs requested from one client address per hour. */
  readonly smsLimitPerAddress: number;
  /** One-time PINs sent per hour by the whole deployment; `undefined`: no such budget. */
  readonly smsLimitGlobal?: number | undefined;
  /** Failed PIN checks from one client address per hour. */
  readonly pinLimitPerAddress: number;
  /** Journeys started from one client address per hour; `undefined`: no such budget. */
  readonly journeyLimitPerAddress?: number | undefined;
}

/** Where the counters live, and the budgets. */
export interface LimitsOptions {
  /** Redis, when `REDIS_URL` is set: the counters live there. */
  readonly redis?: Redis | undefined;
  /** Otherwise the database's counters (`storage.rateLimitCounters`). */
  readonly counters: RateLimitCounterStore;
  readonly budgets: LimitBudgets;
  /** Keys the hashes of mobiles and addresses in the counters' keys ({@link hashLimitKey}). */
  readonly keySecret?: Uint8Array;
  /** The clock of the database counters, epoch milliseconds; default the system time (Redis keeps its own). */
  readonly nowMs?: () => number;
  /** Told how each Redis command of the counters ends, for the log of outages (the database's are told by the storage). */
  readonly redisAvailability?: AvailabilityObserver;
}

/** Every limit of the server. */
export interface Limits {
  /**
   * The one-time PINs of logins and registrations: the mobile's budget
   * (the login's counter), the per-address and the global SMS budgets. A
   * registration's code (`unsolicited`) first takes from the same
   * requester's and unsolicited budgets as a PIN reset's from an unknown
   * browser: the number has no account, and anyone may ask for it.
   */
  readonly sends: SendLimiter;
  /** Failed PIN checks per client address. */
  readonly pinAttempts: AttemptLimiter;
  /** Journeys started per client address. */
  readonly journeyStarts: StartLimiter;
  /** Wrong one-time-PIN entries of logins per mobile number (a registration's count against their challenge only). */
  readonly otpEntries: WrongEntryCounter;
  /**
   * The forgot-PIN flow's own budgets (docs/journey.md, "A stranger cannot
   * lock the owner out"). A code asked for from a known device of the
   * mobile's customer takes from that (customer, device)'s budget
   * ({@link RESET_SMS_PER_DEVICE}) and the mobile's budget of known
   * devices' codes; any other from the mobile's per client address
   * ({@link RESET_SMS_PER_REQUESTER}), the mobile's unsolicited one over
   * every address ({@link RESET_SMS_UNSOLICITED_PER_MOBILE}) and the
   * reset's per-mobile budget of everyone else's codes (both per-mobile
   * budgets `CONNECT_SMS_LIMIT_PER_MOBILE` per 15 minutes). Both then take
   * from the per-address and the global SMS budgets. Anyone may ask for a
   * reset of any mobile, so what they spend must never refuse the
   * customer's logins, nor the owner's reset from a known device.
   */
  readonly resetSends: SendLimiter;
  /**
   * Wrong PIN-reset codes per client address (the requester's), never per
   * mobile: an entry is taken before it is compared, and given back unless
   * it was wrong, so entries sent at once never pass the budget.
   */
  readonly resetOtpEntries: AttemptLimiter;
  /** Pushed authorization requests stored per client (`PUSHED_REQUESTS_PER_CLIENT` a minute). */
  readonly pushedRequests: ClientBudget;
}

/** The prefixes under which the counters are stored, each followed by `:` and a {@link hashLimitKey}. */
export const LIMIT_KEY_PREFIXES = {
  smsPerMobile: 'connect:sms:mobile',
  smsPerAddress: 'connect:sms:address',
  smsGlobal: 'connect:sms:global',
  pinPerAddress: 'connect:pin:address',
  journeyPerAddress: 'connect:journey:address',
  otpPerMobile: 'connect:otp:mobile',
  resetSmsPerMobile: 'connect:reset-sms:mobile',
  resetSmsPerRequester: 'connect:reset-sms:requester',
  resetSmsUnsolicited: 'connect:reset-sms:unsolicited',
  resetSmsPerDevice: 'connect:reset-sms:device',
  resetSmsPerMobileOfKnownDevices: 'connect:reset-sms:known-mobile',
  resetOtpPerAddress: 'connect:reset-otp:address',
  pushedPerClient: 'connect:par:client',
} as const;

/**
 * A mobile number or client address as it is stored in a counter's key:
 * its HMAC-SHA-256 under `secret` (a key derived from the master key), so
 * the counters hold neither, and trying every number or address against
 * them is of no use without the key. Without a secret (tests), its SHA-256.
 */
export function hashLimitKey(value: string, secret?: Uint8Array): string {
  return (secret ? createHmac('sha256', secret) : createHash('sha256')).update(value).digest('base64url');
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
      ? observed(
          new RateLimiterRedis({
            storeClient: options.redis,
            keyPrefix,
            points,
            duration,
            useRedisPackage: false,
            rejectIfRedisNotReady: true,
            customIncrTtlLuaScript: INCR_TTL_SCRIPT,
          }),
          options.redisAvailability,
        )
      : new RateLimiterDatabase({ counters: options.counters, keyPrefix, points, duration, ...(options.nowMs ? { nowMs: options.nowMs } : {}) });
  const { budgets } = options;
  const key = (value: string) => hashLimitKey(value, options.keySecret);
  // Every per-address budget counts the address's bucket (core/client-address.ts), never a raw string.
  const addressKey = (address: ClientAddress) => key(address.bucket);
  const smsPerMobile = limiter(LIMIT_KEY_PREFIXES.smsPerMobile, budgets.smsLimitPerMobile, SMS_PER_MOBILE_WINDOW_SECONDS);
  const smsPerAddress = limiter(LIMIT_KEY_PREFIXES.smsPerAddress, budgets.smsLimitPerAddress, SMS_PER_ADDRESS_WINDOW_SECONDS);
  const smsGlobal = budgets.smsLimitGlobal === undefined ? undefined : limiter(LIMIT_KEY_PREFIXES.smsGlobal, budgets.smsLimitGlobal, SMS_GLOBAL_WINDOW_SECONDS);
  const pinPerAddress = limiter(LIMIT_KEY_PREFIXES.pinPerAddress, budgets.pinLimitPerAddress, PIN_PER_ADDRESS_WINDOW_SECONDS);
  const journeyPerAddress =
    budgets.journeyLimitPerAddress === undefined
      ? undefined
      : limiter(LIMIT_KEY_PREFIXES.journeyPerAddress, budgets.journeyLimitPerAddress, JOURNEY_PER_ADDRESS_WINDOW_SECONDS);
  const otpPerMobile = limiter(LIMIT_KEY_PREFIXES.otpPerMobile, OTP_WRONG_ENTRIES_PER_MOBILE, OTP_WRONG_ENTRIES_WINDOW_SECONDS);

  const resetSmsPerMobile = limiter(LIMIT_KEY_PREFIXES.resetSmsPerMobile, budgets.smsLimitPerMobile, SMS_PER_MOBILE_WINDOW_SECONDS);
  const resetSmsPerRequester = limiter(LIMIT_KEY_PREFIXES.resetSmsPerRequester, RESET_SMS_PER_REQUESTER, RESET_SMS_PER_REQUESTER_WINDOW_SECONDS);
  const resetSmsUnsolicited = limiter(LIMIT_KEY_PREFIXES.resetSmsUnsolicited, RESET_SMS_UNSOLICITED_PER_MOBILE, RESET_SMS_UNSOLICITED_WINDOW_SECONDS);
  const resetSmsPerDevice = limiter(LIMIT_KEY_PREFIXES.resetSmsPerDevice, RESET_SMS_PER_DEVICE, RESET_SMS_PER_DEVICE_WINDOW_SECONDS);
  // Known devices' reset codes per mobile: a counter no stranger can spend (docs/journey.md, "A stranger cannot lock the owner out").
  const resetSmsPerMobileOfKnownDevices = limiter(LIMIT_KEY_PREFIXES.resetSmsPerMobileOfKnownDevices, budgets.smsLimitPerMobile, SMS_PER_MOBILE_WINDOW_SECONDS);
  const pushedPerClient = limiter(LIMIT_KEY_PREFIXES.pushedPerClient, PUSHED_REQUESTS_PER_CLIENT, PUSHED_REQUESTS_PER_CLIENT_WINDOW_SECONDS);
  const resetOtpPerAddress = limiter(LIMIT_KEY_PREFIXES.resetOtpPerAddress, RESET_OTP_WRONG_ENTRIES_PER_ADDRESS, RESET_OTP_WRONG_ENTRIES_WINDOW_SECONDS);

  // Codes anyone may have sent to a mobile (docs/journey.md, "A stranger cannot lock the owner out", "Registration").
  const unsolicitedBudgets = (mobile: string, address: ClientAddress): Budget[] => [
    ['requester', resetSmsPerRequester, key(`${mobile} ${address.bucket}`), 'take'],
    ['unsolicited', resetSmsUnsolicited, key(mobile), 'take'],
  ];
  const sendLimiter = (perMobile: RateLimiterAbstract, reset?: { readonly perDevice: RateLimiterAbstract; readonly perMobileOfKnownDevices: RateLimiterAbstract }): SendLimiter => {
    // Each budget in turn; a spent one gives back what the ones before took.
    // The requester's own budget first: a stranger refused there never touches the mobile's.
    // A known device of the customer takes from its own budget instead of the ones a stranger can spend.
    // A request that sends nothing only checks the global budget, never spends it, but at the
    // same place in the order: its answer is the one a send would get, whichever budgets are spent.
    const budgetsOf = (mobile: string, address: ClientAddress, options: SendOptions | undefined): Budget[] => {
      const device = reset ? options?.knownDevice : undefined;
      const own: Budget[] = device
        ? [['device', reset?.perDevice, key(`${device.profileId} ${device.deviceId}`), 'take']]
        : reset || options?.unsolicited
          ? unsolicitedBudgets(mobile, address)
          : [];
      return [
        ...own,
        // A known device's codes count per mobile apart from everyone else's: what strangers spend never refuses them.
        ['mobile', device ? reset?.perMobileOfKnownDevices : perMobile, key(mobile), 'take'],
        ['address', smsPerAddress, addressKey(address), 'take'],
        ['global', smsGlobal, key(GLOBAL_KEY), options?.sendsNothing ? 'check' : 'take'],
      ];
    };
    return {
      async take(mobile, address, options) {
        const taken: [RateLimiterAbstract, string][] = [];
        for (const [budget, counter, counterKey, how] of budgetsOf(mobile, address, options)) {
          if (!counter) continue;
          const refused = await (how === 'take' ? take(counter, counterKey) : isSpent(counter, counterKey)).catch(async (error: unknown) => {
            for (const [done, doneKey] of taken) await giveBack(done, doneKey).catch(() => {});
            throw error;
          });
          if (refused) {
            for (const [done, doneKey] of taken) await giveBack(done, doneKey);
            return { budget, retryAfterSeconds: refused.retryAfterSeconds };
          }
          if (how === 'take') taken.push([counter, counterKey]);
        }
        return undefined;
      },
      async giveBack(mobile, address, options) {
        for (const [, counter, counterKey, how] of budgetsOf(mobile, address, options)) {
          if (counter && how === 'take') await giveBack(counter, counterKey);
        }
      },
    };
  };
  const wrongEntryCounter = (counter: RateLimiterAbstract, keyOf: (value: string) => string): WrongEntryCounter => ({
    spent: (value) => isSpent(counter, keyOf(value)),
    async count(value) {
      try {
        await counter.penalty(keyOf(value), 1);
      } catch (error) {
        throw unavailable(error);
      }
    },
  });

  return {
    sends: sendLimiter(smsPerMobile),
    pinAttempts: {
      take: (address) => take(pinPerAddress, addressKey(address)),
      giveBack: (address) => giveBack(pinPerAddress, addressKey(address)),
    },
    journeyStarts: {
      take: async (address) => (journeyPerAddress ? take(journeyPerAddress, addressKey(address)) : undefined),
    },
    otpEntries: wrongEntryCounter(otpPerMobile, key),
    resetSends: sendLimiter(resetSmsPerMobile, { perDevice: resetSmsPerDevice, perMobileOfKnownDevices: resetSmsPerMobileOfKnownDevices }),
    resetOtpEntries: {
      take: (address) => take(resetOtpPerAddress, addressKey(address)),
      giveBack: (address) => giveBack(resetOtpPerAddress, addressKey(address)),
    },
    pushedRequests: { take: (clientId) => take(pushedPerClient, key(clientId)) },
  };
}

/**
 * `limiter`, telling `observer` how each of the calls the limits make
 * ends: a refusal (`RateLimiterRes`) is an answer of Redis; any other
 * error means it could not be reached.
 */
function observed(limiter: RateLimiterAbstract, observer: AvailabilityObserver | undefined): RateLimiterAbstract {
  if (!observer) return limiter;
  const watch =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        const result = await call.apply(limiter, args);
        observer.available();
        return result;
      } catch (error) {
        if (error instanceof RateLimiterRes) observer.available();
        else observer.unavailable(unavailable(error));
        throw error;
      }
    };
  limiter.consume = watch(limiter.consume);
  limiter.reward = watch(limiter.reward);
  limiter.penalty = watch(limiter.penalty);
  limiter.get = watch(limiter.get);
  return limiter;
}

/**
 * The script that adds to a counter in Redis: rate-limiter-flexible's own
 * (its `customIncrTtlLuaScript` option), with one rule before it: points
 * given back (negative, the library's `reward`) come off a live counter
 * only. Without it, a point given back after its window ended would start
 * the next window at -1 and let it pass its budget by one; as with the
 * database's counters (`RateLimiterDatabase`), it is dropped instead
 * (docs/lifetimes.md).
 */
const INCR_TTL_SCRIPT = `if tonumber(ARGV[1]) < 0 and redis.call('pttl', KEYS[1]) < 0 then
  return {0, 0}
end
redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX')
local consumed = redis.call('incrby', KEYS[1], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('expire', KEYS[1], ARGV[2])
  ttl = 1000 * ARGV[2]
end
return {consumed, ttl}`;

/** One budget of a send: which, its counter, its key, and whether it is taken or only checked. */
type Budget = [SendRefused['budget'], RateLimiterAbstract | undefined, string, 'take' | 'check'];

/** The one key of the whole deployment's budget (hashed as the others are: deployments sharing a Redis keep their own). */
const GLOBAL_KEY = 'all';

/**
 * Takes one point from `key`'s budget. A refusal takes nothing: the library
 * counted the point before it refused, so it is given back, and refused
 * requests never push the count further. Not in the last
 * {@link REFUSAL_KEPT_MS} of the window, though: a point given back there
 * could land after the window's end, on the next window another request
 * has just started, and refusals arriving in numbers at the turn would
 * open it far past its budget (docs/lifetimes.md). A count left above the
 * budget ends with its window.
 */
async function take(limiter: RateLimiterAbstract, key: string): Promise<{ retryAfterSeconds: number } | undefined> {
  try {
    await limiter.consume(key, 1);
    return undefined;
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw unavailable(rejection);
    if (rejection.msBeforeNext > REFUSAL_KEPT_MS) await giveBack(limiter, key);
    return { retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
  }
}

/** The end of a window within which a refused point is not given back ({@link take}): well above the counters' default timeouts (1 s for Redis, 5 s for the database). */
const REFUSAL_KEPT_MS = 10_000;

/** Whether `key`'s budget is spent (nothing taken): then how long until a point comes back. */
async function isSpent(limiter: RateLimiterAbstract, key: string): Promise<{ retryAfterSeconds: number } | undefined> {
  let state: RateLimiterRes | null;
  try {
    state = await limiter.get(key);
  } catch (error) {
    throw unavailable(error);
  }
  return state && state.consumedPoints >= limiter.points ? { retryAfterSeconds: Math.max(1, Math.ceil(state.msBeforeNext / 1000)) } : undefined;
}

async function giveBack(limiter: RateLimiterAbstract, key: string): Promise<void> {
  try {
    await limiter.reward(key, 1);
  } catch (error) {
    throw unavailable(error);
  }
}

function unavailable(cause: unknown): StorageUnavailable {
  // Not one already: Redis's (the database's counters throw StorageUnavailable themselves).
  return cause instanceof StorageUnavailable ? cause : new StorageUnavailable('the rate-limit counters cannot be reached', { cause, dependency: 'redis' });
}
