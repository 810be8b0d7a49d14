/**
 * Counts one-time-PIN sends so the service cannot be used to flood a phone
 * or to send SMS in bulk. Implemented with rate-limiter-flexible (in memory,
 * or in Redis when `REDIS_URL` is set), in `src/limits/`.
 */
export interface SendLimiter {
  /**
   * Takes one send from the budgets of `mobile` and `ip`. Resolves with
   * `retryAfterSeconds` when either budget is spent (nothing is taken then
   * from the other), `undefined` when the send may go ahead.
   */
  take(mobile: string, ip: string): Promise<{ retryAfterSeconds: number } | undefined>;
}

/** Sends one mobile number may receive per window. */
export const SENDS_PER_MOBILE = { points: 5, windowSeconds: 15 * 60 } as const;

/** Sends one client address may cause per window. */
export const SENDS_PER_IP = { points: 20, windowSeconds: 60 * 60 } as const;
