/** What a key is for: `sig` signs JWTs (published in the JWKS), `enc` encrypts JWEs (never published). */
export type KeyUse = 'sig' | 'enc';

/** `active` keys sign (the newest of its use); `retired` keys only verify until `verifyUntil`. */
export type KeyStatus = 'active' | 'retired';

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
  readonly retiredAt: number | null;
  /** After this moment (epoch seconds) no token signed by the key is valid any more. */
  readonly verifyUntil: number | null;
}

/** What `keys list` shows: `expired` once a retired key verifies nothing any more. */
export type KeyDisplayStatus = KeyStatus | 'expired';

/** The status to show for a key at `now`. */
export function displayStatus(key: SigningKeyRecord, now: number): KeyDisplayStatus {
  if (key.status === 'retired' && key.verifyUntil !== null && key.verifyUntil <= now) return 'expired';
  return key.status;
}
