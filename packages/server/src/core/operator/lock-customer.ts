import type { Customer } from '../customers/customer.js';
import type { CustomerStore } from '../customers/customer-store.js';
import { endCustomerAccess, type CustomerAccessStores } from '../journey/end-access.js';
import type { ConsentStore } from '../journey/stores.js';
import type { PasskeyStore } from '../passkeys/passkey-store.js';
import { NotFound } from '../storage-errors.js';

/** The stores a lock writes, all of one transaction. */
export interface LockCustomerStores extends CustomerAccessStores {
  readonly customers: Pick<CustomerStore, 'lockCustomer' | 'findCustomer'>;
  readonly consents: Pick<ConsentStore, 'deleteConsentsOf'>;
  readonly passkeys: Pick<PasskeyStore, 'suspendPasskeysOf'>;
}

/** The stores an unlock writes, both of one transaction. */
export interface UnlockCustomerStores {
  readonly customers: Pick<CustomerStore, 'updateCustomer'>;
  readonly passkeys: Pick<PasskeyStore, 'restorePasskeysOf'>;
}

/** What a lock ended, by kind. */
export interface EndedByLock {
  /** Journeys that had not reached their code, now `cancelled`. */
  readonly journeys: number;
  /** The customer's login sessions at Connect. */
  readonly sessions: number;
  /** Token sessions: each a refresh token and its access token. */
  readonly tokenSessions: number;
  /** Unredeemed authorization codes. */
  readonly codes: number;
  /** Approvals of clients. */
  readonly approvals: number;
  /** Passkeys suspended (restored by an unlock). */
  readonly passkeys: number;
}

/** The outcome of a lock: done now, or the customer was locked already (nothing changed). */
export type LockOutcome =
  | { readonly changed: true; readonly customer: Customer; readonly ended: EndedByLock }
  | {
      readonly changed: false;
      readonly customer: Customer;
      /** Passkeys added while the customer was locked, suspended now (0 when there were none). */
      readonly suspendedPasskeys: number;
    };

/**
 * An operator's lock (docs/operator-guide.md, "Customers"), in the caller's
 * transaction: the customer can no longer log in, and everything that lets
 * a client act for them ends at once: their login sessions, their token
 * sessions (refresh and access tokens: introspection says inactive, the
 * resource-server check and refreshes refuse them), their unredeemed codes
 * (an exchange gets `invalid_grant`, also after an unlock) and their
 * approvals of clients. Their passkeys are suspended (no sign-in with them)
 * until an unlock.
 *
 * The lock takes the customer's row first, so a sign-in or code exchange
 * completing at the same moment (which holds that row) either finishes
 * before, and what it created is ended here, or sees the lock
 * (docs/journey.md, "Consent"). Locking a locked customer changes nothing
 * but suspending any passkey that was added meanwhile.
 *
 * @throws NotFound when there is no such customer.
 */
export async function lockCustomer(profileId: string, stores: LockCustomerStores, now: number): Promise<LockOutcome> {
  const locked = await stores.customers.lockCustomer(profileId, now);
  if (!locked) {
    const existing = await stores.customers.findCustomer(profileId);
    if (!existing) throw new NotFound(`no customer ${profileId}`);
    return { changed: false, customer: existing, suspendedPasskeys: await stores.passkeys.suspendPasskeysOf(profileId, now) };
  }
  // What makes these holds the customer's row first (sign-in, consent), so
  // none of it runs meanwhile; a code exchange's token session waits for
  // the row or finds it locked (docs/journey.md, "The code").
  const { journeys, sessions, codes, tokenSessions } = await endCustomerAccess(profileId, stores, now, { by: 'lock' });
  const approvals = await stores.consents.deleteConsentsOf(profileId);
  const passkeys = await stores.passkeys.suspendPasskeysOf(profileId, now);
  return { changed: true, customer: locked, ended: { journeys, sessions, tokenSessions, codes, approvals, passkeys } };
}

/**
 * Lifts an operator's lock, and a lockout from wrong PINs with it, in the
 * caller's transaction: the customer can log in again, and the passkeys
 * the lock suspended work again (remove first any the operator does not
 * trust: `customers passkeys remove`). Nothing the lock ended comes back:
 * no session, token, code or approval.
 */
export async function unlockCustomer(profileId: string, stores: UnlockCustomerStores, now: number): Promise<Customer> {
  const unlocked = await stores.customers.updateCustomer(profileId, { status: 'active', pinAttempts: 0, lockedUntil: null }, now);
  await stores.passkeys.restorePasskeysOf(profileId);
  return unlocked;
}
