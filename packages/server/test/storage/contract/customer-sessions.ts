import { beforeEach, describe, expect, it } from 'vitest';
import { Conflict } from '../../../src/core/storage-errors.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, customerSession, type StorageUnderTest } from './fixtures.js';

/** The customer-session store: its part of the storage contract. */
export function describeCustomerSessionsContract(subject: StorageUnderTest): void {
  describe('customer sessions', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    const sessions = () => storage.customerSessions;

    it('stores and finds a session with every field intact', async () => {
      await sessions().insertCustomerSession(customerSession());
      expect(await sessions().findCustomerSession('session-1')).toEqual(customerSession());
      expect(await sessions().findCustomerSession('session-2')).toBeUndefined();
      await expect(sessions().insertCustomerSession(customerSession())).rejects.toBeInstanceOf(Conflict);
    });

    it('uses a live session (marking it), never an ended, expired or idle one', async () => {
      await sessions().insertCustomerSession(customerSession());
      await sessions().insertCustomerSession(customerSession({ idHash: 'ended', endedAt: T + 5 }));
      expect(await sessions().useCustomerSession('session-1', T + 10, 1800)).toEqual(customerSession({ lastSeenAt: T + 10 }));
      expect(await sessions().useCustomerSession('ended', T + 10, 1800)).toBeUndefined();
      expect(await sessions().useCustomerSession('session-unknown', T + 10, 1800)).toBeUndefined();
      expect((await sessions().findCustomerSession('ended'))?.lastSeenAt).toBe(T);
      // Idle: last seen T + 10, so live until T + 10 + 1800 - 1.
      expect(await sessions().useCustomerSession('session-1', T + 10 + 1800, 1800)).toBeUndefined();
      expect(await sessions().useCustomerSession('session-1', T + 10 + 1799, 1800)).toBeDefined();
    });

    it('never uses a session at or past its absolute end', async () => {
      await sessions().insertCustomerSession(customerSession());
      const { expiresAt } = customerSession();
      expect(await sessions().useCustomerSession('session-1', expiresAt, 10 * expiresAt)).toBeUndefined();
      expect(await sessions().useCustomerSession('session-1', expiresAt - 1, 10 * expiresAt)).toBeDefined();
    });

    it('ends a session once, keeping the first end time', async () => {
      await sessions().insertCustomerSession(customerSession());
      await sessions().endCustomerSession('session-1', T + 10);
      await sessions().endCustomerSession('session-1', T + 20);
      await sessions().endCustomerSession('session-unknown', T + 20);
      expect((await sessions().findCustomerSession('session-1'))?.endedAt).toBe(T + 10);
    });

    it("ends every live session of one customer and no one else's", async () => {
      await sessions().insertCustomerSession(customerSession({ idHash: 'a' }));
      await sessions().insertCustomerSession(customerSession({ idHash: 'b' }));
      await sessions().insertCustomerSession(customerSession({ idHash: 'ended', endedAt: T + 1 }));
      await sessions().insertCustomerSession(customerSession({ idHash: 'other', profileId: '223456789012' }));
      expect(await sessions().endCustomerSessionsOf('123456789012', T + 50)).toBe(2);
      expect((await sessions().findCustomerSession('a'))?.endedAt).toBe(T + 50);
      expect((await sessions().findCustomerSession('b'))?.endedAt).toBe(T + 50);
      expect((await sessions().findCustomerSession('ended'))?.endedAt).toBe(T + 1);
      expect((await sessions().findCustomerSession('other'))?.endedAt).toBeNull();
      expect(await sessions().endCustomerSessionsOf('123456789012', T + 60)).toBe(0);
    });
  });
}
