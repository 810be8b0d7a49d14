/**
 * The storage port of one-time-PIN challenges.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `storage/ports.ts`.
 */
import type { OtpChallengeRecord } from './records.js';

/** One-time-PIN challenges. Every change is one conditional update, safe under concurrency. */
export interface OtpChallengeStore {
  insertOtpChallenge(challenge: OtpChallengeRecord): Promise<void>;
  findOtpChallenge(id: string): Promise<OtpChallengeRecord | undefined>;
  /** The newest challenge of an authorization request, consumed or not. */
  findLatestOtpChallenge(requestHash: string): Promise<OtpChallengeRecord | undefined>;
  /**
   * Counts one entry BEFORE it is checked, in one conditional update: only
   * while the challenge is unconsumed, unexpired at `now` and has had fewer
   * than `maxAttempts` entries. However many entries arrive at once, at most
   * `maxAttempts` are granted. Returns the challenge after the update, or
   * `undefined` when no entry may be made.
   */
  claimOtpAttempt(id: string, now: number, maxAttempts: number): Promise<OtpChallengeRecord | undefined>;
  /**
   * Consumes the challenge if it is unconsumed and unexpired at `now` (an
   * entry granted by {@link claimOtpAttempt} matched). Returns whether this
   * call did: of any number of concurrent calls, one.
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
  /** Deletes at most `limit` challenges with `expiresAt <= cutoff`; returns how many. */
  deleteOtpChallengesExpiredBy(cutoff: number, limit: number): Promise<number>;
}
