import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Environment } from '../environment.js';
import { clientIdPrefix, clientSecretPrefix } from './client.js';

/**
 * Generates a new client ID: the environment prefix and 128 random bits.
 * Client IDs are never numeric, so one can never equal a customer's `sub`
 * (RFC 9700 §4.15).
 */
export function generateClientId(environment: Environment): string {
  return clientIdPrefix(environment) + randomBytes(16).toString('base64url');
}

/**
 * Generates a new client secret: the environment prefix and 256 random bits,
 * so that a person or a secret scanner can tell sandbox from production keys.
 */
export function generateClientSecret(environment: Environment): string {
  return clientSecretPrefix(environment) + randomBytes(32).toString('base64url');
}

/**
 * Hashes and checks client secrets with HMAC-SHA-256 under a server key.
 *
 * A client secret carries 256 random bits, so a slow password hash (bcrypt,
 * scrypt) would add tens of milliseconds to every token request and no
 * security; the keyed hash keeps a stolen database useless without the key.
 */
export class ClientSecretHasher {
  readonly #key: Buffer;

  /** @param key at least 32 bytes, derived from the master key. */
  constructor(key: Uint8Array) {
    if (key.byteLength < 32) throw new RangeError('client secret key must be at least 32 bytes');
    this.#key = Buffer.from(key);
  }

  /** The stored form of `secret` (base64url HMAC-SHA-256). */
  hash(secret: string): string {
    return createHmac('sha256', this.#key).update(secret, 'utf8').digest('base64url');
  }

  /** Whether `secret` matches `storedHash`, compared in constant time. */
  verify(secret: string, storedHash: string): boolean {
    const actual = createHmac('sha256', this.#key).update(secret, 'utf8').digest();
    const expected = Buffer.from(storedHash, 'base64url');
    return expected.length === actual.length && timingSafeEqual(actual, expected);
  }
}
