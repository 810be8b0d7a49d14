import { randomBytes } from 'node:crypto';
import { base64url, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { ChangeFeed } from '../changes/change-feed.js';
import { monotonicMs, type Clock } from '../clock.js';
import { Conflict } from '../storage-errors.js';
import type { SigningKeyStore } from './signing-key-store.js';
import { seal } from './master-key.js';
import { asSubKeys, unsealAccepted, type SubKeys } from './master-keys.js';
import { currentKey, type KeyUse, type SigningKeyRecord } from './signing-key.js';

/** The one signature algorithm Connect issues (docs/tokens.md). */
export const SIGNING_ALG = 'ES256';

/** The JWE algorithms of customer access tokens: a shared 256-bit key, AES-GCM (see docs/tokens.md). */
export const ENCRYPTION_ALG = 'dir';
export const ENCRYPTION_ENC = 'A256GCM';

/** A private key ready to sign, with its `kid`. */
export interface ActiveSigningKey {
  readonly kid: string;
  readonly alg: typeof SIGNING_ALG;
  readonly key: CryptoKey;
}

/** A symmetric key ready to encrypt customer access tokens, with its `kid`. */
export interface ActiveEncryptionKey {
  readonly kid: string;
  /** AES-256-GCM, imported once (not per token). */
  readonly key: CryptoKey;
}

/** What a key ring and key rotation need. */
export interface KeyRingDeps {
  readonly keys: SigningKeyStore;
  /** The key-sealing sub-keys derived from the master keys: new keys are sealed under the writing one. */
  readonly sealKey: SubKeys | Uint8Array;
  readonly clock: Clock;
  /**
   * The change signal the ring's owner reloads it on; while it is not
   * current (changes may go unheard), verifying and decrypting read the keys
   * again, at most once a second, so a revocation is never missed for long.
   */
  readonly changes?: Pick<ChangeFeed, 'isCurrent'>;
}

/** Where a new key stands in its use's lifecycle. */
export interface NewKeyPlace {
  readonly now: number;
  /** One more than the highest generation of its use. */
  readonly generation: number;
  /** When it starts signing (or encrypting); `now` for a key that replaces none. */
  readonly activatesAt: number;
}

/**
 * Generates a new ES256 signing key, `kid` = its RFC 7638 thumbprint, with the
 * private half sealed under `sealKey`.
 */
export async function generateSigningKey(sealKey: SubKeys | Uint8Array, place: NewKeyPlace): Promise<SigningKeyRecord> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(privateKey);
  return {
    kid,
    alg: SIGNING_ALG,
    use: 'sig',
    status: 'active',
    publicJwk: JSON.stringify({ ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' }),
    sealedPrivateJwk: await seal(asSubKeys(sealKey).writing, kid, JSON.stringify(privateJwk)),
    createdAt: place.now,
    generation: place.generation,
    activatesAt: place.activatesAt,
    retiredAt: null,
    verifyUntil: null,
  };
}

/**
 * Generates a new 256-bit content-encryption key for customer access tokens
 * (`dir` + `A256GCM`), sealed under `sealKey`. It is never published.
 */
export async function generateEncryptionKey(sealKey: SubKeys | Uint8Array, place: NewKeyPlace): Promise<SigningKeyRecord> {
  const kid = randomBytes(16).toString('base64url');
  const jwk = { kty: 'oct', k: randomBytes(32).toString('base64url') };
  return {
    kid,
    alg: ENCRYPTION_ENC,
    use: 'enc',
    status: 'active',
    publicJwk: null,
    sealedPrivateJwk: await seal(asSubKeys(sealKey).writing, kid, JSON.stringify(jwk)),
    createdAt: place.now,
    generation: place.generation,
    activatesAt: place.activatesAt,
    retiredAt: null,
    verifyUntil: null,
  };
}

/** Imports a base64url AES-256 key for AES-GCM, not extractable. */
async function importAesKey(k: string): Promise<CryptoKey> {
  return (await globalThis.crypto.subtle.importKey('raw', base64url.decode(k), { name: 'AES-GCM' }, false, [
    'encrypt',
    'decrypt',
  ])) as CryptoKey;
}

/** A key that may sign (or encrypt) from `activatesAt` on. */
interface Candidate<K> {
  readonly kid: string;
  readonly generation: number;
  readonly activatesAt: number;
  readonly active: K;
}

/** A key that verifies (or decrypts) until `verifyUntil`. */
interface Trusted {
  readonly key: CryptoKey;
  readonly verifyUntil: number | null;
  /** The public JWK, for signing keys. */
  readonly jwk?: JWK;
}

/**
 * The keys one server uses (docs/operator-guide.md, "Signing keys"): the
 * current key for signing and encrypting, every unrevoked key inside its
 * window for verifying and decrypting, and the JWKS document.
 *
 * Loaded from the database, so every instance on one database shares keys.
 * A rotated-in key is loaded, private half included, while it is still
 * `next`, and the ring switches to it when the clock reaches its activation:
 * every instance switches at the same moment, without a reload. `reload()`
 * picks up rotations and revocations made elsewhere.
 */
export class KeyRing {
  readonly #deps: KeyRingDeps;
  /** The current key at the last load and every newer one, highest generation first. */
  #signers: Candidate<ActiveSigningKey>[] = [];
  #encrypters: Candidate<ActiveEncryptionKey>[] = [];
  #verifying = new Map<string, Trusted>();
  #decrypting = new Map<string, Trusted>();
  #nextGeneration: Record<KeyUse, number> = { sig: 1, enc: 1 };
  #lastLoad = Number.NEGATIVE_INFINITY;
  /** When the last read of the keys began (monotonic ms), whether it succeeded or not. */
  #triedAtMs = Number.NEGATIVE_INFINITY;
  /** A change was announced that no successful read has followed yet. */
  #stale = false;
  #changes = 0;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #loading: Promise<void> | undefined;
  #again: Promise<void> | undefined;

  private constructor(deps: KeyRingDeps) {
    this.#deps = deps;
  }

  /**
   * Opens the key ring. On an empty database it creates the first signing
   * and encryption keys (generation 1); when several instances start at
   * once, the unique generation lets one of them win, and the others load
   * its keys.
   */
  static async open(deps: KeyRingDeps): Promise<KeyRing> {
    const ring = new KeyRing(deps);
    await ring.reload();
    let created = false;
    const now = deps.clock.nowSeconds();
    for (const [use, candidates, generate] of [
      ['sig', ring.#signers, generateSigningKey],
      ['enc', ring.#encrypters, generateEncryptionKey],
    ] as const) {
      if (candidates.length > 0) continue;
      const place = { now, generation: ring.#nextGeneration[use], activatesAt: now };
      try {
        await deps.keys.insertKey(await generate(deps.sealKey, place));
      } catch (error) {
        // Another instance created its first key at the same moment: use that one.
        if (!(error instanceof Conflict)) throw error;
      }
      created = true;
    }
    if (created) await ring.reload();
    ring.signingKey();
    ring.encryptionKey();
    return ring;
  }

  /**
   * Re-reads the keys from the database: one query, and only keys not seen
   * before are unsealed and imported. Calls during a read share one more
   * read after it, so a change committed after a read began is never missed.
   */
  reload(): Promise<void> {
    if (!this.#loading) {
      this.#loading = this.#load().finally(() => {
        this.#loading = undefined;
      });
      return this.#loading;
    }
    this.#again ??= this.#loading
      .catch(() => {})
      .then(() => {
        this.#again = undefined;
        return this.reload();
      });
    return this.#again;
  }

  async #load(): Promise<void> {
    this.#triedAtMs = monotonicMs();
    const now = this.#deps.clock.nowSeconds();
    const records = await this.#deps.keys.listKeys();
    const next = { sig: 1, enc: 1 };
    for (const record of records) next[record.use] = Math.max(next[record.use], record.generation + 1);
    const trusted = records.filter((k) => k.status !== 'revoked' && (k.verifyUntil === null || k.verifyUntil > now));

    const verifying = new Map<string, Trusted>();
    const decrypting = new Map<string, Trusted>();
    for (const record of trusted) {
      if (record.use === 'sig') {
        const jwk = JSON.parse(record.publicJwk ?? 'null') as JWK;
        const key = this.#verifying.get(record.kid)?.key ?? ((await importJWK(jwk, SIGNING_ALG)) as CryptoKey);
        verifying.set(record.kid, { key, verifyUntil: record.verifyUntil, jwk });
      } else {
        const key = this.#decrypting.get(record.kid)?.key ?? (await importAesKey((JSON.parse(await this.#openSealed(record)) as { k: string }).k));
        decrypting.set(record.kid, { key, verifyUntil: record.verifyUntil });
      }
    }

    const signers: Candidate<ActiveSigningKey>[] = [];
    for (const record of candidates(trusted, 'sig', now)) {
      const loaded = this.#signers.find((c) => c.kid === record.kid)?.active;
      const active = loaded ?? { kid: record.kid, alg: SIGNING_ALG, key: await this.#openPrivateKey(record) };
      signers.push({ kid: record.kid, generation: record.generation, activatesAt: record.activatesAt, active });
    }
    const encrypters: Candidate<ActiveEncryptionKey>[] = candidates(trusted, 'enc', now).map((record) => ({
      kid: record.kid,
      generation: record.generation,
      activatesAt: record.activatesAt,
      active: { kid: record.kid, key: (decrypting.get(record.kid) as Trusted).key },
    }));

    this.#signers = signers;
    this.#encrypters = encrypters;
    this.#verifying = verifying;
    this.#decrypting = decrypting;
    this.#nextGeneration = next;
    this.#lastLoad = now;
  }

  /**
   * Keys changed elsewhere (the change signal said so, or changes may have
   * gone unheard): reads them again now, and every second until a read that
   * began after the change succeeds. Until then verifying and decrypting
   * read the keys again on use (at most once a second), so one failed read
   * never leaves a revoked key trusted.
   */
  keysChanged(onError: (error: unknown) => void = () => {}): void {
    this.#stale = true;
    const change = ++this.#changes;
    this.reload().then(
      () => {
        if (this.#changes === change) this.#stale = false;
      },
      (error: unknown) => {
        onError(error);
        if (this.#retry) return;
        this.#retry = setTimeout(() => {
          this.#retry = undefined;
          if (this.#stale) this.keysChanged(onError);
        }, 1000);
        this.#retry.unref?.();
      },
    );
  }

  /** Stops retrying a failed read (the ring's owner is closing). */
  close(): void {
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = undefined;
  }

  async #openPrivateKey(record: SigningKeyRecord): Promise<CryptoKey> {
    return (await importJWK(JSON.parse(await this.#openSealed(record)) as JWK, SIGNING_ALG)) as CryptoKey;
  }

  async #openSealed(record: SigningKeyRecord): Promise<string> {
    try {
      return await unsealAccepted(this.#deps.sealKey, record.kid, record.sealedPrivateJwk);
    } catch (error) {
      throw new Error(`cannot open key ${record.kid}: is CONNECT_MASTER_KEY the key this database was created with?`, {
        cause: error,
      });
    }
  }

  /** The key new tokens are signed with, at the clock's now. */
  signingKey(): ActiveSigningKey {
    const key = this.#pick(this.#signers);
    if (!key) throw new Error('no active signing key');
    return key;
  }

  /** The key new customer access tokens are encrypted with, at the clock's now. */
  encryptionKey(): ActiveEncryptionKey {
    const key = this.#pick(this.#encrypters);
    if (!key) throw new Error('no active encryption key');
    return key;
  }

  #pick<K>(candidates: readonly Candidate<K>[]): K | undefined {
    const now = this.#deps.clock.nowSeconds();
    // Highest generation first: the first one that has activated signs. When
    // none has (a first key made by an instance whose clock runs a little
    // ahead), the oldest one does: there is no other.
    return (candidates.find((c) => c.activatesAt <= now) ?? candidates.at(-1))?.active;
  }

  /**
   * The key to decrypt a token with `kid`, or `undefined` when unknown,
   * revoked or past its window; an unknown `kid` triggers one reload, at
   * most once a second.
   */
  decryptionKey(kid: string): Promise<CryptoKey | undefined> {
    return this.#trusted('decrypting', kid);
  }

  /**
   * The public key for `kid`, or `undefined` when it is unknown, revoked or
   * past its verification window. An unknown `kid` triggers one reload (at
   * most once a second), so tokens signed by a key another instance just
   * created verify.
   */
  verificationKey(kid: string): Promise<CryptoKey | undefined> {
    return this.#trusted('verifying', kid);
  }

  async #trusted(which: 'verifying' | 'decrypting', kid: string): Promise<CryptoKey | undefined> {
    const now = this.#deps.clock.nowSeconds();
    const lookUp = () => (which === 'verifying' ? this.#verifying : this.#decrypting).get(kid);
    let entry = lookUp();
    const unsure = this.#stale || (this.#deps.changes !== undefined && !this.#deps.changes.isCurrent());
    if ((unsure && monotonicMs() - this.#triedAtMs >= 1000) || (!entry && now - this.#lastLoad >= 1)) {
      await this.reload();
      entry = lookUp();
    }
    if (!entry || (entry.verifyUntil !== null && entry.verifyUntil <= now)) return undefined;
    return entry.key;
  }

  /**
   * The JWKS document: the public halves of every unrevoked signing key
   * still inside its window, a `next` key included, so verifiers know a key
   * before it signs anything.
   */
  jwks(): { keys: JWK[] } {
    const now = this.#deps.clock.nowSeconds();
    const keys: JWK[] = [];
    for (const { jwk, verifyUntil } of this.#verifying.values()) {
      if (jwk && (verifyUntil === null || verifyUntil > now)) keys.push(jwk);
    }
    return { keys };
  }
}

/**
 * The keys of `use` that may sign from now on: the current one and every
 * newer (pending) one, highest generation first; all pending ones when none
 * has activated yet.
 */
function candidates(trusted: readonly SigningKeyRecord[], use: KeyUse, now: number): SigningKeyRecord[] {
  const current = currentKey(trusted, use, now);
  return trusted
    .filter((k) => k.use === use && (current ? k.generation >= current.generation : true))
    .sort((a, b) => b.generation - a.generation);
}
