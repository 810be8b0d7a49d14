import { beforeEach, describe, expect, it } from 'vitest';
import type { PasskeyRecord, WebAuthnChallengeRecord } from '../../../src/core/passkeys/records.js';
import { purgeExpired } from '../../../src/core/retention/purge.js';
import { Conflict } from '../../../src/core/storage-errors.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, concurrently, customer, type StorageUnderTest } from './fixtures.js';

const PROFILE = customer().profileId;
const OTHER = '999999999999';

function passkey(overrides: Partial<PasskeyRecord> = {}): PasskeyRecord {
  return {
    credentialId: 'cred-1',
    profileId: PROFILE,
    userHandle: 'handle-of-customer',
    publicKey: 'pQECAyYgASFYIA',
    signCount: 0,
    transports: ['internal', 'hybrid'],
    aaguid: '00000000-0000-0000-0000-000000000000',
    name: null,
    createdAt: T,
    lastUsedAt: null,
    heldUntil: T + 86_400,
    suspendedAt: null,
    ...overrides,
  };
}

function webauthnChallenge(overrides: Partial<WebAuthnChallengeRecord> = {}): WebAuthnChallengeRecord {
  return {
    challengeHash: 'challenge-hash-1',
    requestHash: 'request-hash-1',
    purpose: 'authenticate',
    profileId: null,
    createdAt: T,
    expiresAt: T + 300,
    consumedAt: null,
    ...overrides,
  };
}

