import { createRequire } from 'node:module';
import { RateLimiterRes, type RateLimiterStoreAbstract as StoreAbstract } from 'rate-limiter-flexible';
import type { RateLimitCounter, RateLimitCounterStore } from '../core/limits/rate-limit-counter-store.js';

// The package's types declare its base class for stores, but its entry point
// does not export it; the class lives in lib/, as its own stores import it.
const RateLimiterStoreAbstract = createRequire(import.meta.url)('rate-limiter-flexible/lib/RateLimiterStoreAbstract.js') as typeof StoreAbstract;

/** What a {@link RateLimiterDatabase} needs. */
export interface RateLimiterDatabaseOptions {
  /** The database's counters: `storage.rateLimitCounters`. */
  readonly counters: RateLimitCounterStore;
  /** Names this limit's counters; keys are stored as `<keyPrefix>:<key>`. */
  readonly keyPrefix: string;
  /** The budget: points per window. */
  readonly points: number;
  /** The window, in seconds. */
  readonly duration: number;
  /** The limiter's clock, epoch milliseconds; default the system time. */
  readonly nowMs?: () => number;
}

/**
 * rate-limiter-flexible with Connect's database as its store, so every
 * instance sharing the database counts against the same budgets.
 *
 * The library's own algorithm (consume, reward, block, …) runs unchanged;
 * this class only gives it a store, through its documented extension point
 * for custom stores, as its `RateLimiterPostgres` does. The counters go
 * through the {@link RateLimitCounterStore} port, so through Kysely and its
 * connections: never a second connection to the same SQLite file, which
 * would have to wait synchronously for a transaction Kysely holds open in
 * this very process. Each add is one atomic statement of that store.
 */
export class RateLimiterDatabase extends RateLimiterStoreAbstract {
  readonly #counters: RateLimitCounterStore;
  readonly #nowMs: () => number;

  constructor(options: RateLimiterDatabaseOptions) {
    super({ storeClient: options.counters, keyPrefix: options.keyPrefix, points: options.points, duration: options.duration });
    this.#counters = options.counters;
    this.#nowMs = options.nowMs ?? Date.now;
  }

  /**
   * Adds `points` to the counter of `rlKey`; a new or expired counter lives
   * `msDuration` (0: for ever). Points given back (negative, the library's
   * `reward`) come off a live counter only: given back after their window
   * ended, before any count started the next one, they are dropped instead
   * of starting it below zero (docs/lifetimes.md).
   */
  async _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<RateLimitCounter> {
    const now = this.#nowMs();
    if (points < 0 && !forceExpire) return (await this.#counters.subtractFromLiveRateLimitCounter(rlKey, -points, now)) ?? { points: 0, expiresAt: null };
    return this.#counters.addToRateLimitCounter(rlKey, points, msDuration > 0 ? now + msDuration : null, now, forceExpire);
  }

  /** The live counter of `rlKey`, or `null` (the library's "no counter"). */
  async _get(rlKey: string): Promise<RateLimitCounter | null> {
    return (await this.#counters.findRateLimitCounter(rlKey, this.#nowMs())) ?? null;
  }

  _delete(rlKey: string): Promise<boolean> {
    return this.#counters.deleteRateLimitCounter(rlKey);
  }

  /** The library's view of a counter after `changedPoints` were added to it. */
  _getRateLimiterRes(_rlKey: string, changedPoints: number, counter: RateLimitCounter): RateLimiterRes {
    const isFirstInDuration = changedPoints === counter.points;
    const consumedPoints = isFirstInDuration ? changedPoints : counter.points;
    const msBeforeNext = counter.expiresAt === null ? -1 : Math.max(counter.expiresAt - this.#nowMs(), 0);
    return new RateLimiterRes(Math.max(this.points - consumedPoints, 0), msBeforeNext, consumedPoints, isFirstInDuration);
  }
}
