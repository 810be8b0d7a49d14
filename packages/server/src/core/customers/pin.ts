import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** A customer's PIN: 4 to 6 digits. */
export const PIN_PATTERN = /^\d{4,6}$/;

/** Whether `value` has the shape of a PIN. */
export function isValidPin(value: string): boolean {
  return PIN_PATTERN.test(value);
}

// scrypt cost: N=2^15, r=8, p=1 (about 100 ms, 32 MiB) — a PIN is short, so the hash must be slow.
const PARAMS = { N: 32_768, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function scryptAsync(secret: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 128 * params.N * params.r * 2 };
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/**
 * Hashes a PIN with scrypt and a fresh 16-byte salt. Runs on the thread
 * pool, so it does not block other requests. Format:
 * `scrypt$N$r$p$salt$hash` (base64url).
 */
export async function hashPin(pin: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(pin, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Whether `pin` matches `stored` (from {@link hashPin}), compared in constant time. */
export async function verifyPin(pin: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  let actual: Buffer;
  try {
    actual = await scryptAsync(pin, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  } catch {
    // Parameters scrypt refuses (a damaged stored value) match no PIN.
    return false;
  }
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
