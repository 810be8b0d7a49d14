import type { Clock } from '../clock.js';
import type { CustomerStore } from './customer-store.js';
import type { Customer } from './customer.js';
import { hashPin, isValidPin, verifyPin } from './pin.js';

/** Wrong PINs in a row that lock an account. */
export const PIN_MAX_ATTEMPTS = 5;
/** How long such a lock lasts; it then lifts by itself. */
export const PIN_LOCK_SECONDS = 15 * 60;

/** The outcome of a mobile + PIN login. */
export type CheckPinResult =
  | { readonly ok: true; readonly customer: Customer }
  /** Unknown mobile or wrong PIN: one answer for both. */
  | { readonly ok: false; readonly reason: 'invalid' }
  /** Locked by wrong PINs until `until` (epoch seconds); `justLocked` when this attempt locked it. */
  | { readonly ok: false; readonly reason: 'locked'; readonly until: number; readonly justLocked: boolean }
  /** Locked by an operator. */
  | { readonly ok: false; readonly reason: 'disabled' };

/** What checking a PIN needs. */
export interface CheckPinDeps {
  readonly customers: Pick<CustomerStore, 'findCustomerByMobile' | 'recordPinFailure' | 'updateCustomer'>;
  readonly clock: Clock;
}

// Checked against when the mobile is unknown, so the answer takes as long.
let dummyHash: Promise<string> | undefined;

/**
 * Checks a customer's mobile number and PIN.
 *
 * 5 wrong PINs in a row lock the account for 15 minutes; during the lock even
 * the right PIN is refused. When the lock lifts the customer has 5 tries
 * again, so guessing alone never locks an account for good. A right PIN
 * resets the count.
 */
export async function checkPin(mobile: string, pin: string, deps: CheckPinDeps): Promise<CheckPinResult> {
  const now = deps.clock.nowSeconds();
  const customer = await deps.customers.findCustomerByMobile(mobile);
  if (!customer) {
    dummyHash ??= hashPin('000000');
    await verifyPin(pin, await dummyHash);
    return { ok: false, reason: 'invalid' };
  }
  if (customer.status === 'locked') return { ok: false, reason: 'disabled' };
  if (customer.lockedUntil !== null && customer.lockedUntil > now) {
    return { ok: false, reason: 'locked', until: customer.lockedUntil, justLocked: false };
  }
  if (!isValidPin(pin) || !(await verifyPin(pin, customer.pinHash))) {
    const updated = await deps.customers.recordPinFailure(customer.profileId, now, PIN_MAX_ATTEMPTS, PIN_LOCK_SECONDS);
    if (updated.lockedUntil !== null && updated.lockedUntil > now) {
      return { ok: false, reason: 'locked', until: updated.lockedUntil, justLocked: true };
    }
    return { ok: false, reason: 'invalid' };
  }
  if (customer.failedPinAttempts > 0 || customer.lockedUntil !== null) {
    return { ok: true, customer: await deps.customers.updateCustomer(customer.profileId, { failedPinAttempts: 0, lockedUntil: null }, now) };
  }
  return { ok: true, customer };
}
