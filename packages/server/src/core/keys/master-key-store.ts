/**
 * The storage port of the master keys a database knows (docs/operator-guide.md,
 * "Replacing the master key"), and of the sealed values a rotation re-seals.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */

/**
 * Where a master key stands:
 * - `writing`: the one key new values are sealed and hashed under (exactly one);
 * - `next`: configured on some instance as `CONNECT_MASTER_KEY` beside the writing one, not yet rotated to;
 * - `previous`: the key a rotation replaced, still accepted until retired;
 * - `retired`: no longer accepted anywhere.
 */
export type MasterKeyState = 'writing' | 'next' | 'previous' | 'retired';

/** A master key the database knows, by fingerprint (never the key itself). */
export interface MasterKeyRecord {
  readonly fingerprint: string;
  readonly state: MasterKeyState;
  readonly recordedAt: number;
  readonly changedAt: number;
  /**
   * Sub-keys carried over from the key before, sealed under this key's
   * `key-sealing` sub-key (`core/keys/master-keys.ts`, `carriedKeys`);
   * `null` for a key that carries none (the database's first).
   */
  readonly sealedCarried: string | null;
}

/** The kinds of stored values sealed under a sub-key of the master key. */
export type SealedKind = 'signing-key' | 'idempotent-response' | 'refresh-reuse';

/** One sealed stored value: its record's key (one or two columns) and the sealed text. */
export interface SealedValue {
  readonly key: readonly string[];
  readonly sealed: string;
}

/** The master keys and the sealed values a rotation goes through. */
export interface MasterKeyStore {
  /** Every master key the database knows, in the order recorded. */
  listMasterKeys(): Promise<MasterKeyRecord[]>;
  /**
   * Records `fingerprint` in `state` unless the database knows it already
   * (one atomic insert: of two first openers, one wins); when the database
   * knows no key at all and `state` is `writing`, it is the first.
   */
  recordMasterKey(fingerprint: string, state: 'writing' | 'next', now: number): Promise<void>;
  /**
   * Makes `to` the writing key in one transaction, only while `from` is the
   * writing one and no key of an earlier rotation is still `previous` (it
   * must be retired first): `from` becomes `previous`. Returns whether it
   * switched (`false`: `from` no longer writes, or an earlier key is still
   * accepted).
   */
  switchWritingMasterKey(from: string, to: string, sealedCarried: string, now: number): Promise<boolean>;
  /**
   * Marks a `previous` key `retired`; returns whether it did. With
   * `unlessClientsNotUnder`, only while no client's secret is hashed under
   * a key other than that one (as {@link listClientsWithSecretsNotUnder}
   * says), checked in the same atomic step.
   */
  retireMasterKey(
    fingerprint: string,
    now: number,
    unlessClientsNotUnder?: { readonly fingerprint: string; readonly firstFingerprint: string },
  ): Promise<boolean>;
  /** Up to `limit` sealed values of `kind` whose key sorts after `after`, in key order. */
  listSealedValues(kind: SealedKind, after: readonly string[] | undefined, limit: number): Promise<SealedValue[]>;
  /** Replaces one sealed value only while it still is `expected`; returns whether it did. */
  replaceSealedValue(kind: SealedKind, key: readonly string[], expected: string, replacement: string): Promise<boolean>;
  /**
   * The clients with a secret (current, or previous within its grace at
   * `now`) hashed under a master key other than `fingerprint`; a hash that
   * names no key was made under `firstFingerprint`, the database's first.
   */
  listClientsWithSecretsNotUnder(fingerprint: string, now: number, firstFingerprint: string): Promise<{ id: string; name: string }[]>;
}
