import type { Clock } from '../clock.js';
import { PIN_LOCK_SECONDS, PIN_MAX_ATTEMPTS } from '../lifetimes.js';
import { isPinLocked, type Customer } from './customer.js';
import type { MobileNumber } from './mobile.js';
import type { CustomerStore } from './customer-store.js';
import type { PinCheckQueue } from './pin.js';

/** The outcome of a mobile + PIN check. */
export type CheckPinResult =
  /**
   * `attempt`: the count this right PIN was given; {@link checkPin} lifts it
   * unless told to leave that to the caller (`clearLater`).
   */
  | { readonly ok: true; readonly customer: Customer; readonly attempt: number }
  /** Unknown mobile or wrong PIN: one answer for both. */
  | { readonly ok: false; readonly reason: 'invalid' }
  /** PIN login locked until `until` (epoch seconds); `justLocked` when this attempt locked it. */
  | { readonly ok: false; readonly reason: 'locked'; readonly until: number; readonly justLocked: boolean }
  /** Locked by an operator. */
  | { readonly ok: false; readonly reason: 'disabled' }
  /**
   * No answer: the attempt was counted but its PIN could not be compared
   * (the hash did not run, e.g. its worker thread ended); `error` is what
   * failed, for the caller to throw. The attempt stays counted; `locked` is
   * set when it was the one that locked PIN login: until when, and whose.
   */
  | { readonly ok: false; readonly reason: 'unchecked'; readonly error: unknown; readonly locked?: { readonly until: number; readonly profileId: string } };

/** What checking a PIN needs. */
export interface CheckPinDeps {
  readonly customers: Pick<CustomerStore, 'claimPinAttempt' | 'clearPinAttempts' | 'findCustomerByMobile'>;
  readonly queue: PinCheckQueue;
  readonly clock: Clock;
}

/**
 * Checks a customer's mobile number and PIN (docs/journey.md, "PIN guessing").
 *
 * The attempt is counted BEFORE the PIN is hashed, in the one statement that
 * also reads the lock, once a place in the hashing queue is held (so nothing
 * is counted for a check that never runs): 5 attempts without a right PIN lock
 * PIN login for 15 minutes, and no more than 5 PINs are ever compared per
 * lock, however many arrive at once, on however many instances. During the
 * lock even the right PIN is refused; afterwards there are 5 tries again,
 * so guessing alone never locks an account for good. A right PIN resets the
 * count, unless attempts made at the same time counted past it (their lock
 * then stands), in one statement of its own or, with `clearLater`, in the
 * caller's next one. A mobile with no account costs no hash: whether a number is
 * registered is no secret here (the registration form says so).
 */
export async function checkPin(mobile: MobileNumber, pin: string, deps: CheckPinDeps, options: { clearLater?: boolean } = {}): Promise<CheckPinResult> {
  const now = deps.clock.nowSeconds();
  // A place first (a full queue refuses before anything is counted), then the
  // count: only attempts that were counted wait for their hash, so a flood
  // at locked or unknown mobiles never fills the queue.
  const place = deps.queue.reserve();
  let claim: Awaited<ReturnType<CheckPinDeps['customers']['claimPinAttempt']>>;
  try {
    claim = await deps.customers.claimPinAttempt(mobile.e164, now, PIN_MAX_ATTEMPTS, PIN_LOCK_SECONDS);
  } finally {
    if (!claim) place.release();
  }
  if (!claim) {
    const customer = await deps.customers.findCustomerByMobile(mobile.e164);
    if (customer?.status === 'locked') return { ok: false, reason: 'disabled' };
    if (customer && isPinLocked(customer, now)) return { ok: false, reason: 'locked', until: customer.lockedUntil as number, justLocked: false };
    return { ok: false, reason: 'invalid' };
  }
  const { customer, attempt } = claim;
  let right: boolean;
  try {
    right = await place.run((pins) => pins.verify(pin, customer.pinHash));
  } catch (error) {
    // Counted all the same: a failure is never a free guess (docs/journey.md, "PIN guessing").
    const locked = attempt < PIN_MAX_ATTEMPTS ? {} : { locked: { until: customer.lockedUntil as number, profileId: customer.profileId } };
    return { ok: false, reason: 'unchecked', error, ...locked };
  }
  if (!right) {
    if (attempt < PIN_MAX_ATTEMPTS) return { ok: false, reason: 'invalid' };
    return { ok: false, reason: 'locked', until: customer.lockedUntil as number, justLocked: true };
  }
  // The caller may lift the count in the statement that goes on with the sign-in.
  if (options.clearLater) return { ok: true, customer, attempt };
  await deps.customers.clearPinAttempts(customer.profileId, attempt, now);
  return { ok: true, customer: { ...customer, pinAttempts: 0, lockedUntil: null }, attempt };
}
