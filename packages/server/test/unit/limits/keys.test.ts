import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addressBucket, hashLimitKey } from '../../../src/limits/create-limits.js';

describe('the keys of rate-limit counters', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:85a3:8d3:1319:8a2e:370:7348', '2001:db8:85a3:8d3::/64'],
    ['2001:db8:85a3:8d3::1', '2001:db8:85a3:8d3::/64'],
    ['2001:0db8:0000:0000:ffff::', '2001:db8:0:0::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1:2:3:4', 'fe80:0:0:0::/64'],
    ['not an address', 'not an address'],
  ])('count the address %s as %s', (address, bucket) => {
    expect(addressBucket(address)).toBe(bucket);
  });

  it('put every address of one /64 in one bucket, and neighbouring /64s in others', () => {
    const buckets = new Set(['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:DB8:1:2:0:0:0:9'].map(addressBucket));
    expect(buckets.size).toBe(1);
    expect(addressBucket('2001:db8:1:3::1')).not.toBe(addressBucket('2001:db8:1:2::1'));
  });

  it('hold an HMAC of the value under the server key, or its SHA-256 without one', () => {
    const secret = Buffer.alloc(32, 7);
    expect(hashLimitKey('+639171234567', secret)).toBe(createHmac('sha256', secret).update('+639171234567').digest('base64url'));
    expect(hashLimitKey('+639171234567')).toBe(createHash('sha256').update('+639171234567').digest('base64url'));
    expect(hashLimitKey('+639171234567', secret)).not.toBe(hashLimitKey('+639171234567'));
  });
});
