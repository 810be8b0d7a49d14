import { describe, expect, it } from 'vitest';
import { ClientSecretHasher, generateClientId, generateClientSecret } from '../../../src/core/clients/client-secret.js';

describe('client credentials', () => {
  it('generates IDs and secrets that carry the environment and enough randomness', () => {
    const id = generateClientId('sandbox');
    const secret = generateClientSecret('production');
    expect(id).toMatch(/^cid_sandbox_[A-Za-z0-9_-]{22}$/);
    expect(secret).toMatch(/^csk_production_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret.slice('csk_production_'.length), 'base64url')).toHaveLength(32);
    expect(new Set(Array.from({ length: 100 }, () => generateClientSecret('sandbox'))).size).toBe(100);
    expect(Number.isNaN(Number(id))).toBe(true);
  });

  it('hashes with a key: same secret, other key, other hash', () => {
    const a = new ClientSecretHasher(new Uint8Array(32).fill(1));
    const b = new ClientSecretHasher(new Uint8Array(32).fill(2));
    expect(a.hash('s')).not.toBe(b.hash('s'));
    expect(a.hash('s')).toBe(a.hash('s'));
    expect(a.hash('s')).not.toContain('s'.repeat(2));
  });

  it('verifies the right secret only', () => {
    const hasher = new ClientSecretHasher(new Uint8Array(32).fill(1));
    const stored = hasher.hash('csk_sandbox_secret');
    expect(hasher.verify('csk_sandbox_secret', stored)).toBe(true);
    expect(hasher.verify('csk_sandbox_secreT', stored)).toBe(false);
    expect(hasher.verify('', stored)).toBe(false);
    expect(hasher.verify('csk_sandbox_secret', 'short')).toBe(false);
  });

  it('refuses a short key', () => {
    expect(() => new ClientSecretHasher(new Uint8Array(16))).toThrow(RangeError);
  });
});
