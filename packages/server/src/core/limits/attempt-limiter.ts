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
 * Counts wrong one-time-PIN entries per mobile number, over all its
 * challenges, across every instance (docs/journey.md, "The one-time PIN").
 * Each challenge's own 5 entries are the hard bound, counted atomically;
 * this one bounds how many challenges' worth a mobile may spend per window,
 * so that the SMS budget is not the only bound on guessing. Implemented in
 * `src/limits/`.
 */
export interface WrongEntryCounter {
  /**
   * Whether `mobile`'s budget of wrong entries is spent: then
   * `retryAfterSeconds`, else `undefined`. Throws `StorageUnavailable` when
   * the counters cannot be reached: no entry is checked then.
   */
  spent(mobile: string): Promise<{ retryAfterSeconds: number } | undefined>;
  /** Counts one wrong entry for `mobile`. Throws `StorageUnavailable` when the counters cannot be reached. */
  count(mobile: string): Promise<void>;
}
