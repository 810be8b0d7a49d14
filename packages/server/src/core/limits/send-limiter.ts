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
  take(mobile: string, address: ClientAddress, options?: SendOptions): Promise<SendRefused | undefined>;
  /**
   * Gives back what a {@link take} with the same arguments took, when no
   * code was sent after all: a concurrent request of the same journey won
   * (a second "Send a new code", another tab), the journey ended, or the
   * request was answered first. A double click must not spend the owner's
   * few codes. Throws `StorageUnavailable` when the counters cannot be
   * reached. A code the gateway refused is not given back: it counts like
   * a sent one.
   */
  giveBack(mobile: string, address: ClientAddress, options?: SendOptions): Promise<void>;
}

/** `limiter` with `options` on every call: what a step that counts its sends one way hands to shared code. */
export function sendsWith(limiter: SendLimiter, options: SendOptions): SendLimiter {
  return {
    take: (mobile, address) => limiter.take(mobile, address, options),
    giveBack: (mobile, address) => limiter.giveBack(mobile, address, options),
  };
}

/** How a send is counted. */
export interface SendOptions {
  /** The request sends no SMS: the whole deployment's budget is only checked. */
  readonly sendsNothing?: boolean | undefined;
  /**
   * A PIN reset asked for from a known device of the mobile's customer
   * (`core/journey/known-device.ts`): it takes from that (customer, device)'s
   * own budget instead of the mobile's per-address and unsolicited ones
   * (docs/journey.md, "A stranger cannot lock the owner out"). Only the
   * reset's limiter has these budgets; the login's ignores it.
   */
  readonly knownDevice?: { readonly profileId: string; readonly deviceId: string } | undefined;
  /**
   * A code anyone may have sent to the mobile: a registration's (the number
   * has no account yet). It takes from the same budgets as a PIN reset
   * asked for from a browser that is not a known device (the requester's,
   * one mobile from one client address, and the mobile's unsolicited one
   * over every address) before the limiter's own (docs/journey.md,
   * "Registration"). The reset's limiter counts every request so anyway.
   */
  readonly unsolicited?: boolean | undefined;
}

/** A send refused by a spent budget. */
export interface SendRefused {
  /**
   * The budgets of unsolicited codes (a PIN reset's, a registration's):
   * `requester`, one mobile from one client address; `unsolicited`, one
   * mobile from every browser that is not a known device of its customer;
   * `device`, a PIN reset's, one customer from one known device.
   */
  readonly budget: 'requester' | 'unsolicited' | 'device' | 'mobile' | 'address' | 'global';
  readonly retryAfterSeconds: number;
}
