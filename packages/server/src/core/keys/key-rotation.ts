/**
 * The operator's key actions: rotate, activate at once, revoke
 * (docs/operator-guide.md, "Signing keys"). Each reads and changes the keys
 * in one transaction that holds them, so two commands at the same moment
 * never both act on what they read.
 */
import { isoSeconds, type Clock } from '../clock.js';
import { KEY_RETIREMENT_MARGIN_SECONDS } from '../lifetimes.js';
import { Conflict } from '../storage-errors.js';
import { generateEncryptionKey, generateSigningKey } from './key-ring.js';
import type { SigningKeyStore } from './signing-key-store.js';
import type { SubKeys } from './master-keys.js';
import { currentKey, displayStatus, pendingKeys, type KeyUse, type SigningKeyRecord } from './signing-key.js';

/** A key action refused; `message` is one line for the operator, and nothing was changed. */
export class KeyOperationRefused extends Error {
  override readonly name = 'KeyOperationRefused';
}

/** What the key actions need: the database, the sealing key, the clock. */
export interface KeyActionDeps<Tx extends { readonly keys: SigningKeyStore }> {
  readonly storage: { transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> };
  readonly sealKey: SubKeys | Uint8Array;
  readonly clock: Clock;
}

/** The windows a rotation needs. */
export interface RotationPolicy {
  /** The longest lifetime of any token the keys sign or encrypt. */
  readonly maxTokenTtlSeconds: number;
  /** How long after the rotation the new keys activate (`keyPublicationDelaySeconds`). */
  readonly publicationDelaySeconds: number;
}

/** What a rotation or an activation did. */
export interface RotationResult {
  /** The new signing key and encryption key, as stored now. */
  readonly keys: readonly SigningKeyRecord[];
  /** When they sign (and encrypt) from. */
  readonly activatesAt: number;
  /** `false` when `--now` activated keys a rotation had made before. */
  readonly created: boolean;
}

/**
 * `keys rotate`: a new signing key and a new encryption key, of the next
 * generation, published at once and activating
 * `policy.publicationDelaySeconds` from now (at once when no key exists
 * yet). The keys they replace sign until then and verify until the last
 * token they can have signed has expired, plus a margin.
 *
 * @throws KeyOperationRefused while an earlier rotation is pending, or when
 *   another rotation was made at the same moment (the unique generation).
 */
export function rotateKeys<Tx extends { readonly keys: SigningKeyStore }>(
  deps: KeyActionDeps<Tx>,
  policy: RotationPolicy,
  alsoInTransaction?: (tx: Tx, result: RotationResult) => Promise<void>,
): Promise<RotationResult> {
  return lockedRotation(deps, alsoInTransaction, async ({ tx, keys, pending, fresh, now }) => {
    if (pending.length > 0) throw pendingRotation(pending, now);
    const replacing = currentKey(keys, 'sig', now) ?? currentKey(keys, 'enc', now);
    const activatesAt = replacing ? now + policy.publicationDelaySeconds : now;
    return { keys: await addKeys(tx.keys, keys, fresh, activatesAt, policy), activatesAt, created: true };
  });
}

/**
 * `keys rotate --now` (an emergency): activates the pending keys of a
 * rotation at once, or, when none is pending, makes new keys that sign at
 * once. Verifiers holding a JWKS copy from before may not know a new key
 * until their copy expires.
 */
export function activateKeysNow<Tx extends { readonly keys: SigningKeyStore }>(
  deps: KeyActionDeps<Tx>,
  policy: RotationPolicy,
  alsoInTransaction?: (tx: Tx, result: RotationResult) => Promise<void>,
): Promise<RotationResult> {
  return lockedRotation(deps, alsoInTransaction, async ({ tx, keys, pending, fresh, now }) => {
    if (pending.length === 0) return { keys: await addKeys(tx.keys, keys, fresh, now, policy), activatesAt: now, created: true };
    // The keys they replace keep the longer window the rotation gave them.
    for (const key of pending) await tx.keys.activateKey(key.kid, now);
    const activated = pending.map((key) => ({ ...key, activatesAt: now })).sort((a, b) => (a.use === b.use ? 0 : a.use === 'sig' ? -1 : 1));
    return { keys: activated, activatesAt: now, created: false };
  });
}

/**
 * The frame of `rotateKeys` and `activateKeysNow`: fresh keys made before
 * the transaction (key generation is slow), then, in one transaction that
 * holds the keys, `decide` on what is stored and `alsoInTransaction`; a
 * rotation made elsewhere at the same moment is refused.
 */
async function lockedRotation<Tx extends { readonly keys: SigningKeyStore }>(
  deps: KeyActionDeps<Tx>,
  alsoInTransaction: ((tx: Tx, result: RotationResult) => Promise<void>) | undefined,
  decide: (held: {
    tx: Tx;
    keys: SigningKeyRecord[];
    pending: SigningKeyRecord[];
    fresh: SigningKeyRecord[];
    now: number;
  }) => Promise<RotationResult>,
): Promise<RotationResult> {
  const now = deps.clock.nowSeconds();
  const fresh = await freshKeys(deps.sealKey, now);
  return refuseConcurrentRotation(() =>
    deps.storage.transaction(async (tx) => {
      const keys = await tx.keys.lockKeys();
      const result = await decide({ tx, keys, pending: pendingKeys(keys, now), fresh, now });
      await alsoInTransaction?.(tx, result);
      return result;
    }),
  );
}

