import { beforeEach, describe, expect, it } from 'vitest';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, concurrently, type StorageUnderTest } from './fixtures.js';

/** The consent store: its part of the storage contract. */
export function describeConsentsContract(subject: StorageUnderTest): void {
  describe('consents', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    const consent = (clientId = 'cid_sandbox_a', approvedAt = T) => ({ profileId: '123456789012', clientId, approvedAt });

    it('records approvals per customer and client, keeping the first approval time', async () => {
      await storage.consents.insertConsent(consent('cid_sandbox_b', T + 5));
      await storage.consents.insertConsent(consent('cid_sandbox_a', T));
      await storage.consents.insertConsent(consent('cid_sandbox_a', T + 99));
      await storage.consents.insertConsent({ profileId: '223456789012', clientId: 'cid_sandbox_a', approvedAt: T });
      expect(await storage.consents.findConsent('123456789012', 'cid_sandbox_a')).toEqual(consent('cid_sandbox_a', T));
      expect(await storage.consents.findConsent('123456789012', 'cid_sandbox_c')).toBeUndefined();
      expect(await storage.consents.listConsents('123456789012')).toEqual([consent('cid_sandbox_a', T), consent('cid_sandbox_b', T + 5)]);
    });

    it('records one approval of 10 concurrent ones', async () => {
      await concurrently(10, (i) => storage.consents.insertConsent(consent('cid_sandbox_a', T + i)));
      expect(await storage.consents.listConsents('123456789012')).toHaveLength(1);
    });

    it("removes every approval of one customer and no one else's", async () => {
      await storage.consents.insertConsent(consent('cid_sandbox_a'));
      await storage.consents.insertConsent(consent('cid_sandbox_b'));
      await storage.consents.insertConsent({ profileId: '223456789012', clientId: 'cid_sandbox_a', approvedAt: T });
      expect(await storage.consents.deleteConsentsOf('123456789012')).toBe(2);
      expect(await storage.consents.listConsents('123456789012')).toEqual([]);
      expect(await storage.consents.listConsents('223456789012')).toHaveLength(1);
    });
  });
}
