import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deriveKey, seal, unseal } from '../../../src/core/keys/master-key.js';

describe('master key', () => {
  const master = randomBytes(32);

  it('derives independent keys per purpose, the same each time', () => {
    const a = deriveKey(master, 'key-sealing');
    expect(a).toHaveLength(32);
    expect(Buffer.from(a).equals(Buffer.from(deriveKey(master, 'key-sealing')))).toBe(true);
    expect(Buffer.from(a).equals(Buffer.from(deriveKey(master, 'client-secret-hmac')))).toBe(false);
    expect(() => deriveKey(randomBytes(16), 'key-sealing')).toThrow(RangeError);
  });

  it('seals and opens a value bound to its label', async () => {
    const key = deriveKey(master, 'key-sealing');
    const sealed = await seal(key, 'kid-1', 'private material');
    expect(sealed).not.toContain('private material');
    expect(sealed.split('.')).toHaveLength(5);
    await expect(unseal(key, 'kid-1', sealed)).resolves.toBe('private material');
    await expect(unseal(key, 'kid-2', sealed)).rejects.toThrow(/belongs to kid-1/);
    await expect(unseal(deriveKey(randomBytes(32), 'key-sealing'), 'kid-1', sealed)).rejects.toThrow();
    const tampered = sealed.slice(0, -4) + (sealed.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await expect(unseal(key, 'kid-1', tampered)).rejects.toThrow();
  });
});
