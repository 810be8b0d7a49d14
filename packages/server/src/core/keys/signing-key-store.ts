/**
 * The storage port of signing and encryption keys.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `storage/ports.ts`.
 */
import type { SigningKeyRecord } from './signing-key.js';

/** Signing and encryption keys, private halves sealed under the master key. */
export interface SigningKeyStore {
  /** Every key, newest first (by `createdAt`, then `kid`). */
  listKeys(): Promise<SigningKeyRecord[]>;
  /** Adds a key. Throws `Conflict` when the `kid` exists. */
  insertKey(key: SigningKeyRecord): Promise<void>;
  /**
   * Retires every active key of `use` other than `keepKid`: status becomes
   * `retired`, `retiredAt` = `now`, and `verifyUntil` = `verifyUntil` (the
   * moment the last token it signed expires). Returns how many were retired.
   */
  retireKeys(use: SigningKeyRecord['use'], keepKid: string, now: number, verifyUntil: number): Promise<number>;
}
