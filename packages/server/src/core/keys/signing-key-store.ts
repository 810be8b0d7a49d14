/**
 * The storage port of signing and encryption keys.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */
import type { KeyUse, SigningKeyRecord } from './signing-key.js';

/** Signing and encryption keys, private halves sealed under the master key. */
export interface SigningKeyStore {
  /** Every key, newest first (by `createdAt`, then `kid`). */
  listKeys(): Promise<SigningKeyRecord[]>;
  /**
   * Every key, as {@link listKeys}, held against concurrent changes until
   * the transaction it runs in ends: a second caller waits for the first to
   * commit and then reads what it wrote. Used by every key operation that
   * decides on what it reads (rotate, activate, revoke).
   */
  lockKeys(): Promise<SigningKeyRecord[]>;
  /**
   * Adds a key. Throws `Conflict` when the `kid` exists or when its `use`
   * has a key of that `generation` already: of two rotations (or two first
   * keys) made at the same moment, only one is stored.
   */
  insertKey(key: SigningKeyRecord): Promise<void>;
  /**
   * Retires the keys a new key of `use` and generation `belowGeneration`
   * replaces: every unrevoked key of `use` of a lower generation whose
   * `verifyUntil` is still unset gets status `retired`, `retiredAt` and
   * `verifyUntil`. Keys retired before keep their window. Returns how many
   * were retired.
   */
  retireKeys(use: KeyUse, belowGeneration: number, retiredAt: number, verifyUntil: number): Promise<number>;
  /**
   * Makes a key retired by a rotation that was then cancelled the signing
   * key again: status `active`, `retiredAt` and `verifyUntil` unset.
   * Returns `false` when there is no such unrevoked key.
   */
  restoreKey(kid: string): Promise<boolean>;
  /**
   * Brings a pending key's activation forward to `now`. Returns `false`
   * when the key is unknown, revoked or already active at `now`.
   */
  activateKey(kid: string, now: number): Promise<boolean>;
  /** Sets status `revoked`. Returns `false` when the key is unknown or revoked already. */
  revokeKey(kid: string): Promise<boolean>;
}
