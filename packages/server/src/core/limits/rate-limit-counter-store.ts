/**
 * The storage port of rate-limit counters: the database keeps them when
 * there is no Redis, so every instance counts against the same budgets.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 * Unlike other stores, times here are epoch milliseconds (the rate limiter's unit).
 * Keys arrive hashed (`src/limits/`): no mobile number or client address is kept.
 */

/** A counter as stored. */
export interface RateLimitCounter {
  readonly points: number;
  /** Epoch milliseconds; `null`: never expires. */
  readonly expiresAt: number | null;
}

/** Rate-limit counters by key. */
export interface RateLimitCounterStore {
  /**
   * Adds `points` to the counter of `key` in one atomic statement and
   * returns the counter as it is after the add, so that concurrent adds, on
   * any number of instances, each see a distinct total. A counter that is
   * missing or expired at `nowMs` (or any counter, when `forceExpire`)
   * starts again from `points` and expires at `expiresAt`; a live one keeps
   * its expiry. Points given back go to {@link subtractFromLiveRateLimitCounter}.
   */
  addToRateLimitCounter(key: string, points: number, expiresAt: number | null, nowMs: number, forceExpire: boolean): Promise<RateLimitCounter>;
  /**
   * Takes `points` off the counter of `key` in one atomic statement, only
   * while it is live at `nowMs`, and returns it as it is after; a missing or
   * expired counter is left as it is (`undefined`). A point given back after
   * its window ended, before any count started the next one, must not start
   * that one below zero, which would let it pass its budget.
   */
  subtractFromLiveRateLimitCounter(key: string, points: number, nowMs: number): Promise<RateLimitCounter | undefined>;
  /** The counter of `key`, or `undefined` when missing or expired at `nowMs`. */
  findRateLimitCounter(key: string, nowMs: number): Promise<RateLimitCounter | undefined>;
  /** Removes the counter of `key`; returns whether there was one. */
  deleteRateLimitCounter(key: string): Promise<boolean>;
  /** Removes every counter expired at `nowMs` (at most `limit` of them when given); returns how many. */
  deleteExpiredRateLimitCounters(nowMs: number, limit?: number): Promise<number>;
}
