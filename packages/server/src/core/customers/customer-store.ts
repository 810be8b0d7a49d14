/**
 * The storage port of customer accounts.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */
import type { Customer } from './customer.js';

/** Fields of a customer that `updateCustomer` may change. */
export interface CustomerPatch {
  name?: string | null;
  pinHash?: string;
  status?: Customer['status'];
  pinAttempts?: number;
  lockedUntil?: number | null;
}

/** Customer accounts. A mobile number belongs to one account at most. */
export interface CustomerStore {
  findCustomer(profileId: string): Promise<Customer | undefined>;
  /** The customer of a mobile number in E.164 (`MobileNumber.e164`, or a stored `Customer.mobile`). */
  findCustomerByMobile(mobile: string): Promise<Customer | undefined>;
  /** Every customer, oldest first. */
  listCustomers(): Promise<Customer[]>;
  /** Adds a customer. Throws `Conflict` when the profile ID or the mobile number is taken. */
  insertCustomer(customer: Customer): Promise<void>;
  /**
   * Changes the given fields, sets `updatedAt`; throws `NotFound`. A
   * `pinHash` or a `status` other than the customer's adds to
   * `credentialVersion` in the same update; the same one set again does not.
   */
  updateCustomer(profileId: string, patch: CustomerPatch, now: number): Promise<Customer>;
  /**
   * An operator's lock, in one conditional update that takes the
   * customer's row: status `locked`, only while it is not locked already,
   * and `credentialVersion` one more.
   *
   * @returns the customer after the change for the one caller that locked
   *   them; `undefined` when there is no such customer or they were locked already.
   */
  lockCustomer(profileId: string, now: number): Promise<Customer | undefined>;
  /**
   * Counts one PIN attempt BEFORE the PIN is checked, in one conditional
   * update that also reads the lock (docs/journey.md, "PIN guessing"): only
   * for an `active` customer with this mobile whose PIN login is not locked at
   * `now`. After a lock has lifted the count starts again from 1. The attempt
   * that reaches `maxAttempts` also locks PIN login until `now + lockSeconds`
   * (a right PIN then lifts it, {@link clearPinAttempts}). However many
   * attempts arrive at once, on however many instances, at most
   * `maxAttempts` are granted per lock.
   *
   * @returns the customer after the update and the attempt's number (1 to
   *   `maxAttempts`), or `undefined` when no attempt may be made (no such
   *   mobile, locked by an operator, or PIN login locked).
   */
  claimPinAttempt(mobile: string, now: number, maxAttempts: number, lockSeconds: number): Promise<{ customer: Customer; attempt: number } | undefined>;
  /**
   * The customer, when they may sign in (not locked by an operator; a lock
   * of PIN login by wrong PINs does not count), or `undefined`. Changes nothing. Inside a transaction it holds the
   * customer's row until the transaction ends, so an operator's
   * `customers lock` either waits for the sign-in to finish (and then ends
   * what it created) or is seen by it.
   */
  holdCustomerForSignIn(profileId: string): Promise<Customer | undefined>;
  /**
   * A PIN reset's new PIN (`pinHash`, from `hashPin`), in one conditional
   * update that takes the customer's row: only while the customer is
   * `active` (an operator's lock refuses it). The count of wrong PINs starts
   * again and the lock they may have set is lifted; `credentialVersion`
   * is one more.
   *
   * @returns the customer after the change, or `undefined` when there is no
   *   such active customer (nothing changed).
   */
  replacePin(profileId: string, pinHash: string, now: number): Promise<Customer | undefined>;
  /**
   * A right PIN (attempt number `attempt`): the count starts again and the
   * lock this attempt may have set is lifted, only while no other attempt
   * was counted after it (then those attempts, and any lock they set, stand).
   */
  clearPinAttempts(profileId: string, attempt: number, now: number): Promise<void>;
}
