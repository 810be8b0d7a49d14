import type { Clock } from '../clock.js';
import { OTP_MAX_ATTEMPTS } from '../lifetimes.js';
import type { OtpHasher } from './otp-hasher.js';
import type { OtpChallengeStore } from './otp-challenge-store.js';

/** What checking a one-time PIN needs. */
export interface VerifyOtpDeps {
  readonly challenges: Pick<OtpChallengeStore, 'findOtpChallenge'>;
  readonly hasher: OtpHasher;
  readonly clock: Clock;
}

/** An entry as the store made it: none (nothing counted), counted and wrong, or counted and right. */
export type MadeEntry<R> =
  | { readonly kind: 'not_counted' }
  | { readonly kind: 'wrong'; readonly attempts: number }
  /** `done`: what the right entry completed with it. */
  | { readonly kind: 'right'; readonly done: R };

/**
 * Makes one entry in one atomic step (`SignInStore.enterOtp`): counts it,
 * only while the challenge is unanswered, unexpired at `now` and has had
 * fewer than 5 entries, and compares `codeHashes` with the stored hash; a
 * right entry uses the challenge up with whatever it completes, or, when
 * that cannot complete, says why.
 */
export type MakeEntry<R> = (codeHashes: readonly string[], now: number) => Promise<MadeEntry<R>>;

/** The outcome of entering a one-time PIN. */
export type VerifyOtpResult<R> =
  /** The code matched; `done` is what the entry completed. */
  | { readonly ok: true; readonly done: R }
  | { readonly ok: false; readonly reason: 'wrong'; readonly attemptsLeft: number }
  /** `justNow`: this entry was the one that used up the attempts. */
  | { readonly ok: false; readonly reason: 'exhausted'; readonly justNow: boolean }
  | { readonly ok: false; readonly reason: 'malformed' | 'expired' | 'used' | 'gone' };

/**
 * Checks a one-time PIN entry (docs/journey.md, "The one-time PIN"). Valid
 * 5 minutes, single use; 5 entries at most, the 5th wrong one ends the
 * challenge, after which even the right code fails. Each entry is counted
 * in the statement that compares it, so 5 entries are the most ever
 * compared, however many arrive at once. Only the code's keyed hash
 * (`OtpHasher`) reaches the database, where it is compared with the stored
 * one: a timing difference there tells nothing without the key.
 */
export async function verifyOtp<R>(challengeId: string, code: string, make: MakeEntry<R>, deps: VerifyOtpDeps): Promise<VerifyOtpResult<R>> {
  // Not 6 digits cannot be the code: say so without spending an entry.
  if (!/^\d{6}$/.test(code)) return { ok: false, reason: 'malformed' };
  const made = await make(deps.hasher.hashes(challengeId, code), deps.clock.nowSeconds());
  switch (made.kind) {
    case 'right':
      return { ok: true, done: made.done };
    case 'wrong':
      if (made.attempts >= OTP_MAX_ATTEMPTS) return { ok: false, reason: 'exhausted', justNow: true };
      return { ok: false, reason: 'wrong', attemptsLeft: OTP_MAX_ATTEMPTS - made.attempts };
    case 'not_counted': {
      // Why no entry could be made: read once, on this rare path only.
      const challenge = await deps.challenges.findOtpChallenge(challengeId);
      if (!challenge) return { ok: false, reason: 'gone' };
      if (challenge.consumedAt !== null) return { ok: false, reason: 'used' };
      if (challenge.attempts >= OTP_MAX_ATTEMPTS) return { ok: false, reason: 'exhausted', justNow: false };
      return { ok: false, reason: 'expired' };
    }
  }
}
