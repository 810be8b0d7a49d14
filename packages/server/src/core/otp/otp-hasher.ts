import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';

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
