import { describe, expect, it } from 'vitest';
import { hashPin, isValidPin, verifyPin } from '../../../src/core/customers/pin.js';

const FORMAT = /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/;

/** Replaces one `$`-separated part of a stored hash. */
function withPart(stored: string, index: number, value: string): string {
  const parts = stored.split('$');
  parts[index] = value;
  return parts.join('$');
}

/** Flips the first character of a base64url string to another valid one. */
function flipFirst(value: string): string {
  return (value.startsWith('A') ? 'B' : 'A') + value.slice(1);
}

describe('customer PIN hashing', () => {
  it('accepts 4 to 6 digits only', () => {
    for (const pin of ['0000', '1234', '12345', '123456']) expect(isValidPin(pin), pin).toBe(true);
    for (const pin of ['', '123', '1234567', '12a4', ' 1234', '1234 ', '١٢٣٤', '12.4', '+1234']) expect(isValidPin(pin), pin).toBe(false);
  });

  it('hashes as scrypt$N$r$p$salt$hash and never contains the PIN', async () => {
    const stored = await hashPin('482915');
    expect(stored).toMatch(FORMAT);
    expect(stored).not.toContain('482915');
  });

  it('salts every hash: two hashes of one PIN differ in salt and hash, and both verify', async () => {
    const [a, b] = await Promise.all([hashPin('4829'), hashPin('4829')]);
    expect(a).not.toBe(b);
    expect(a.split('$')[4]).not.toBe(b.split('$')[4]);
    expect(a.split('$')[5]).not.toBe(b.split('$')[5]);
    expect(await verifyPin('4829', a)).toBe(true);
    expect(await verifyPin('4829', b)).toBe(true);
  });

  it('verifies the right PIN and refuses a wrong one', async () => {
    const stored = await hashPin('0042');
    expect(await verifyPin('0042', stored)).toBe(true);
    for (const wrong of ['0043', '042', '00420', '42', '', '0042 ']) expect(await verifyPin(wrong, stored), wrong).toBe(false);
  });

  it('refuses the right PIN against a tampered or malformed hash, without throwing', async () => {
    const stored = await hashPin('7391');
    const tampered = [
      withPart(stored, 5, flipFirst(stored.split('$')[5] ?? '')),
      withPart(stored, 4, flipFirst(stored.split('$')[4] ?? '')),
      withPart(stored, 0, 'bcrypt'),
      withPart(stored, 1, '16384'),
      withPart(stored, 1, 'x'),
      withPart(stored, 1, '3'),
      withPart(stored, 2, '0'),
      withPart(stored, 5, ''),
      withPart(stored, 5, (stored.split('$')[5] ?? '').slice(0, 20)),
      stored.split('$').slice(0, 5).join('$'),
      '',
      'scrypt',
    ];
    for (const value of tampered) await expect(verifyPin('7391', value), value).resolves.toBe(false);
  });
});
