import { createHash, timingSafeEqual } from 'node:crypto';

/** RFC 7636 §4.2: an S256 challenge is the base64url SHA-256 of the verifier: 43 characters. */
export const CODE_CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

/** The S256 challenge of a verifier. */
export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** RFC 7636 §4.6: whether `verifier` answers `challenge` (S256), compared in constant time. */
export function verifyCodeVerifier(verifier: string, challenge: string): boolean {
  const actual = Buffer.from(s256Challenge(verifier));
  const expected = Buffer.from(challenge);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
