import { beforeEach, describe, expect, it } from 'vitest';
import { Conflict } from '../../../src/core/storage-errors.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, challenge, concurrently, type StorageUnderTest } from './fixtures.js';

/** The one-time PIN challenge store: its part of the storage contract. */
export function describeOtpChallengesContract(subject: StorageUnderTest): void {
  describe('one-time PIN challenges', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

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
}
