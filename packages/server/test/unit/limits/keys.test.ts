import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashLimitKey } from '../../../src/limits/create-limits.js';

describe('the keys of rate-limit counters', () => {
  it('hold an HMAC of the value under the server key, or its SHA-256 without one', () => {
    const secret = Buffer.alloc(32, 7);
    expect(hashLimitKey('+639171234567', secret)).toBe(createHmac('sha256', secret).update('+639171234567').digest('base64url'));
    expect(hashLimitKey('+639171234567')).toBe(createHash('sha256').update('+639171234567').digest('base64url'));
    expect(hashLimitKey('+639171234567', secret)).not.toBe(hashLimitKey('+639171234567'));
  });
});
