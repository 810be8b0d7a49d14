import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Authentication } from '../../src/core/authentication.js';
import type { Client } from '../../src/core/clients/client.js';
import { clientRecord } from '../helpers/client-record.js';
import type { Customer } from '../../src/core/customers/customer.js';
import type { SigningKeyRecord } from '../../src/core/keys/signing-key.js';
import type { AuthorizationCodeRecord } from '../../src/core/codes/authorization-code.js';
import type { AuthorizationRequestRecord, CustomerSessionRecord } from '../../src/core/journey/records.js';
import { TRANSITIONS } from '../../src/core/journey/states.js';
import { REPLAYED_CODE_EXPIRY, type CodeBinding } from '../../src/core/codes/code-store.js';
import type { OtpEntry, PinResetUse, ResetOtpEntry } from '../../src/core/journey/stores.js';
import type { OtpChallengeRecord } from '../../src/core/otp/records.js';
import type { TokenSessionRecord } from '../../src/core/tokens/records.js';
import type { IdempotentRequestRecord } from '../../src/core/customer-tokens/idempotent-request-store.js';
import { Conflict, NotFound } from '../../src/core/storage-errors.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { purgeExpired } from '../../src/core/retention/purge.js';

/** Opens a fresh, empty storage for one test, and disposes of it afterwards. */
export interface StorageFactory {
  open(): Promise<Storage>;
  dispose?(storage: Storage): Promise<void>;
}

const T = 1_767_225_600;

function client(overrides: Partial<Client> = {}): Client {
  return clientRecord({ id: 'cid_sandbox_contract', name: 'Acme', secretHash: 'hash-1', redirectUri: 'https://acme.example/callback', ...overrides });
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
    generation: 1,
    activatesAt: T,
    retiredAt: null,
    verifyUntil: null,
    ...overrides,
  };
}

function customer(overrides: Partial<Customer> = {}): Customer {
  return {
    profileId: '123456789012',
    mobile: '+639171234567',
    name: 'Juan dela Cruz',
    pinHash: 'scrypt$32768$8$1$salt$hash',
    status: 'active',
    pinAttempts: 0,
    lockedUntil: null,
    credentialVersion: 0,
    createdAt: T,
    updatedAt: T,
    ...overrides,
  };
}

function authorizationRequest(overrides: Partial<AuthorizationRequestRecord> = {}): AuthorizationRequestRecord {
  return {
    idHash: 'request-1',
    clientId: 'cid_sandbox_contract',
    redirectUri: 'https://acme.example/callback',
    state: 'xyz',
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    loginHint: '+639171234567',
    browserHash: 'browser-1',
    createdAt: T,
    expiresAt: T + 900,
    completedAt: null,
    endedBy: null,
    status: 'pending',
    profileId: null,
    uiLocale: 'fil',
    scopes: ['payments:read', 'profile'],
    ...overrides,
  };
}

function challenge(overrides: Partial<OtpChallengeRecord> = {}): OtpChallengeRecord {
  return {
    id: 'challenge-1',
    requestHash: 'request-1',
    purpose: 'login',
    mobile: '+639171234567',
    profileId: '123456789012',
    pendingPinHash: null,
    codeHash: 'code-hash-1',
    attempts: 0,
    resends: 0,
    lastSentAt: T,
    expiresAt: T + 300,
    createdAt: T,
    consumedAt: null,
    ...overrides,
  };
}

/** How the customer of the fixtures signed in: PIN + SMS, 5 seconds before T. */
const SIGN_IN: Authentication = { acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], authTime: T - 5 };

function customerSession(overrides: Partial<CustomerSessionRecord> = {}): CustomerSessionRecord {
  return {
    idHash: 'session-1',
    profileId: '123456789012',
    createdAt: T,
    lastSeenAt: T,
    expiresAt: T + 43_200,
    endedAt: null,
    authentication: SIGN_IN,
    ...overrides,
  };
}

/** What `authorizationCode()` was issued for: its redirect URI, no PKCE challenge. */
const BINDING = { redirectUri: 'https://acme.example/callback', codeChallenge: null };

