import { beforeEach, describe, expect, it } from 'vitest';
import type { IdempotentRequestRecord } from '../../../src/core/customer-tokens/idempotent-request-store.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, type StorageUnderTest } from './fixtures.js';

/** The idempotent-request store: its part of the storage contract. */
export function describeIdempotentRequestsContract(subject: StorageUnderTest): void {
  describe('idempotent requests', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    const record = (overrides: Partial<IdempotentRequestRecord> = {}): IdempotentRequestRecord => ({
      clientId: 'c', reference: 'r', requestHash: 'h', sealedResponse: 'sealed', createdAt: T, expiresAt: T + 100, ...overrides,
    });

    it('claims a reference once: later claims get the record, until it expires; find sees it until then', async () => {
      const requests = () => storage.idempotentRequests;
      expect(await requests().claimIdempotentRequest(record())).toBeUndefined();
      expect(await requests().claimIdempotentRequest(record({ requestHash: 'other', createdAt: T + 99 }))).toEqual(record());
      expect(await requests().findIdempotentRequest('c', 'r', T + 99)).toEqual(record());
      expect(await requests().findIdempotentRequest('c', 'r', T + 100)).toBeUndefined();
      expect(await requests().findIdempotentRequest('other-client', 'r', T)).toBeUndefined();
      expect(await requests().claimIdempotentRequest(record({ requestHash: 'later', sealedResponse: 'sealed-later', createdAt: T + 100, expiresAt: T + 200 }))).toBeUndefined();
      expect(await requests().findIdempotentRequest('c', 'r', T + 100)).toMatchObject({ requestHash: 'later' });
      // Only the record the releasing request claimed: not one claimed since.
      await requests().releaseIdempotentRequest(record());
      expect(await requests().findIdempotentRequest('c', 'r', T + 100)).toMatchObject({ requestHash: 'later' });
      await requests().releaseIdempotentRequest(record({ sealedResponse: 'sealed-later' }));
      expect(await requests().findIdempotentRequest('c', 'r', T + 100)).toBeUndefined();
    });
  });
}
