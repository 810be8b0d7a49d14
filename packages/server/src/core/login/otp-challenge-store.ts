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
  /** Counts one wrong entry; returns the new attempt count (0 when there is no such challenge). */
  recordOtpFailure(id: string): Promise<number>;
  /**
   * Consumes the challenge if it is unconsumed, unexpired at `now` and has
   * fewer than `maxAttempts` wrong entries. Returns whether this call did.
   */
  consumeOtpChallenge(id: string, now: number, maxAttempts: number): Promise<boolean>;
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
}
