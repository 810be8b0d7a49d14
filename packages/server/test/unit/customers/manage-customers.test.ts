import { afterEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/core/clock.js';
import {
  createCustomer,
  CustomerValidationError,
  findCustomerByReference,
  generateProfileId,
  hashNewPin,
} from '../../../src/core/customers/manage-customers.js';
import { hashPin, verifyPin } from '../../../src/core/customers/pin.js';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../../src/core/storage/storage.js';

const T0 = 1_767_225_600;
const opened: Storage[] = [];
afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
});

async function setup() {
  const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
  opened.push(storage);
  await storage.migrate();
  return { storage, deps: { customers: storage.customers, clock: fixedClock(T0) } };
}

describe('customer administration', () => {
  it('generates 12-digit profile IDs that never start with 0 and do not repeat', () => {
    const ids = new Set(Array.from({ length: 2000 }, generateProfileId));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(id).toMatch(/^[1-9]\d{11}$/);
  });

  it('creates an active customer with a normalised mobile, a hashed PIN and a trimmed name', async () => {
    const { storage, deps } = await setup();
    const { customer, mobile } = await createCustomer({ mobile: '+63 917 123 4567', pin: '0042', name: '  Juan  ' }, deps);
    expect(mobile).toEqual({ e164: '+639171234567', countryCallingCode: '63', masked: '+63******4567', country: 'PH' });
    expect(customer).toMatchObject({
      mobile: '+639171234567',
      name: 'Juan',
      status: 'active',
      pinAttempts: 0,
      lockedUntil: null,
      createdAt: T0,
      updatedAt: T0,
    });
    expect(customer.profileId).toMatch(/^[1-9]\d{11}$/);
    expect(customer.pinHash).not.toContain('0042');
    expect(await verifyPin('0042', customer.pinHash)).toBe(true);
    expect(await storage.customers.findCustomer(customer.profileId)).toEqual(customer);
  });

  it('refuses a mobile number registered already, in any spelling', async () => {
    const { deps } = await setup();
    await createCustomer({ mobile: '+639171234567', pin: '4829' }, deps);
    await expect(createCustomer({ mobile: '+63 (917) 123-4567', pin: '5807' }, deps)).rejects.toThrow(CustomerValidationError);
    expect(await deps.customers.listCustomers()).toHaveLength(1);
  });

  it.each([
    ['a mobile without +', { mobile: '09171234567', pin: '4829' }, /mobile/],
    ['a fixed-line number', { mobile: '+63 2 8123 4567', pin: '4829' }, /mobile/],
    ['a 3-digit PIN', { mobile: '+639171234567', pin: '123' }, /PIN/],
    ['a 7-digit PIN', { mobile: '+639171234567', pin: '1234567' }, /PIN/],
    ['a PIN with letters', { mobile: '+639171234567', pin: '12ab' }, /PIN/],
    ['a PIN of one digit repeated', { mobile: '+639171234567', pin: '0000' }, /too easy to guess: one digit or a short group of digits repeated/],
    ['a PIN of a pair repeated', { mobile: '+639171234567', pin: '121212' }, /too easy to guess: one digit or a short group of digits repeated/],
    ['a PIN of digits in order', { mobile: '+639171234567', pin: '123456' }, /too easy to guess: digits in order/],
    ['a PIN of digits in reverse order', { mobile: '+639171234567', pin: '4321' }, /too easy to guess: digits in order/],
    ['a common PIN', { mobile: '+639171234567', pin: '2580' }, /too easy to guess: it is one of the most common PINs/],
    ['a name over 100 characters', { mobile: '+639171234567', pin: '4829', name: 'x'.repeat(101) }, /name/],
    ['a name with an escape sequence', { mobile: '+639171234567', pin: '4829', name: 'Ju\u001b[31man' }, /name must not contain control characters/],
    ['a name with a direction override', { mobile: '+639171234567', pin: '4829', name: 'Juan\u202enauJ' }, /name must not contain control characters, line separators or direction overrides/],
  ])('refuses %s', async (_why, input, message) => {
    const { deps } = await setup();
    await expect(createCustomer(input, deps)).rejects.toThrow(message);
    await expect(createCustomer(input, deps)).rejects.toBeInstanceOf(CustomerValidationError);
    expect(await deps.customers.listCustomers()).toEqual([]);
  });

  it('hashes a new PIN ahead of createCustomer, which stores that hash', async () => {
    const { deps } = await setup();
    const pinHash = await hashNewPin('6142');
    expect(await verifyPin('6142', pinHash)).toBe(true);
    const { customer } = await createCustomer({ mobile: '+639171234567', pin: '6142', pinHash }, deps);
    expect(customer.pinHash).toBe(pinHash);
  });

  it.each([['123'], ['1234567'], ['12ab'], ['']])('refuses to hash the PIN %j', async (pin) => {
    await expect(hashNewPin(pin)).rejects.toThrow(new CustomerValidationError('PIN must be 4 to 6 digits'));
  });

  it.each([
    ['3333', 'one digit or a short group of digits repeated (like 1111 or 1212)'],
    ['876543', 'digits in order (like 1234 or 9876)'],
    ['147258', 'it is one of the most common PINs'],
  ])('refuses to hash the weak PIN %s, with the rule it breaks and without the PIN', async (pin, rule) => {
    const refusal = hashNewPin(pin);
    await expect(refusal).rejects.toThrow(new CustomerValidationError(`PIN is too easy to guess: ${rule}; choose another`));
    await expect(refusal).rejects.not.toThrow(pin);
  });

  it('keeps a weak PIN hashed before the rules: createCustomer takes its hash as it is', async () => {
    const { deps } = await setup();
    const { customer } = await createCustomer({ mobile: '+639171234567', pin: '', pinHash: await hashPin('1234') }, deps);
    expect(await verifyPin('1234', customer.pinHash)).toBe(true);
  });

  it('finds a customer by profile ID or by mobile number in any spelling', async () => {
    const { deps } = await setup();
    const { customer } = await createCustomer({ mobile: '+639171234567', pin: '4829' }, deps);
    expect(await findCustomerByReference(customer.profileId, deps.customers)).toEqual(customer);
    expect(await findCustomerByReference('+639171234567', deps.customers)).toEqual(customer);
    expect(await findCustomerByReference(' +63 917 123 4567 ', deps.customers)).toEqual(customer);
    expect(await findCustomerByReference('100000000000', deps.customers)).toBeUndefined();
    expect(await findCustomerByReference('09171234567', deps.customers)).toBeUndefined();
  });
});
