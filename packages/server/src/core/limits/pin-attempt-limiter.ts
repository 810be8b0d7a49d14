/**
 * Counts PIN checks per client address, across every instance, so that no
 * address can guess PINs (or spend the PIN hash's CPU) without bound. Only
 * failed checks count: a check takes one attempt before it runs, and a
 * check that succeeded gives it back. The budget comes from the
 * configuration (`CONNECT_PIN_LIMIT_PER_ADDRESS`). Implemented in `src/limits/`.
 */
export interface PinAttemptLimiter {
  /**
   * Takes one attempt from `address`'s budget, before the PIN is checked.
   * Resolves with `retryAfterSeconds` when the budget is spent (nothing is
   * taken then), `undefined` when the check may go ahead. Throws
   * `StorageUnavailable` when the counters cannot be reached: no check then.
   */
  take(address: string): Promise<{ retryAfterSeconds: number } | undefined>;
  /**
   * The check succeeded: its attempt does not count. Throws
   * `StorageUnavailable` when the counters cannot be reached.
   */
  giveBack(address: string): Promise<void>;
}
