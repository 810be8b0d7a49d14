import { describe, expect, it } from 'vitest';
import { generateOtp, OtpHasher } from '../../../src/core/otp/otp-hasher.js';
import { OTP_MAX_ATTEMPTS, OTP_MAX_RESENDS, OTP_RESEND_AFTER_SECONDS, OTP_TTL_SECONDS } from '../../../src/core/lifetimes.js';

/** Pearson's chi-square statistic of observed counts against a uniform expectation. */
function chiSquare(counts: readonly number[], total: number): number {
  const expected = total / counts.length;
  return counts.reduce((sum, observed) => sum + (observed - expected) ** 2 / expected, 0);
}

describe('one-time PIN policy', () => {
  it('is valid 300 s, allows 5 wrong entries, resends 30 s apart, 3 times at most', () => {
    expect(OTP_TTL_SECONDS).toBe(300);
    expect(OTP_MAX_ATTEMPTS).toBe(5);
    expect(OTP_RESEND_AFTER_SECONDS).toBe(30);
    expect(OTP_MAX_RESENDS).toBe(3);
  });
});

describe('generateOtp', () => {
  it('draws 6-digit codes uniformly over 000000-999999, leading zeros kept', () => {
    const samples = 200_000;
    const first = new Array<number>(10).fill(0);
    const last = new Array<number>(10).fill(0);
    let belowHundredThousand = 0;
    let malformed = 0;
    for (let i = 0; i < samples; i++) {
      const code = generateOtp();
      if (!/^\d{6}$/.test(code)) malformed++;
      first[Number(code[0])]! += 1;
      last[Number(code[5])]! += 1;
      if (code.startsWith('0')) belowHundredThousand++;
    }
    expect(malformed).toBe(0);
    // 9 degrees of freedom: 50 is far beyond p = 1e-6, so this only fails on a real bias.
    expect(chiSquare(first, samples)).toBeLessThan(50);
    expect(chiSquare(last, samples)).toBeLessThan(50);
    // Codes under 100000 keep their leading zeros: about a tenth of all codes.
    expect(belowHundredThousand / samples).toBeGreaterThan(0.09);
    expect(belowHundredThousand / samples).toBeLessThan(0.11);
  });

  it('does not repeat itself', () => {
    const codes = new Set(Array.from({ length: 1000 }, generateOtp));
    // 1000 draws from a million values: a few collisions at most.
    expect(codes.size).toBeGreaterThan(990);
  });
});

describe('OtpHasher', () => {
  const hasher = new OtpHasher(new Uint8Array(32).fill(7));

  it('stores a keyed hash that does not contain the code', () => {
    const stored = hasher.hash('challenge-1', '012345');
    expect(stored).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(stored).not.toContain('012345');
    expect(hasher.verify('challenge-1', '012345', stored)).toBe(true);
  });

  it('refuses another code, another challenge and another key', () => {
    const stored = hasher.hash('challenge-1', '012345');
    expect(hasher.verify('challenge-1', '012346', stored)).toBe(false);
    expect(hasher.verify('challenge-1', '12345', stored)).toBe(false);
    expect(hasher.verify('challenge-2', '012345', stored)).toBe(false);
    expect(new OtpHasher(new Uint8Array(32).fill(8)).verify('challenge-1', '012345', stored)).toBe(false);
  });

  it('refuses a damaged stored value', () => {
    const stored = hasher.hash('challenge-1', '012345');
    expect(hasher.verify('challenge-1', '012345', stored.slice(0, -2))).toBe(false);
    expect(hasher.verify('challenge-1', '012345', '')).toBe(false);
  });
});
