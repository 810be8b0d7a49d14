import { beforeEach, describe, expect, it } from 'vitest';
import { Conflict } from '../../../src/core/storage-errors.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, key, concurrently, type StorageUnderTest } from './fixtures.js';

/** The signing-key store: its part of the storage contract. */
export function describeSigningKeysContract(subject: StorageUnderTest): void {
  describe('signing keys', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    it('lists keys newest first with every field intact', async () => {
      const older = key({ kid: 'old', createdAt: T });
      const newer = key({ kid: 'new', createdAt: T + 5, publicJwk: null, generation: 2, activatesAt: T + 305 });
      await storage.keys.insertKey(older);
      await storage.keys.insertKey(newer);
      expect(await storage.keys.listKeys()).toEqual([newer, older]);
    });

    it('refuses a duplicate kid with Conflict', async () => {
      await storage.keys.insertKey(key());
      await expect(storage.keys.insertKey(key())).rejects.toBeInstanceOf(Conflict);
    });

    it('refuses a second key of one use and generation with Conflict; another use may have that generation', async () => {
      await storage.keys.insertKey(key({ kid: 'a', generation: 2 }));
      await expect(storage.keys.insertKey(key({ kid: 'b', generation: 2 }))).rejects.toBeInstanceOf(Conflict);
      await storage.keys.insertKey(key({ kid: 'c', use: 'enc', generation: 2 }));
      expect((await storage.keys.listKeys()).map((k) => k.kid).sort()).toEqual(['a', 'c']);
    });

    it('keeps keys that activate later, with their activation time', async () => {
      await storage.keys.insertKey(key({ kid: 'next', generation: 2, activatesAt: T + 330 }));
      expect((await storage.keys.listKeys())[0]).toMatchObject({ kid: 'next', generation: 2, activatesAt: T + 330 });
    });

    it('retires the unrevoked keys of one use below a generation whose window is unset', async () => {
      await storage.keys.insertKey(key({ kid: 'a', generation: 1 }));
      await storage.keys.insertKey(key({ kid: 'b', generation: 2, createdAt: T + 1 }));
      await storage.keys.insertKey(key({ kid: 'revoked', generation: 3, createdAt: T + 2, status: 'revoked' }));
      await storage.keys.insertKey(key({ kid: 'enc', use: 'enc', generation: 1, createdAt: T + 2 }));
      await storage.keys.insertKey(key({ kid: 'c', generation: 4, createdAt: T + 3, activatesAt: T + 300 }));
      expect(await storage.keys.retireKeys('sig', 4, T + 300, T + 1000)).toBe(2);
      const byKid = Object.fromEntries((await storage.keys.listKeys()).map((k) => [k.kid, k]));
      expect(byKid.a).toMatchObject({ status: 'retired', retiredAt: T + 300, verifyUntil: T + 1000 });
      expect(byKid.b).toMatchObject({ status: 'retired', retiredAt: T + 300, verifyUntil: T + 1000 });
      expect(byKid.revoked).toMatchObject({ status: 'revoked', retiredAt: null, verifyUntil: null });
      expect(byKid.c).toMatchObject({ status: 'active', retiredAt: null, verifyUntil: null });
      expect(byKid.enc).toMatchObject({ status: 'active', verifyUntil: null });
    });

    it('does not touch keys retired before', async () => {
      await storage.keys.insertKey(key({ kid: 'a', status: 'retired', retiredAt: T, verifyUntil: T + 50 }));
      await storage.keys.insertKey(key({ kid: 'b', generation: 2, createdAt: T + 1 }));
      expect(await storage.keys.retireKeys('sig', 3, T + 10, T + 1000)).toBe(1);
      const a = (await storage.keys.listKeys()).find((k) => k.kid === 'a');
      expect(a).toMatchObject({ retiredAt: T, verifyUntil: T + 50 });
    });

    it('restores a retired key to active; not a revoked or unknown one', async () => {
      await storage.keys.insertKey(key({ kid: 'a', status: 'retired', retiredAt: T + 300, verifyUntil: T + 1000 }));
      await storage.keys.insertKey(key({ kid: 'r', generation: 2, status: 'revoked', verifyUntil: T + 1000 }));
      expect(await storage.keys.restoreKey('a')).toBe(true);
      expect(await storage.keys.restoreKey('r')).toBe(false);
      expect(await storage.keys.restoreKey('nope')).toBe(false);
      const byKid = Object.fromEntries((await storage.keys.listKeys()).map((k) => [k.kid, k]));
      expect(byKid.a).toMatchObject({ status: 'active', retiredAt: null, verifyUntil: null });
      expect(byKid.r).toMatchObject({ status: 'revoked', verifyUntil: T + 1000 });
    });

    it('brings a pending activation forward; not an active, revoked or unknown key', async () => {
      await storage.keys.insertKey(key({ kid: 'current' }));
      await storage.keys.insertKey(key({ kid: 'next', generation: 2, activatesAt: T + 330 }));
      await storage.keys.insertKey(key({ kid: 'cancelled', generation: 3, activatesAt: T + 330, status: 'revoked' }));
      expect(await storage.keys.activateKey('next', T + 10)).toBe(true);
      expect(await storage.keys.activateKey('next', T + 10)).toBe(false);
      expect(await storage.keys.activateKey('current', T + 10)).toBe(false);
      expect(await storage.keys.activateKey('cancelled', T + 10)).toBe(false);
      expect(await storage.keys.activateKey('nope', T + 10)).toBe(false);
      const byKid = Object.fromEntries((await storage.keys.listKeys()).map((k) => [k.kid, k]));
      expect(byKid.next?.activatesAt).toBe(T + 10);
      expect(byKid.current?.activatesAt).toBe(T);
      expect(byKid.cancelled?.activatesAt).toBe(T + 330);
    });

    it('revokes a key once; an unknown key is not revoked', async () => {
      await storage.keys.insertKey(key({ kid: 'a', status: 'retired', verifyUntil: T + 1000 }));
      expect(await storage.keys.revokeKey('a')).toBe(true);
      expect(await storage.keys.revokeKey('a')).toBe(false);
      expect(await storage.keys.revokeKey('nope')).toBe(false);
      expect((await storage.keys.listKeys())[0]).toMatchObject({ kid: 'a', status: 'revoked', verifyUntil: T + 1000 });
    });

    it('lockKeys lists every key, and makes a second transaction read what the first one wrote', async () => {
      await storage.keys.insertKey(key({ kid: 'first' }));
      expect(await storage.transaction((tx) => tx.keys.lockKeys())).toEqual(await storage.keys.listKeys());
      // Each transaction takes the next generation after what it read: without
      // the lock, both would read generation 1 and the second insert would conflict.
      const added = await concurrently(4, (i) =>
        storage.transaction(async (tx) => {
          const highest = Math.max(...(await tx.keys.lockKeys()).map((k) => k.generation));
          await tx.keys.insertKey(key({ kid: `k${i}`, generation: highest + 1, createdAt: T + 1 + i }));
          return highest + 1;
        }),
      );
      expect(added.sort()).toEqual([2, 3, 4, 5]);
    });
  });
}
