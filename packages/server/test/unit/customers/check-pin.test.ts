import { afterEach, describe, expect, it } from 'vitest';
import { checkPin } from '../../../src/core/customers/check-pin.js';
import { parseMobile } from '../../../src/core/customers/mobile.js';
import { createCustomer } from '../../../src/core/customers/manage-customers.js';
import { fixedClock, type FixedClock } from '../../../src/core/clock.js';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { PIN_LOCK_SECONDS, PIN_MAX_ATTEMPTS } from '../../../src/core/lifetimes.js';
import type { PinCheckQueueOptions } from '../../../src/core/customers/pin.js';
import { testPinCheckQueue } from '../../helpers/pin-checks.js';
import { TemporarilyUnavailable } from '../../../src/core/errors.js';

const T0 = 1_767_225_600;
const MOBILE = '+639171234567';
const PIN = '482915';
const WRONG = '482916';

const opened: Storage[] = [];
afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
});

/** The customer of {@link MOBILE}, checked through a PIN-check queue made with `queueOptions`. */
async function setup(
  queueOptions?: PinCheckQueueOptions,
): Promise<{ storage: Storage; clock: FixedClock; check: (pin: string, mobile?: string) => ReturnType<typeof checkPin> }> {
  const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
  opened.push(storage);
  await storage.migrate();
  const clock = fixedClock(T0);
  await createCustomer({ mobile: MOBILE, pin: PIN }, { customers: storage.customers, clock });
  const queue = testPinCheckQueue(queueOptions);
  const check = (pin: string, mobile = MOBILE) => checkPin(parseMobile(mobile)!, pin, { customers: storage.customers, clock, queue });
  return { storage, clock, check };
}

async function wrongTimes(check: (pin: string) => ReturnType<typeof checkPin>, times: number): Promise<void> {
  for (let i = 1; i <= times; i++) expect(await check(WRONG), `wrong PIN #${i}`).toEqual({ ok: false, reason: 'invalid' });
}

describe('checkPin', () => {
  it('uses the documented limits: 5 wrong PINs lock for 900 seconds', () => {
    expect(PIN_MAX_ATTEMPTS).toBe(5);
    expect(PIN_LOCK_SECONDS).toBe(900);
  });

  it('accepts the right PIN and returns the customer', async () => {
    const { check } = await setup();
    const result = await check(PIN);
    expect(result.ok).toBe(true);
    expect(result.ok && result.customer).toMatchObject({ mobile: MOBILE, status: 'active', pinAttempts: 0, lockedUntil: null });
  });

  it('answers "invalid" to 4 wrong PINs in a row and locks on the 5th for exactly 900 s', async () => {
    const { storage, clock, check } = await setup();
    await wrongTimes(check, 4);
    expect((await storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(4);
    clock.advance(7);
    expect(await check(WRONG)).toEqual({ ok: false, reason: 'locked', until: T0 + 7 + 900, justLocked: true });
    expect(await storage.customers.findCustomerByMobile(MOBILE)).toMatchObject({ lockedUntil: T0 + 7 + 900, status: 'active' });
  });

  it('refuses even the right PIN during the lock, up to until-1, and accepts it at until', async () => {
    const { storage, clock, check } = await setup();
    await wrongTimes(check, 4);
    const until = T0 + 900;
    expect(await check(WRONG)).toEqual({ ok: false, reason: 'locked', until, justLocked: true });
    expect(await check(PIN)).toEqual({ ok: false, reason: 'locked', until, justLocked: false });
    clock.set(until - 1);
    expect(await check(PIN)).toEqual({ ok: false, reason: 'locked', until, justLocked: false });
    clock.set(until);
    const result = await check(PIN);
    expect(result.ok).toBe(true);
    expect(await storage.customers.findCustomerByMobile(MOBILE)).toMatchObject({ pinAttempts: 0, lockedUntil: null });
  });

  it('does not count or extend the lock with wrong PINs entered during it', async () => {
    const { storage, clock, check } = await setup();
    await wrongTimes(check, 4);
    const until = T0 + 900;
    await check(WRONG);
    for (let i = 0; i < 10; i++) {
      clock.advance(60);
      expect(await check(WRONG)).toEqual({ ok: false, reason: 'locked', until, justLocked: false });
    }
    expect((await storage.customers.findCustomerByMobile(MOBILE))?.lockedUntil).toBe(until);
    clock.set(until);
    expect((await check(PIN)).ok).toBe(true);
  });

  it('gives 5 fresh tries after the lock lifts, and locks again only on the 5th: never a permanent lock', async () => {
    const { clock, check } = await setup();
    for (let round = 0; round < 3; round++) {
      const start = clock.nowSeconds();
      await wrongTimes(check, 4);
      expect(await check(WRONG), `round ${round}`).toEqual({ ok: false, reason: 'locked', until: start + 900, justLocked: true });
      clock.set(start + 900);
    }
    expect((await check(PIN)).ok).toBe(true);
  });

  it('a PIN that cannot be compared is no answer ("unchecked", with the error) and stays counted; the 5th says it locked', async () => {
    const ended = new TemporarilyUnavailable('PIN hashing is not available right now; retry shortly', { detail: 'a PIN hash worker ended (exit code 1)' });
    const { storage, check: checkWith } = await setup({ scrypt: () => Promise.reject(ended) });
    const check = () => checkWith(PIN);
    for (let i = 1; i < PIN_MAX_ATTEMPTS; i++) {
      expect(await check()).toEqual({ ok: false, reason: 'unchecked', error: ended });
      expect((await storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(i);
    }
    const customer = await storage.customers.findCustomerByMobile(MOBILE);
    expect(await check()).toEqual({ ok: false, reason: 'unchecked', error: ended, locked: { until: T0 + 900, profileId: customer?.profileId } });
    expect(await storage.customers.findCustomerByMobile(MOBILE)).toMatchObject({ lockedUntil: T0 + 900 });
    expect(await check()).toEqual({ ok: false, reason: 'locked', until: T0 + 900, justLocked: false });
  });

  it('resets the count on a right PIN', async () => {
    const { storage, check } = await setup();
    await wrongTimes(check, 4);
    expect((await check(PIN)).ok).toBe(true);
    expect((await storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(0);
    await wrongTimes(check, 4);
    expect(await check(WRONG)).toMatchObject({ ok: false, reason: 'locked' });
  });

  it('counts a PIN of the wrong shape as a wrong PIN', async () => {
    const { storage, check } = await setup();
    expect(await check('abc')).toEqual({ ok: false, reason: 'invalid' });
    expect(await check('1234567')).toEqual({ ok: false, reason: 'invalid' });
    expect((await storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(2);
  });

  it('answers "disabled" for an account an operator locked, right PIN or not, without counting', async () => {
    const { storage, clock, check } = await setup();
    const customer = await storage.customers.findCustomerByMobile(MOBILE);
    await storage.customers.updateCustomer(customer!.profileId, { status: 'locked' }, clock.nowSeconds());
    expect(await check(PIN)).toEqual({ ok: false, reason: 'disabled' });
    expect(await check(WRONG)).toEqual({ ok: false, reason: 'disabled' });
    expect((await storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(0);
  });

  it('answers "invalid" for an unknown mobile number, whatever the PIN', async () => {
    const { check } = await setup();
    expect(await check(PIN, '+639179999999')).toEqual({ ok: false, reason: 'invalid' });
    expect(await check('abc', '+639179999999')).toEqual({ ok: false, reason: 'invalid' });
  });
});
