import { beforeEach, describe, expect, it } from 'vitest';
import { TRANSITIONS } from '../../../src/core/journey/states.js';
import type { OtpEntry, PinResetUse, ResetOtpEntry } from '../../../src/core/journey/stores.js';
import type { Customer } from '../../../src/core/customers/customer.js';
import type { AuthorizationRequestRecord } from '../../../src/core/journey/records.js';
import type { OtpChallengeRecord } from '../../../src/core/otp/records.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, customer, authorizationRequest, challenge, customerSession, authorizationCode, concurrently, type StorageUnderTest } from './fixtures.js';

/** The sign-in store: its part of the storage contract. */
export function describeSignInsContract(subject: StorageUnderTest): void {
  describe('sign-ins', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    const signIns = () => storage.signIns;
    /** A login entry of `challenge-1` (code `code-hash-1` is right) and everything a right one completes. */
    function entry(overrides: Partial<OtpEntry> = {}): OtpEntry {
      return {
        idHash: 'request-1',
        challengeId: 'challenge-1',
        codeHashes: ['code-hash-1'],
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
      expect(await signIns().findJourney('request-1')).toEqual({ request: authorizationRequest(), challenge: undefined, hintRegistered: false, hintHasPasskey: false });
      await storage.customers.insertCustomer(customer());
      await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-a', createdAt: T }));
      await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-c', createdAt: T + 1, consumedAt: T + 2 }));
      await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-b', createdAt: T + 1 }));
      await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-z', requestHash: 'request-other', createdAt: T + 9 }));
      expect(await signIns().findJourney('request-1')).toEqual({
        request: authorizationRequest(),
        challenge: challenge({ id: 'challenge-c', createdAt: T + 1, consumedAt: T + 2 }),
        hintRegistered: true,
        hintHasPasskey: false,
      });
      await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'request-2', loginHint: null }));
      expect(await signIns().findJourney('request-2')).toMatchObject({ challenge: undefined, hintRegistered: false });
      expect(await signIns().findJourney('request-unknown')).toBeUndefined();
    });

    it('finds whether the account its user_id names has a passkey that is not suspended', async () => {
      await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest());
      await storage.customers.insertCustomer(customer());
      const passkey = {
        credentialId: 'cred-1',
        profileId: customer().profileId,
        userHandle: 'handle-of-customer',
        publicKey: 'pQECAyYgASFYIA',
        signCount: 0,
        transports: ['internal'],
        aaguid: null,
        name: null,
        createdAt: T,
        lastUsedAt: null,
        heldUntil: null,
        suspendedAt: null,
      };
      await storage.passkeys.insertPasskey({ ...passkey, suspendedAt: T });
      expect(await signIns().findJourney('request-1')).toMatchObject({ hintRegistered: true, hintHasPasskey: false });
      await storage.passkeys.insertPasskey({ ...passkey, credentialId: 'cred-2' });
      expect(await signIns().findJourney('request-1')).toMatchObject({ hintRegistered: true, hintHasPasskey: true });
      await storage.passkeys.suspendPasskeysOf(customer().profileId, T + 1);
      expect(await signIns().findJourney('request-1')).toMatchObject({ hintHasPasskey: false });
      await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest({ idHash: 'request-2', loginHint: null }));
      expect(await signIns().findJourney('request-2')).toMatchObject({ hintHasPasskey: false });
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
      expect(await signIns().enterOtp(entry({ codeHashes: ['wrong'] }))).toEqual({ kind: 'wrong', attempts: 1 });
      expect(await signIns().enterOtp(entry({ codeHashes: ['wrong'] }))).toEqual({ kind: 'wrong', attempts: 2 });
      expect(await written()).toEqual({ status: 'otp_sent', session: undefined, consent: undefined, code: undefined });
      expect(await signIns().enterOtp(entry({ now: T + 300 }))).toEqual({ kind: 'not_counted' });
      expect(await signIns().enterOtp(entry({ idHash: 'request-other' }))).toEqual({ kind: 'not_counted' });
      expect(await signIns().enterOtp(entry({ challengeId: 'challenge-unknown' }))).toEqual({ kind: 'not_counted' });
      for (const attempts of [3, 4, 5]) expect(await signIns().enterOtp(entry({ codeHashes: ['wrong'] }))).toEqual({ kind: 'wrong', attempts });
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

    it('completes the sign-in of a customer whose PIN login wrong PINs locked after the right PIN: the lock refuses PIN checks only', async () => {
      await awaitingCode({}, { pinAttempts: 5, lockedUntil: T + 900 });
      expect(await signIns().enterOtp(entry())).toEqual({ kind: 'right', done: { kind: 'completed', credentialVersion: 0 } });
      expect(await written()).toMatchObject({ status: 'code_issued', consent: { profileId: '123456789012' } });
      expect(await storage.customers.findCustomer('123456789012')).toMatchObject({ pinAttempts: 5, lockedUntil: T + 900 });
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
        return { idHash: 'request-1', challengeId: 'challenge-r', codeHashes: ['code-hash-r'], now: T + 10, maxAttempts: 5, ...overrides };
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
        expect(await signIns().enterResetOtp(resetEntry({ codeHashes: ['wrong'] }))).toEqual({ kind: 'wrong', attempts: 1 });
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
        expect(await signIns().enterOtp(entry({ challengeId: 'challenge-r', codeHashes: ['code-hash-r'] }))).toEqual({ kind: 'not_counted' });
        await storage.otpChallenges.insertOtpChallenge(challenge({ id: 'challenge-login' }));
        expect(await signIns().enterResetOtp(resetEntry({ challengeId: 'challenge-login', codeHashes: ['code-hash-1'] }))).toEqual({ kind: 'not_counted' });
        for (const attempts of [1, 2, 3, 4, 5]) expect(await signIns().enterResetOtp(resetEntry({ codeHashes: ['wrong'] }))).toEqual({ kind: 'wrong', attempts });
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
        const wrong = await concurrently(50, () => signIns().enterResetOtp(resetEntry({ codeHashes: ['wrong'] })));
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
      const wrong = await concurrently(50, () => signIns().enterOtp(entry({ codeHashes: ['wrong'] })));
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
}