function authorizationCode(overrides: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord {
  return {
    codeHash: 'code-1',
    clientId: 'cid_sandbox_contract',
    redirectUri: 'https://acme.example/callback',
    profileId: '123456789012',
    codeChallenge: null,
    createdAt: T,
    expiresAt: T + 300,
    consumedAt: null,
    scopes: ['payments:read', 'profile'],
    authentication: SIGN_IN,
    ...overrides,
  };
}

function tokenSession(overrides: Partial<TokenSessionRecord> = {}): TokenSessionRecord {
  return {
    sid: 'sid-1',
    clientId: 'cid_sandbox_contract',
    profileId: '123456789012',
    codeHash: 'code-1',
    refreshJti: 'refresh-jti-1',
    accessJti: 'access-jti-1',
    createdAt: T,
    refreshExpiresAt: T + 604_800,
    accessExpiresAt: T + 3600,
    revokedAt: null,
    authentication: SIGN_IN,
    ...overrides,
  };
}

/** Runs `count` calls of `work` at once. */
function concurrently<R>(count: number, work: (index: number) => Promise<R>): Promise<R[]> {
  return Promise.all(Array.from({ length: count }, (_, index) => work(index)));
}

/**
 * The storage contract: every engine must behave exactly like this
 * (`core/storage/storage.ts` documents it). Each engine's test file calls it.
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
        const c = client({ grants: ['client_credentials', 'authorization_code', 'refresh_token'], requirePkce: true, scopes: ['payments:read', 'https://api.example/x', '!#[]~'] });
        await storage.clients.insertClient(c);
        expect(await storage.clients.findClient(c.id)).toEqual(c);
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

    describe('signing keys', () => {
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

    describe('customers', () => {
      it('stores and finds a customer by profile ID and by mobile with every field intact', async () => {
        const c = customer({ lockedUntil: T + 900, pinAttempts: 3, status: 'locked' });
        await storage.customers.insertCustomer(c);
        expect(await storage.customers.findCustomer(c.profileId)).toEqual(c);
        expect(await storage.customers.findCustomerByMobile(c.mobile)).toEqual(c);
        await storage.customers.insertCustomer(customer({ profileId: '223456789012', mobile: '+639179999999', name: null }));
        expect(await storage.customers.findCustomer('223456789012')).toEqual(customer({ profileId: '223456789012', mobile: '+639179999999', name: null }));
      });

      it('locks a customer once: a second lock, or an unknown customer, changes nothing', async () => {
        await storage.customers.insertCustomer(customer({ pinAttempts: 2 }));
        expect(await storage.customers.lockCustomer('123456789012', T + 5)).toEqual(customer({ pinAttempts: 2, status: 'locked', credentialVersion: 1, updatedAt: T + 5 }));
        expect(await storage.customers.lockCustomer('123456789012', T + 6)).toBeUndefined();
        expect((await storage.customers.findCustomer('123456789012'))?.updatedAt).toBe(T + 5);
        expect(await storage.customers.lockCustomer('999999999999', T + 6)).toBeUndefined();
        const results = await concurrently(10, () => storage.customers.lockCustomer('123456789012', T + 7));
        expect(results.filter((r) => r !== undefined)).toHaveLength(0);
      });

      it('returns undefined for an unknown profile ID or mobile', async () => {
        await storage.customers.insertCustomer(customer());
        expect(await storage.customers.findCustomer('999999999999')).toBeUndefined();
        expect(await storage.customers.findCustomerByMobile('+639179999999')).toBeUndefined();
      });

      it('refuses a second customer with the same mobile with Conflict and keeps the first', async () => {
        await storage.customers.insertCustomer(customer());
        await expect(storage.customers.insertCustomer(customer({ profileId: '223456789012', name: 'Other' }))).rejects.toBeInstanceOf(Conflict);
        expect(await storage.customers.listCustomers()).toEqual([customer()]);
      });

      it('refuses a duplicate profile ID with Conflict', async () => {
        await storage.customers.insertCustomer(customer());
        await expect(storage.customers.insertCustomer(customer({ mobile: '+639179999999' }))).rejects.toBeInstanceOf(Conflict);
      });

      it('lists customers oldest first', async () => {
        await storage.customers.insertCustomer(customer({ profileId: '200000000000', mobile: '+639170000002', createdAt: T + 10 }));
        await storage.customers.insertCustomer(customer({ profileId: '300000000000', mobile: '+639170000003', createdAt: T + 20 }));
        await storage.customers.insertCustomer(customer({ profileId: '400000000000', mobile: '+639170000004', createdAt: T }));
        expect((await storage.customers.listCustomers()).map((c) => c.profileId)).toEqual(['400000000000', '200000000000', '300000000000']);
      });

      it('updates only the given fields and sets updatedAt', async () => {
        await storage.customers.insertCustomer(customer({ pinAttempts: 2, lockedUntil: T + 5 }));
        const updated = await storage.customers.updateCustomer('123456789012', { status: 'locked', lockedUntil: null }, T + 99);
        // A status that changes is a new credential version.
        expect(updated).toEqual(customer({ status: 'locked', pinAttempts: 2, lockedUntil: null, credentialVersion: 1, updatedAt: T + 99 }));
        expect(await storage.customers.findCustomer('123456789012')).toEqual(updated);
        const renamed = await storage.customers.updateCustomer('123456789012', { name: null, pinHash: 'new', pinAttempts: 0 }, T + 100);
        expect(renamed).toEqual(customer({ status: 'locked', name: null, pinHash: 'new', lockedUntil: null, credentialVersion: 2, updatedAt: T + 100 }));
      });

      it('changes the credential version with the PIN and the status only (docs/journey.md, "After a PIN reset")', async () => {
        await storage.customers.insertCustomer(customer());
        const version = async () => (await storage.customers.findCustomer('123456789012'))?.credentialVersion;
        expect(await version()).toBe(0);
        // Neither a name, wrong PINs, a right one, a sign-in held, nor a PIN or a status set to what it was.
        await storage.customers.updateCustomer('123456789012', { name: 'Maria', status: 'active', pinHash: customer().pinHash, pinAttempts: 0, lockedUntil: null }, T + 1);
        await storage.customers.claimPinAttempt('+639171234567', T + 2, 5, 900);
        await storage.customers.clearPinAttempts('123456789012', 1, T + 3);
        await storage.customers.holdCustomerForSignIn('123456789012', T + 4);
        expect(await version()).toBe(0);
        // A PIN reset, an operator's lock (once), an unlock, a new PIN set by an operator: one each.
        expect(await storage.customers.replacePin('123456789012', 'scrypt$new', T + 5)).toMatchObject({ credentialVersion: 1 });
        expect(await storage.customers.lockCustomer('123456789012', T + 6)).toMatchObject({ credentialVersion: 2 });
        expect(await storage.customers.lockCustomer('123456789012', T + 7)).toBeUndefined();
        expect(await storage.customers.updateCustomer('123456789012', { status: 'active', pinAttempts: 0, lockedUntil: null }, T + 8)).toMatchObject({ credentialVersion: 3 });
        expect(await storage.customers.updateCustomer('123456789012', { pinHash: 'scrypt$other' }, T + 9)).toMatchObject({ credentialVersion: 4 });
        expect(await version()).toBe(4);
      });

      it('throws NotFound when updating an unknown customer', async () => {
        await expect(storage.customers.updateCustomer('999999999999', { status: 'locked' }, T)).rejects.toBeInstanceOf(NotFound);
      });

      it('counts PIN attempts before they are checked and locks on the last one until now + lockSeconds', async () => {
        await storage.customers.insertCustomer(customer());
        for (const attempt of [1, 2, 3, 4]) {
          const claim = await storage.customers.claimPinAttempt('+639171234567', T + attempt, 5, 900);
          expect(claim).toMatchObject({ attempt, customer: { pinAttempts: attempt, lockedUntil: null, updatedAt: T + attempt } });
        }
        expect(await storage.customers.claimPinAttempt('+639171234567', T + 50, 5, 900)).toMatchObject({ attempt: 5, customer: { lockedUntil: T + 950 } });
        // Locked: no attempt at all, up to the last second of the lock.
        expect(await storage.customers.claimPinAttempt('+639171234567', T + 51, 5, 900)).toBeUndefined();
        expect(await storage.customers.claimPinAttempt('+639171234567', T + 949, 5, 900)).toBeUndefined();
        expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinAttempts: 5, lockedUntil: T + 950 });
        // Lifted: the count starts again from 1.
        expect(await storage.customers.claimPinAttempt('+639171234567', T + 950, 5, 900)).toMatchObject({ attempt: 1, customer: { lockedUntil: null } });
      });

      it('grants no attempt for an unknown mobile or an account an operator locked', async () => {
        await storage.customers.insertCustomer(customer({ status: 'locked' }));
        expect(await storage.customers.claimPinAttempt('+639171234567', T, 5, 900)).toBeUndefined();
        expect(await storage.customers.claimPinAttempt('+639179999999', T, 5, 900)).toBeUndefined();
        expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinAttempts: 0, lockedUntil: null });
      });

      it('grants exactly 5 of 50 concurrent attempts, the 5th locking', async () => {
        await storage.customers.insertCustomer(customer());
        const results = await concurrently(50, () => storage.customers.claimPinAttempt('+639171234567', T, 5, 900));
        const granted = results.filter((r) => r !== undefined);
        expect(granted.map((r) => r?.attempt).sort()).toEqual([1, 2, 3, 4, 5]);
        expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinAttempts: 5, lockedUntil: T + 900 });
      });

      it('clears the count and the lock after a right PIN that was the last attempt counted', async () => {
        await storage.customers.insertCustomer(customer({ pinAttempts: 5, lockedUntil: T + 900 }));
        await storage.customers.clearPinAttempts('123456789012', 5, T + 1);
        expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinAttempts: 0, lockedUntil: null, updatedAt: T + 1 });
      });

      it('holds a customer for a sign-in only while they may sign in', async () => {
        await storage.customers.insertCustomer(customer());
        await storage.customers.insertCustomer(customer({ profileId: '223456789012', mobile: '+639171234568', status: 'locked' }));
        await storage.customers.insertCustomer(customer({ profileId: '323456789012', mobile: '+639171234569', lockedUntil: T + 900 }));
        expect(await storage.customers.holdCustomerForSignIn('123456789012', T)).toEqual(customer());
        expect(await storage.customers.holdCustomerForSignIn('223456789012', T)).toBeUndefined();
        expect(await storage.customers.holdCustomerForSignIn('323456789012', T + 899)).toBeUndefined();
        expect(await storage.customers.holdCustomerForSignIn('323456789012', T + 900)).toMatchObject({ profileId: '323456789012' });
        expect(await storage.customers.holdCustomerForSignIn('999999999999', T)).toBeUndefined();
      });

      it("replaces an active customer's PIN and clears the wrong-PIN count and lock; refuses a locked or unknown customer", async () => {
        await storage.customers.insertCustomer(customer({ pinAttempts: 5, lockedUntil: T + 900 }));
        expect(await storage.customers.replacePin('123456789012', 'scrypt$new', T + 7)).toEqual(
          customer({ pinHash: 'scrypt$new', pinAttempts: 0, lockedUntil: null, credentialVersion: 1, updatedAt: T + 7 }),
        );
        expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinHash: 'scrypt$new', pinAttempts: 0, lockedUntil: null });
        await storage.customers.insertCustomer(customer({ profileId: '223456789012', mobile: '+639171234568', status: 'locked', pinAttempts: 2 }));
        expect(await storage.customers.replacePin('223456789012', 'scrypt$other', T + 8)).toBeUndefined();
        expect(await storage.customers.findCustomer('223456789012')).toEqual(customer({ profileId: '223456789012', mobile: '+639171234568', status: 'locked', pinAttempts: 2 }));
        expect(await storage.customers.replacePin('999999999999', 'scrypt$other', T + 8)).toBeUndefined();
      });

      it('leaves attempts counted after the right one, and their lock, standing', async () => {
        await storage.customers.insertCustomer(customer());
        const right = await storage.customers.claimPinAttempt('+639171234567', T, 5, 900);
        // Four wrong attempts at the same time, the last of them locking.
        for (let i = 0; i < 4; i++) await storage.customers.claimPinAttempt('+639171234567', T, 5, 900);
        await storage.customers.clearPinAttempts('123456789012', right?.attempt ?? 0, T + 1);
        expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinAttempts: 5, lockedUntil: T + 900 });
      });
    });

    describe('authorization requests', () => {
      it('stores and finds a request with every field intact', async () => {
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest());
        const bare = authorizationRequest({ idHash: 'request-2', state: null, codeChallenge: null, loginHint: null, uiLocale: null });
        await storage.authorizationRequests.insertAuthorizationRequest(bare);
        expect(await storage.authorizationRequests.findAuthorizationRequest('request-1')).toEqual(authorizationRequest());
        expect(await storage.authorizationRequests.findAuthorizationRequest('request-2')).toEqual(bare);
        expect(await storage.authorizationRequests.findAuthorizationRequest('request-3')).toBeUndefined();
      });

      it('refuses a duplicate ID with Conflict', async () => {
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest());
        await expect(storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest())).rejects.toBeInstanceOf(Conflict);
      });

      it('moves a journey along a transition only from its from-states, binding the customer when told', async () => {
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest());
        const requests = storage.authorizationRequests;
        expect(await requests.transitionAuthorizationRequest('request-1', TRANSITIONS.otpVerified, T + 1)).toBeUndefined();
        expect(await requests.transitionAuthorizationRequest('request-1', TRANSITIONS.codeSent, T + 2, '123456789012')).toEqual(
          authorizationRequest({ status: 'otp_sent', profileId: '123456789012' }),
        );
        expect(await requests.transitionAuthorizationRequest('request-1', TRANSITIONS.codeSent, T + 3)).toMatchObject({ status: 'otp_sent', profileId: '123456789012', completedAt: null });
        expect(await requests.transitionAuthorizationRequest('request-1', TRANSITIONS.otpVerified, T + 4)).toMatchObject({ status: 'code_issued', completedAt: T + 4 });
        // Final: nothing moves it any more.
        expect(await requests.transitionAuthorizationRequest('request-1', TRANSITIONS.cancelled, T + 5)).toBeUndefined();
        expect(await requests.findAuthorizationRequest('request-1')).toMatchObject({ status: 'code_issued', completedAt: T + 4 });
        expect(await requests.transitionAuthorizationRequest('request-unknown', TRANSITIONS.cancelled, T)).toBeUndefined();
      });

      it('moves a journey only before it expires', async () => {
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest());
        expect(await storage.authorizationRequests.transitionAuthorizationRequest('request-1', TRANSITIONS.cancelled, T + 900)).toBeUndefined();
        expect(await storage.authorizationRequests.transitionAuthorizationRequest('request-1', TRANSITIONS.cancelled, T + 899)).toMatchObject({ status: 'cancelled' });
      });

      it("ends every journey of one customer past its first page, bound to them or holding their challenge, and a pending one holding their challenge (after a PIN reset): no one else's, no other pending, final or expired one, not the one spared", async () => {
        const PROFILE = '123456789012';
        const requests = storage.authorizationRequests;
        const journeys: Array<[string, Partial<AuthorizationRequestRecord>, string | null, boolean]> = [
          // [id, fields, the profile of its challenge (none: null), ended]
          ['bound-otp', { status: 'otp_sent', profileId: PROFILE }, PROFILE, true],
          ['bound-consent', { status: 'consent_required', profileId: PROFILE }, null, true],
          ['reset-code', { status: 'reset_otp_sent', profileId: null }, PROFILE, true],
          ['reset-verified', { status: 'reset_verified', profileId: PROFILE }, PROFILE, true],
          ['spared', { status: 'reset_verified', profileId: PROFILE }, PROFILE, false],
          // Back at its login page after a PIN reset of the customer: the reset's code would prove the phone.
          ['pending-after-reset', { status: 'pending', profileId: null }, PROFILE, true],
          ['pending-bound', { status: 'pending', profileId: PROFILE }, null, false],
          ['pending-other', { status: 'pending', profileId: null }, '999999999999', false],
          ['issued', { status: 'code_issued', profileId: PROFILE, completedAt: T + 1 }, PROFILE, false],
          ['expired', { status: 'otp_sent', profileId: PROFILE, expiresAt: T + 5 }, PROFILE, false],
          ['other', { status: 'otp_sent', profileId: '999999999999' }, '999999999999', false],
          ['unknown-mobile', { status: 'reset_otp_sent', profileId: null }, null, false],
        ];
        for (const [id, fields, profileId] of journeys) {
          await requests.insertAuthorizationRequest(authorizationRequest({ idHash: id, ...fields }));
          await storage.otpChallenges.insertOtpChallenge(challenge({ id: `challenge-${id}`, requestHash: id, profileId }));
        }
        expect(await requests.endJourneysOf(PROFILE, T + 10, 'pin_reset', 'spared')).toBe(5);
        for (const [id, fields, , ended] of journeys) {
          const after = await requests.findAuthorizationRequest(id);
          if (ended) expect(after, id).toMatchObject({ status: 'cancelled', completedAt: T + 10, endedBy: 'pin_reset' });
          else expect(after, id).toEqual(authorizationRequest({ idHash: id, ...fields }));
        }
        expect(await requests.endJourneysOf(PROFILE, T + 11, 'lock')).toBe(1);
        expect(await requests.findAuthorizationRequest('spared')).toMatchObject({ status: 'cancelled', completedAt: T + 11, endedBy: 'lock' });
      });

      it('moves a journey for exactly one of 10 concurrent calls', async () => {
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ status: 'otp_sent' }));
        const results = await concurrently(10, (i) => storage.authorizationRequests.transitionAuthorizationRequest('request-1', TRANSITIONS.otpVerified, T + i));
        expect(results.filter(Boolean)).toHaveLength(1);
      });
    });

    describe('one-time PIN challenges', () => {
      const otp = () => storage.otpChallenges;

      it('stores and finds a challenge with every field intact', async () => {
        const registration = challenge({ id: 'challenge-2', purpose: 'register', profileId: null, pendingPinHash: 'scrypt$pending' });
        await otp().insertOtpChallenge(challenge());
        await otp().insertOtpChallenge(registration);
        expect(await otp().findOtpChallenge('challenge-1')).toEqual(challenge());
        expect(await otp().findOtpChallenge('challenge-2')).toEqual(registration);
        expect(await otp().findOtpChallenge('challenge-3')).toBeUndefined();
      });

      it('refuses a duplicate ID with Conflict', async () => {
        await otp().insertOtpChallenge(challenge());
        await expect(otp().insertOtpChallenge(challenge())).rejects.toBeInstanceOf(Conflict);
      });

      it('consumes a challenge once', async () => {
        await otp().insertOtpChallenge(challenge());
        expect(await otp().consumeOtpChallenge('challenge-1', T + 10)).toBe(true);
        expect(await otp().consumeOtpChallenge('challenge-1', T + 11)).toBe(false);
        expect((await otp().findOtpChallenge('challenge-1'))?.consumedAt).toBe(T + 10);
        expect(await otp().consumeOtpChallenge('challenge-unknown', T)).toBe(false);
      });

      it('consumes a challenge for exactly one of 10 concurrent calls', async () => {
        await otp().insertOtpChallenge(challenge());
        const results = await concurrently(10, () => otp().consumeOtpChallenge('challenge-1', T + 1));
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it('consumes a challenge until expiresAt - 1, not at or after expiresAt', async () => {
        await otp().insertOtpChallenge(challenge());
        expect(await otp().consumeOtpChallenge('challenge-1', T + 300)).toBe(false);
        expect(await otp().consumeOtpChallenge('challenge-1', T + 301)).toBe(false);
        expect((await otp().findOtpChallenge('challenge-1'))?.consumedAt).toBeNull();
        expect(await otp().consumeOtpChallenge('challenge-1', T + 299)).toBe(true);
      });

      it("ends every live challenge of one customer, and no one else's, no consumed and no expired one", async () => {
        const ofCustomer = challenge();
        await otp().insertOtpChallenge(ofCustomer);
        await otp().insertOtpChallenge(challenge({ id: 'challenge-used', consumedAt: T + 1 }));
        await otp().insertOtpChallenge(challenge({ id: 'challenge-old', expiresAt: T + 5 }));
        await otp().insertOtpChallenge(challenge({ id: 'challenge-other', profileId: '999999999999' }));
        await otp().insertOtpChallenge(challenge({ id: 'challenge-new', profileId: null, purpose: 'register', pendingPinHash: 'scrypt$pending' }));
        expect(await otp().endOtpChallengesOf(ofCustomer.profileId as string, T + 10)).toBe(1);
        expect((await otp().findOtpChallenge('challenge-1'))?.consumedAt).toBe(T + 10);
        expect((await otp().findOtpChallenge('challenge-used'))?.consumedAt).toBe(T + 1);
        expect((await otp().findOtpChallenge('challenge-old'))?.consumedAt).toBeNull();
        expect((await otp().findOtpChallenge('challenge-other'))?.consumedAt).toBeNull();
        expect((await otp().findOtpChallenge('challenge-new'))?.consumedAt).toBeNull();
        expect(await otp().endOtpChallengesOf(ofCustomer.profileId as string, T + 11)).toBe(0);
      });

      it('replaces the code of a challenge last sent at or before sentBefore', async () => {
        await otp().insertOtpChallenge(challenge());
        const update = { codeHash: 'code-hash-2', now: T + 30, expiresAt: T + 330, maxResends: 3 };
        expect(await otp().resendOtpChallenge('challenge-1', { ...update, sentBefore: T - 1 })).toBe(false);
        expect(await otp().findOtpChallenge('challenge-1')).toEqual(challenge());
        expect(await otp().resendOtpChallenge('challenge-1', { ...update, sentBefore: T })).toBe(true);
        expect(await otp().findOtpChallenge('challenge-1')).toEqual(
          challenge({ codeHash: 'code-hash-2', lastSentAt: T + 30, expiresAt: T + 330, resends: 1 }),
        );
      });

      it('never revives an expired challenge', async () => {
        await otp().insertOtpChallenge(challenge({ expiresAt: T + 300 }));
        const update = { codeHash: 'new', expiresAt: T + 700, sentBefore: T + 370, maxResends: 3 };
        expect(await otp().resendOtpChallenge('challenge-1', { ...update, now: T + 300 })).toBe(false);
        expect(await otp().resendOtpChallenge('challenge-1', { ...update, now: T + 299 })).toBe(true);
      });

      it('replaces the code for one of concurrent resends', async () => {
        await otp().insertOtpChallenge(challenge());
        const results = await concurrently(5, (i) =>
          otp().resendOtpChallenge('challenge-1', { codeHash: `code-hash-${i}`, now: T + 30, expiresAt: T + 330, sentBefore: T, maxResends: 3 }),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        expect((await otp().findOtpChallenge('challenge-1'))?.resends).toBe(1);
      });

      it('refuses a resend beyond maxResends, of a consumed challenge, or of an unknown one', async () => {
        await otp().insertOtpChallenge(challenge({ resends: 3 }));
        await otp().insertOtpChallenge(challenge({ id: 'challenge-2', resends: 2 }));
        await otp().insertOtpChallenge(challenge({ id: 'challenge-3', consumedAt: T }));
        const update = { codeHash: 'new', now: T + 30, expiresAt: T + 330, sentBefore: T, maxResends: 3 };
        expect(await otp().resendOtpChallenge('challenge-1', update)).toBe(false);
        expect(await otp().resendOtpChallenge('challenge-2', update)).toBe(true);
        expect(await otp().resendOtpChallenge('challenge-3', update)).toBe(false);
        expect(await otp().resendOtpChallenge('challenge-unknown', update)).toBe(false);
        expect((await otp().findOtpChallenge('challenge-1'))?.codeHash).toBe('code-hash-1');
        expect((await otp().findOtpChallenge('challenge-3'))?.codeHash).toBe('code-hash-1');
      });

      it('finds the newest challenge of a request, consumed or not', async () => {
        await otp().insertOtpChallenge(challenge({ id: 'a-old', createdAt: T }));
        await otp().insertOtpChallenge(challenge({ id: 'z-other-request', requestHash: 'request-2', createdAt: T + 100 }));
        await otp().insertOtpChallenge(challenge({ id: 'b-newest', createdAt: T + 50, consumedAt: T + 60 }));
        await otp().insertOtpChallenge(challenge({ id: 'c-middle', createdAt: T + 20 }));
        expect((await otp().findLatestOtpChallenge('request-1'))?.id).toBe('b-newest');
        expect((await otp().findLatestOtpChallenge('request-2'))?.id).toBe('z-other-request');
        expect(await otp().findLatestOtpChallenge('request-unknown')).toBeUndefined();
      });

    });

    describe('sign-ins', () => {
      const signIns = () => storage.signIns;
      /** A login entry of `challenge-1` (code `code-hash-1` is right) and everything a right one completes. */
      function entry(overrides: Partial<OtpEntry> = {}): OtpEntry {
        return {
          idHash: 'request-1',
          challengeId: 'challenge-1',
          codeHash: 'code-hash-1',
          now: T + 10,
          maxAttempts: 5,
          customer: { profileId: '123456789012' },
          endSessionHash: null,
          session: customerSession({ idHash: 'session-new', createdAt: T + 10, lastSeenAt: T + 10 }),
          consent: { profileId: '123456789012', clientId: 'cid_sandbox_contract', approvedAt: T + 10 },
          code: authorizationCode({ codeHash: 'code-new', createdAt: T + 10, expiresAt: T + 70 }),
          ...overrides,
        };
      }
      /** A journey in `otp_sent` with its challenge, and its customer. */
      async function awaitingCode(request: Partial<AuthorizationRequestRecord> = {}, account: Partial<Customer> = {}) {
        await storage.customers.insertCustomer(customer(account));
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ status: 'otp_sent', profileId: '123456789012', ...request }));
        await storage.otpChallenges.insertOtpChallenge(challenge());
      }
      /** What a completed sign-in wrote, or `undefined` for each part it did not. */
      async function written() {
        return {
          status: (await storage.authorizationRequests.findAuthorizationRequest('request-1'))?.status,
          session: await storage.customerSessions.findCustomerSession('session-new'),
          consent: await storage.consents.findConsent('123456789012', 'cid_sandbox_contract'),
          code: await storage.codes.findAuthorizationCode('code-new'),
        };
      }

      it('finds a journey with its newest challenge and whether its user_id is registered', async () => {
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest());
        expect(await signIns().findJourney('request-1')).toEqual({ request: authorizationRequest(), challenge: undefined, hintRegistered: false });
        await storage.customers.insertCustomer(customer());
        await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-a', createdAt: T }));
        await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-c', createdAt: T + 1, consumedAt: T + 2 }));
        await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-b', createdAt: T + 1 }));
        await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-z', requestHash: 'request-other', createdAt: T + 9 }));
        expect(await signIns().findJourney('request-1')).toEqual({
          request: authorizationRequest(),
          challenge: challenge({ id: 'challenge-c', createdAt: T + 1, consumedAt: T + 2 }),
          hintRegistered: true,
        });
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'request-2', loginHint: null }));
        expect(await signIns().findJourney('request-2')).toMatchObject({ challenge: undefined, hintRegistered: false });
        expect(await signIns().findJourney('request-unknown')).toBeUndefined();
      });

      it('starts a challenge: lifts the PIN count, moves the journey to otp_sent bound to the customer, stores the challenge', async () => {
        await storage.customers.insertCustomer(customer({ pinAttempts: 3 }));
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest());
        const start = { idHash: 'request-1', now: T + 5, profileId: '123456789012', challenge: challenge(), clearPin: { profileId: '123456789012', attempt: 3 } };
        expect(await signIns().startChallenge(start)).toEqual(authorizationRequest({ status: 'otp_sent', profileId: '123456789012' }));
        expect(await storage.otpChallenges.findOtpChallenge('challenge-1')).toEqual(challenge());
        expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinAttempts: 0, lockedUntil: null });
        // Again (another tab): a new challenge, the journey still otp_sent.
        expect(await signIns().startChallenge({ ...start, challenge: challenge({ id: 'challenge-2' }), clearPin: undefined })).toMatchObject({ status: 'otp_sent' });
        expect((await signIns().findJourney('request-1'))?.challenge?.id).toBe('challenge-2');
      });

      it('stores no challenge for a journey that cannot move, yet lifts the PIN count; leaves a count that moved on', async () => {
        await storage.customers.insertCustomer(customer({ pinAttempts: 2 }));
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ status: 'cancelled' }));
        const start = { idHash: 'request-1', now: T + 5, profileId: '123456789012', challenge: challenge(), clearPin: { profileId: '123456789012', attempt: 2 } };
        expect(await signIns().startChallenge(start)).toBeUndefined();
        expect(await storage.otpChallenges.findOtpChallenge('challenge-1')).toBeUndefined();
        expect((await storage.customers.findCustomer('123456789012'))?.pinAttempts).toBe(0);
        await storage.customers.updateCustomer('123456789012', { pinAttempts: 4 }, T);
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'request-2', expiresAt: T + 5 }));
        expect(await signIns().startChallenge({ ...start, idHash: 'request-2', clearPin: { profileId: '123456789012', attempt: 3 } })).toBeUndefined();
        expect((await storage.customers.findCustomer('123456789012'))?.pinAttempts).toBe(4);
      });

      it('counts a wrong entry and writes nothing else; refuses entries past 5, after expiry, of another journey or unknown', async () => {
        await awaitingCode();
        expect(await signIns().enterOtp(entry({ codeHash: 'wrong' }))).toEqual({ kind: 'wrong', attempts: 1 });
        expect(await signIns().enterOtp(entry({ codeHash: 'wrong' }))).toEqual({ kind: 'wrong', attempts: 2 });
        expect(await written()).toEqual({ status: 'otp_sent', session: undefined, consent: undefined, code: undefined });
        expect(await signIns().enterOtp(entry({ now: T + 300 }))).toEqual({ kind: 'not_counted' });
        expect(await signIns().enterOtp(entry({ idHash: 'request-other' }))).toEqual({ kind: 'not_counted' });
        expect(await signIns().enterOtp(entry({ challengeId: 'challenge-unknown' }))).toEqual({ kind: 'not_counted' });
        for (const attempts of [3, 4, 5]) expect(await signIns().enterOtp(entry({ codeHash: 'wrong' }))).toEqual({ kind: 'wrong', attempts });
        // Used up: even the right code is not counted, nor compared.
        expect(await signIns().enterOtp(entry())).toEqual({ kind: 'not_counted' });
        expect(await storage.otpChallenges.findOtpChallenge('challenge-1')).toMatchObject({ attempts: 5, consumedAt: null });
        expect(await written()).toEqual({ status: 'otp_sent', session: undefined, consent: undefined, code: undefined });
      });

      it('completes a sign-in on the right entry: the challenge used up, the journey code_issued, the old session ended, session, approval and code stored', async () => {
        // With the credential version the sign-in held the customer at.
        await awaitingCode({}, { credentialVersion: 3 });
        await storage.customerSessions.insertCustomerSession(customerSession({ idHash: 'session-old' }));
        expect(await signIns().enterOtp(entry({ endSessionHash: 'session-old' }))).toEqual({ kind: 'right', done: { kind: 'completed', credentialVersion: 3 } });
        expect(await storage.otpChallenges.findOtpChallenge('challenge-1')).toMatchObject({ attempts: 1, consumedAt: T + 10 });
        expect(await written()).toEqual({
          status: 'code_issued',
          session: customerSession({ idHash: 'session-new', createdAt: T + 10, lastSeenAt: T + 10 }),
          consent: { profileId: '123456789012', clientId: 'cid_sandbox_contract', approvedAt: T + 10 },
          code: authorizationCode({ codeHash: 'code-new', createdAt: T + 10, expiresAt: T + 70 }),
        });
        expect((await storage.authorizationRequests.findAuthorizationRequest('request-1'))?.completedAt).toBe(T + 10);
        expect((await storage.customerSessions.findCustomerSession('session-old'))?.endedAt).toBe(T + 10);
        // Once only.
        expect(await signIns().enterOtp(entry())).toEqual({ kind: 'not_counted' });
      });

      it('counts a right entry but completes nothing and leaves the challenge when the journey moved on, or the customer is locked', async () => {
        await awaitingCode({ status: 'cancelled' });
        expect(await signIns().enterOtp(entry())).toEqual({ kind: 'right', done: { kind: 'lost' } });
        expect(await written()).toEqual({ status: 'cancelled', session: undefined, consent: undefined, code: undefined });
        expect(await storage.otpChallenges.findOtpChallenge('challenge-1')).toMatchObject({ attempts: 1, consumedAt: null });

        await storage.customers.lockCustomer('123456789012', T);
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'request-2', status: 'otp_sent' }));
        await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-2', requestHash: 'request-2' }));
        expect(await signIns().enterOtp(entry({ idHash: 'request-2', challengeId: 'challenge-2' }))).toEqual({ kind: 'right', done: { kind: 'customer_unavailable' } });
        expect((await storage.authorizationRequests.findAuthorizationRequest('request-2'))?.status).toBe('otp_sent');
        expect(await storage.otpChallenges.findOtpChallenge('challenge-2')).toMatchObject({ attempts: 1, consumedAt: null });
        expect(await storage.customerSessions.findCustomerSession('session-new')).toBeUndefined();
      });

      it('completes nothing for a customer whose PIN login is locked', async () => {
        await awaitingCode({}, { pinAttempts: 5, lockedUntil: T + 900 });
        expect(await signIns().enterOtp(entry())).toEqual({ kind: 'right', done: { kind: 'customer_unavailable' } });
        expect(await written()).toEqual({ status: 'otp_sent', session: undefined, consent: undefined, code: undefined });
      });

      it('creates the account of a registration with the sign-in, unless its mobile was registered meanwhile', async () => {
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ status: 'otp_sent' }));
        await storage.otpChallenges.insertOtpChallenge(challenge({ purpose: 'register', profileId: null, pendingPinHash: 'scrypt$pending' }));
        const account = customer({ pinHash: 'scrypt$pending', createdAt: T + 10, updatedAt: T + 10 });
        expect(await signIns().enterOtp(entry({ customer: { create: account } }))).toEqual({ kind: 'right', done: { kind: 'completed', credentialVersion: 0 } });
        expect(await storage.customers.findCustomer('123456789012')).toEqual(account);
        expect(await written()).toMatchObject({ status: 'code_issued', consent: { profileId: '123456789012' } });

        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'request-2', status: 'otp_sent' }));
        await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-2', requestHash: 'request-2', purpose: 'register', profileId: null }));
        const again = entry({ idHash: 'request-2', challengeId: 'challenge-2', customer: { create: customer({ profileId: '999999999999' }) }, session: customerSession({ idHash: 'session-2' }) });
        expect(await signIns().enterOtp(again)).toEqual({ kind: 'right', done: { kind: 'customer_unavailable' } });
        expect(await storage.otpChallenges.findOtpChallenge('challenge-2')).toMatchObject({ consumedAt: null });
        expect(await storage.customers.findCustomer('999999999999')).toBeUndefined();
        expect((await storage.authorizationRequests.findAuthorizationRequest('request-2'))?.status).toBe('otp_sent');
        expect(await storage.customerSessions.findCustomerSession('session-2')).toBeUndefined();
      });

      describe('PIN reset', () => {
        /** A reset entry of `challenge-r` (code `code-hash-r` is right). */
        function resetEntry(overrides: Partial<ResetOtpEntry> = {}): ResetOtpEntry {
          return { idHash: 'request-1', challengeId: 'challenge-r', codeHash: 'code-hash-r', now: T + 10, maxAttempts: 5, ...overrides };
        }
        const resetChallenge = (overrides: Partial<OtpChallengeRecord> = {}) =>
          challenge({ id: 'challenge-r', purpose: 'reset', codeHash: 'code-hash-r', ...overrides });
        /** A journey in `reset_otp_sent` with its reset challenge (of the customer, unless `profileId` says otherwise), and the customer. */
        async function awaitingResetCode(options: { account?: Partial<Customer>; challenge?: Partial<OtpChallengeRecord>; request?: Partial<AuthorizationRequestRecord> } = {}) {
          await storage.customers.insertCustomer(customer(options.account));
          await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ status: 'reset_otp_sent', ...options.request }));
          await storage.otpChallenges.insertOtpChallenge(resetChallenge(options.challenge));
        }
        const journeyOf = async (idHash = 'request-1') => storage.authorizationRequests.findAuthorizationRequest(idHash);

        it('starts a reset challenge: the journey moves to reset_otp_sent, unbound, with the challenge; not from consent or a final state', async () => {
          await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ status: 'otp_sent', profileId: '123456789012' }));
          const start = { idHash: 'request-1', now: T + 5, profileId: null, challenge: resetChallenge({ profileId: null }), transition: TRANSITIONS.resetCodeSent };
          expect(await signIns().startChallenge(start)).toEqual(authorizationRequest({ status: 'reset_otp_sent', profileId: null }));
          expect(await storage.otpChallenges.findOtpChallenge('challenge-r')).toEqual(resetChallenge({ profileId: null }));
          for (const status of ['consent_required', 'code_issued', 'cancelled'] as const) {
            await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: `request-${status}`, status }));
            const refused = { ...start, idHash: `request-${status}`, challenge: resetChallenge({ id: `challenge-${status}`, requestHash: `request-${status}` }) };
            expect(await signIns().startChallenge(refused), status).toBeUndefined();
            expect(await storage.otpChallenges.findOtpChallenge(`challenge-${status}`)).toBeUndefined();
          }
        });

        it('counts a wrong entry; a right one uses the challenge up and binds the journey to its customer, once', async () => {
          await awaitingResetCode();
          expect(await signIns().enterResetOtp(resetEntry({ codeHash: 'wrong' }))).toEqual({ kind: 'wrong', attempts: 1 });
          expect(await journeyOf()).toMatchObject({ status: 'reset_otp_sent', profileId: null });
          expect(await signIns().enterResetOtp(resetEntry())).toEqual({ kind: 'right', done: 'verified' });
          expect(await storage.otpChallenges.findOtpChallenge('challenge-r')).toMatchObject({ attempts: 2, consumedAt: T + 10 });
          expect(await journeyOf()).toEqual(authorizationRequest({ status: 'reset_verified', profileId: '123456789012' }));
          expect(await signIns().enterResetOtp(resetEntry())).toEqual({ kind: 'not_counted' });
        });

        it('refuses entries after expiry, past 5, of another journey, and never takes a login code for a reset code or the other way round', async () => {
          await awaitingResetCode();
          expect(await signIns().enterResetOtp(resetEntry({ now: T + 300 }))).toEqual({ kind: 'not_counted' });
          expect(await signIns().enterResetOtp(resetEntry({ idHash: 'request-other' }))).toEqual({ kind: 'not_counted' });
          // The reset challenge is not a login's, nor a login's challenge a reset's.
          expect(await signIns().enterOtp(entry({ challengeId: 'challenge-r', codeHash: 'code-hash-r' }))).toEqual({ kind: 'not_counted' });
          await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-login' }));
          expect(await signIns().enterResetOtp(resetEntry({ challengeId: 'challenge-login', codeHash: 'code-hash-1' }))).toEqual({ kind: 'not_counted' });
          for (const attempts of [1, 2, 3, 4, 5]) expect(await signIns().enterResetOtp(resetEntry({ codeHash: 'wrong' }))).toEqual({ kind: 'wrong', attempts });
          expect(await signIns().enterResetOtp(resetEntry())).toEqual({ kind: 'not_counted' });
          expect(await journeyOf()).toMatchObject({ status: 'reset_otp_sent', profileId: null });
        });

        it('counts the right code as wrong for a challenge without a customer, or whose customer is locked', async () => {
          await awaitingResetCode({ challenge: { profileId: null } });
          expect(await signIns().enterResetOtp(resetEntry())).toEqual({ kind: 'wrong', attempts: 1 });
          await storage.customers.lockCustomer('123456789012', T);
          await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'request-2', status: 'reset_otp_sent' }));
          await storage.otpChallenges.insertOtpChallenge(resetChallenge({ id: 'challenge-2', requestHash: 'request-2' }));
          expect(await signIns().enterResetOtp(resetEntry({ idHash: 'request-2', challengeId: 'challenge-2' }))).toEqual({ kind: 'wrong', attempts: 1 });
          expect(await storage.otpChallenges.findOtpChallenge('challenge-2')).toMatchObject({ consumedAt: null });
          expect(await journeyOf('request-2')).toMatchObject({ status: 'reset_otp_sent', profileId: null });
        });

        it('a right entry on a journey that moved on is lost, and leaves the challenge unused', async () => {
          await awaitingResetCode({ request: { status: 'cancelled' } });
          expect(await signIns().enterResetOtp(resetEntry())).toEqual({ kind: 'right', done: 'lost' });
          expect(await storage.otpChallenges.findOtpChallenge('challenge-r')).toMatchObject({ attempts: 1, consumedAt: null });
          expect(await journeyOf()).toMatchObject({ status: 'cancelled' });
        });

        it('counts exactly 5 of 50 concurrent wrong entries, and verifies one of 10 concurrent right ones', async () => {
          await awaitingResetCode();
          const wrong = await concurrently(50, () => signIns().enterResetOtp(resetEntry({ codeHash: 'wrong' })));
          expect(wrong.filter((r) => r.kind === 'wrong').map((r) => (r.kind === 'wrong' ? r.attempts : 0)).sort()).toEqual([1, 2, 3, 4, 5]);
          expect(wrong.filter((r) => r.kind === 'not_counted')).toHaveLength(45);

          await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'request-2', status: 'reset_otp_sent' }));
          await storage.otpChallenges.insertOtpChallenge(resetChallenge({ id: 'challenge-2', requestHash: 'request-2' }));
          const right = await concurrently(10, () => signIns().enterResetOtp(resetEntry({ idHash: 'request-2', challengeId: 'challenge-2' })));
          expect(right.filter((r) => r.kind === 'right' && r.done === 'verified')).toHaveLength(1);
          expect(right.filter((r) => r.kind === 'not_counted')).toHaveLength(9);
          expect(await journeyOf('request-2')).toMatchObject({ status: 'reset_verified', profileId: '123456789012' });
        });

        /** A journey whose reset code was right at T + 10. */
        async function resetVerified() {
          await awaitingResetCode({ request: { status: 'reset_verified', profileId: '123456789012' }, challenge: { attempts: 1, consumedAt: T + 10 } });
        }
        const use = (overrides: Partial<PinResetUse> = {}): PinResetUse => ({
          idHash: 'request-1',
          challengeId: 'challenge-r',
          profileId: '123456789012',
          now: T + 20,
          answeredAfter: T + 20 - 300,
          ...overrides,
        });

        it('spends the proof once: the journey back to pending, unbound', async () => {
          await resetVerified();
          expect(await signIns().usePinReset(use())).toEqual(authorizationRequest({ status: 'pending', profileId: null }));
          expect(await signIns().usePinReset(use())).toBeUndefined();
          expect(await journeyOf()).toMatchObject({ status: 'pending', profileId: null, completedAt: null });
        });

        it('refuses a proof of another customer or challenge, answered too long ago, of a login challenge, or of an expired journey', async () => {
          await resetVerified();
          expect(await signIns().usePinReset(use({ profileId: '223456789012' }))).toBeUndefined();
          expect(await signIns().usePinReset(use({ challengeId: 'challenge-unknown' }))).toBeUndefined();
          // Answered at T + 10: a proof must have been answered after `answeredAfter`.
          expect(await signIns().usePinReset(use({ answeredAfter: T + 10 }))).toBeUndefined();
          expect(await signIns().usePinReset(use({ now: T + 900 }))).toBeUndefined();
          await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-login', consumedAt: T + 10 }));
          expect(await signIns().usePinReset(use({ challengeId: 'challenge-login' }))).toBeUndefined();
          expect(await journeyOf()).toMatchObject({ status: 'reset_verified', profileId: '123456789012' });
          expect(await signIns().usePinReset(use({ answeredAfter: T + 9 }))).toMatchObject({ status: 'pending' });
        });

        it('spends one proof of 10 concurrent uses', async () => {
          await resetVerified();
          const results = await concurrently(10, () => signIns().usePinReset(use()));
          expect(results.filter((r) => r !== undefined)).toHaveLength(1);
        });
      });

      it('counts exactly 5 of 50 concurrent wrong entries, and completes one of 10 concurrent right ones', async () => {
        await awaitingCode();
        const wrong = await concurrently(50, () => signIns().enterOtp(entry({ codeHash: 'wrong' })));
        expect(wrong.filter((r) => r.kind === 'wrong').map((r) => (r.kind === 'wrong' ? r.attempts : 0)).sort()).toEqual([1, 2, 3, 4, 5]);
        expect(wrong.filter((r) => r.kind === 'not_counted')).toHaveLength(45);

        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'request-2', status: 'otp_sent' }));
        await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-2', requestHash: 'request-2' }));
        const right = await concurrently(10, (i) =>
          signIns().enterOtp(entry({ idHash: 'request-2', challengeId: 'challenge-2', session: customerSession({ idHash: `session-${i}` }), code: authorizationCode({ codeHash: `code-${i}` }) })),
        );
        expect(right.filter((r) => r.kind === 'right' && r.done.kind === 'completed')).toHaveLength(1);
        expect(right.filter((r) => r.kind === 'not_counted')).toHaveLength(9);
      });
    });

    describe('customer sessions', () => {
      const sessions = () => storage.customerSessions;

      it('stores and finds a session with every field intact', async () => {
        await sessions().insertCustomerSession(customerSession());
        expect(await sessions().findCustomerSession('session-1')).toEqual(customerSession());
        expect(await sessions().findCustomerSession('session-2')).toBeUndefined();
        await expect(sessions().insertCustomerSession(customerSession())).rejects.toBeInstanceOf(Conflict);
      });

      it('uses a live session (marking it), never an ended, expired or idle one', async () => {
        await sessions().insertCustomerSession(customerSession());
        await sessions().insertCustomerSession(customerSession({ idHash: 'ended', endedAt: T + 5 }));
        expect(await sessions().useCustomerSession('session-1', T + 10, 1800)).toEqual(customerSession({ lastSeenAt: T + 10 }));
        expect(await sessions().useCustomerSession('ended', T + 10, 1800)).toBeUndefined();
        expect(await sessions().useCustomerSession('session-unknown', T + 10, 1800)).toBeUndefined();
        expect((await sessions().findCustomerSession('ended'))?.lastSeenAt).toBe(T);
        // Idle: last seen T + 10, so live until T + 10 + 1800 - 1.
        expect(await sessions().useCustomerSession('session-1', T + 10 + 1800, 1800)).toBeUndefined();
        expect(await sessions().useCustomerSession('session-1', T + 10 + 1799, 1800)).toBeDefined();
      });

      it('never uses a session at or past its absolute end', async () => {
        await sessions().insertCustomerSession(customerSession());
        const { expiresAt } = customerSession();
        expect(await sessions().useCustomerSession('session-1', expiresAt, 10 * expiresAt)).toBeUndefined();
        expect(await sessions().useCustomerSession('session-1', expiresAt - 1, 10 * expiresAt)).toBeDefined();
      });

      it('ends a session once, keeping the first end time', async () => {
        await sessions().insertCustomerSession(customerSession());
        await sessions().endCustomerSession('session-1', T + 10);
        await sessions().endCustomerSession('session-1', T + 20);
        await sessions().endCustomerSession('session-unknown', T + 20);
        expect((await sessions().findCustomerSession('session-1'))?.endedAt).toBe(T + 10);
      });

      it("ends every live session of one customer and no one else's", async () => {
        await sessions().insertCustomerSession(customerSession({ idHash: 'a' }));
        await sessions().insertCustomerSession(customerSession({ idHash: 'b' }));
        await sessions().insertCustomerSession(customerSession({ idHash: 'ended', endedAt: T + 1 }));
        await sessions().insertCustomerSession(customerSession({ idHash: 'other', profileId: '223456789012' }));
        expect(await sessions().endCustomerSessionsOf('123456789012', T + 50)).toBe(2);
        expect((await sessions().findCustomerSession('a'))?.endedAt).toBe(T + 50);
        expect((await sessions().findCustomerSession('b'))?.endedAt).toBe(T + 50);
        expect((await sessions().findCustomerSession('ended'))?.endedAt).toBe(T + 1);
        expect((await sessions().findCustomerSession('other'))?.endedAt).toBeNull();
        expect(await sessions().endCustomerSessionsOf('123456789012', T + 60)).toBe(0);
      });
    });

    describe('consents', () => {
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

    describe('authorization codes', () => {
      const codes = () => storage.codes;
      let sessions = 0;
      /** The token session an exchange of `codeHash` adds. */
      const sessionOf = (codeHash: string, clientId: string, profileId = '123456789012') => ({
        ...tokenSession({ sid: `sid-${++sessions}`, clientId, profileId, codeHash }),
        codeHash,
      });
      /** Redeems `codeHash` for `clientId` at `now`; the code's customer is 123456789012 unless said otherwise. */
      const redeem = (codeHash: string, clientId: string, now: number, binding: CodeBinding = BINDING, profileId?: string) =>
        codes().redeemAuthorizationCode(sessionOf(codeHash, clientId, profileId), now, binding);
      /** The token sessions added for a code. */
      const sessionsOf = async (codeHash: string) => {
        const found: TokenSessionRecord[] = [];
        for (let i = 1; i <= sessions; i++) {
          const session = await storage.tokenSessions.findTokenSession(`sid-${i}`);
          if (session?.codeHash === codeHash) found.push(session);
        }
        return found;
      };

      beforeEach(async () => {
        sessions = 0;
        await storage.clients.insertClient(client());
        await storage.clients.insertClient(client({ id: 'cid_sandbox_other' }));
        await storage.customers.insertCustomer(customer());
        await storage.customers.insertCustomer(customer({ profileId: '223456789012', mobile: '+639171234568' }));
        await storage.customers.insertCustomer(customer({ profileId: '323456789012', mobile: '+639171234569' }));
      });

      it('stores and finds a code with every field intact', async () => {
        const withPkce = authorizationCode({ codeHash: 'code-2', codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' });
        await codes().insertAuthorizationCode(authorizationCode());
        await codes().insertAuthorizationCode(withPkce);
        expect(await codes().findAuthorizationCode('code-1')).toEqual(authorizationCode());
        expect(await codes().findAuthorizationCode('code-2')).toEqual(withPkce);
        expect(await codes().findAuthorizationCode('code-3')).toBeUndefined();
        await expect(codes().insertAuthorizationCode(authorizationCode())).rejects.toBeInstanceOf(Conflict);
      });

      it('redeems a code once, adding its token session with it', async () => {
        await codes().insertAuthorizationCode(authorizationCode());
        const session = sessionOf('code-1', 'cid_sandbox_contract');
        expect(await codes().redeemAuthorizationCode(session, T + 10, BINDING)).toBe('redeemed');
        expect(await storage.tokenSessions.findTokenSession(session.sid)).toEqual(session);
        expect(await redeem('code-1', 'cid_sandbox_contract', T + 11)).toBe('refused');
        expect((await codes().findAuthorizationCode('code-1'))?.consumedAt).toBe(T + 10);
        expect(await sessionsOf('code-1')).toEqual([session]);
      });

      it('keeps how the customer signed in, or that it is unknown, on sessions, codes and token sessions', async () => {
        await storage.customerSessions.insertCustomerSession(customerSession({ idHash: 'session-unknown', authentication: null }));
        expect((await storage.customerSessions.findCustomerSession('session-unknown'))?.authentication).toBeNull();
        expect((await storage.customerSessions.useCustomerSession('session-unknown', T + 1, 3600))?.authentication).toBeNull();
        await storage.customerSessions.insertCustomerSession(customerSession());
        expect((await storage.customerSessions.useCustomerSession('session-1', T + 1, 3600))?.authentication).toEqual(SIGN_IN);
        await codes().insertAuthorizationCode(authorizationCode({ authentication: null }));
        expect((await codes().findAuthorizationCode('code-1'))?.authentication).toBeNull();
        const session = { ...sessionOf('code-1', 'cid_sandbox_contract'), authentication: null };
        expect(await codes().redeemAuthorizationCode(session, T + 10, BINDING)).toBe('redeemed');
        expect(await storage.tokenSessions.findTokenSession(session.sid)).toEqual(session);
      });

      it('redeems a code for exactly one of 20 concurrent calls, which alone adds a token session', async () => {
        await codes().insertAuthorizationCode(authorizationCode());
        const results = await concurrently(20, () => redeem('code-1', 'cid_sandbox_contract', T + 1));
        expect(results.filter((r) => r === 'redeemed')).toHaveLength(1);
        expect(results.filter((r) => r === 'refused')).toHaveLength(19);
        expect(await sessionsOf('code-1')).toHaveLength(1);
      });

      it("refuses to redeem a code for another client or another customer, leaving it to its own", async () => {
        await codes().insertAuthorizationCode(authorizationCode());
        expect(await redeem('code-1', 'cid_sandbox_other', T + 1)).toBe('refused');
        expect(await redeem('code-1', 'cid_sandbox_contract', T + 1, BINDING, '223456789012')).toBe('refused');
        expect((await codes().findAuthorizationCode('code-1'))?.consumedAt).toBeNull();
        expect(await sessionsOf('code-1')).toEqual([]);
        expect(await redeem('code-1', 'cid_sandbox_contract', T + 1)).toBe('redeemed');
      });

      it('redeems a code until expiresAt - 1, not at or after expiresAt', async () => {
        await codes().insertAuthorizationCode(authorizationCode());
        expect(await redeem('code-1', 'cid_sandbox_contract', T + 300)).toBe('refused');
        expect(await redeem('code-1', 'cid_sandbox_contract', T + 301)).toBe('refused');
        expect((await codes().findAuthorizationCode('code-1'))?.consumedAt).toBeNull();
        expect(await redeem('code-1', 'cid_sandbox_contract', T + 299)).toBe('redeemed');
      });

      it('redeems a code only for the redirect URI and PKCE challenge it was issued for, leaving it unused otherwise', async () => {
        await codes().insertAuthorizationCode(authorizationCode({ codeChallenge: 'challenge-1' }));
        const id = ['code-1', 'cid_sandbox_contract', T + 1] as const;
        expect(await redeem(...id, BINDING)).toBe('refused');
        expect(await redeem(...id, { ...BINDING, codeChallenge: 'challenge-2' })).toBe('refused');
        expect(await redeem(...id, { redirectUri: 'https://acme.example/other', codeChallenge: 'challenge-1' })).toBe('refused');
        expect((await codes().findAuthorizationCode('code-1'))?.consumedAt).toBeNull();
        expect(await sessionsOf('code-1')).toEqual([]);
        expect(await redeem(...id, { ...BINDING, codeChallenge: 'challenge-1' })).toBe('redeemed');

        await codes().insertAuthorizationCode(authorizationCode({ codeHash: 'code-2' }));
        expect(await redeem('code-2', 'cid_sandbox_contract', T + 1, { ...BINDING, codeChallenge: 'challenge-1' })).toBe('refused');
        expect(await redeem('code-2', 'cid_sandbox_contract', T + 1, BINDING)).toBe('redeemed');
      });

      it('consumes the code of a customer or client who can no longer sign in, adding no token session', async () => {
        for (const codeHash of ['locked-out', 'after-lockout', 'disabled', 'enabled', 'customer-locked']) {
          await codes().insertAuthorizationCode(authorizationCode({ codeHash, expiresAt: T + 900 }));
        }
        // A customer locked out for failed PINs, until the lockout ends.
        await storage.customers.updateCustomer('123456789012', { lockedUntil: T + 100 }, T + 1);
        expect(await redeem('locked-out', 'cid_sandbox_contract', T + 99)).toBe('ended');
        expect(await redeem('after-lockout', 'cid_sandbox_contract', T + 100)).toBe('redeemed');
        // A disabled client.
        await storage.clients.changeClientStatus('cid_sandbox_contract', { status: 'disabled', tokensEndedAt: T + 101 }, T + 101);
        expect(await redeem('disabled', 'cid_sandbox_contract', T + 101)).toBe('ended');
        await storage.clients.changeClientStatus('cid_sandbox_contract', { status: 'active', tokensEndedAt: T + 101 }, T + 102);
        expect(await redeem('enabled', 'cid_sandbox_contract', T + 102)).toBe('redeemed');
        // A locked customer.
        await storage.customers.lockCustomer('123456789012', T + 104);
        expect(await redeem('customer-locked', 'cid_sandbox_contract', T + 104)).toBe('ended');
        for (const codeHash of ['locked-out', 'disabled', 'customer-locked']) {
          expect((await codes().findAuthorizationCode(codeHash))?.consumedAt).not.toBeNull();
          expect(await sessionsOf(codeHash)).toEqual([]);
        }
      });

      it('leaves the code unused when adding its token session fails', async () => {
        await codes().insertAuthorizationCode(authorizationCode());
        // The session's sid is taken: the insert fails after the code's update.
        const taken = sessionOf('code-1', 'cid_sandbox_contract');
        await storage.tokenSessions.insertTokenSession({ ...taken, codeHash: null });
        await expect(codes().redeemAuthorizationCode(taken, T + 1, BINDING)).rejects.toBeInstanceOf(Conflict);
        expect((await codes().findAuthorizationCode('code-1'))?.consumedAt).toBeNull();
        expect(await redeem('code-1', 'cid_sandbox_contract', T + 1)).toBe('redeemed');
      });

      it('ends a replayed code only once it was redeemed', async () => {
        await codes().insertAuthorizationCode(authorizationCode());
        expect(await codes().endReplayedAuthorizationCode('code-1')).toBe(false);
        expect((await codes().findAuthorizationCode('code-1'))?.expiresAt).toBe(T + 300);
        await redeem('code-1', 'cid_sandbox_contract', T + 1);
        expect(await codes().endReplayedAuthorizationCode('code-1')).toBe(true);
        expect(await codes().findAuthorizationCode('code-1')).toMatchObject({ consumedAt: T + 1, expiresAt: REPLAYED_CODE_EXPIRY });
        // An operator's end of the holder's codes leaves the replay's mark.
        await codes().endAuthorizationCodesOf({ profileId: '123456789012' }, T + 2);
        expect((await codes().findAuthorizationCode('code-1'))?.expiresAt).toBe(REPLAYED_CODE_EXPIRY);
        expect(await codes().endReplayedAuthorizationCode('code-unknown')).toBe(false);
      });

      it('refuses an unknown code', async () => {
        expect(await redeem('code-unknown', 'cid_sandbox_contract', T)).toBe('refused');
        expect(await sessionsOf('code-unknown')).toEqual([]);
      });

      it('ends the unexpired and the redeemed codes of a customer or a client, and only those; counts the unredeemed', async () => {
        await codes().insertAuthorizationCode(authorizationCode({ codeHash: 'live' }));
        await codes().insertAuthorizationCode(authorizationCode({ codeHash: 'redeemed', consumedAt: T + 1 }));
        await codes().insertAuthorizationCode(authorizationCode({ codeHash: 'expired', expiresAt: T + 5 }));
        await codes().insertAuthorizationCode(authorizationCode({ codeHash: 'other-customer', profileId: '223456789012' }));
        await codes().insertAuthorizationCode(authorizationCode({ codeHash: 'other-client', clientId: 'cid_sandbox_other', profileId: '323456789012' }));
        expect(await codes().endAuthorizationCodesOf({ profileId: '123456789012' }, T + 10)).toBe(1);
        expect(await codes().findAuthorizationCode('live')).toEqual(authorizationCode({ codeHash: 'live', expiresAt: 0 }));
        expect(await redeem('live', 'cid_sandbox_contract', T + 10)).toBe('refused');
        // Ended whatever the clock of the exchange: one a second behind the lock's finds it ended too.
        expect(await redeem('live', 'cid_sandbox_contract', T + 9)).toBe('refused');
        // A redeemed code ends too, without being counted.
        expect((await codes().findAuthorizationCode('redeemed'))?.expiresAt).toBe(0);
        expect((await codes().findAuthorizationCode('expired'))?.expiresAt).toBe(T + 5);
        expect((await codes().findAuthorizationCode('other-customer'))?.expiresAt).toBe(T + 300);
        expect(await codes().endAuthorizationCodesOf({ profileId: '123456789012' }, T + 11)).toBe(0);

        expect(await codes().endAuthorizationCodesOf({ clientId: 'cid_sandbox_contract' }, T + 20)).toBe(1);
        expect((await codes().findAuthorizationCode('other-customer'))?.expiresAt).toBe(0);
        expect((await codes().findAuthorizationCode('other-client'))?.expiresAt).toBe(T + 300);
        expect(await redeem('other-client', 'cid_sandbox_other', T + 20, BINDING, '323456789012')).toBe('redeemed');
      });

      it('gives the code back, with its token session, when the transaction that redeemed it rolls back', async () => {
        await codes().insertAuthorizationCode(authorizationCode());
        await expect(
          storage.transaction(async (tx) => {
            expect(await tx.codes.redeemAuthorizationCode(sessionOf('code-1', 'cid_sandbox_contract'), T + 1, BINDING)).toBe('redeemed');
            throw new Error('binding mismatch');
          }),
        ).rejects.toThrow('binding mismatch');
        expect((await codes().findAuthorizationCode('code-1'))?.consumedAt).toBeNull();
        expect(await sessionsOf('code-1')).toEqual([]);
      });
    });

    describe('token sessions', () => {
      const tokens = () => storage.tokenSessions;

      it('stores and finds a token session with every field intact', async () => {
        const clientOnly = tokenSession({ sid: 'sid-2', codeHash: null, revokedAt: T + 7 });
        await tokens().insertTokenSession(tokenSession());
        await tokens().insertTokenSession(clientOnly);
        expect(await tokens().findTokenSession('sid-1')).toEqual(tokenSession());
        expect(await tokens().findTokenSession('sid-2')).toEqual(clientOnly);
        expect(await tokens().findTokenSession('sid-3')).toBeUndefined();
        await expect(tokens().insertTokenSession(tokenSession())).rejects.toBeInstanceOf(Conflict);
      });

      it('decides "reuse or replace" in one statement: of 20 concurrent refreshes with reuse, one replaces and 19 get its token', async () => {
        await tokens().insertTokenSession(tokenSession());
        const update = (i: number) => ({
          clientId: 'cid_sandbox_contract',
          refreshJti: 'refresh-jti-1',
          accessJti: `new-${i}`,
          accessExpiresAt: T + 3700 + i,
          now: T + 100,
          reuse: { since: T + 90, scope: 'profile', sealedAccess: `sealed-${i}` },
        });
        const results = await concurrently(20, (i) => tokens().replaceAccessToken('sid-1', update(i)));
        const replaced = results.filter((r) => r?.reused === false);
        expect(replaced).toHaveLength(1);
        const kept = (await tokens().findTokenSession('sid-1')) as TokenSessionRecord;
        const winner = Number(kept.accessJti.slice('new-'.length));
        expect(kept.accessExpiresAt).toBe(T + 3700 + winner);
        for (const r of results.filter((r) => r?.reused === true)) {
          expect(r).toEqual({ reused: true, accessJti: `new-${winner}`, accessExpiresAt: T + 3700 + winner, sealedAccess: `sealed-${winner}` });
        }
        // A refresh after the interval, another scope, or one without reuse: replaced.
        expect(await tokens().replaceAccessToken('sid-1', { ...update(31), now: T + 101, reuse: { ...update(31).reuse, since: T + 100 } })).toEqual({ reused: false });
        expect(await tokens().replaceAccessToken('sid-1', { ...update(30), reuse: { ...update(30).reuse, scope: '' } })).toEqual({ reused: false });
        const { reuse: _none, ...plain } = update(32);
        expect(await tokens().replaceAccessToken('sid-1', plain)).toEqual({ reused: false });
        // Without reuse nothing is kept to reuse: the next refresh within the interval replaces too.
        expect(await tokens().replaceAccessToken('sid-1', update(33))).toEqual({ reused: false });
        // An access token revoked on its own is never reused.
        expect(await tokens().revokeAccessToken('sid-1', 'new-33')).toBe(true);
        expect(await tokens().replaceAccessToken('sid-1', update(34))).toEqual({ reused: false });
        // A revoked session refuses either way.
        await tokens().revokeTokenSession('sid-1', T + 100);
        expect(await tokens().replaceAccessToken('sid-1', update(35))).toBeUndefined();
      });

      it('revokes every session of a code, and only those', async () => {
        await tokens().insertTokenSession(tokenSession({ sid: 'a' }));
        await tokens().insertTokenSession(tokenSession({ sid: 'b' }));
        await tokens().insertTokenSession(tokenSession({ sid: 'revoked-before', revokedAt: T + 1 }));
        await tokens().insertTokenSession(tokenSession({ sid: 'other-code', codeHash: 'code-2' }));
        await tokens().insertTokenSession(tokenSession({ sid: 'no-code', codeHash: null }));
        expect(await tokens().revokeTokenSessionsByCode('code-1', T + 50)).toBe(2);
        expect((await tokens().findTokenSession('a'))?.revokedAt).toBe(T + 50);
        expect((await tokens().findTokenSession('b'))?.revokedAt).toBe(T + 50);
        expect((await tokens().findTokenSession('revoked-before'))?.revokedAt).toBe(T + 1);
        expect((await tokens().findTokenSession('other-code'))?.revokedAt).toBeNull();
        expect((await tokens().findTokenSession('no-code'))?.revokedAt).toBeNull();
        expect(await tokens().revokeTokenSessionsByCode('code-1', T + 60)).toBe(0);
        expect(await tokens().revokeTokenSessionsByCode('code-unknown', T + 60)).toBe(0);
      });
      it('revokes every live session of a customer or of a client, and only those', async () => {
        await tokens().insertTokenSession(tokenSession({ sid: 'a' }));
        await tokens().insertTokenSession(tokenSession({ sid: 'b', clientId: 'cid_sandbox_other' }));
        await tokens().insertTokenSession(tokenSession({ sid: 'revoked-before', revokedAt: T + 1 }));
        await tokens().insertTokenSession(tokenSession({ sid: 'other-customer', profileId: '223456789012' }));
        await tokens().insertTokenSession(tokenSession({ sid: 'other-both', profileId: '323456789012', clientId: 'cid_sandbox_other' }));
        expect(await tokens().revokeTokenSessionsOf({ profileId: '123456789012' }, T + 50)).toBe(2);
        expect((await tokens().findTokenSession('a'))?.revokedAt).toBe(T + 50);
        expect((await tokens().findTokenSession('b'))?.revokedAt).toBe(T + 50);
        expect((await tokens().findTokenSession('revoked-before'))?.revokedAt).toBe(T + 1);
        expect((await tokens().findTokenSession('other-customer'))?.revokedAt).toBeNull();
        expect(await tokens().revokeTokenSessionsOf({ profileId: '123456789012' }, T + 60)).toBe(0);

        expect(await tokens().revokeTokenSessionsOf({ clientId: 'cid_sandbox_contract' }, T + 70)).toBe(1);
        expect((await tokens().findTokenSession('other-customer'))?.revokedAt).toBe(T + 70);
        expect((await tokens().findTokenSession('other-both'))?.revokedAt).toBeNull();
        // A revoked session's tokens cannot be replaced.
        expect(await tokens().replaceAccessToken('a', { clientId: 'cid_sandbox_contract', refreshJti: 'refresh-jti-1', accessJti: 'new', accessExpiresAt: T + 4000, now: T + 80 })).toBeUndefined();
      });

      it("replaces a session's access token only for its client and its refresh token, until that expires", async () => {
        await tokens().insertTokenSession(tokenSession());
        const update = { clientId: 'cid_sandbox_contract', refreshJti: 'refresh-jti-1', accessJti: 'new', accessExpiresAt: T + 4000, now: T + 10 };
        expect(await tokens().replaceAccessToken('sid-1', { ...update, clientId: 'cid_sandbox_other' })).toBeUndefined();
        expect(await tokens().replaceAccessToken('sid-1', { ...update, refreshJti: 'refresh-jti-2' })).toBeUndefined();
        expect(await tokens().replaceAccessToken('sid-1', { ...update, now: T + 604_800 })).toBeUndefined();
        expect((await tokens().findTokenSession('sid-1'))?.accessJti).toBe('access-jti-1');
        expect(await tokens().replaceAccessToken('sid-1', update)).toEqual({ reused: false });
        expect(await tokens().findTokenSession('sid-1')).toMatchObject({ accessJti: 'new', accessExpiresAt: T + 4000 });
      });
    });

    describe('idempotent requests', () => {
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

    describe('SMS outbox', () => {
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

    describe('rate-limit counters', () => {
      const MS = T * 1000;
      const counters = () => storage.rateLimitCounters;

      it('starts a missing counter from the points added, with the expiry given', async () => {
        expect(await counters().addToRateLimitCounter('k', 1, MS + 60_000, MS, false)).toEqual({ points: 1, expiresAt: MS + 60_000 });
        expect(await counters().findRateLimitCounter('k', MS)).toEqual({ points: 1, expiresAt: MS + 60_000 });
        expect(await counters().findRateLimitCounter('other', MS)).toBeUndefined();
      });

      it('adds to a live counter and keeps its expiry, up to just before it', async () => {
        await counters().addToRateLimitCounter('k', 1, MS + 60_000, MS, false);
        expect(await counters().addToRateLimitCounter('k', 2, MS + 90_000, MS + 30_000, false)).toEqual({ points: 3, expiresAt: MS + 60_000 });
        expect(await counters().addToRateLimitCounter('k', 1, MS + 120_000, MS + 59_999, false)).toEqual({ points: 4, expiresAt: MS + 60_000 });
        expect(await counters().findRateLimitCounter('k', MS + 59_999)).toEqual({ points: 4, expiresAt: MS + 60_000 });
      });

      it('starts an expired counter again, from its expiry on', async () => {
        await counters().addToRateLimitCounter('k', 4, MS + 60_000, MS, false);
        expect(await counters().findRateLimitCounter('k', MS + 60_000)).toBeUndefined();
        expect(await counters().addToRateLimitCounter('k', 1, MS + 120_000, MS + 60_000, false)).toEqual({ points: 1, expiresAt: MS + 120_000 });
        expect(await counters().findRateLimitCounter('k', MS + 60_000)).toEqual({ points: 1, expiresAt: MS + 120_000 });
      });

      it('takes negative points back from a live counter', async () => {
        await counters().addToRateLimitCounter('k', 3, MS + 60_000, MS, false);
        expect(await counters().addToRateLimitCounter('k', -1, MS + 90_000, MS + 1, false)).toEqual({ points: 2, expiresAt: MS + 60_000 });
      });

      it('never expires a counter without an expiry', async () => {
        await counters().addToRateLimitCounter('k', 1, null, MS, false);
        const decadeLater = MS + 10 * 365 * 86_400_000;
        expect(await counters().addToRateLimitCounter('k', 1, decadeLater + 1000, decadeLater, false)).toEqual({ points: 2, expiresAt: null });
        expect(await counters().findRateLimitCounter('k', decadeLater)).toEqual({ points: 2, expiresAt: null });
      });

      it('starts a live counter again when forced, with the new expiry', async () => {
        await counters().addToRateLimitCounter('k', 3, MS + 60_000, MS, false);
        expect(await counters().addToRateLimitCounter('k', 6, MS + 900_000, MS + 1, true)).toEqual({ points: 6, expiresAt: MS + 900_000 });
        expect(await counters().addToRateLimitCounter('k', 0, null, MS + 2, true)).toEqual({ points: 0, expiresAt: null });
      });

      it('deletes one counter and says whether there was one', async () => {
        await counters().addToRateLimitCounter('k', 1, MS + 60_000, MS, false);
        await counters().addToRateLimitCounter('kept', 1, MS + 60_000, MS, false);
        expect(await counters().deleteRateLimitCounter('k')).toBe(true);
        expect(await counters().deleteRateLimitCounter('k')).toBe(false);
        expect(await counters().findRateLimitCounter('k', MS)).toBeUndefined();
        expect(await counters().findRateLimitCounter('kept', MS)).toEqual({ points: 1, expiresAt: MS + 60_000 });
      });

      it('deletes the expired counters only', async () => {
        await counters().addToRateLimitCounter('expired', 1, MS + 1000, MS, false);
        await counters().addToRateLimitCounter('at-expiry', 1, MS + 2000, MS, false);
        await counters().addToRateLimitCounter('live', 1, MS + 2001, MS, false);
        await counters().addToRateLimitCounter('forever', 1, null, MS, false);
        expect(await counters().deleteExpiredRateLimitCounters(MS + 2000)).toBe(2);
        expect(await counters().findRateLimitCounter('live', MS)).toBeDefined();
        expect(await counters().findRateLimitCounter('forever', MS)).toBeDefined();
        expect(await counters().addToRateLimitCounter('expired', 1, MS + 9000, MS, false)).toEqual({ points: 1, expiresAt: MS + 9000 });
      });

      it('loses no add when many arrive at once: each sees its own total', async () => {
        const totals = await concurrently(60, () => counters().addToRateLimitCounter('k', 1, MS + 60_000, MS, false));
        expect(totals.map((c) => c.points).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
        expect(await counters().findRateLimitCounter('k', MS)).toEqual({ points: 60, expiresAt: MS + 60_000 });
      });

      it('starts an expired counter again once when many adds arrive at once', async () => {
        await counters().addToRateLimitCounter('k', 50, MS + 60_000, MS, false);
        const later = MS + 60_000;
        const totals = await concurrently(30, () => counters().addToRateLimitCounter('k', 1, later + 60_000, later, false));
        expect(totals.map((c) => c.points).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
        expect(new Set(totals.map((c) => c.expiresAt))).toEqual(new Set([later + 60_000]));
      });
    });

    describe('audit events counted', () => {
      it('counts a repeated event in one record, losing no count under concurrency, and keeps its first fields', async () => {
        const event = { id: 'minute-1', at: T, type: 'client.authentication_failed', actor: 'ip:10.0.0.1', subject: 'c', outcome: 'failure', details: { method: 'client_secret_basic' } } as const;
        await storage.audit.countAuditEvent(event);
        expect((await storage.audit.listAuditEvents({ limit: 10 }))[0]?.details).toEqual({ method: 'client_secret_basic', count: 1 });
        await concurrently(49, (i) => storage.audit.countAuditEvent({ ...event, at: T + 1 + (i % 50) }));
        await storage.audit.insertAuditEvent({ ...event, id: 'plain', details: { method: 'x' } });
        const listed = await storage.audit.listAuditEvents({ limit: 10 });
        expect(listed.map((e) => [e.id, e.at, e.details])).toEqual([
          ['minute-1', T, { method: 'client_secret_basic', count: 50 }],
          ['plain', T, { method: 'x' }],
        ]);
      });
    });

    describe('purge of expired records', () => {
      it('deletes codes at their expiry, not a second before, redeemed or not, in batches', async () => {
        await storage.codes.insertAuthorizationCode(authorizationCode({ codeHash: 'live', expiresAt: T + 301 }));
        for (const n of [1, 2, 3, 4, 5]) await storage.codes.insertAuthorizationCode(authorizationCode({ codeHash: `old-${n}` }));
        await storage.codes.insertAuthorizationCode(authorizationCode({ codeHash: 'old-6', consumedAt: T }));
        expect(await storage.codes.deleteExpiredAuthorizationCodes(T + 299, 10)).toBe(0);
        expect(await storage.codes.deleteExpiredAuthorizationCodes(T + 300, 2)).toBe(2);
        expect(await storage.codes.deleteExpiredAuthorizationCodes(T + 300, 2)).toBe(2);
        expect(await storage.codes.deleteExpiredAuthorizationCodes(T + 300, 2)).toBe(2);
        expect(await storage.codes.deleteExpiredAuthorizationCodes(T + 300, 2)).toBe(0);
        expect(await storage.codes.findAuthorizationCode('live')).toBeDefined();
        expect(await storage.codes.findAuthorizationCode('old-6')).toBeUndefined();
      });

      it('deletes journeys at their expiry, not a second before', async () => {
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'old' }));
        await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'live', expiresAt: T + 901 }));
        expect(await storage.authorizationRequests.deleteExpiredAuthorizationRequests(T + 899, 10)).toBe(0);
        expect(await storage.authorizationRequests.deleteExpiredAuthorizationRequests(T + 900, 10)).toBe(1);
        expect(await storage.authorizationRequests.findAuthorizationRequest('live')).toBeDefined();
      });

      it('deletes customer sessions once ended, expired or idle, never a live one', async () => {
        const sessions = storage.customerSessions;
        await sessions.insertCustomerSession(customerSession({ idHash: 'live', lastSeenAt: T + 1 }));
        await sessions.insertCustomerSession(customerSession({ idHash: 'idle', lastSeenAt: T }));
        await sessions.insertCustomerSession(customerSession({ idHash: 'ended', lastSeenAt: T + 1 }));
        await sessions.endCustomerSession('ended', T + 1);
        await sessions.insertCustomerSession(customerSession({ idHash: 'expired', lastSeenAt: T + 100, expiresAt: T + 1800 }));
        expect(await sessions.deleteEndedCustomerSessions(T + 1799, 1800, 10)).toBe(1);
        expect(await sessions.findCustomerSession('ended')).toBeUndefined();
        expect(await sessions.deleteEndedCustomerSessions(T + 1800, 1800, 10)).toBe(2);
        expect(await sessions.findCustomerSession('idle')).toBeUndefined();
        expect(await sessions.findCustomerSession('expired')).toBeUndefined();
        expect(await sessions.useCustomerSession('live', T + 1800, 1800)).toBeDefined();
      });

      it('deletes one-time PIN challenges expired by the cutoff', async () => {
        await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'old' }));
        await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'live', expiresAt: T + 301 }));
        expect(await storage.otpChallenges.deleteOtpChallengesExpiredBy(T + 299, 10)).toBe(0);
        expect(await storage.otpChallenges.deleteOtpChallengesExpiredBy(T + 300, 10)).toBe(1);
        expect(await storage.otpChallenges.findOtpChallenge('live')).toBeDefined();
      });

      it('deletes a token session only once its refresh and access tokens have both expired, revoked or not', async () => {
        const at = T + 604_800;
        await storage.tokenSessions.insertTokenSession(tokenSession({ sid: 'expired' }));
        await storage.tokenSessions.insertTokenSession(tokenSession({ sid: 'revoked', refreshJti: 'r2', accessJti: 'a2' }));
        await storage.tokenSessions.revokeTokenSession('revoked', T + 10);
        await storage.tokenSessions.insertTokenSession(tokenSession({ sid: 'revoked-live', refreshJti: 'r3', accessJti: 'a3', refreshExpiresAt: at + 1 }));
        await storage.tokenSessions.revokeTokenSession('revoked-live', T + 10);
        await storage.tokenSessions.insertTokenSession(tokenSession({ sid: 'access-outlives', refreshJti: 'r4', accessJti: 'a4', accessExpiresAt: at + 1 }));
        expect(await storage.tokenSessions.deleteExpiredTokenSessions(at - 1, 10)).toBe(0);
        expect(await storage.tokenSessions.deleteExpiredTokenSessions(at, 10)).toBe(2);
        expect(await storage.tokenSessions.findTokenSession('revoked-live')).toBeDefined();
        expect(await storage.tokenSessions.findTokenSession('access-outlives')).toBeDefined();
        expect(await storage.tokenSessions.deleteExpiredTokenSessions(at + 1, 10)).toBe(2);
      });

      it('deletes revocations, stored responses and counters at their expiry, in batches', async () => {
        for (const n of [1, 2, 3]) {
          await storage.revokedTokens.revokeToken({ jti: `j${n}`, clientId: 'c', revokedAt: T, expiresAt: T + 60 });
          await storage.idempotentRequests.claimIdempotentRequest({
            clientId: 'c',
            reference: `ref-${n}`,
            requestHash: 'h',
            sealedResponse: null,
            createdAt: T,
            expiresAt: T + 60,
          });
        }
        await storage.idempotentRequests.claimIdempotentRequest({ clientId: 'c', reference: 'live', requestHash: 'h', sealedResponse: null, createdAt: T, expiresAt: T + 61 });
        expect(await storage.revokedTokens.deleteExpiredRevocations(T + 59, 2)).toBe(0);
        expect(await storage.revokedTokens.deleteExpiredRevocations(T + 60, 2)).toBe(2);
        expect(await storage.revokedTokens.deleteExpiredRevocations(T + 60, 2)).toBe(1);
        expect(await storage.idempotentRequests.deleteExpiredIdempotentRequests(T + 59, 2)).toBe(0);
        expect(await storage.idempotentRequests.deleteExpiredIdempotentRequests(T + 60, 2)).toBe(2);
        expect(await storage.idempotentRequests.deleteExpiredIdempotentRequests(T + 60)).toBe(1);
        expect(await storage.idempotentRequests.deleteExpiredIdempotentRequests(T + 60)).toBe(0);
        const again = await storage.idempotentRequests.claimIdempotentRequest({ clientId: 'c', reference: 'live', requestHash: 'x', sealedResponse: null, createdAt: T + 60, expiresAt: T + 120 });
        expect(again?.requestHash).toBe('h');
        const MS = T * 1000;
        for (const n of [1, 2, 3]) await storage.rateLimitCounters.addToRateLimitCounter(`k${n}`, 1, MS + 1000, MS, false);
        expect(await storage.rateLimitCounters.deleteExpiredRateLimitCounters(MS + 1000, 2)).toBe(2);
        expect(await storage.rateLimitCounters.deleteExpiredRateLimitCounters(MS + 1000, 2)).toBe(1);
      });

      it('deletes outbox messages and audit events older than the cutoff, keeping those at it', async () => {
        await storage.outbox.insertOutboxMessage({ id: 'm1', to: '+639171234567', body: 'old', sentAt: T - 1 });
        await storage.outbox.insertOutboxMessage({ id: 'm2', to: '+639171234567', body: 'kept', sentAt: T });
        expect(await storage.outbox.deleteOutboxMessagesSentBefore(T, 10)).toBe(1);
        expect((await storage.outbox.listOutboxMessages('+639171234567', 10)).map((m) => m.id)).toEqual(['m2']);
        for (const [id, at] of [['a1', T - 2], ['a2', T - 1], ['a3', T]] as const) {
          await storage.audit.insertAuditEvent({ id, at, type: 'client.created', actor: 'cli', subject: null, outcome: 'success' });
        }
        expect(await storage.audit.deleteAuditEventsBefore(T, 1)).toBe(1);
        expect(await storage.audit.deleteAuditEventsBefore(T, 1)).toBe(1);
        expect(await storage.audit.deleteAuditEventsBefore(T, 1)).toBe(0);
        expect((await storage.audit.listAuditEvents({ limit: 10 })).map((e) => e.id)).toEqual(['a3']);
      });

      it('purges every kind in batches until none is left, and counts each', async () => {
        for (let n = 0; n < 7; n++) await storage.codes.insertAuthorizationCode(authorizationCode({ codeHash: `c${n}` }));
        await storage.codes.insertAuthorizationCode(authorizationCode({ codeHash: 'live', expiresAt: T + 10_000 }));
        await storage.audit.insertAuditEvent({ id: 'old', at: T + 300 - 86_400 - 1, type: 'client.created', actor: 'cli', subject: null, outcome: 'success' });
        await storage.audit.insertAuditEvent({ id: 'new', at: T + 300 - 86_400, type: 'client.created', actor: 'cli', subject: null, outcome: 'success' });
        const progress: number[] = [];
        const counts = await purgeExpired(storage, {
          now: T + 300,
          sessionIdleSeconds: 1800,
          auditRetentionDays: 1,
          batchSize: 3,
          onProgress: (kind, soFar) => kind === 'authorizationCodes' && progress.push(soFar),
        });
        expect(counts).toMatchObject({ authorizationCodes: 7, auditEvents: 1, tokenSessions: 0 });
        expect(progress).toEqual([3, 6, 7]);
        expect(await storage.codes.findAuthorizationCode('live')).toBeDefined();
        expect((await storage.audit.listAuditEvents({ limit: 10 })).map((e) => e.id)).toEqual(['new']);
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

    describe('audit events', () => {
      it('keep the request ID of the request that caused them, and none when no request did', async () => {
        const base = { type: 'client.authentication_failed', actor: 'ip:192.0.2.1', subject: 'cid_sandbox_x', outcome: 'failure' } as const;
        await storage.audit.insertAuditEvent({ ...base, id: `${'0'.repeat(12)}000001aaaaaaaaaaaa`, at: T, details: { method: 'client_secret_basic' }, requestId: 'lb-7f3a:42' });
        await storage.audit.insertAuditEvent({ ...base, id: `${'0'.repeat(12)}000002aaaaaaaaaaaa`, at: T + 1 });
        const listed = await storage.audit.listAuditEvents({ limit: 10 });
        expect(listed.map((e) => e.requestId)).toEqual(['lb-7f3a:42', undefined]);
        expect(listed[0]).toEqual({ ...base, id: `${'0'.repeat(12)}000001aaaaaaaaaaaa`, at: T, details: { method: 'client_secret_basic' }, requestId: 'lb-7f3a:42' });
      });
    });
  });
}
