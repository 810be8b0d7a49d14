import { describe, expect, it } from 'vitest';
import { CODE_CHALLENGE_PATTERN, CODE_VERIFIER_PATTERN, s256Challenge, verifyCodeVerifier } from '../../../src/core/authorize/pkce.js';

// RFC 7636 Appendix B: the verifier is the base64url form of these 32 octets.
const OCTETS = [
  116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
];
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE S256', () => {
  it('computes the challenge of RFC 7636 Appendix B', () => {
    expect(Buffer.from(OCTETS).toString('base64url')).toBe(VERIFIER);
    expect(s256Challenge(VERIFIER)).toBe(CHALLENGE);
  });

  it('accepts the Appendix B verifier for its challenge', () => {
    expect(verifyCodeVerifier(VERIFIER, CHALLENGE)).toBe(true);
  });

  it('refuses another verifier, the challenge itself (plain), and a damaged challenge', () => {
    expect(verifyCodeVerifier(`${VERIFIER.slice(0, -1)}F`, CHALLENGE)).toBe(false);
    expect(verifyCodeVerifier(CHALLENGE, CHALLENGE)).toBe(false);
    expect(verifyCodeVerifier(VERIFIER, VERIFIER)).toBe(false);
    expect(verifyCodeVerifier(VERIFIER, CHALLENGE.slice(0, -1))).toBe(false);
    expect(verifyCodeVerifier(VERIFIER, '')).toBe(false);
  });

  it('accepts verifiers of 43 to 128 unreserved characters only (RFC 7636 §4.1)', () => {
    expect(CODE_VERIFIER_PATTERN.test(VERIFIER)).toBe(true);
    expect(CODE_VERIFIER_PATTERN.test('a'.repeat(43))).toBe(true);
    expect(CODE_VERIFIER_PATTERN.test(`${'a'.repeat(124)}-._~`)).toBe(true);
    expect(CODE_VERIFIER_PATTERN.test('a'.repeat(42))).toBe(false);
    expect(CODE_VERIFIER_PATTERN.test('a'.repeat(129))).toBe(false);
    expect(CODE_VERIFIER_PATTERN.test(`${'a'.repeat(42)}+`)).toBe(false);
    expect(CODE_VERIFIER_PATTERN.test(`${'a'.repeat(42)}/`)).toBe(false);
    expect(CODE_VERIFIER_PATTERN.test(`${'a'.repeat(42)}=`)).toBe(false);
  });

  it('accepts S256 challenges of exactly 43 base64url characters', () => {
    expect(CODE_CHALLENGE_PATTERN.test(CHALLENGE)).toBe(true);
    expect(CODE_CHALLENGE_PATTERN.test(CHALLENGE.slice(0, 42))).toBe(false);
    expect(CODE_CHALLENGE_PATTERN.test(`${CHALLENGE}A`)).toBe(false);
    expect(CODE_CHALLENGE_PATTERN.test(`${CHALLENGE.slice(0, 42)}=`)).toBe(false);
    expect(CODE_CHALLENGE_PATTERN.test(`${CHALLENGE.slice(0, 42)}+`)).toBe(false);
  });
});
