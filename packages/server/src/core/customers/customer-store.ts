/**
 * The storage port of customer accounts.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `storage/ports.ts`.
 */
import type { Customer } from './customer.js';

/** Fields of a customer that `updateCustomer` may change. */
export interface CustomerPatch {
  name?: string | null;
  pinHash?: string;
  status?: Customer['status'];
  failedPinAttempts?: number;
  lockedUntil?: number | null;
}

/** Customer accounts. A mobile number belongs to one account at most. */
export interface CustomerStore {
  findCustomer(profileId: string): Promise<Customer | undefined>;
  findCustomerByMobile(mobile: string): Promise<Customer | undefined>;
  /** Every customer, oldest first. */
  listCustomers(): Promise<Customer[]>;
  /** Adds a customer. Throws `Conflict` when the profile ID or the mobile number is taken. */
  insertCustomer(customer: Customer): Promise<void>;
  /** Changes the given fields, sets `updatedAt`; throws `NotFound`. */
  updateCustomer(profileId: string, patch: CustomerPatch, now: number): Promise<Customer>;
  /**
   * Counts one wrong PIN, atomically. When the count reaches `maxAttempts`
   * the account is locked until `now + lockSeconds` and the count starts
   * again from zero. Returns the updated customer; throws `NotFound`.
   */
  recordPinFailure(profileId: string, now: number, maxAttempts: number, lockSeconds: number): Promise<Customer>;
}
