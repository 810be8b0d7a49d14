import { randomBytes } from 'node:crypto';
import { base64url, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { Clock } from '../clock.js';
import type { SigningKeyStore } from './signing-key-store.js';
import { seal, unseal } from './master-key.js';
import type { SigningKeyRecord } from './signing-key.js';
import { KEY_RELOAD_SECONDS } from '../lifetimes.js';

/** The one signature algorithm Connect issues (docs/tokens.md). */
export const SIGNING_ALG = 'ES256';

/** A private key ready to sign, with its `kid`. */
export interface ActiveSigningKey {
  readonly kid: string;
  readonly alg: typeof SIGNING_ALG;
  readonly key: CryptoKey;
}

/** Imports a base64url AES-256 key for AES-GCM, not extractable. */
async function importAesKey(k: string): Promise<CryptoKey> {
  return (await globalThis.crypto.subtle.importKey('raw', base64url.decode(k), { name: 'AES-GCM' }, false, [
    'encrypt',
    'decrypt',
  ])) as CryptoKey;
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
  /** The key-sealing sub-key derived from the master key. */
  readonly sealKey: Uint8Array;
  readonly clock: Clock;
}

/**
 * Generates a new ES256 signing key, `kid` = its RFC 7638 thumbprint, with the
 * private half sealed under `sealKey`.
 */
export async function generateSigningKey(sealKey: Uint8Array, now: number): Promise<SigningKeyRecord> {
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
    sealedPrivateJwk: await seal(sealKey, kid, JSON.stringify(privateJwk)),
    createdAt: now,
    retiredAt: null,
    verifyUntil: null,
  };
}

/** The JWE algorithms of customer access tokens: a shared 256-bit key, AES-GCM (see docs/tokens.md). */
export const ENCRYPTION_ALG = 'dir';
export const ENCRYPTION_ENC = 'A256GCM';

/**
 * Generates a new 256-bit content-encryption key for customer access tokens
 * (`dir` + `A256GCM`), sealed under `sealKey`. It is never published.
 */
export async function generateEncryptionKey(sealKey: Uint8Array, now: number): Promise<SigningKeyRecord> {
  const kid = randomBytes(16).toString('base64url');
  const jwk = { kty: 'oct', k: randomBytes(32).toString('base64url') };
  return {
    kid,
    alg: ENCRYPTION_ENC,
    use: 'enc',
    status: 'active',
    publicJwk: null,
    sealedPrivateJwk: await seal(sealKey, kid, JSON.stringify(jwk)),
    createdAt: now,
    retiredAt: null,
    verifyUntil: null,
  };
}

/**
 * Makes a new signing key (and a new token encryption key) active and
 * retires the previous ones.
 *
 * A retired key keeps verifying until every token it can have signed has
 * expired: the longest token lifetime after the rotation, plus the time a
 * running server may take to notice the new key.
 *
 * @param maxTokenTtlSeconds the longest lifetime of a token signed by these keys.
 */
export async function rotateKeys<Tx extends { readonly keys: SigningKeyStore }>(
  deps: { storage: { transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> }; sealKey: Uint8Array; clock: Clock },
  maxTokenTtlSeconds: number,
  /** Runs in the same transaction with the new signing key (e.g. to record it in the audit log). */
  alsoInTransaction?: (tx: Tx, key: SigningKeyRecord) => Promise<void>,
): Promise<SigningKeyRecord> {
  const now = deps.clock.nowSeconds();
  const key = await generateSigningKey(deps.sealKey, now);
  const encryptionKey = await generateEncryptionKey(deps.sealKey, now);
  const verifyUntil = now + maxTokenTtlSeconds + 2 * KEY_RELOAD_SECONDS;
  await deps.storage.transaction(async (tx) => {
    await tx.keys.insertKey(key);
    await tx.keys.retireKeys('sig', key.kid, now, verifyUntil);
    // The customer access token encryption key rotates with it.
    await tx.keys.insertKey(encryptionKey);
    await tx.keys.retireKeys('enc', encryptionKey.kid, now, verifyUntil);
    await alsoInTransaction?.(tx, key);
  });
  return key;
}

/**
 * The signing keys one server uses: the active key for signing, every key
 * still inside its verification window for verifying, and the JWKS document.
 *
 * Loaded from the database so every instance on one database shares keys;
 * `reload()` picks up rotations made elsewhere.
 */
export class KeyRing {
  readonly #deps: KeyRingDeps;
  #active: ActiveSigningKey | undefined;
  #verifying = new Map<string, { key: CryptoKey; verifyUntil: number | null }>();
  #activeEncryption: ActiveEncryptionKey | undefined;
  #decrypting = new Map<string, { key: CryptoKey; verifyUntil: number | null }>();
  #jwks: { keys: JWK[] } = { keys: [] };
  #lastLoad = Number.NEGATIVE_INFINITY;
  #loading: Promise<void> | undefined;

  private constructor(deps: KeyRingDeps) {
    this.#deps = deps;
  }

