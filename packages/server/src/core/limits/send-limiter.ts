/**
 * Counts one-time-PIN sends so the service cannot be used to flood a phone
 * or to send SMS in bulk. Budgets come from the configuration
 * (`CONNECT_SMS_LIMIT_PER_MOBILE`, `CONNECT_SMS_LIMIT_PER_ADDRESS`); the
 * counts are shared by every instance, in Redis when `REDIS_URL` is set and
 * in the database otherwise. Implemented with rate-limiter-flexible in
 * `src/limits/`.
 */
export interface SendLimiter {
  /**
   * Takes one send from the budgets of `mobile` and `ip`. Resolves with
   * `retryAfterSeconds` when either budget is spent (nothing is taken then
   * from either), `undefined` when the send may go ahead. Throws
   * `StorageUnavailable` when the counters cannot be reached: no send then.
   */
  take(mobile: string, ip: string): Promise<{ retryAfterSeconds: number } | undefined>;
}
