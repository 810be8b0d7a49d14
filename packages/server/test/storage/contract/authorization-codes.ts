import { beforeEach, describe, expect, it } from 'vitest';
import { REPLAYED_CODE_EXPIRY, type CodeBinding } from '../../../src/core/codes/code-store.js';
import type { TokenSessionRecord } from '../../../src/core/tokens/records.js';
import { Conflict } from '../../../src/core/storage-errors.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, client, customer, SIGN_IN, customerSession, BINDING, authorizationCode, tokenSession, concurrently, type StorageUnderTest } from './fixtures.js';

/** The authorization-code store: its part of the storage contract. */
export function describeAuthorizationCodesContract(subject: StorageUnderTest): void {
  describe('authorization codes', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

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
      for (const codeHash of ['pin-locked', 'disabled', 'enabled', 'redirect-replaced', 'customer-locked']) {
        await codes().insertAuthorizationCode(authorizationCode({ codeHash, expiresAt: T + 900 }));
      }
      // Wrong PINs since the code was issued lock PIN login, not the code.
      await storage.customers.updateCustomer('123456789012', { pinAttempts: 5, lockedUntil: T + 100 }, T + 1);
      expect(await redeem('pin-locked', 'cid_sandbox_contract', T + 99)).toBe('redeemed');
      // A disabled client.
      await storage.clients.changeClientStatus('cid_sandbox_contract', { status: 'disabled', tokensEndedAt: T + 101 }, T + 101);
      expect(await redeem('disabled', 'cid_sandbox_contract', T + 101)).toBe('ended');
      await storage.clients.changeClientStatus('cid_sandbox_contract', { status: 'active', tokensEndedAt: T + 101 }, T + 102);
      expect(await redeem('enabled', 'cid_sandbox_contract', T + 102)).toBe('redeemed');
      // A client whose redirect URI was replaced since the code was read.
      const { redirectUri } = (await storage.clients.findClient('cid_sandbox_contract'))!;
      await storage.clients.updateClient('cid_sandbox_contract', { redirectUri: 'https://acme.example/new-callback' }, T + 103);
      expect(await redeem('redirect-replaced', 'cid_sandbox_contract', T + 103)).toBe('ended');
      await storage.clients.updateClient('cid_sandbox_contract', { redirectUri: redirectUri ?? undefined }, T + 103);
      // A locked customer.
      await storage.customers.lockCustomer('123456789012', T + 104);
      expect(await redeem('customer-locked', 'cid_sandbox_contract', T + 104)).toBe('ended');
      for (const codeHash of ['disabled', 'redirect-replaced', 'customer-locked']) {
        expect((await codes().findAuthorizationCode(codeHash))?.consumedAt).toEqual(expect.any(Number));
        expect(await sessionsOf(codeHash)).toEqual([]);
      }
      for (const codeHash of ['pin-locked', 'enabled']) expect(await sessionsOf(codeHash)).toHaveLength(1);
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
}
