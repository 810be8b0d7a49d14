import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Environment } from '../environment.js';
import { asSubKeys, type SubKeys } from '../keys/master-keys.js';
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
 *
 * The stored form names the master key whose sub-key made it,
 * `<fingerprint>:<HMAC>`, so that while the master key is replaced
 * (docs/operator-guide.md, "Replacing the master key") a hash is checked
 * under its own key, and the secrets still hashed under the old key can be
 * counted; except under the database's first master key, whose hashes are
 * the bare HMAC, as the releases before master-key replacement stored and
 * read them (so that they run beside this one: docs/upgrades.md).
 */
export class ClientSecretHasher {
  readonly #keys: SubKeys;

  /** @param keys the `client-secret-hmac` sub-keys (each 32 bytes). */
  constructor(keys: SubKeys | Uint8Array) {
    this.#keys = asSubKeys(keys);
    if (this.#keys.writing.byteLength < 32) throw new RangeError('client secret key must be at least 32 bytes');
  }

  /** The stored form of `secret`: the writing master key's fingerprint (none for the first key) and the base64url HMAC-SHA-256. */
  hash(secret: string): string {
    const hmac = mac(this.#keys.writing, secret).toString('base64url');
    return this.#keys.writingFingerprint === this.#keys.firstFingerprint ? hmac : `${this.#keys.writingFingerprint}:${hmac}`;
  }

  /** Whether `storedHash` was made under the master key that writes now (else it is re-hashed at its next use). */
  isCurrent(storedHash: string): boolean {
    const colon = storedHash.indexOf(':');
    const fingerprint = colon < 0 ? this.#keys.firstFingerprint : storedHash.slice(0, colon);
    return fingerprint === this.#keys.writingFingerprint;
  }

  /** Whether `secret` matches `storedHash`, compared in constant time, under an accepted key. */
  verify(secret: string, storedHash: string): boolean {
    const colon = storedHash.indexOf(':');
    const fingerprint = colon < 0 ? this.#keys.firstFingerprint : storedHash.slice(0, colon);
    const expected = Buffer.from(colon < 0 ? storedHash : storedHash.slice(colon + 1), 'base64url');
    let matches = false;
    // One HMAC per accepted key whatever the hash names, so that the time taken tells nothing of it.
    for (const { key, fingerprint: keyFingerprint } of this.#keys.accepted) {
      const actual = mac(key, secret);
      const same = expected.length === actual.length && timingSafeEqual(actual, expected);
      matches = (same && fingerprint === keyFingerprint) || matches;
    }
    return matches;
  }
}

function mac(key: Uint8Array, secret: string): Buffer {
  return createHmac('sha256', key).update(secret, 'utf8').digest();
}
