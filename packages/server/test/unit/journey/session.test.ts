import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { endSession, hashCookieValue, isPlausibleId, newSession, useSession } from '../../../src/core/journey/session.js';
import { pinSmsAuthentication } from '../../../src/core/authentication.js';
import { journeySetup, MOBILE, OTHER_MOBILE, T0, type JourneyOptions } from './fixtures.js';

/** A customer and a session of theirs, started at T0. */
async function setup(options: JourneyOptions = {}) {
  const t = await journeySetup(options);
  const customer = await t.addCustomer();
  const start = async () => {
    const session = newSession(customer.profileId, pinSmsAuthentication(t.clock.nowSeconds(), 'sign_in_otp'), t.clock.nowSeconds(), t.deps.lifetimes);
    await t.storage.customerSessions.insertCustomerSession(session.record);
    return session.id;
  };
  const use = (sessionId: string | undefined) => useSession(sessionId, t.deps);
  return { ...t, customer, start, use };
}

describe('hashCookieValue and isPlausibleId', () => {
  it('hash with SHA-256, base64url', () => {
    expect(hashCookieValue('abc')).toBe(createHash('sha256').update('abc').digest('base64url'));
    expect(hashCookieValue('abc')).not.toBe(hashCookieValue('abd'));
  });

  it('take 1 to 100 characters as a possible ID', () => {
    expect(isPlausibleId(undefined)).toBe(false);
    expect(isPlausibleId('')).toBe(false);
    expect(isPlausibleId('x')).toBe(true);
    expect(isPlausibleId('x'.repeat(100))).toBe(true);
    expect(isPlausibleId('x'.repeat(101))).toBe(false);
  });
});

describe('newSession', () => {
  it('makes a new random ID, stored only as its hash, for sessionSeconds', async () => {
    const { storage, clock, deps, customer, start, use } = await setup();
    clock.advance(3);
    const id = await start();
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await storage.customerSessions.findCustomerSession(id)).toBeUndefined();
    expect(await storage.customerSessions.findCustomerSession(hashCookieValue(id))).toEqual({
      idHash: hashCookieValue(id),
      profileId: customer.profileId,
      createdAt: T0 + 3,
      lastSeenAt: T0 + 3,
      expiresAt: T0 + 3 + deps.lifetimes.sessionSeconds,
      endedAt: null,
      authentication: { acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], authTime: T0 + 3 },
    });
    expect((await use(id))?.customer.profileId).toBe(customer.profileId);
    // Used later, it still says when the customer signed in, not when it was used.
    clock.advance(60);
    expect((await use(id))?.authentication?.authTime).toBe(T0 + 3);
  });

  it('gives every session a new ID', () => {
    const ids = new Set(Array.from({ length: 20 }, () => newSession('123456789012', pinSmsAuthentication(T0, 'sign_in_otp'), T0, { sessionSeconds: 60 }).id));
    expect(ids.size).toBe(20);
  });
});

describe('useSession', () => {
  it('returns the customer and marks the session as used', async () => {
    const { storage, clock, customer, start, use } = await setup();
    const id = await start();
    clock.advance(100);
    expect((await use(id))?.customer).toEqual(customer);
    expect((await storage.customerSessions.findCustomerSession(hashCookieValue(id)))?.lastSeenAt).toBe(T0 + 100);
  });

  it.each([
    [1799, true],
    [1800, false],
    [1801, false],
  ])('a session left unused for %i s (idle limit 1800 s): live = %s', async (idle, live) => {
    const { clock, start, use } = await setup();
    const id = await start();
    clock.set(T0 + idle);
    expect((await use(id)) !== undefined).toBe(live);
  });

  it('counts idleness from the last use', async () => {
    const { clock, start, use } = await setup();
    const id = await start();
    clock.set(T0 + 1799);
    expect(await use(id)).toBeDefined();
    clock.set(T0 + 1799 + 1799);
    expect(await use(id)).toBeDefined();
    clock.set(T0 + 1799 + 1799 + 1800);
    expect(await use(id)).toBeUndefined();
    // An idled-out session does not come back by being tried.
    clock.set(T0 + 1799 + 1799 + 1800 + 1);
    expect(await use(id)).toBeUndefined();
  });

  it('ends sessionSeconds after login, even when used all along', async () => {
    const { clock, start, use } = await setup({ lifetimes: { sessionSeconds: 7200 } });
    const id = await start();
    for (let at = 1000; at < 7200; at += 1000) {
      clock.set(T0 + at);
      expect(await use(id), `at ${at}`).toBeDefined();
    }
    clock.set(T0 + 7199);
    expect(await use(id)).toBeDefined();
    clock.set(T0 + 7200);
    expect(await use(id)).toBeUndefined();
    clock.set(T0 + 7201);
    expect(await use(id)).toBeUndefined();
  });

  it('refuses the session of a customer an operator locked', async () => {
    const { storage, customer, start, use } = await setup();
    const id = await start();
    await storage.customers.updateCustomer(customer.profileId, { status: 'locked' }, T0);
    expect(await use(id)).toBeUndefined();
  });

  it('keeps the session of a customer whose PIN login wrong PINs locked: the lock refuses PIN checks only', async () => {
    const { storage, clock, customer, start, use } = await setup();
    const id = await start();
    await storage.customers.updateCustomer(customer.profileId, { pinAttempts: 5, lockedUntil: T0 + 900 }, T0);
    clock.set(T0 + 1);
    expect(await use(id)).toMatchObject({ customer: { profileId: customer.profileId, lockedUntil: T0 + 900 } });
  });

  it('refuses a missing, unknown or oversized session ID', async () => {
    const { start, use } = await setup();
    await start();
    expect(await use(undefined)).toBeUndefined();
    expect(await use('')).toBeUndefined();
    expect(await use('not-a-session')).toBeUndefined();
    expect(await use('x'.repeat(101))).toBeUndefined();
  });

  it('returns each session\'s own customer', async () => {
    const { storage, clock, customer, start, use, addCustomer } = await setup();
    const other = await addCustomer(OTHER_MOBILE);
    const mine = await start();
    const theirs = newSession(other.profileId, pinSmsAuthentication(clock.nowSeconds(), 'sign_in_otp'), clock.nowSeconds(), { sessionSeconds: 60 });
    await storage.customerSessions.insertCustomerSession(theirs.record);
    expect((await use(mine))?.customer.mobile).toBe(MOBILE);
    expect((await use(theirs.id))?.customer.profileId).toBe(other.profileId);
    expect(customer.profileId).not.toBe(other.profileId);
  });
});

describe('endSession', () => {
  it('ends that session for good, and only that one', async () => {
    const { storage, clock, start, use } = await setup();
    const ended = await start();
    const kept = await start();
    clock.advance(10);
    await endSession(ended, storage, clock.nowSeconds());
    expect((await storage.customerSessions.findCustomerSession(hashCookieValue(ended)))?.endedAt).toBe(T0 + 10);
    expect(await use(ended)).toBeUndefined();
    clock.advance(10);
    expect(await use(ended)).toBeUndefined();
    expect(await use(kept)).toBeDefined();
  });

  it('does nothing for no session, or one that is not ours', async () => {
    const { storage, start, use } = await setup();
    const kept = await start();
    await endSession(undefined, storage, T0);
    await endSession('', storage, T0);
    await endSession('x'.repeat(101), storage, T0);
    await endSession('not-a-session', storage, T0);
    expect(await use(kept)).toBeDefined();
  });
});
