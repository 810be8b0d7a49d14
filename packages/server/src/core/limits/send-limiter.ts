import type { ClientAddress } from '../client-address.js';

/**
 * Counts one-time-PIN sends so the service cannot be used to flood a phone
 * or to send SMS in bulk. Budgets come from the configuration
 * (`CONNECT_SMS_LIMIT_PER_MOBILE`, `CONNECT_SMS_LIMIT_PER_ADDRESS`, and
 * the whole deployment's `CONNECT_SMS_LIMIT_GLOBAL`); the
 * counts are shared by every instance, in Redis when `REDIS_URL` is set and
 * in the database otherwise. Implemented with rate-limiter-flexible in
 * `src/limits/`.
 */
export interface SendLimiter {
  /**
   * Takes one send from the budgets of `mobile`, of `address` (its `bucket`) and of the whole
   * deployment. Resolves with the spent budget and `retryAfterSeconds` when
   * one is spent (nothing is taken then from any), `undefined` when the
   * send may go ahead. Throws `StorageUnavailable` when the counters cannot
   * be reached: no send then.
   *
   * `sendsNothing`: the request sends no SMS (a PIN reset for a mobile
   * without an account that may reset its PIN): the whole deployment's
   * budget is then only checked, never taken, so that such requests cannot
   * spend it; it is checked in its turn, after the others, so that the
   * answer stays the one a send would get whichever budgets are spent
   * (docs/operator-guide.md, "SMS budgets").
   */
  take(mobile: string, address: ClientAddress, options?: { readonly sendsNothing?: boolean }): Promise<SendRefused | undefined>;
}

/** A send refused by a spent budget. */
export interface SendRefused {
  /** `requester`: a PIN reset's budget of one mobile from one client address. */
  readonly budget: 'requester' | 'mobile' | 'address' | 'global';
  readonly retryAfterSeconds: number;
}
