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

/** Whether `customer` may sign in at `now`: not locked by an operator, PIN login not locked. */
export function maySignIn(customer: Customer, now: number): boolean {
  return customer.status === 'active' && !isPinLocked(customer, now);
}