/** The passkey store: its part of the storage contract. */
export function describePasskeysContract(subject: StorageUnderTest): void {
  describe('passkeys', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });
    const passkeys = () => storage.passkeys;
    const AUTHENTICATE = { requestHash: 'request-hash-1', purpose: 'authenticate', now: T + 10 } as const;

    it('stores, finds and lists passkeys with every field intact, oldest first', async () => {
      const second = passkey({ credentialId: 'cred-2', transports: [], aaguid: null, name: 'phone', createdAt: T + 5, lastUsedAt: T + 6, heldUntil: null, suspendedAt: T + 7 });
      await passkeys().insertPasskey(second);
      await passkeys().insertPasskey(passkey());
      await passkeys().insertPasskey(passkey({ credentialId: 'cred-other', profileId: OTHER, userHandle: 'handle-of-other' }));
      expect(await passkeys().findPasskey('cred-1')).toEqual(passkey());
      expect(await passkeys().findPasskey('cred-2')).toEqual(second);
      expect(await passkeys().findPasskey('cred-3')).toBeUndefined();
      expect(await passkeys().listPasskeysOf(PROFILE)).toEqual([passkey(), second]);
      expect(await passkeys().listPasskeysOf('111111111111')).toEqual([]);
    });

    it('sets a customer\'s user handle once, on the customer\'s row, whoever asks first', async () => {
      await storage.customers.insertCustomer(customer());
      expect(await passkeys().findUserHandleOf(PROFILE)).toBeUndefined();
      const claims = await concurrently(5, (i) => passkeys().claimUserHandle(PROFILE, `handle-${i}`));
      const first = claims[0];
      expect(first).toMatch(/^handle-\d$/);
      expect(new Set(claims)).toEqual(new Set([first]));
      expect(await passkeys().findUserHandleOf(PROFILE)).toBe(first);
      expect(await passkeys().claimUserHandle(PROFILE, 'later')).toBe(first);
      expect(await passkeys().claimUserHandle('111111111111', 'x')).toBeUndefined();
      expect(await passkeys().findUserHandleOf('111111111111')).toBeUndefined();
    });

    it('adds a passkey only for an active customer, and tells a credential ID already stored', async () => {
      await storage.customers.insertCustomer(customer());
      expect(await passkeys().insertPasskeyOfActiveCustomer(passkey())).toBe('added');
      expect(await passkeys().findPasskey('cred-1')).toEqual(passkey());
      expect(await passkeys().insertPasskeyOfActiveCustomer(passkey())).toBe('exists');
      expect(await passkeys().insertPasskeyOfActiveCustomer(passkey({ credentialId: 'cred-x', profileId: OTHER }))).toBe('customer_unavailable');
      await storage.customers.lockCustomer(PROFILE, T + 1);
      expect(await passkeys().insertPasskeyOfActiveCustomer(passkey({ credentialId: 'cred-2' }))).toBe('customer_unavailable');
      expect(await passkeys().findPasskey('cred-2')).toBeUndefined();
    });

    it('refuses a credential ID already stored, also for another customer, with Conflict', async () => {
      await passkeys().insertPasskey(passkey());
      await expect(passkeys().insertPasskey(passkey({ profileId: OTHER }))).rejects.toBeInstanceOf(Conflict);
    });

    it('records a use only when the counter advances, or stays 0 for an authenticator without one', async () => {
      await passkeys().insertPasskey(passkey());
      expect(await passkeys().recordPasskeyUse('cred-1', { signCount: 0, now: T + 1 })).toBe(true);
      expect(await passkeys().recordPasskeyUse('cred-1', { signCount: 0, now: T + 2 })).toBe(true);
      expect((await passkeys().findPasskey('cred-1'))?.lastUsedAt).toBe(T + 2);
      expect(await passkeys().recordPasskeyUse('cred-1', { signCount: 5, now: T + 3 })).toBe(true);
      expect(await passkeys().recordPasskeyUse('cred-1', { signCount: 5, now: T + 4 })).toBe(false);
      expect(await passkeys().recordPasskeyUse('cred-1', { signCount: 4, now: T + 4 })).toBe(false);
      expect(await passkeys().recordPasskeyUse('cred-1', { signCount: 0, now: T + 4 })).toBe(false);
      expect(await passkeys().findPasskey('cred-1')).toMatchObject({ signCount: 5, lastUsedAt: T + 3 });
      expect(await passkeys().recordPasskeyUse('cred-1', { signCount: 6, now: T + 5 })).toBe(true);
      expect(await passkeys().findPasskey('cred-1')).toMatchObject({ signCount: 6, lastUsedAt: T + 5 });
      expect(await passkeys().recordPasskeyUse('cred-unknown', { signCount: 1, now: T + 5 })).toBe(false);
    });

    it('records one of 10 concurrent uses with the same counter', async () => {
      await passkeys().insertPasskey(passkey({ signCount: 3 }));
      const results = await concurrently(10, () => passkeys().recordPasskeyUse('cred-1', { signCount: 4, now: T + 1 }));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('suspends every passkey of one customer, and no one else’s; a suspended one records no use; restore lifts it', async () => {
      await passkeys().insertPasskey(passkey());
      await passkeys().insertPasskey(passkey({ credentialId: 'cred-2' }));
      await passkeys().insertPasskey(passkey({ credentialId: 'cred-other', profileId: OTHER }));
      expect(await passkeys().suspendPasskeysOf(PROFILE, T + 10)).toBe(2);
      expect(await passkeys().suspendPasskeysOf(PROFILE, T + 11)).toBe(0);
      expect((await passkeys().findPasskey('cred-1'))?.suspendedAt).toBe(T + 10);
      expect((await passkeys().findPasskey('cred-other'))?.suspendedAt).toBeNull();
      expect(await passkeys().recordPasskeyUse('cred-1', { signCount: 1, now: T + 12 })).toBe(false);
      expect(await passkeys().restorePasskeysOf(PROFILE)).toBe(2);
      expect(await passkeys().restorePasskeysOf(PROFILE)).toBe(0);
      expect((await passkeys().findPasskey('cred-1'))?.suspendedAt).toBeNull();
      expect(await passkeys().recordPasskeyUse('cred-1', { signCount: 1, now: T + 13 })).toBe(true);
    });

    it("removes one passkey of its customer only", async () => {
      await passkeys().insertPasskey(passkey());
      await passkeys().insertPasskey(passkey({ credentialId: 'cred-2' }));
      expect(await passkeys().removePasskey(OTHER, 'cred-1')).toBe(false);
      expect(await passkeys().removePasskey(PROFILE, 'cred-1')).toBe(true);
      expect(await passkeys().removePasskey(PROFILE, 'cred-1')).toBe(false);
      expect((await passkeys().listPasskeysOf(PROFILE)).map((p) => p.credentialId)).toEqual(['cred-2']);
    });

    it('consumes a challenge once, only for its journey and purpose, before it expires', async () => {
      await passkeys().insertWebAuthnChallenge(webauthnChallenge());
      await expect(passkeys().insertWebAuthnChallenge(webauthnChallenge())).rejects.toBeInstanceOf(Conflict);
      expect(await passkeys().consumeWebAuthnChallenge('challenge-hash-1', { ...AUTHENTICATE, requestHash: 'request-hash-2' })).toBeUndefined();
      expect(await passkeys().consumeWebAuthnChallenge('challenge-hash-1', { ...AUTHENTICATE, purpose: 'register' })).toBeUndefined();
      expect(await passkeys().consumeWebAuthnChallenge('challenge-hash-1', { ...AUTHENTICATE, now: T + 300 })).toBeUndefined();
      expect(await passkeys().consumeWebAuthnChallenge('challenge-unknown', AUTHENTICATE)).toBeUndefined();
      expect(await passkeys().consumeWebAuthnChallenge('challenge-hash-1', { ...AUTHENTICATE, now: T + 299 })).toEqual(
        webauthnChallenge({ consumedAt: T + 299 }),
      );
      expect(await passkeys().consumeWebAuthnChallenge('challenge-hash-1', AUTHENTICATE)).toBeUndefined();
    });

    it('consumes a challenge for exactly one of 10 concurrent calls', async () => {
      await passkeys().insertWebAuthnChallenge(webauthnChallenge({ purpose: 'register', profileId: PROFILE }));
      const results = await concurrently(10, () => passkeys().consumeWebAuthnChallenge('challenge-hash-1', { ...AUTHENTICATE, purpose: 'register' }));
      expect(results.filter((r) => r !== undefined)).toEqual([webauthnChallenge({ purpose: 'register', profileId: PROFILE, consumedAt: T + 10 })]);
    });

    it('the purge deletes expired and consumed challenges, not live ones', async () => {
      await passkeys().insertWebAuthnChallenge(webauthnChallenge({ challengeHash: 'live' }));
      await passkeys().insertWebAuthnChallenge(webauthnChallenge({ challengeHash: 'expired', expiresAt: T + 5 }));
      await passkeys().insertWebAuthnChallenge(webauthnChallenge({ challengeHash: 'consumed', consumedAt: T + 2 }));
      await passkeys().insertPasskey(passkey());
      const counts = await purgeExpired(storage, { now: T + 10, sessionIdleSeconds: 1800, auditRetentionDays: 365, batchSize: 1 });
      expect(counts.webauthnChallenges).toBe(2);
      expect(await passkeys().consumeWebAuthnChallenge('live', AUTHENTICATE)).toBeDefined();
      expect(await passkeys().findPasskey('cred-1')).toBeDefined();
    });

    it('writes in the transaction it is handed', async () => {
      await expect(
        storage.transaction(async (tx) => {
          await tx.passkeys.insertPasskey(passkey());
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await passkeys().findPasskey('cred-1')).toBeUndefined();
    });
  });
}
