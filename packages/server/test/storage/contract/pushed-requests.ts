import { beforeEach, describe, expect, it } from 'vitest';
import type { PushedRequestRecord } from '../../../src/core/authorize/pushed-request-store.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { Conflict } from '../../../src/core/storage-errors.js';
import { T, concurrently, type StorageUnderTest } from './fixtures.js';

/** A pushed request of client `c1`, pushed at `T`, valid 60 seconds. */
function pushed(overrides: Partial<PushedRequestRecord> = {}): PushedRequestRecord {
  return {
    idHash: 'p1',
    clientId: 'c1',
    parameters: { response_type: 'code', client_id: 'c1', redirect_uri: 'https://acme.example/cb', state: 'a "quoted" state', dpop_jkt: 'x'.repeat(43) },
    createdAt: T,
    expiresAt: T + 60,
    consumedAt: null,
    ...overrides,
  };
}

/** The pushed-request store: its part of the storage contract. */
export function describePushedRequestsContract(subject: StorageUnderTest): void {
  describe('pushed requests', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    it('consumes a pushed request once, with every parameter as pushed', async () => {
      await storage.pushedRequests.insertPushedRequest(pushed());
      expect(await storage.pushedRequests.consumePushedRequest('p1', 'c1', T + 59)).toEqual(pushed({ consumedAt: T + 59 }));
      expect(await storage.pushedRequests.consumePushedRequest('p1', 'c1', T + 59)).toBeUndefined();
    });

    it('refuses another client, an unknown ID, and an expired request (at its expiry, not a second before)', async () => {
      await storage.pushedRequests.insertPushedRequest(pushed());
      expect(await storage.pushedRequests.consumePushedRequest('p1', 'c2', T)).toBeUndefined();
      expect(await storage.pushedRequests.consumePushedRequest('p2', 'c1', T)).toBeUndefined();
      expect(await storage.pushedRequests.consumePushedRequest('p1', 'c1', T + 60)).toBeUndefined();
      // Neither refusal consumed it.
      expect((await storage.pushedRequests.consumePushedRequest('p1', 'c1', T + 59))?.consumedAt).toBe(T + 59);
    });

    it('throws Conflict for a second request with the same ID', async () => {
      await storage.pushedRequests.insertPushedRequest(pushed());
      await expect(storage.pushedRequests.insertPushedRequest(pushed())).rejects.toBeInstanceOf(Conflict);
    });

    it('gives one of many concurrent uses the request', async () => {
      await storage.pushedRequests.insertPushedRequest(pushed());
      const results = await concurrently(20, () => storage.pushedRequests.consumePushedRequest('p1', 'c1', T + 1));
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    });

    it('deletes expired requests only, used or not, at most the limit at a time', async () => {
      for (const id of ['x', 'y', 'z']) await storage.pushedRequests.insertPushedRequest(pushed({ idHash: id }));
      await storage.pushedRequests.consumePushedRequest('x', 'c1', T);
      await storage.pushedRequests.insertPushedRequest(pushed({ idHash: 'live', expiresAt: T + 61 }));
      expect(await storage.pushedRequests.deleteExpiredPushedRequests(T + 59, 2)).toBe(0);
      expect(await storage.pushedRequests.deleteExpiredPushedRequests(T + 60, 2)).toBe(2);
      expect(await storage.pushedRequests.deleteExpiredPushedRequests(T + 60, 2)).toBe(1);
      expect(await storage.pushedRequests.deleteExpiredPushedRequests(T + 60, 2)).toBe(0);
      expect(await storage.pushedRequests.consumePushedRequest('live', 'c1', T + 60)).toBeDefined();
    });
  });
}