/** What `keys revoke` did. */
export interface RevocationResult {
  /** The keys revoked now: the one named, and with a pending key the other key of its rotation. */
  readonly revoked: readonly SigningKeyRecord[];
  /** The key named was `next`: its rotation is cancelled and the current keys go on signing. */
  readonly cancelledRotation: boolean;
  /** The key was revoked before: nothing changed. */
  readonly alreadyRevoked: boolean;
}

/**
 * `keys revoke KID`: the key leaves the JWKS and no token it signed or
 * encrypted is accepted any more. Revoking a `next` key cancels its
 * rotation: both pending keys are revoked and the keys they would have
 * replaced sign on as before. Revoking a revoked key changes nothing.
 *
 * @throws KeyOperationRefused for an unknown `kid`, or for the key that
 *   signs (or encrypts) now: another must take its place first (`--now`).
 */
export async function revokeKey<Tx extends { readonly keys: SigningKeyStore }>(
  deps: KeyActionDeps<Tx>,
  kid: string,
  alsoInTransaction?: (tx: Tx, result: RevocationResult) => Promise<void>,
): Promise<RevocationResult> {
  const now = deps.clock.nowSeconds();
  return deps.storage.transaction(async (tx) => {
    const keys = await tx.keys.lockKeys();
    const key = keys.find((k) => k.kid === kid);
    if (!key) throw new KeyOperationRefused(`no key has kid ${JSON.stringify(kid)}; keys list shows every key`);
    if (key.status === 'revoked') return { revoked: [], cancelledRotation: false, alreadyRevoked: true };
    const status = displayStatus(key, keys, now);
    if (status === 'active') {
      const role = key.use === 'sig' ? 'signing' : 'encryption';
      throw new KeyOperationRefused(`key ${kid} is the current ${role} key; run keys rotate --now first, then revoke it`);
    }
    let result: RevocationResult;
    if (status === 'next') {
      const pending = pendingKeys(keys, now);
      for (const k of pending) await tx.keys.revokeKey(k.kid);
      for (const use of ['sig', 'enc'] as const) {
        const current = currentKey(keys, use, now);
        if (current && current.verifyUntil !== null) await tx.keys.restoreKey(current.kid);
      }
      // The named key first.
      const revoked = [key, ...pending.filter((k) => k.kid !== kid)];
      result = { revoked: revoked.map((k) => ({ ...k, status: 'revoked' })), cancelledRotation: true, alreadyRevoked: false };
    } else {
      await tx.keys.revokeKey(kid);
      result = { revoked: [{ ...key, status: 'revoked' }], cancelledRotation: false, alreadyRevoked: false };
    }
    await alsoInTransaction?.(tx, result);
    return result;
  });
}

/** A new key pair; its generation and activation are set once the existing keys are read. */
async function freshKeys(sealKey: SubKeys | Uint8Array, now: number): Promise<SigningKeyRecord[]> {
  const place = { now, generation: 0, activatesAt: now };
  return [await generateSigningKey(sealKey, place), await generateEncryptionKey(sealKey, place)];
}

async function addKeys(
  store: SigningKeyStore,
  existing: readonly SigningKeyRecord[],
  fresh: readonly SigningKeyRecord[],
  activatesAt: number,
  policy: RotationPolicy,
): Promise<SigningKeyRecord[]> {
  // A replaced key signs until `activatesAt`; its last token expires at most the longest lifetime later.
  const verifyUntil = activatesAt + policy.maxTokenTtlSeconds + KEY_RETIREMENT_MARGIN_SECONDS;
  const added: SigningKeyRecord[] = [];
  for (const key of fresh) {
    const generation = nextGeneration(existing, key.use);
    const record = { ...key, generation, activatesAt };
    await store.insertKey(record);
    await store.retireKeys(key.use, generation, activatesAt, verifyUntil);
    added.push(record);
  }
  return added;
}

function nextGeneration(keys: readonly SigningKeyRecord[], use: KeyUse): number {
  return keys.reduce((max, k) => (k.use === use ? Math.max(max, k.generation) : max), 0) + 1;
}

function pendingRotation(pending: readonly SigningKeyRecord[], now: number): KeyOperationRefused {
  const key = pending.find((k) => k.use === 'sig') ?? (pending[0] as SigningKeyRecord);
  return new KeyOperationRefused(
    `a rotation is pending: key ${key.kid} becomes the ${key.use === 'sig' ? 'signing' : 'encryption'} key at ${isoSeconds(key.activatesAt)} ` +
      `(in ${key.activatesAt - now} s); run keys rotate --now to activate it at once`,
  );
}

/** Of two rotations at the same moment, the second one's generation is taken: say so plainly. */
async function refuseConcurrentRotation<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof Conflict) {
      throw new KeyOperationRefused('another key rotation was made at the same moment; nothing was changed (see keys list)', { cause: error });
    }
    throw error;
  }
}
