/** What a key is for: `sig` signs JWTs (published in the JWKS), `enc` encrypts JWEs (never published). */
export type KeyUse = 'sig' | 'enc';

/**
 * The status as stored: `active` until a rotation replaces the key,
 * `retired` from then on (it signs until its successor activates, then only
 * verifies until `verifyUntil`), `revoked` once `keys revoke` ended it.
 * What `keys list` shows is derived from it and the clock ({@link displayStatus}).
 */
export type KeyStatus = 'active' | 'retired' | 'revoked';

/**
 * A key as stored. The private half is sealed under a key derived from the
 * master key (`master-key.ts`), so a copy of the database alone is useless.
 */
export interface SigningKeyRecord {
  readonly kid: string;
  /** JOSE algorithm, e.g. `ES256` for signing keys. */
  readonly alg: string;
  readonly use: KeyUse;
  readonly status: KeyStatus;
  /** Public JWK as JSON, or `null` for symmetric keys. */
  readonly publicJwk: string | null;
  /** Private (or symmetric) JWK, sealed as a compact JWE. */
  readonly sealedPrivateJwk: string;
  readonly createdAt: number;
  /** 1, 2, 3, ... per `use`, unique with it: the newer key has the higher number. */
  readonly generation: number;
  /**
   * From this moment (epoch seconds) the key signs (or encrypts), unless a
   * key of a higher generation has activated too; before it, it is `next`:
   * published and trusted for verifying, but not used.
   */
  readonly activatesAt: number;
  /** When the successor that replaces it activates (set by the rotation). */
  readonly retiredAt: number | null;
  /** After this moment (epoch seconds) no token signed by the key is valid any more. */
  readonly verifyUntil: number | null;
}

/**
 * What `keys list` shows (docs/operator-guide.md, "Signing keys"): `next`
 * before the key activates, `active` for the one key of its use that signs
 * now, `retired` while it still verifies, `expired` after, `revoked`.
 */
export type KeyDisplayStatus = 'next' | 'active' | 'retired' | 'expired' | 'revoked';

/**
 * The key of `use` that signs (or encrypts) at `now`: of the unrevoked keys
 * that have activated, the one of the highest generation.
 */
export function currentKey<K extends SigningKeyRecord>(keys: readonly K[], use: KeyUse, now: number): K | undefined {
  let current: K | undefined;
  for (const key of keys) {
    if (key.use !== use || key.status === 'revoked' || key.activatesAt > now) continue;
    if (!current || key.generation > current.generation) current = key;
  }
  return current;
}

/** The unrevoked keys published ahead of their activation at `now` (a pending rotation). */
export function pendingKeys<K extends SigningKeyRecord>(keys: readonly K[], now: number): K[] {
  return keys.filter((key) => key.status !== 'revoked' && key.activatesAt > now);
}

/**
 * The status to show for `key` at `now`; `keys` are all keys, since which
 * one is `active` depends on the others of its use.
 */
export function displayStatus(key: SigningKeyRecord, keys: readonly SigningKeyRecord[], now: number): KeyDisplayStatus {
  if (key.status === 'revoked') return 'revoked';
  if (key.activatesAt > now) return 'next';
  if (currentKey(keys, key.use, now)?.kid === key.kid) return 'active';
  if (key.verifyUntil !== null && key.verifyUntil <= now) return 'expired';
  return 'retired';
}
