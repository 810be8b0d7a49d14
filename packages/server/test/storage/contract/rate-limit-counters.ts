import { beforeEach, describe, expect, it } from 'vitest';
import type { Storage } from '../../../src/core/storage/storage.js';
import { T, concurrently, type StorageUnderTest } from './fixtures.js';

/** The rate-limit counters: its part of the storage contract. */
export function describeRateLimitCountersContract(subject: StorageUnderTest): void {
  describe('rate-limit counters', () => {
    let storage: Storage;
    beforeEach(() => {
      storage = subject.storage;
    });

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

    it('subtracts points given back from a live counter only: a missing or expired one stays as it is', async () => {
      await counters().addToRateLimitCounter('k', 3, MS + 60_000, MS, false);
      expect(await counters().subtractFromLiveRateLimitCounter('k', 1, MS + 59_999)).toEqual({ points: 2, expiresAt: MS + 60_000 });
      expect(await counters().subtractFromLiveRateLimitCounter('k', 1, MS + 60_000)).toBeUndefined();
      expect(await counters().subtractFromLiveRateLimitCounter('missing', 1, MS)).toBeUndefined();
      expect(await counters().findRateLimitCounter('missing', MS)).toBeUndefined();
      // The next window starts from what it is given, not below it.
      expect(await counters().addToRateLimitCounter('k', 1, MS + 120_000, MS + 60_000, false)).toEqual({ points: 1, expiresAt: MS + 120_000 });
      await counters().addToRateLimitCounter('forever', 2, null, MS, false);
      expect(await counters().subtractFromLiveRateLimitCounter('forever', 1, MS + 10 * 365 * 86_400_000)).toEqual({ points: 1, expiresAt: null });
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
}
