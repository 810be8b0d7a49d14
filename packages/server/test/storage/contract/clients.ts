import { beforeEach, describe, expect, it } from 'vitest';
import { NO_SECRET_HASH } from '../../../src/core/clients/manage-clients.js';
import { Conflict, NotFound } from '../../../src/core/storage-errors.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, client, concurrently, type StorageUnderTest } from './fixtures.js';

/** The client store: its part of the storage contract. */
export function describeClientsContract(subject: StorageUnderTest): void {
  describe('clients', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    it('stores and finds a client with every field intact', async () => {
      const c = client({ grants: ['client_credentials', 'authorization_code', 'refresh_token'], requirePkce: true, scopes: ['payments:read', 'https://api.example/x', '!#[]~'] });
      await storage.clients.insertClient(c);
      expect(await storage.clients.findClient(c.id)).toEqual(c);
    });

    it('stores a FAPI 2.0 client\'s profile and keys, changes them on update, and reads existing clients as standard without keys', async () => {
      const jwks = { keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' }] };
      const c = client({ profile: 'fapi2', jwks, jwksUri: null });
      await storage.clients.insertClient(c);
      expect(await storage.clients.findClient(c.id)).toEqual(c);
      const updated = await storage.clients.updateClient(c.id, { profile: 'standard', jwks: null, jwksUri: 'https://acme.example/jwks.json' }, T + 1);
      expect(updated).toMatchObject({ profile: 'standard', jwks: null, jwksUri: 'https://acme.example/jwks.json' });
      await storage.clients.insertClient(client({ id: 'cid_sandbox_plain' }));
      expect(await storage.clients.findClient('cid_sandbox_plain')).toMatchObject({ profile: 'standard', jwks: null, jwksUri: null });
    });

    it('stores a client without a secret (NO_SECRET_HASH) and ends every secret of a client switched to fapi2 in one update', async () => {
      const c = client({ secretHash: 'current', previousSecretHash: 'previous', previousSecretExpiresAt: T + 3600 });
      await storage.clients.insertClient(c);
      const switched = await storage.clients.updateClient(
        c.id,
        { profile: 'fapi2', requirePkce: true, secretHash: NO_SECRET_HASH, previousSecretHash: null, previousSecretExpiresAt: null },
        T + 1,
      );
      expect(switched).toMatchObject({ profile: 'fapi2', requirePkce: true, secretHash: '', previousSecretHash: null, previousSecretExpiresAt: null });
      expect(await storage.clients.findClient(c.id)).toEqual(switched);
    });

    it('keeps a client\'s scopes in their order, changes them on update, and keeps none as []', async () => {
      await storage.clients.insertClient(client());
      expect((await storage.clients.findClient('cid_sandbox_contract'))?.scopes).toEqual([]);
      const scopes = ['profile', 'payments:write', 'payments:read'];
      expect(await storage.clients.updateClient('cid_sandbox_contract', { scopes }, T + 1)).toEqual(client({ scopes, updatedAt: T + 1 }));
      expect((await storage.clients.listClients())[0]?.scopes).toEqual(scopes);
      expect(await storage.clients.updateClient('cid_sandbox_contract', { grants: ['client_credentials'] }, T + 2)).toMatchObject({ scopes });
      expect((await storage.clients.updateClient('cid_sandbox_contract', { scopes: [] }, T + 3)).scopes).toEqual([]);
      expect((await storage.clients.findClient('cid_sandbox_contract'))?.scopes).toEqual([]);
    });

    it("keeps the descriptions of a client's scopes, any text, any scope name, and changes them on update", async () => {
      // Parsed, so that `__proto__` is a key of its own (a scope token may be named so).
      const descriptions = JSON.parse('{"payments:read": "Makita ang iyong balanse — “₱” 😀", "__proto__": "a scope so named", "a=b": "x"}') as Record<string, string>;
      const c = client({ scopes: ['payments:read', '__proto__', 'a=b'], scopeDescriptions: descriptions });
      await storage.clients.insertClient(c);
      const found = await storage.clients.findClient(c.id);
      expect(Object.entries(found?.scopeDescriptions ?? {})).toEqual([
        ['payments:read', 'Makita ang iyong balanse — “₱” 😀'],
        ['__proto__', 'a scope so named'],
        ['a=b', 'x'],
      ]);
      const updated = await storage.clients.updateClient(c.id, { scopeDescriptions: { 'a=b': 'y' } }, T + 1);
      expect(Object.entries(updated.scopeDescriptions)).toEqual([['a=b', 'y']]);
      expect(Object.entries((await storage.clients.listClients())[0]?.scopeDescriptions ?? {})).toEqual([['a=b', 'y']]);
      expect(Object.entries((await storage.clients.updateClient(c.id, { scopeDescriptions: {} }, T + 2)).scopeDescriptions)).toEqual([]);
    });

    it('stores and finds a resource server: its kind, no redirect URI and no grant', async () => {
      const c = client({ kind: 'resource_server', redirectUri: null, grants: [] });
      await storage.clients.insertClient(c);
      await storage.clients.insertClient(client({ id: 'cid_sandbox_consumer', createdAt: T + 1 }));
      expect(await storage.clients.findClient(c.id)).toEqual(c);
      expect((await storage.clients.listClients()).map((listed) => [listed.id, listed.kind, listed.redirectUri])).toEqual([
        [c.id, 'resource_server', null],
        ['cid_sandbox_consumer', 'consumer', 'https://acme.example/callback'],
      ]);
      const updated = await storage.clients.updateClient(c.id, { name: 'Payments API', status: 'disabled' }, T + 5);
      expect(updated).toEqual({ ...c, name: 'Payments API', status: 'disabled', updatedAt: T + 5 });
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

    it('changes the status once, moving tokensEndedAt forward only', async () => {
      await storage.clients.insertClient(client());
      const disabled = await storage.clients.changeClientStatus('cid_sandbox_contract', { status: 'disabled', tokensEndedAt: T + 10 }, T + 10);
      expect(disabled).toEqual(client({ status: 'disabled', tokensEndedAt: T + 10, updatedAt: T + 10 }));
      expect(await storage.clients.findClient('cid_sandbox_contract')).toEqual(disabled);
      // Already disabled: nothing changes.
      expect(await storage.clients.changeClientStatus('cid_sandbox_contract', { status: 'disabled', tokensEndedAt: T + 20 }, T + 20)).toBeUndefined();
      // Enabling while the stored end is later than `endedBy` would revive tokens: refused.
      expect(await storage.clients.changeClientStatus('cid_sandbox_contract', { status: 'active', tokensEndedAt: T + 10, endedBy: T + 9 }, T + 11)).toBeUndefined();
      expect(await storage.clients.findClient('cid_sandbox_contract')).toEqual(disabled);
      expect(await storage.clients.changeClientStatus('cid_sandbox_contract', { status: 'active', tokensEndedAt: T + 11, endedBy: T + 10 }, T + 12)).toEqual(
        client({ status: 'active', tokensEndedAt: T + 11, updatedAt: T + 12 }),
      );
      // A disable never waits, and never moves the end back (a clock behind the last change's).
      expect(await storage.clients.changeClientStatus('cid_sandbox_contract', { status: 'disabled', tokensEndedAt: T + 5 }, T + 5)).toEqual(
        client({ status: 'disabled', tokensEndedAt: T + 11, updatedAt: T + 5 }),
      );
      expect(await storage.clients.changeClientStatus('cid_sandbox_nobody', { status: 'disabled', tokensEndedAt: T }, T)).toBeUndefined();
    });

    it('changes the status for exactly one of 10 concurrent calls', async () => {
      await storage.clients.insertClient(client());
      const results = await concurrently(10, () => storage.clients.changeClientStatus('cid_sandbox_contract', { status: 'disabled', tokensEndedAt: T + 1 }, T + 1));
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    });

    it('keeps large epoch seconds exact', async () => {
      const far = 4_102_444_800; // 2100-01-01, beyond 32-bit seconds
      await storage.clients.insertClient(client({ createdAt: far, updatedAt: far }));
      const found = await storage.clients.findClient('cid_sandbox_contract');
      expect(found?.createdAt).toBe(far);
      expect(typeof found?.createdAt).toBe('number');
    });
  });
}
