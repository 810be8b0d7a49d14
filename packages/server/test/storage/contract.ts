import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '../../src/core/clients/client.js';
import type { SigningKeyRecord } from '../../src/core/keys/signing-key.js';
import { Conflict, NotFound } from '../../src/storage/errors.js';
import type { Storage } from '../../src/storage/ports.js';

/** Opens a fresh, empty storage for one test, and disposes of it afterwards. */
export interface StorageFactory {
  open(): Promise<Storage>;
  dispose?(storage: Storage): Promise<void>;
}

const T = 1_767_225_600;

function client(overrides: Partial<Client> = {}): Client {
  return {
    id: 'cid_sandbox_contract',
    name: 'Acme',
    secretHash: 'hash-1',
    redirectUri: 'https://acme.example/callback',
    grants: ['client_credentials', 'authorization_code'],
    requirePkce: false,
    status: 'active',
    createdAt: T,
    updatedAt: T,
    ...overrides,
  };
}

function key(overrides: Partial<SigningKeyRecord> = {}): SigningKeyRecord {
  return {
    kid: 'kid-1',
    alg: 'ES256',
    use: 'sig',
    status: 'active',
    publicJwk: '{"kty":"EC"}',
    sealedPrivateJwk: 'sealed',
    createdAt: T,
    retiredAt: null,
    verifyUntil: null,
    ...overrides,
  };
}

/**
 * The storage contract: every engine must behave exactly like this
 * (`storage/ports.ts` documents it). Each engine's test file calls it.
 */
export function describeStorageContract(engine: string, factory: StorageFactory): void {
  describe(`storage contract: ${engine}`, () => {
    let storage: Storage;

    beforeEach(async () => {
      storage = await factory.open();
      await storage.migrate();
    });

    afterEach(async () => {
      await factory.dispose?.(storage);
      await storage.close();
    });

    it('migrates idempotently and answers ping', async () => {
      expect(await storage.migrate()).toEqual([]);
      await expect(storage.ping()).resolves.toBeUndefined();
    });

    describe('clients', () => {
      it('stores and finds a client with every field intact', async () => {
        const c = client({ grants: ['client_credentials', 'authorization_code', 'refresh_token'], requirePkce: true });
        await storage.clients.insertClient(c);
        expect(await storage.clients.findClient(c.id)).toEqual(c);
      });

      it('returns undefined for an unknown client', async () => {
        expect(await storage.clients.findClient('cid_sandbox_nobody')).toBeUndefined();
      });

      it('refuses a duplicate ID with Conflict and keeps the first', async () => {
        await storage.clients.insertClient(client());
        await expect(storage.clients.insertClient(client({ name: 'Other' }))).rejects.toBeInstanceOf(Conflict);
        expect((await storage.clients.findClient('cid_sandbox_contract'))?.name).toBe('Acme');
      });

      it('lists clients oldest first', async () => {
        await storage.clients.insertClient(client({ id: 'cid_b', createdAt: T + 10 }));
        await storage.clients.insertClient(client({ id: 'cid_a', createdAt: T + 20 }));
        await storage.clients.insertClient(client({ id: 'cid_c', createdAt: T }));
        expect((await storage.clients.listClients()).map((c) => c.id)).toEqual(['cid_c', 'cid_b', 'cid_a']);
      });

      it('updates only the given fields and sets updatedAt', async () => {
        await storage.clients.insertClient(client());
        const updated = await storage.clients.updateClient(
          'cid_sandbox_contract',
          { status: 'disabled', grants: ['client_credentials'], secretHash: 'hash-2' },
          T + 99,
        );
        expect(updated).toEqual(
          client({ status: 'disabled', grants: ['client_credentials'], secretHash: 'hash-2', updatedAt: T + 99 }),
        );
        expect(await storage.clients.findClient('cid_sandbox_contract')).toEqual(updated);
      });

      it('throws NotFound when updating an unknown client', async () => {
        await expect(storage.clients.updateClient('cid_nobody', { status: 'disabled' }, T)).rejects.toBeInstanceOf(NotFound);
      });

      it('keeps large epoch seconds exact', async () => {
        const far = 4_102_444_800; // 2100-01-01, beyond 32-bit seconds
        await storage.clients.insertClient(client({ createdAt: far, updatedAt: far }));
        const found = await storage.clients.findClient('cid_sandbox_contract');
        expect(found?.createdAt).toBe(far);
        expect(typeof found?.createdAt).toBe('number');
      });
    });

    describe('signing keys', () => {
      it('lists keys newest first with every field intact', async () => {
        const older = key({ kid: 'old', createdAt: T });
        const newer = key({ kid: 'new', createdAt: T + 5, publicJwk: null });
        await storage.keys.insertKey(older);
        await storage.keys.insertKey(newer);
        expect(await storage.keys.listKeys()).toEqual([newer, older]);
      });

      it('refuses a duplicate kid with Conflict', async () => {
        await storage.keys.insertKey(key());
        await expect(storage.keys.insertKey(key())).rejects.toBeInstanceOf(Conflict);
      });

      it('retires every other active key of the same use', async () => {
        await storage.keys.insertKey(key({ kid: 'a' }));
        await storage.keys.insertKey(key({ kid: 'b', createdAt: T + 1 }));
        await storage.keys.insertKey(key({ kid: 'enc', use: 'enc', createdAt: T + 2 }));
        await storage.keys.insertKey(key({ kid: 'c', createdAt: T + 3 }));
        expect(await storage.keys.retireKeys('sig', 'c', T + 10, T + 1000)).toBe(2);
        const byKid = Object.fromEntries((await storage.keys.listKeys()).map((k) => [k.kid, k]));
        expect(byKid.a).toMatchObject({ status: 'retired', retiredAt: T + 10, verifyUntil: T + 1000 });
        expect(byKid.b).toMatchObject({ status: 'retired', retiredAt: T + 10, verifyUntil: T + 1000 });
        expect(byKid.c).toMatchObject({ status: 'active', retiredAt: null, verifyUntil: null });
        expect(byKid.enc).toMatchObject({ status: 'active' });
      });

      it('does not touch keys retired before', async () => {
        await storage.keys.insertKey(key({ kid: 'a', status: 'retired', retiredAt: T, verifyUntil: T + 50 }));
        await storage.keys.insertKey(key({ kid: 'b', createdAt: T + 1 }));
        expect(await storage.keys.retireKeys('sig', 'b', T + 10, T + 1000)).toBe(0);
        const a = (await storage.keys.listKeys()).find((k) => k.kid === 'a');
        expect(a).toMatchObject({ retiredAt: T, verifyUntil: T + 50 });
      });
    });

    describe('transactions', () => {
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
  });
}
