import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';

/** The one-time PIN is valid this long after it was sent (CONTRACT.md §6: 5 minutes). */
export const OTP_TTL_SECONDS = 300;
/** Wrong entries that end a challenge; after that even the right code fails. */
export const OTP_MAX_ATTEMPTS = 5;
/** A new code may be sent no sooner than this after the last one. */
export const OTP_RESEND_AFTER_SECONDS = 30;
/** Resends one challenge allows. */
export const OTP_MAX_RESENDS = 3;

/** A fresh 6-digit code from the CSPRNG, uniformly distributed. */
export function generateOtp(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

/**
 * Hashes and checks one-time PINs: HMAC-SHA-256 under a server key, bound to
 * the challenge, so the stored value is useless without the key and cannot
 * be moved to another challenge.
 */
export class OtpHasher {
  readonly #key: Buffer;

  constructor(key: Uint8Array) {
    this.#key = Buffer.from(key);
  }

  hash(challengeId: string, code: string): string {
    return createHmac('sha256', this.#key).update(`${challengeId}:${code}`).digest('base64url');
  }

  /** Constant-time comparison of `code` with the stored hash. */
  verify(challengeId: string, code: string, stored: string): boolean {
    const actual = Buffer.from(this.hash(challengeId, code), 'base64url');
    const expected = Buffer.from(stored, 'base64url');
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }
}
