import { beforeEach, describe, expect, it } from 'vitest';
import { Conflict } from '../../../src/core/storage-errors.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { client, key, type StorageUnderTest } from './fixtures.js';

/** Transactions across the stores: its part of the storage contract. */
export function describeTransactionsContract(subject: StorageUnderTest): void {
  describe('transactions', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    it('commits every write when the work resolves', async () => {
      await storage.transaction(async (tx) => {
        await tx.clients.insertClient(client());
        await tx.keys.insertKey(key());
      });
      expect(await storage.clients.findClient('cid_sandbox_contract')).toBeDefined();
      expect(await storage.keys.listKeys()).toHaveLength(1);
    });

    it('rolls back every write when the work throws', async () => {
      await expect(
        storage.transaction(async (tx) => {
          await tx.clients.insertClient(client());
          await tx.keys.insertKey(key());
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await storage.clients.findClient('cid_sandbox_contract')).toBeUndefined();
      expect(await storage.keys.listKeys()).toEqual([]);
    });

    it('rolls back when a store throws a storage error inside', async () => {
      await storage.keys.insertKey(key({ kid: 'taken' }));
      await expect(
        storage.transaction(async (tx) => {
          await tx.clients.insertClient(client());
          await tx.keys.insertKey(key({ kid: 'taken' }));
        }),
      ).rejects.toBeInstanceOf(Conflict);
      expect(await storage.clients.findClient('cid_sandbox_contract')).toBeUndefined();
    });
  });
}
