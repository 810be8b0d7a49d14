import { beforeEach, describe, expect, it } from 'vitest';
import { Conflict, NotFound } from '../../../src/core/storage-errors.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, customer, concurrently, type StorageUnderTest } from './fixtures.js';

/** The customer store: its part of the storage contract. */
export function describeCustomersContract(subject: StorageUnderTest): void {
  describe('customers', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    it('stores and finds a customer by profile ID and by mobile with every field intact', async () => {
      const c = customer({ lockedUntil: T + 900, pinAttempts: 3, status: 'locked' });
      await storage.customers.insertCustomer(c);
      expect(await storage.customers.findCustomer(c.profileId)).toEqual(c);
      expect(await storage.customers.findCustomerByMobile(c.mobile)).toEqual(c);
      await storage.customers.insertCustomer(customer({ profileId: '223456789012', mobile: '+639179999999', name: null }));
      expect(await storage.customers.findCustomer('223456789012')).toEqual(customer({ profileId: '223456789012', mobile: '+639179999999', name: null }));
    });

    it('locks a customer once: a second lock, or an unknown customer, changes nothing', async () => {
      await storage.customers.insertCustomer(customer({ pinAttempts: 2 }));
      expect(await storage.customers.lockCustomer('123456789012', T + 5)).toEqual(customer({ pinAttempts: 2, status: 'locked', credentialVersion: 1, updatedAt: T + 5 }));
      expect(await storage.customers.lockCustomer('123456789012', T + 6)).toBeUndefined();
      expect((await storage.customers.findCustomer('123456789012'))?.updatedAt).toBe(T + 5);
      expect(await storage.customers.lockCustomer('999999999999', T + 6)).toBeUndefined();
      const results = await concurrently(10, () => storage.customers.lockCustomer('123456789012', T + 7));
      expect(results.filter((r) => r !== undefined)).toHaveLength(0);
    });

    it('returns undefined for an unknown profile ID or mobile', async () => {
      await storage.customers.insertCustomer(customer());
      expect(await storage.customers.findCustomer('999999999999')).toBeUndefined();
      expect(await storage.customers.findCustomerByMobile('+639179999999')).toBeUndefined();
    });

    it('refuses a second customer with the same mobile with Conflict and keeps the first', async () => {
      await storage.customers.insertCustomer(customer());
      await expect(storage.customers.insertCustomer(customer({ profileId: '223456789012', name: 'Other' }))).rejects.toBeInstanceOf(Conflict);
      expect(await storage.customers.listCustomers()).toEqual([customer()]);
    });

    it('refuses a duplicate profile ID with Conflict', async () => {
      await storage.customers.insertCustomer(customer());
      await expect(storage.customers.insertCustomer(customer({ mobile: '+639179999999' }))).rejects.toBeInstanceOf(Conflict);
    });

    it('lists customers oldest first', async () => {
      await storage.customers.insertCustomer(customer({ profileId: '200000000000', mobile: '+639170000002', createdAt: T + 10 }));
      await storage.customers.insertCustomer(customer({ profileId: '300000000000', mobile: '+639170000003', createdAt: T + 20 }));
      await storage.customers.insertCustomer(customer({ profileId: '400000000000', mobile: '+639170000004', createdAt: T }));
      expect((await storage.customers.listCustomers()).map((c) => c.profileId)).toEqual(['400000000000', '200000000000', '300000000000']);
    });

    it('updates only the given fields and sets updatedAt', async () => {
      await storage.customers.insertCustomer(customer({ pinAttempts: 2, lockedUntil: T + 5 }));
      const updated = await storage.customers.updateCustomer('123456789012', { status: 'locked', lockedUntil: null }, T + 99);
      // A status that changes is a new credential version.
      expect(updated).toEqual(customer({ status: 'locked', pinAttempts: 2, lockedUntil: null, credentialVersion: 1, updatedAt: T + 99 }));
      expect(await storage.customers.findCustomer('123456789012')).toEqual(updated);
      const renamed = await storage.customers.updateCustomer('123456789012', { name: null, pinHash: 'new', pinAttempts: 0 }, T + 100);
      expect(renamed).toEqual(customer({ status: 'locked', name: null, pinHash: 'new', lockedUntil: null, credentialVersion: 2, updatedAt: T + 100 }));
    });

    it('changes the credential version with the PIN and the status only (docs/journey.md, "After a PIN reset")', async () => {
      await storage.customers.insertCustomer(customer());
      const version = async () => (await storage.customers.findCustomer('123456789012'))?.credentialVersion;
      expect(await version()).toBe(0);
      // Neither a name, wrong PINs, a right one, a sign-in held, nor a PIN or a status set to what it was.
      await storage.customers.updateCustomer('123456789012', { name: 'Maria', status: 'active', pinHash: customer().pinHash, pinAttempts: 0, lockedUntil: null }, T + 1);
      await storage.customers.claimPinAttempt('+639171234567', T + 2, 5, 900);
      await storage.customers.clearPinAttempts('123456789012', 1, T + 3);
      await storage.customers.holdCustomerForSignIn('123456789012');
      expect(await version()).toBe(0);
      // A PIN reset, an operator's lock (once), an unlock, a new PIN set by an operator: one each.
      expect(await storage.customers.replacePin('123456789012', 'scrypt$new', T + 5)).toMatchObject({ credentialVersion: 1 });
      expect(await storage.customers.lockCustomer('123456789012', T + 6)).toMatchObject({ credentialVersion: 2 });
      expect(await storage.customers.lockCustomer('123456789012', T + 7)).toBeUndefined();
      expect(await storage.customers.updateCustomer('123456789012', { status: 'active', pinAttempts: 0, lockedUntil: null }, T + 8)).toMatchObject({ credentialVersion: 3 });
      expect(await storage.customers.updateCustomer('123456789012', { pinHash: 'scrypt$other' }, T + 9)).toMatchObject({ credentialVersion: 4 });
      expect(await version()).toBe(4);
    });

    it('throws NotFound when updating an unknown customer', async () => {
      await expect(storage.customers.updateCustomer('999999999999', { status: 'locked' }, T)).rejects.toBeInstanceOf(NotFound);
    });

    it('counts PIN attempts before they are checked and locks on the last one until now + lockSeconds', async () => {
      await storage.customers.insertCustomer(customer());
      for (const attempt of [1, 2, 3, 4]) {
        const claim = await storage.customers.claimPinAttempt('+639171234567', T + attempt, 5, 900);
        expect(claim).toMatchObject({ attempt, customer: { pinAttempts: attempt, lockedUntil: null, updatedAt: T + attempt } });
      }
      expect(await storage.customers.claimPinAttempt('+639171234567', T + 50, 5, 900)).toMatchObject({ attempt: 5, customer: { lockedUntil: T + 950 } });
      // Locked: no attempt at all, up to the last second of the lock.
      expect(await storage.customers.claimPinAttempt('+639171234567', T + 51, 5, 900)).toBeUndefined();
      expect(await storage.customers.claimPinAttempt('+639171234567', T + 949, 5, 900)).toBeUndefined();
      expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinAttempts: 5, lockedUntil: T + 950 });
      // Lifted: the count starts again from 1.
      expect(await storage.customers.claimPinAttempt('+639171234567', T + 950, 5, 900)).toMatchObject({ attempt: 1, customer: { lockedUntil: null } });
    });

    it('grants no attempt for an unknown mobile or an account an operator locked', async () => {
      await storage.customers.insertCustomer(customer({ status: 'locked' }));
      expect(await storage.customers.claimPinAttempt('+639171234567', T, 5, 900)).toBeUndefined();
      expect(await storage.customers.claimPinAttempt('+639179999999', T, 5, 900)).toBeUndefined();
      expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinAttempts: 0, lockedUntil: null });
    });

    it('grants exactly 5 of 50 concurrent attempts, the 5th locking', async () => {
      await storage.customers.insertCustomer(customer());
      const results = await concurrently(50, () => storage.customers.claimPinAttempt('+639171234567', T, 5, 900));
      const granted = results.filter((r) => r !== undefined);
      expect(granted.map((r) => r?.attempt).sort()).toEqual([1, 2, 3, 4, 5]);
      expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinAttempts: 5, lockedUntil: T + 900 });
    });

    it('clears the count and the lock after a right PIN that was the last attempt counted', async () => {
      await storage.customers.insertCustomer(customer({ pinAttempts: 5, lockedUntil: T + 900 }));
      await storage.customers.clearPinAttempts('123456789012', 5, T + 1);
      expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinAttempts: 0, lockedUntil: null, updatedAt: T + 1 });
    });

    it('holds a customer for a sign-in only while an operator has not locked them (wrong PINs lock PIN checks only)', async () => {
      await storage.customers.insertCustomer(customer());
      await storage.customers.insertCustomer(customer({ profileId: '223456789012', mobile: '+639171234568', status: 'locked' }));
      await storage.customers.insertCustomer(customer({ profileId: '323456789012', mobile: '+639171234569', pinAttempts: 5, lockedUntil: T + 900 }));
      expect(await storage.customers.holdCustomerForSignIn('123456789012')).toEqual(customer());
      expect(await storage.customers.holdCustomerForSignIn('223456789012')).toBeUndefined();
      expect(await storage.customers.holdCustomerForSignIn('323456789012')).toMatchObject({ profileId: '323456789012', lockedUntil: T + 900 });
      expect(await storage.customers.holdCustomerForSignIn('999999999999')).toBeUndefined();
    });

    it("replaces an active customer's PIN and clears the wrong-PIN count and lock; refuses a locked or unknown customer", async () => {
      await storage.customers.insertCustomer(customer({ pinAttempts: 5, lockedUntil: T + 900 }));
      expect(await storage.customers.replacePin('123456789012', 'scrypt$new', T + 7)).toEqual(
        customer({ pinHash: 'scrypt$new', pinAttempts: 0, lockedUntil: null, credentialVersion: 1, updatedAt: T + 7 }),
      );
      expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinHash: 'scrypt$new', pinAttempts: 0, lockedUntil: null });
      await storage.customers.insertCustomer(customer({ profileId: '223456789012', mobile: '+639171234568', status: 'locked', pinAttempts: 2 }));
      expect(await storage.customers.replacePin('223456789012', 'scrypt$other', T + 8)).toBeUndefined();
      expect(await storage.customers.findCustomer('223456789012')).toEqual(customer({ profileId: '223456789012', mobile: '+639171234568', status: 'locked', pinAttempts: 2 }));
      expect(await storage.customers.replacePin('999999999999', 'scrypt$other', T + 8)).toBeUndefined();
    });

    it('leaves attempts counted after the right one, and their lock, standing', async () => {
      await storage.customers.insertCustomer(customer());
      const right = await storage.customers.claimPinAttempt('+639171234567', T, 5, 900);
      // Four wrong attempts at the same time, the last of them locking.
      for (let i = 0; i < 4; i++) await storage.customers.claimPinAttempt('+639171234567', T, 5, 900);
      await storage.customers.clearPinAttempts('123456789012', right?.attempt ?? 0, T + 1);
      expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinAttempts: 5, lockedUntil: T + 900 });
    });
  });
}
