import { beforeEach, describe, expect, it } from 'vitest';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, concurrently, type StorageUnderTest } from './fixtures.js';

/** The replay store: its part of the storage contract. */
export function describeUsedJtisContract(subject: StorageUnderTest): void {
  describe('used jtis', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    const use = (hash: string, expiresAt: number, now: number, kind: 'client_assertion' | 'dpop_proof' = 'client_assertion') =>
      storage.usedJtis.useJtiOnce(kind, hash, expiresAt, now);

    it('accepts a jti once and refuses it again until it expires', async () => {
      expect(await use('a', T + 60, T)).toBe(true);
      expect(await use('a', T + 120, T + 1)).toBe(false);
      expect(await use('a', T + 120, T + 59)).toBe(false);
    });

    it('keeps each kind apart', async () => {
      expect(await use('a', T + 60, T, 'client_assertion')).toBe(true);
      expect(await use('a', T + 60, T, 'dpop_proof')).toBe(true);
      expect(await use('a', T + 60, T, 'dpop_proof')).toBe(false);
    });

    it('accepts an expired jti again, from its expiry on, and keeps the new expiry', async () => {
      expect(await use('a', T + 60, T)).toBe(true);
      expect(await use('a', T + 200, T + 60)).toBe(true);
      expect(await use('a', T + 300, T + 199)).toBe(false);
    });

    it('accepts one of many concurrent uses of one jti', async () => {
      const results = await concurrently(20, () => use('same', T + 60, T));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('deletes expired records only, at most the limit at a time', async () => {
      for (const hash of ['x', 'y', 'z']) await use(hash, T + 10, T);
      await use('live', T + 100, T);
      expect(await storage.usedJtis.deleteExpiredJtis(T + 10, 2)).toBe(2);
      expect(await storage.usedJtis.deleteExpiredJtis(T + 10, 2)).toBe(1);
      expect(await storage.usedJtis.deleteExpiredJtis(T + 10, 2)).toBe(0);
      expect(await use('live', T + 200, T + 10)).toBe(false);
    });
  });
}
