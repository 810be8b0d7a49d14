import type { ClientAddress } from '../client-address.js';

/**
 * Counts failed PIN checks per client address, across every instance, so
 * that no address can guess PINs (or spend the PIN hash's CPU) without
 * bound (`CONNECT_PIN_LIMIT_PER_ADDRESS`, docs/journey.md). Only failures
 * count: an attempt is taken before it is checked, and one that succeeded
 * (or was never checked) is given back. Implemented in `src/limits/`.
 */
export interface AttemptLimiter {
  /**
   * Takes one attempt from `address`'s budget (its `bucket`), before the attempt is checked.
   * Resolves with `retryAfterSeconds` when the budget is spent (nothing is
   * taken then), `undefined` when the check may go ahead. Throws
   * `StorageUnavailable` when the counters cannot be reached: no check then.
   */
  take(address: ClientAddress): Promise<{ retryAfterSeconds: number } | undefined>;
  /**
   * The attempt succeeded, or was not checked: it does not count. Throws
   * `StorageUnavailable` when the counters cannot be reached.
   */
  giveBack(address: ClientAddress): Promise<void>;
}

/**
 * Counts journeys started from one client address, across every instance,
 * so that anonymous `GET /authorize` requests cannot write journey rows
 * without bound (`CONNECT_JOURNEY_LIMIT_PER_ADDRESS`, docs/lifetimes.md).
 * Every journey stored counts; none is given back. Implemented in `src/limits/`.
 */
export interface StartLimiter {
  /**
   * Takes one start from `address`'s budget, before the journey is
   * stored. Resolves with `retryAfterSeconds` when the budget is spent
   * (nothing is taken then), `undefined` when the journey may start.
   * Throws `StorageUnavailable` when the counters cannot be reached: no
   * journey starts then (the limit fails closed).
   */
  take(address: ClientAddress): Promise<{ retryAfterSeconds: number } | undefined>;
}

/**
 * Counts what one client writes, across every instance: the pushed
 * authorization requests it stores (`PUSHED_REQUESTS_PER_CLIENT` per
 * minute, docs/lifetimes.md), so that a client cannot write rows without
 * bound. Nothing is given back. Implemented in `src/limits/`.
 */
export interface ClientBudget {
  /**
   * Takes one from `clientId`'s budget. Resolves with `retryAfterSeconds`
   * when it is spent (nothing is taken then), `undefined` otherwise.
   * Throws `StorageUnavailable` when the counters cannot be reached.
   */
  take(clientId: string): Promise<{ retryAfterSeconds: number } | undefined>;
}

/**
 * Counts wrong one-time-PIN entries per key, over all the challenges of
 * that key, across every instance (docs/journey.md, "The one-time PIN"):
 * a login's codes per mobile number, a PIN reset's codes per client
 * address (the requester's, never the mobile's: a stranger's wrong reset
 * codes must not refuse the owner's right one). Each challenge's own 5
 * entries are the hard bound, counted atomically; this one bounds how many
 * challenges' worth a key may spend per window, so that the SMS budget is
 * not the only bound on guessing. Implemented in `src/limits/`.
 */
export interface WrongEntryCounter {
  /**
   * Whether `key`'s budget of wrong entries is spent: then
   * `retryAfterSeconds`, else `undefined`. Throws `StorageUnavailable` when
   * the counters cannot be reached: no entry is checked then.
   */
  spent(key: string): Promise<{ retryAfterSeconds: number } | undefined>;
  /** Counts one wrong entry for `key`. Throws `StorageUnavailable` when the counters cannot be reached. */
  count(key: string): Promise<void>;
}
