/** Whether a customer may log in. `locked` is an operator's lock, lifted only by `customers unlock`. */
export type CustomerStatus = 'active' | 'locked';

/**
 * A customer account, keyed by mobile number.
 *
 * `profileId` is a random 12-digit number (never a sequence); `pinHash` is
 * scrypt with a per-account salt. `pinAttempts` counts PIN checks since
 * the last right PIN, each counted before it runs; `lockedUntil` (epoch
 * seconds) is the lock of PIN login that the fifth one sets.
 * `credentialVersion` counts the changes of the PIN and of `status`
 * (docs/journey.md, "After a PIN reset"): a known-device proof is made
 * under it, so each change ends the proofs made before.
 */
export interface Customer {
  readonly profileId: string;
  /** E.164, e.g. `+639171234567`: `mobileOf` reads it as a `MobileNumber`, `maskedMobile` masks it. */
  readonly mobile: string;
  readonly name: string | null;
  readonly pinHash: string;
  readonly status: CustomerStatus;
  readonly pinAttempts: number;
  readonly lockedUntil: number | null;
  readonly credentialVersion: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Whether PIN login of `customer` is locked (too many wrong PINs) at `now`. */
export function isPinLocked(customer: Customer, now: number): boolean {
  return customer.lockedUntil !== null && customer.lockedUntil > now;
}

/**
 * Whether `customer` may sign in: not locked by an operator. A lock of PIN
 * login by wrong PINs ({@link isPinLocked}) refuses only the PIN check: a
 * session already open, a sign-in past its PIN, a passkey and a code
 * already issued go on, so whoever locks it with guesses locks nothing
 * else (docs/journey.md, "A stranger cannot lock the owner out").
 */
export function maySignIn(customer: Customer): boolean {
  return customer.status === 'active';
}
