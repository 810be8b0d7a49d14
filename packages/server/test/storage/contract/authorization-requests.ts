import { beforeEach, describe, expect, it } from 'vitest';
import { TRANSITIONS } from '../../../src/core/journey/states.js';
import type { AuthorizationRequestRecord } from '../../../src/core/journey/records.js';
import { Conflict } from '../../../src/core/storage-errors.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, authorizationRequest, challenge, concurrently, type StorageUnderTest } from './fixtures.js';

/** The authorization-request store: its part of the storage contract. */
export function describeAuthorizationRequestsContract(subject: StorageUnderTest): void {
  describe('authorization requests', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

    it('stores and finds a request with every field intact', async () => {
      await storage.authorizationRequests.insertAuthorizationRequest(authorizationRequest());
      const bare = authorizationRequest({ idHash: 'request-2', state: null, codeChallenge: null, loginHint: null, uiLocale: null, acrValues: [], maxAge: null, dpopJkt: undefined });
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
}
