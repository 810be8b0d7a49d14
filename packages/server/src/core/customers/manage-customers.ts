import { randomInt } from 'node:crypto';
import type { Clock } from '../clock.js';
import { hasUndisplayableCharacter } from '../control-characters.js';
import type { CustomerStore } from './customer-store.js';
import { Conflict } from '../storage-errors.js';
import type { Customer } from './customer.js';
import { e164Of, parseMobile, pinDestinationRefusal, type MobileNumber } from './mobile.js';
import { hashPin, isValidPin } from './pin.js';
import { weakPinReason, type WeakPinReason } from './weak-pin.js';

/** Invalid input to a customer command; the message is shown to the operator. */
export class CustomerValidationError extends Error {
  override readonly name = 'CustomerValidationError';
}

/** What customer administration needs. */
export interface CustomerAdminDeps {
  readonly customers: CustomerStore;
  readonly clock: Clock;
  /** `CONNECT_SMS_COUNTRIES`: the countries whose mobiles may register; unset = every country. */
  readonly smsCountries?: readonly string[] | undefined;
}

/**
 * A new profile ID: 12 random digits (never a sequence, never starting with 0),
 * so one customer's ID says nothing about another's.
 */
export function generateProfileId(): string {
  return String(randomInt(100_000_000_000, 1_000_000_000_000));
}

const WEAK_PIN: Record<WeakPinReason, string> = {
  repeated: 'PIN is too easy to guess: one digit or a short group of digits repeated (like 1111 or 1212); choose another',
  sequence: 'PIN is too easy to guess: digits in order (like 1234 or 9876); choose another',
  common: 'PIN is too easy to guess: it is one of the most common PINs; choose another',
};

/**
 * Checks a PIN being chosen: 4 to 6 digits, and not too easy to guess
 * (docs/journey.md, "Registration"). The message never repeats the PIN.
 *
 * @throws CustomerValidationError when it is not.
 */
export function checkNewPin(pin: string): void {
  if (!isValidPin(pin)) throw new CustomerValidationError('PIN must be 4 to 6 digits');
  const weak = weakPinReason(pin);
  if (weak) throw new CustomerValidationError(WEAK_PIN[weak]);
}

/**
 * Checks a new PIN ({@link checkNewPin}) and hashes it for `createCustomer`'s
 * `pinHash`. The hash is slow on purpose; a caller that creates the
 * customer inside a transaction hashes first, so that the transaction (and
 * the database's write lock) is not held while the hash runs.
 *
 * @throws CustomerValidationError when the PIN is not 4 to 6 digits, or too easy to guess.
 */
export async function hashNewPin(pin: string): Promise<string> {
  checkNewPin(pin);
  return hashPin(pin);
}

/**
 * Checks a mobile number being registered: a valid mobile number in
 * international format, of a country one-time PINs may be sent to
 * (`smsCountries`, unset: every country). Whether it is registered already
 * is for `createCustomer` to find out, in the step that inserts it.
 *
 * @throws CustomerValidationError when it is not.
 */
export function checkNewMobile(input: string | MobileNumber, smsCountries?: readonly string[]): MobileNumber {
  const mobile = typeof input === 'string' ? parseMobile(input) : input;
  if (!mobile) throw new CustomerValidationError('mobile must be a valid mobile number in international format, e.g. +639171234567');
  const refusal = pinDestinationRefusal(mobile, smsCountries);
  if (refusal === 'no_country') throw new CustomerValidationError(`mobile ${mobile.e164} belongs to no country (satellite or international network): one-time PINs are never sent there`);
  if (refusal === 'country_not_allowed') {
    throw new CustomerValidationError(`mobile ${mobile.e164} is of ${mobile.country ?? ''}, which CONNECT_SMS_COUNTRIES does not list: one-time PINs cannot be sent there`);
  }
  return mobile;
}

/**
 * Creates a customer. The mobile number must be a valid number in
 * international format and not registered yet; the PIN 4 to 6 digits and
 * not too easy to guess ({@link checkNewPin}). A `pinHash` given instead is
 * taken as it is: its PIN was checked when it was hashed.
 */
export async function createCustomer(
  input: { mobile: string | MobileNumber; pin: string; name?: string | null | undefined; pinHash?: string },
  deps: CustomerAdminDeps,
): Promise<{ customer: Customer; mobile: MobileNumber }> {
  const mobile = checkNewMobile(input.mobile, deps.smsCountries);
  if (input.pinHash === undefined) checkNewPin(input.pin);
  const name = input.name?.trim() || null;
  if (name !== null && name.length > 100) throw new CustomerValidationError('name must be at most 100 characters');
  if (name !== null && hasUndisplayableCharacter(name)) throw new CustomerValidationError('name must not contain control characters, line separators or direction overrides');
  if (await deps.customers.findCustomerByMobile(mobile.e164)) {
    throw new CustomerValidationError(`mobile ${mobile.e164} is registered already`);
  }
  const pinHash = input.pinHash ?? (await hashPin(input.pin));
  const now = deps.clock.nowSeconds();
  // A profile ID collision is astronomically rare; retry a few times all the same.
  for (let attempt = 0; ; attempt++) {
    const customer = newCustomer({ mobile, pinHash, name }, now);
    try {
      await deps.customers.insertCustomer(customer);
      return { customer, mobile };
    } catch (error) {
      if (!(error instanceof Conflict) || attempt >= 3) {
        if (error instanceof Conflict && (await deps.customers.findCustomerByMobile(mobile.e164))) {
          throw new CustomerValidationError(`mobile ${mobile.e164} is registered already`);
        }
        throw error;
      }
    }
  }
}

/**
 * A new, active customer record with a fresh profile ID; `mobile` is the
 * value or its E.164 string, and `pinHash` from `hashPin`.
 */
export function newCustomer(input: { mobile: string | MobileNumber; pinHash: string; name?: string | null }, now: number): Customer {
  return {
    profileId: generateProfileId(),
    mobile: e164Of(input.mobile),
    name: input.name ?? null,
    pinHash: input.pinHash,
    status: 'active',
    pinAttempts: 0,
    lockedUntil: null,
    credentialVersion: 0,
    createdAt: now,
    updatedAt: now,
  };
}

/** Finds a customer by profile ID (digits) or mobile number (`+…`). */
export async function findCustomerByReference(reference: string, customers: CustomerStore): Promise<Customer | undefined> {
  const trimmed = reference.trim();
  if (/^\d+$/.test(trimmed)) return customers.findCustomer(trimmed);
  const mobile = parseMobile(trimmed);
  return mobile ? customers.findCustomerByMobile(mobile.e164) : undefined;
}
