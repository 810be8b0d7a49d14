import type { Clock } from '../clock.js';
import { OTP_MAX_ATTEMPTS } from '../lifetimes.js';
import type { OtpHasher } from './one-time-pin.js';
import type { OtpChallengeStore } from './otp-challenge-store.js';
import type { OtpChallengeRecord } from './records.js';

/** What checking a one-time PIN needs. */
export interface VerifyPinDeps {
  readonly challenges: Pick<OtpChallengeStore, 'findOtpChallenge' | 'claimOtpAttempt'>;
  readonly hasher: OtpHasher;
  readonly clock: Clock;
}

/** The outcome of entering a one-time PIN. */
export type VerifyPinResult =
  /** The code matches; the caller consumes the challenge (once) in the transaction that completes the login. */
  | { readonly ok: true; readonly challenge: OtpChallengeRecord }
  | { readonly ok: false; readonly reason: 'wrong'; readonly attemptsLeft: number }
  /** `justNow`: this entry was the one that used up the attempts. */
  | { readonly ok: false; readonly reason: 'exhausted'; readonly justNow: boolean }
  | { readonly ok: false; readonly reason: 'malformed' | 'expired' | 'used' | 'gone' };

/**
 * Checks a one-time PIN entry (docs/journey.md, "The one-time PIN"). Valid
 * 5 minutes, single use; 5 entries at most, the 5th wrong one ends the
 * challenge, after which even the right code fails. Each entry is counted before the code is compared, in one
 * conditional update, so 5 entries are the most ever compared, however
 * many arrive at once.
 */
export async function verifyPin(challengeId: string, code: string, deps: VerifyPinDeps): Promise<VerifyPinResult> {
  // Not 6 digits cannot be the code: say so without spending an entry.
  if (!/^\d{6}$/.test(code)) return { ok: false, reason: 'malformed' };
  const now = deps.clock.nowSeconds();
  const claimed = await deps.challenges.claimOtpAttempt(challengeId, now, OTP_MAX_ATTEMPTS);
  if (!claimed) {
    const challenge = await deps.challenges.findOtpChallenge(challengeId);
    if (!challenge) return { ok: false, reason: 'gone' };
    if (challenge.consumedAt !== null) return { ok: false, reason: 'used' };
    if (challenge.attempts >= OTP_MAX_ATTEMPTS) return { ok: false, reason: 'exhausted', justNow: false };
    return { ok: false, reason: 'expired' };
  }
  if (deps.hasher.verify(challengeId, code, claimed.codeHash)) return { ok: true, challenge: claimed };
  if (claimed.attempts >= OTP_MAX_ATTEMPTS) return { ok: false, reason: 'exhausted', justNow: true };
  return { ok: false, reason: 'wrong', attemptsLeft: OTP_MAX_ATTEMPTS - claimed.attempts };
}