  /** Opens the key ring, creating the first signing key when there is none. */
  static async open(deps: KeyRingDeps): Promise<KeyRing> {
    const ring = new KeyRing(deps);
    await ring.reload();
    const now = deps.clock.nowSeconds();
    if (!ring.#active) await deps.keys.insertKey(await generateSigningKey(deps.sealKey, now));
    if (!ring.#activeEncryption) await deps.keys.insertKey(await generateEncryptionKey(deps.sealKey, now));
    if (!ring.#active || !ring.#activeEncryption) await ring.reload();
    return ring;
  }

  /** Re-reads keys from the database; concurrent calls share one read. */
  reload(): Promise<void> {
    this.#loading ??= this.#load().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  async #load(): Promise<void> {
    const now = this.#deps.clock.nowSeconds();
    const live = (await this.#deps.keys.listKeys()).filter(
      (k) => k.status === 'active' || (k.verifyUntil !== null && k.verifyUntil > now),
    );
    const records = live.filter((k) => k.use === 'sig');
    const verifying = new Map<string, { key: CryptoKey; verifyUntil: number | null }>();
    const jwks: JWK[] = [];
    let active: ActiveSigningKey | undefined;
    for (const record of records) {
      const publicJwk = JSON.parse(record.publicJwk ?? 'null') as JWK;
      const cached = this.#verifying.get(record.kid);
      verifying.set(record.kid, {
        key: cached?.key ?? ((await importJWK(publicJwk, SIGNING_ALG)) as CryptoKey),
        verifyUntil: record.verifyUntil,
      });
      jwks.push(publicJwk);
      // listKeys is newest first, so the first active key is the newest one.
      if (!active && record.status === 'active') {
        const privateKey = this.#active?.kid === record.kid ? this.#active.key : await this.#openPrivateKey(record);
        active = { kid: record.kid, alg: SIGNING_ALG, key: privateKey };
      }
    }
    const decrypting = new Map<string, { key: CryptoKey; verifyUntil: number | null }>();
    let activeEncryption: ActiveEncryptionKey | undefined;
    for (const record of live.filter((k) => k.use === 'enc')) {
      const key = this.#decrypting.get(record.kid)?.key ?? (await importAesKey((JSON.parse(await this.#openSealed(record)) as { k: string }).k));
      decrypting.set(record.kid, { key, verifyUntil: record.verifyUntil });
      if (!activeEncryption && record.status === 'active') activeEncryption = { kid: record.kid, key };
    }
    this.#active = active;
    this.#verifying = verifying;
    this.#activeEncryption = activeEncryption;
    this.#decrypting = decrypting;
    this.#jwks = { keys: jwks };
    this.#lastLoad = now;
  }

  async #openPrivateKey(record: SigningKeyRecord): Promise<CryptoKey> {
    return (await importJWK(JSON.parse(await this.#openSealed(record)) as JWK, SIGNING_ALG)) as CryptoKey;
  }

  async #openSealed(record: SigningKeyRecord): Promise<string> {
    try {
      return await unseal(this.#deps.sealKey, record.kid, record.sealedPrivateJwk);
    } catch (error) {
      throw new Error(`cannot open key ${record.kid}: is CONNECT_MASTER_KEY the key this database was created with?`, {
        cause: error,
      });
    }
  }

  /** The key new customer access tokens are encrypted with. */
  encryptionKey(): ActiveEncryptionKey {
    if (!this.#activeEncryption) throw new Error('no active encryption key');
    return this.#activeEncryption;
  }

  /**
   * The key to decrypt a token with `kid`, or `undefined` when unknown or past
   * its window; an unknown `kid` triggers one reload, at most once a second.
   */
  async decryptionKey(kid: string): Promise<CryptoKey | undefined> {
    const now = this.#deps.clock.nowSeconds();
    let entry = this.#decrypting.get(kid);
    if (!entry && now - this.#lastLoad >= 1) {
      await this.reload();
      entry = this.#decrypting.get(kid);
    }
    if (!entry || (entry.verifyUntil !== null && entry.verifyUntil <= now)) return undefined;
    return entry.key;
  }

  /** The key new tokens are signed with. */
  signingKey(): ActiveSigningKey {
    if (!this.#active) throw new Error('no active signing key');
    return this.#active;
  }

  /**
   * The public key for `kid`, or `undefined` when it is unknown or past its
   * verification window. An unknown `kid` triggers one reload (at most once a
   * second), so tokens signed by a key another instance just created verify.
   */
  async verificationKey(kid: string): Promise<CryptoKey | undefined> {
    const now = this.#deps.clock.nowSeconds();
    let entry = this.#verifying.get(kid);
    if (!entry && now - this.#lastLoad >= 1) {
      await this.reload();
      entry = this.#verifying.get(kid);
    }
    if (!entry || (entry.verifyUntil !== null && entry.verifyUntil <= now)) return undefined;
    return entry.key;
  }

  /** The JWKS document: public halves of every key that still verifies. */
  jwks(): { keys: JWK[] } {
    return this.#jwks;
  }
}
