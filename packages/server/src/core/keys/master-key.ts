import { hkdfSync } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';

/** Why a sub-key is derived; each purpose yields an independent key. */
export type KeyPurpose = 'key-sealing' | 'client-secret-hmac' | 'otp-hmac' | 'csrf' | 'idempotency' | 'refresh-reuse' | 'rate-limit-keys' | 'sandbox-demo' | 'known-device' | 'dpop-nonce';

/**
 * A master key's public name: 16 bytes of HKDF-SHA-256 output under its own
 * label, base64url. It tells keys apart in the database and in messages and
 * reveals nothing of the key (docs/operator-guide.md, "Replacing the master key").
 */
export function masterKeyFingerprint(masterKey: Uint8Array): string {
  if (masterKey.byteLength !== MASTER_KEY_BYTES) throw new RangeError(`master key must be ${MASTER_KEY_BYTES} bytes`);
  return Buffer.from(hkdfSync('sha256', masterKey, new Uint8Array(0), 'connect master-key-fingerprint v1', 16)).toString('base64url');
}

/** Length of the master key in bytes (docs/operator-guide.md, "Configuration": 32 random bytes). */
export const MASTER_KEY_BYTES = 32;

/**
 * Derives a 32-byte sub-key for one purpose from the master key (HKDF-SHA-256),
 * so the master key itself never keys two different algorithms.
 */
export function deriveKey(masterKey: Uint8Array, purpose: KeyPurpose): Uint8Array {
  if (masterKey.byteLength !== MASTER_KEY_BYTES) {
    throw new RangeError(`master key must be ${MASTER_KEY_BYTES} bytes`);
  }
  return new Uint8Array(hkdfSync('sha256', masterKey, new Uint8Array(0), `connect ${purpose} v1`, 32));
}

/**
 * Seals `plaintext` as a compact JWE (`dir` + `A256GCM`) under `key`, binding
 * it to `label` (stored in the authenticated header), so a sealed value cannot
 * be moved onto another record.
 */
export async function seal(key: Uint8Array, label: string, plaintext: string): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(plaintext))
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: label })
    .encrypt(key);
}

/**
 * Opens a value sealed by {@link seal}. Throws when the key is wrong, the
 * value was altered, or it was sealed for another label.
 */
export async function unseal(key: Uint8Array, label: string, sealed: string): Promise<string> {
  const { plaintext, protectedHeader } = await compactDecrypt(sealed, key, {
    keyManagementAlgorithms: ['dir'],
    contentEncryptionAlgorithms: ['A256GCM'],
  });
  if (protectedHeader.kid !== label) throw new Error(`sealed value belongs to ${String(protectedHeader.kid)}, not ${label}`);
  return new TextDecoder().decode(plaintext);
}
