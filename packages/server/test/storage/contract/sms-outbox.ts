import { beforeEach, describe, expect, it } from 'vitest';
import { Conflict } from '../../../src/core/storage-errors.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, type StorageUnderTest } from './fixtures.js';

/** The SMS outbox: its part of the storage contract. */
export function describeSmsOutboxContract(subject: StorageUnderTest): void {
  describe('SMS outbox', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    it('lists the messages to one number, newest first, at most limit', async () => {
      const to = '+639171234567';
      await storage.outbox.insertOutboxMessage({ id: 'm1', to, body: 'first', sentAt: T });
      await storage.outbox.insertOutboxMessage({ id: 'm3', to, body: 'third', sentAt: T + 20 });
      await storage.outbox.insertOutboxMessage({ id: 'm2', to, body: 'second', sentAt: T + 10 });
      await storage.outbox.insertOutboxMessage({ id: 'x', to: '+639179999999', body: 'someone else', sentAt: T + 30 });
      expect(await storage.outbox.listOutboxMessages(to, 10)).toEqual([
        { id: 'm3', to, body: 'third', sentAt: T + 20 },
        { id: 'm2', to, body: 'second', sentAt: T + 10 },
        { id: 'm1', to, body: 'first', sentAt: T },
      ]);
      expect((await storage.outbox.listOutboxMessages(to, 2)).map((m) => m.id)).toEqual(['m3', 'm2']);
      expect(await storage.outbox.listOutboxMessages('+639170000000', 10)).toEqual([]);
    });

    it('refuses a duplicate message ID with Conflict', async () => {
      await storage.outbox.insertOutboxMessage({ id: 'm1', to: '+639171234567', body: 'b', sentAt: T });
      await expect(storage.outbox.insertOutboxMessage({ id: 'm1', to: '+639171234567', body: 'b', sentAt: T })).rejects.toBeInstanceOf(Conflict);
    });
  });
}
