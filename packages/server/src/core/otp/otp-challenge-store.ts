/**
 * The storage port of one-time-PIN challenges.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */
import type { OtpChallengeRecord } from './records.js';

/** One-time-PIN challenges. Every change is one conditional update, safe under concurrency. */
export interface OtpChallengeStore {
  insertOtpChallenge(challenge: OtpChallengeRecord): Promise<void>;
  findOtpChallenge(id: string): Promise<OtpChallengeRecord | undefined>;
  /** The newest challenge of an authorization request, consumed or not. */
  findLatestOtpChallenge(requestHash: string): Promise<OtpChallengeRecord | undefined>;
  /**
   * Retires the challenge if it is unconsumed and unexpired at `now` (its
   * code never reached the customer), so that nothing can answer it.
   * Returns whether this call did: of any number of concurrent calls, one.
   * Entries themselves are made by `SignInStore.enterOtp`.
   */
  consumeOtpChallenge(id: string, now: number): Promise<boolean>;
  /**
   * Replaces the code of a live (unconsumed, unexpired at `now`) challenge (a resend) when it was last sent at
   * or before `sentBefore` and has had fewer than `maxResends` resends:
   * new code hash, `lastSentAt` = `now`, new expiry, one more resend.
   * Returns whether it did.
   */
  resendOtpChallenge(
    id: string,
    update: { codeHash: string; now: number; expiresAt: number; sentBefore: number; maxResends: number },
  ): Promise<boolean>;
  /**
   * Retires every live (unconsumed, unexpired at `now`) challenge bound to
   * the customer `profileId`, so that no code sent before can be answered
   * (a PIN reset, an operator's lock). Returns how many it retired.
   */
  endOtpChallengesOf(profileId: string, now: number): Promise<number>;
  /** Deletes at most `limit` challenges with `expiresAt <= cutoff`; returns how many. */
  deleteOtpChallengesExpiredBy(cutoff: number, limit: number): Promise<number>;
}
