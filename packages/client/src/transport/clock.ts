/**
 * The source of "now" for every expiry decision of the SDK.
 *
 * It has the same shape as the server's `Clock`, so one test clock can
 * drive both. Token expiry is computed from `expires_in` against this clock
 * at the moment an answer arrives, never from the server's `iat`, so a
 * consumer whose clock differs from Connect's still renews on time.
 */
export interface Clock {
  /** Current time as whole seconds since the UNIX epoch. */
  nowSeconds(): number;
}

/** The real clock, backed by the system time. */
export const systemClock: Clock = {
  nowSeconds: () => Math.floor(Date.now() / 1000),
};
