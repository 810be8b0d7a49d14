import type { Clock } from '../clock.js';
import type { OtpChallengeStore } from './otp-challenge-store.js';
import { OTP_MAX_ATTEMPTS, type OtpHasher } from './one-time-pin.js';
import type { OtpChallengeRecord } from './records.js';

/** What checking a one-time PIN needs. */
export interface VerifyPinDeps {
  readonly challenges: Pick<OtpChallengeStore, 'findOtpChallenge' | 'recordOtpFailure' | 'consumeOtpChallenge'>;
  readonly hasher: OtpHasher;
  readonly clock: Clock;
}

/** The outcome of entering a one-time PIN. */
export type VerifyPinResult =
  | { readonly ok: true; readonly challenge: OtpChallengeRecord }
  | { readonly ok: false; readonly reason: 'wrong'; readonly attemptsLeft: number }
  /** `justNow`: this entry was the one that used up the attempts. */
  | { readonly ok: false; readonly reason: 'exhausted'; readonly justNow: boolean }
  | { readonly ok: false; readonly reason: 'malformed' | 'expired' | 'used' | 'gone' };

/**
 * Checks a one-time PIN. Valid for 5 minutes, single use; the 5th wrong
 * entry ends the challenge, after which even the right code fails. The
 * challenge is consumed with one conditional update, so two concurrent
 * right answers succeed once.
 */
export async function verifyPin(challengeId: string, code: string, deps: VerifyPinDeps): Promise<VerifyPinResult> {
  const now = deps.clock.nowSeconds();
  const challenge = await deps.challenges.findOtpChallenge(challengeId);
  if (!challenge) return { ok: false, reason: 'gone' };
  if (challenge.consumedAt !== null) return { ok: false, reason: 'used' };
  if (challenge.attempts >= OTP_MAX_ATTEMPTS) return { ok: false, reason: 'exhausted', justNow: false };
  if (challenge.expiresAt <= now) return { ok: false, reason: 'expired' };
  // Not 6 digits cannot be the code: say so without spending an attempt.
  if (!/^\d{6}$/.test(code)) return { ok: false, reason: 'malformed' };
  if (!deps.hasher.verify(challengeId, code, challenge.codeHash)) {
    const attempts = await deps.challenges.recordOtpFailure(challengeId);
    if (attempts >= OTP_MAX_ATTEMPTS) return { ok: false, reason: 'exhausted', justNow: attempts === OTP_MAX_ATTEMPTS };
    return { ok: false, reason: 'wrong', attemptsLeft: OTP_MAX_ATTEMPTS - attempts };
  }
  if (!(await deps.challenges.consumeOtpChallenge(challengeId, now, OTP_MAX_ATTEMPTS))) {
    const latest = await deps.challenges.findOtpChallenge(challengeId);
    return latest && latest.attempts >= OTP_MAX_ATTEMPTS ? { ok: false, reason: 'exhausted', justNow: false } : { ok: false, reason: 'used' };
  }
  return { ok: true, challenge };
}
