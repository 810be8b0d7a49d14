import { beforeEach, describe, expect, it } from 'vitest';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, client, concurrently, key, type StorageUnderTest } from './fixtures.js';

/** The master key store: its part of the storage contract (docs/operator-guide.md, "Replacing the master key"). */
export function describeMasterKeysContract(subject: StorageUnderTest): void {
  describe('master keys', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });
    const states = async () => (await storage.masterKeys.listMasterKeys()).map((k) => [k.fingerprint, k.state]);

    it('records the first writing key once, whoever opens the database first', async () => {
      await concurrently(8, (i) => storage.masterKeys.recordMasterKey(`fp-${i}`, 'writing', T));
      const keys = await storage.masterKeys.listMasterKeys();
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatchObject({ state: 'writing', recordedAt: T, changedAt: T, sealedCarried: null });
      await storage.masterKeys.recordMasterKey('fp-other', 'writing', T + 1);
      expect(await storage.masterKeys.listMasterKeys()).toHaveLength(1);
    });

    it('records a next key once, and never changes a known one', async () => {
      await storage.masterKeys.recordMasterKey('old', 'writing', T);
      await storage.masterKeys.recordMasterKey('new', 'next', T + 1);
      await storage.masterKeys.recordMasterKey('new', 'next', T + 2);
      await storage.masterKeys.recordMasterKey('old', 'next', T + 2);
      expect(await states()).toEqual([['old', 'writing'], ['new', 'next']]);
    });

    it('switches the writing key only from the one that writes, and not while the key of the rotation before is still accepted', async () => {
      await storage.masterKeys.recordMasterKey('a', 'writing', T);
      expect(await storage.masterKeys.switchWritingMasterKey('a', 'b', 'carried-b', T + 1)).toBe(true);
      expect(await states()).toEqual([['a', 'previous'], ['b', 'writing']]);
      expect((await storage.masterKeys.listMasterKeys())[1]).toMatchObject({ sealedCarried: 'carried-b', changedAt: T + 1 });
      // From a key that no longer writes: nothing changes.
      expect(await storage.masterKeys.switchWritingMasterKey('a', 'c', 'carried-c', T + 2)).toBe(false);
      expect(await states()).toEqual([['a', 'previous'], ['b', 'writing']]);
      // While `a` is still accepted: refused, nothing changes.
      expect(await storage.masterKeys.switchWritingMasterKey('b', 'c', 'carried-c', T + 3)).toBe(false);
      expect(await states()).toEqual([['a', 'previous'], ['b', 'writing']]);
      expect(await storage.masterKeys.retireMasterKey('a', T + 4)).toBe(true);
      expect(await storage.masterKeys.switchWritingMasterKey('b', 'c', 'carried-c', T + 5)).toBe(true);
      expect(await states()).toEqual([['a', 'retired'], ['b', 'previous'], ['c', 'writing']]);
    });

    it('of concurrent switches from one key, exactly one wins', async () => {
      await storage.masterKeys.recordMasterKey('a', 'writing', T);
      const won = await concurrently(5, (i) => storage.masterKeys.switchWritingMasterKey('a', `b${i}`, 'carried', T + 1).catch(() => false));
      expect(won.filter(Boolean)).toHaveLength(1);
      expect((await states()).filter(([, state]) => state === 'writing')).toHaveLength(1);
    });

    it('retires with the guard only while no client secret is hashed under another key, in one step', async () => {
      await storage.masterKeys.recordMasterKey('old', 'writing', T);
      await storage.masterKeys.switchWritingMasterKey('old', 'new', 'carried', T + 1);
      await storage.clients.insertClient(client({ id: 'cid_sandbox_a', secretHash: 'bare-under-old' }));
      const guard = { fingerprint: 'new', firstFingerprint: 'old' };
      expect(await storage.masterKeys.retireMasterKey('old', T + 2, guard)).toBe(false);
      expect(await states()).toEqual([['old', 'previous'], ['new', 'writing']]);
      await storage.clients.updateClient('cid_sandbox_a', { secretHash: 'new:renewed' }, T + 3);
      expect(await storage.masterKeys.retireMasterKey('old', T + 4, guard)).toBe(true);
      expect(await states()).toEqual([['old', 'retired'], ['new', 'writing']]);
    });

    it('retires only a previous key', async () => {
      await storage.masterKeys.recordMasterKey('a', 'writing', T);
      expect(await storage.masterKeys.retireMasterKey('a', T + 1)).toBe(false);
      await storage.masterKeys.switchWritingMasterKey('a', 'b', 'carried', T + 1);
      expect(await storage.masterKeys.retireMasterKey('a', T + 2)).toBe(true);
      expect(await storage.masterKeys.retireMasterKey('a', T + 3)).toBe(false);
      expect(await states()).toEqual([['a', 'retired'], ['b', 'writing']]);
    });

    it('lists sealed values in key order, page by page, and replaces one only while it is what was read', async () => {
      for (const kid of ['k3', 'k1', 'k2']) await storage.keys.insertKey(key({ kid, generation: Number(kid.slice(1)), sealedPrivateJwk: `sealed-${kid}` }));
      const first = await storage.masterKeys.listSealedValues('signing-key', undefined, 2);
      expect(first).toEqual([
        { key: ['k1'], sealed: 'sealed-k1' },
        { key: ['k2'], sealed: 'sealed-k2' },
      ]);
      expect(await storage.masterKeys.listSealedValues('signing-key', ['k2'], 2)).toEqual([{ key: ['k3'], sealed: 'sealed-k3' }]);
      expect(await storage.masterKeys.replaceSealedValue('signing-key', ['k1'], 'sealed-k1', 'resealed-k1')).toBe(true);
      expect(await storage.masterKeys.replaceSealedValue('signing-key', ['k2'], 'not-what-is-stored', 'resealed-k2')).toBe(false);
      expect((await storage.keys.listKeys()).map((k) => [k.kid, k.sealedPrivateJwk]).sort()).toEqual([
        ['k1', 'resealed-k1'],
        ['k2', 'sealed-k2'],
        ['k3', 'sealed-k3'],
      ]);
    });

    it('pages through values keyed by two columns', async () => {
      for (const [clientId, reference] of [['c2', 'r1'], ['c1', 'r2'], ['c1', 'r1']] as const) {
        await storage.idempotentRequests.claimIdempotentRequest({ clientId, reference, requestHash: 'h', sealedResponse: `s-${clientId}-${reference}`, createdAt: T, expiresAt: T + 60 });
      }
      await storage.idempotentRequests.claimIdempotentRequest({ clientId: 'c0', reference: 'r0', requestHash: 'h', sealedResponse: null, createdAt: T, expiresAt: T + 60 });
      const first = await storage.masterKeys.listSealedValues('idempotent-response', undefined, 2);
      expect(first.map((v) => v.key)).toEqual([['c1', 'r1'], ['c1', 'r2']]);
      expect(await storage.masterKeys.listSealedValues('idempotent-response', ['c1', 'r2'], 2)).toEqual([{ key: ['c2', 'r1'], sealed: 's-c2-r1' }]);
      expect(await storage.masterKeys.replaceSealedValue('idempotent-response', ['c1', 'r2'], 's-c1-r2', 'resealed')).toBe(true);
      expect((await storage.masterKeys.listSealedValues('idempotent-response', ['c1', 'r1'], 1))[0]).toEqual({ key: ['c1', 'r2'], sealed: 'resealed' });
    });

    it('lists the clients whose current secret, or previous one within its grace, is hashed under another key', async () => {
      await storage.clients.insertClient(client({ id: 'cid_sandbox_a', secretHash: 'new:x' }));
      await storage.clients.insertClient(client({ id: 'cid_sandbox_b', secretHash: 'old:x' }));
      await storage.clients.insertClient(client({ id: 'cid_sandbox_c', secretHash: 'legacy-without-key' }));
      await storage.clients.insertClient(client({ id: 'cid_sandbox_d', secretHash: 'new:y', previousSecretHash: 'old:y', previousSecretExpiresAt: T + 10 }));
      await storage.clients.insertClient(client({ id: 'cid_sandbox_e', secretHash: 'new:z', previousSecretHash: 'old:z', previousSecretExpiresAt: T }));
      await storage.clients.insertClient(client({ id: 'cid_sandbox_f', secretHash: '' }));
      // A bare hash (no fingerprint) was made under the database's first key: here `old`.
      const ids = (await storage.masterKeys.listClientsWithSecretsNotUnder('new', T, 'old')).map((c) => c.id).sort();
      expect(ids).toEqual(['cid_sandbox_b', 'cid_sandbox_c', 'cid_sandbox_d']);
      // Under the first key itself, only hashes that name another key are elsewhere.
      const underFirst = (await storage.masterKeys.listClientsWithSecretsNotUnder('old', T, 'old')).map((c) => c.id).sort();
      expect(underFirst).toEqual(['cid_sandbox_a', 'cid_sandbox_d', 'cid_sandbox_e']);
    });

    it('a secret hash is renewed only while it still is the one verified', async () => {
      await storage.clients.insertClient(client({ id: 'cid_sandbox_a', secretHash: 'old:x', previousSecretHash: 'old:p', previousSecretExpiresAt: T + 10 }));
      expect(await storage.clients.renewSecretHash('cid_sandbox_a', 'current', 'old:x', 'new:x')).toBe(true);
      expect(await storage.clients.renewSecretHash('cid_sandbox_a', 'current', 'old:x', 'new:x2')).toBe(false);
      expect(await storage.clients.renewSecretHash('cid_sandbox_a', 'previous', 'old:p', 'new:p')).toBe(true);
      expect(await storage.clients.findClient('cid_sandbox_a')).toMatchObject({ secretHash: 'new:x', previousSecretHash: 'new:p' });
    });
  });
}
