import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { asSubKeys, type SubKeys } from '../keys/master-keys.js';

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
  readonly #keys: SubKeys;

  /** @param keys the `otp-hmac` sub-keys; a code is hashed under the writing one. */
  constructor(keys: SubKeys | Uint8Array) {
    this.#keys = asSubKeys(keys);
  }

  /** The stored form of `code` for `challengeId`, under the writing key. */
  hash(challengeId: string, code: string): string {
    return mac(this.#keys.writing, challengeId, code);
  }

  /**
   * The hashes `code` may be stored as: one under each accepted key, the
   * writing one first (while the master key is replaced, a challenge made
   * before the switch still verifies; docs/operator-guide.md, "Replacing the master key").
   */
  hashes(challengeId: string, code: string): string[] {
    return this.#keys.accepted.map(({ key }) => mac(key, challengeId, code));
  }

  /** Constant-time comparison of `code` with the stored hash. */
  verify(challengeId: string, code: string, stored: string): boolean {
    const expected = Buffer.from(stored, 'base64url');
    let matches = false;
    for (const hash of this.hashes(challengeId, code)) {
      const actual = Buffer.from(hash, 'base64url');
      matches = (actual.length === expected.length && timingSafeEqual(actual, expected)) || matches;
    }
    return matches;
  }
}

function mac(key: Uint8Array, challengeId: string, code: string): string {
  return createHmac('sha256', key).update(`${challengeId}:${code}`).digest('base64url');
}
