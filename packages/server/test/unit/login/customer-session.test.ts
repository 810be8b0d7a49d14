import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/core/clock.js';
import type { Customer } from '../../../src/core/customers/customer.js';
import {
  endCustomerSession,
  findSessionCustomer,
  hashCookieValue,
  startCustomerSession,
  type CustomerSessionDeps,
} from '../../../src/core/login/customer-session.js';
import { memoryStorage, T0 } from './otp-fixtures.js';

const CUSTOMER: Customer = {
  profileId: '123456789012',
  mobile: '+639171234567',
  name: null,
  pinHash: 'scrypt$unused',
  status: 'active',
  failedPinAttempts: 0,
  lockedUntil: null,
  createdAt: T0,
  updatedAt: T0,
};

async function setup(policy: { sessionIdleSeconds?: number; sessionTtlSeconds?: number } = {}) {
  const storage = await memoryStorage();
  await storage.customers.insertCustomer(CUSTOMER);
  const clock = fixedClock(T0);
  const deps: CustomerSessionDeps = {
    sessions: storage.customerSessions,
    customers: storage.customers,
    clock,
    sessionIdleSeconds: policy.sessionIdleSeconds ?? 1800,
    sessionTtlSeconds: policy.sessionTtlSeconds ?? 43_200,
  };
  return { storage, clock, deps, find: (id: string | undefined) => findSessionCustomer(id, deps) };
}

describe('customer sessions', () => {
  it('starts a session with a new random ID, stored only as its hash', async () => {
    const { storage, deps, find } = await setup();
    const id = await startCustomerSession(CUSTOMER, undefined, deps);
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await storage.customerSessions.findCustomerSession(id)).toBeUndefined();
    expect(await storage.customerSessions.findCustomerSession(hashCookieValue(id))).toEqual({
      idHash: hashCookieValue(id),
      profileId: CUSTOMER.profileId,
      createdAt: T0,
      lastSeenAt: T0,
      expiresAt: T0 + 43_200,
      endedAt: null,
    });
    expect((await find(id))?.profileId).toBe(CUSTOMER.profileId);
  });

  it('gives every login a new ID and ends the session the browser had before', async () => {
    const { deps, find, clock } = await setup();
    const first = await startCustomerSession(CUSTOMER, undefined, deps);
    clock.advance(5);
    const second = await startCustomerSession(CUSTOMER, first, deps);
    expect(second).not.toBe(first);
    expect(await find(first)).toBeUndefined();
    expect((await find(second))?.profileId).toBe(CUSTOMER.profileId);
  });

  it('keeps an unrelated session when a login names none before it', async () => {
    const { deps, find } = await setup();
    const other = await startCustomerSession(CUSTOMER, undefined, deps);
    await startCustomerSession(CUSTOMER, undefined, deps);
    expect(await find(other)).toBeDefined();
  });

  it('ends a session left unused for sessionIdleSeconds: live at 1799 s, gone at 1800 s', async () => {
    const { deps, find, clock } = await setup({ sessionIdleSeconds: 1800 });
    const unused = await startCustomerSession(CUSTOMER, undefined, deps);
    const used = await startCustomerSession(CUSTOMER, undefined, deps);
    clock.set(T0 + 1799);
    expect(await find(used)).toBeDefined();
    clock.set(T0 + 1800);
    expect(await find(unused)).toBeUndefined();
    clock.set(T0 + 1801);
    expect(await find(unused)).toBeUndefined();
  });

  it('counts idleness from the last use', async () => {
    const { deps, find, clock } = await setup({ sessionIdleSeconds: 1800 });
    const id = await startCustomerSession(CUSTOMER, undefined, deps);
    clock.set(T0 + 1799);
    expect(await find(id)).toBeDefined();
    clock.set(T0 + 1799 + 1799);
    expect(await find(id)).toBeDefined();
    clock.set(T0 + 1799 + 1799 + 1800);
    expect(await find(id)).toBeUndefined();
  });

  it('ends a session sessionTtlSeconds after login even if used all along', async () => {
    const { deps, find, clock } = await setup({ sessionIdleSeconds: 1800, sessionTtlSeconds: 7200 });
    const id = await startCustomerSession(CUSTOMER, undefined, deps);
    for (let at = 1000; at < 7200; at += 1000) {
      clock.set(T0 + at);
      expect(await find(id), `at ${at}`).toBeDefined();
    }
    clock.set(T0 + 7199);
    expect(await find(id)).toBeDefined();
    clock.set(T0 + 7200);
    expect(await find(id)).toBeUndefined();
    clock.set(T0 + 7201);
    expect(await find(id)).toBeUndefined();
  });

  it('does not bring an ended session back', async () => {
    const { deps, find, clock } = await setup();
    const id = await startCustomerSession(CUSTOMER, undefined, deps);
    clock.advance(10);
    await endCustomerSession(id, deps);
    expect(await find(id)).toBeUndefined();
    clock.advance(10);
    expect(await find(id)).toBeUndefined();
  });

  it('refuses the session of a customer an operator locked', async () => {
    const { deps, find, storage } = await setup();
    const id = await startCustomerSession(CUSTOMER, undefined, deps);
    await storage.customers.updateCustomer(CUSTOMER.profileId, { status: 'locked' }, T0);
    expect(await find(id)).toBeUndefined();
  });

  it('refuses the session of a customer locked out by wrong PINs, until the lock lifts', async () => {
    const { deps, find, storage, clock } = await setup();
    const id = await startCustomerSession(CUSTOMER, undefined, deps);
    await storage.customers.updateCustomer(CUSTOMER.profileId, { lockedUntil: T0 + 900 }, T0);
    clock.set(T0 + 899);
    expect(await find(id)).toBeUndefined();
    clock.set(T0 + 900);
    expect(await find(id)).toBeDefined();
  });

  it('refuses a missing, unknown or oversized session ID', async () => {
    const { deps, find } = await setup();
    await startCustomerSession(CUSTOMER, undefined, deps);
    expect(await find(undefined)).toBeUndefined();
    expect(await find('')).toBeUndefined();
    expect(await find('not-a-session')).toBeUndefined();
    expect(await find('x'.repeat(101))).toBeUndefined();
  });
});
