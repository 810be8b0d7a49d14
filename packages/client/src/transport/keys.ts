import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import type { Clock } from './clock.js';
import { encodeBase64Url } from './base64url.js';

/** The JWS algorithms Connect accepts for client assertions and DPoP proofs (docs/consumer-guide.md, "FAPI 2.0"). */
export type JoseAlgorithm = 'ES256' | 'PS256' | 'EdDSA';

/** The algorithms, as a list. */
export const JOSE_ALGORITHMS: readonly JoseAlgorithm[] = ['ES256', 'PS256', 'EdDSA'];

/** A private JWK (it has `d`): an EC P-256, RSA or Ed25519 key. */
export interface PrivateJwk extends JWK {
  readonly kty: string;
  readonly d: string;
}

/** The client's `private_key_jwt` signing key (internal). */
export interface ClientKey {
  readonly algorithm: JoseAlgorithm;
  readonly keyId: string | undefined;
  /** The key, imported on first use. */
  key(): Promise<CryptoKey>;
}

/** `client_assertion_type` of RFC 7523 §2.2. */
export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** How long a client assertion is valid, in seconds. */
const ASSERTION_LIFETIME_SECONDS = 60;

/** Checks the `privateKey` options and infers its algorithm; a mistake is a `TypeError` (internal). */
export function clientKeyOf(options: {
  readonly privateKey: CryptoKey | PrivateJwk;
  readonly keyId?: string | undefined;
  readonly algorithm?: JoseAlgorithm | undefined;
}): ClientKey {
  const { privateKey } = options;
  if (options.algorithm !== undefined && !JOSE_ALGORITHMS.includes(options.algorithm)) throw new TypeError('algorithm must be ES256, PS256 or EdDSA');
  if (options.keyId !== undefined && (typeof options.keyId !== 'string' || options.keyId === '')) throw new TypeError('keyId must be a non-empty string');
  if (isCryptoKey(privateKey)) {
    if (privateKey.type !== 'private') throw new TypeError('privateKey must be a private key');
    const algorithm = options.algorithm ?? algorithmOfCryptoKey(privateKey);
    return { algorithm, keyId: options.keyId, key: () => Promise.resolve(privateKey) };
  }
  if (typeof privateKey !== 'object' || privateKey === null || typeof privateKey.kty !== 'string') throw new TypeError('privateKey must be a CryptoKey or a private JWK');
  if (typeof privateKey.d !== 'string' || privateKey.d === '') throw new TypeError('privateKey must be a private JWK (with "d"), not a public one');
  const algorithm = options.algorithm ?? algorithmOfJwk(privateKey);
  let imported: Promise<CryptoKey> | undefined;
  return {
    algorithm,
    keyId: options.keyId ?? (typeof privateKey.kid === 'string' && privateKey.kid !== '' ? privateKey.kid : undefined),
    key: () => (imported ??= importJWK(privateKey, algorithm, { extractable: false }) as Promise<CryptoKey>),
  };
}

/**
 * A fresh `private_key_jwt` client assertion (RFC 7523 §3): `iss` = `sub` =
 * the client ID, `aud` = the issuer, a random `jti`, `iat` now and `exp`
 * 60 seconds later (internal).
 */
export async function clientAssertion(key: ClientKey, clientId: string, audience: string, clock: Clock): Promise<string> {
  const now = clock.nowSeconds();
  return new SignJWT({})
    .setProtectedHeader({ alg: key.algorithm, typ: 'JWT', ...(key.keyId === undefined ? {} : { kid: key.keyId }) })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(audience)
    .setJti(randomToken(32))
    .setIssuedAt(now)
    .setExpirationTime(now + ASSERTION_LIFETIME_SECONDS)
    .sign(await key.key());
}

/** The DPoP key of an SDK instance and the latest nonce per origin (internal). */
export interface DpopState {
  readonly algorithm: JoseAlgorithm;
  /** The key pair, generated on first use when the SDK makes it. */
  keyPair(): Promise<CryptoKeyPair>;
  /** The public key as a JWK (for the proof's header). */
  publicJwk(): Promise<JWK>;
  /** The JWK SHA-256 thumbprint of the public key (RFC 7638), `dpop_jkt` and `cnf.jkt`. */
  thumbprint(): Promise<string>;
  /** The latest `DPoP-Nonce` per origin. */
  readonly nonces: Map<string, string>;
}

// A generated key: one per client (auth URL and client ID) in this process. A given key pair: one state per pair.
const GENERATED = new Map<string, DpopState>();
const GIVEN = new WeakMap<CryptoKeyPair, DpopState>();

/** The DPoP state of a `dpop` option for the client named by `client` (internal). */
export function dpopStateOf(dpop: true | { readonly key: CryptoKeyPair }, client: string): DpopState {
  if (dpop === true) {
    let state = GENERATED.get(client);
    if (!state) GENERATED.set(client, (state = dpopState(undefined, 'ES256')));
    return state;
  }
  let state = GIVEN.get(dpop.key);
  if (!state) GIVEN.set(dpop.key, (state = dpopState(Promise.resolve(dpop.key), algorithmOfCryptoKey(dpop.key.privateKey))));
  return state;
}

function dpopState(given: Promise<CryptoKeyPair> | undefined, algorithm: JoseAlgorithm): DpopState {
  let pair = given;
  let jwk: Promise<JWK> | undefined;
  let thumbprint: Promise<string> | undefined;
  const keyPair = () => (pair ??= generateKeyPair('ES256', { extractable: false }) as Promise<CryptoKeyPair>);
  const publicJwk = () =>
    (jwk ??= keyPair().then(async ({ publicKey }) => {
      const { kty, crv, x, y, n, e } = await exportJWK(publicKey);
      // Only the public members (RFC 9449 §4.2: the header's jwk must not hold a private key).
      return Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, value]) => value !== undefined)) as JWK;
    }));
  return {
    algorithm,
    keyPair,
    publicJwk,
    thumbprint: () => (thumbprint ??= publicJwk().then((key) => calculateJwkThumbprint(key, 'sha256'))),
    nonces: new Map(),
  };
}

/** What a DPoP proof is for (RFC 9449 §4.2). */
export interface ProofTarget {
  readonly method: string;
  readonly url: string | URL;
  /** The access token the request presents, for `ath`. */
  readonly accessToken?: string | undefined;
}

/** A DPoP proof for one request, with the latest nonce of its origin (internal). */
export async function dpopProof(state: DpopState, target: ProofTarget, clock: Clock): Promise<string> {
  const url = new URL(target.url);
  const nonce = state.nonces.get(url.origin);
  const claims: Record<string, string> = { htm: target.method.toUpperCase(), htu: `${url.origin}${url.pathname}` };
  if (nonce !== undefined) claims.nonce = nonce;
  if (target.accessToken !== undefined) claims.ath = await accessTokenHash(target.accessToken);
  const { privateKey } = await state.keyPair();
  return new SignJWT(claims)
    .setProtectedHeader({ typ: 'dpop+jwt', alg: state.algorithm, jwk: await state.publicJwk() })
    .setJti(randomToken(16))
    .setIssuedAt(clock.nowSeconds())
    .sign(privateKey);
}

/** Keeps a `DPoP-Nonce` an answer carried, as the latest of its origin (internal). */
export function rememberNonce(state: DpopState | undefined, url: string | URL, headers: Headers): void {
  const nonce = headers.get('dpop-nonce');
  // RFC 9449 §8.1: a nonce is of the NQCHAR characters.
  if (state && nonce !== null && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(nonce)) state.nonces.set(new URL(url).origin, nonce);
}

/** `ath` (RFC 9449 §4.2): base64url of the SHA-256 of the access token's ASCII. */
export async function accessTokenHash(accessToken: string): Promise<string> {
  return encodeBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(accessToken))));
}

/** base64url of `bytes` random bytes from the platform's CSPRNG, for `jti`s. */
function randomToken(bytes: number): string {
  return encodeBase64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function isCryptoKey(value: unknown): value is CryptoKey {
  return typeof CryptoKey !== 'undefined' && value instanceof CryptoKey;
}

function algorithmOfCryptoKey(key: CryptoKey): JoseAlgorithm {
  const algorithm = key.algorithm as { name: string; namedCurve?: string; hash?: { name: string } };
  if (algorithm.name === 'ECDSA' && algorithm.namedCurve === 'P-256') return 'ES256';
  if (algorithm.name === 'RSA-PSS' && algorithm.hash?.name === 'SHA-256') return 'PS256';
  if (algorithm.name === 'Ed25519' || algorithm.name === 'EdDSA') return 'EdDSA';
  throw new TypeError('the key must be an ECDSA P-256 (ES256), RSA-PSS SHA-256 (PS256) or Ed25519 (EdDSA) key');
}

function algorithmOfJwk(jwk: PrivateJwk): JoseAlgorithm {
  if (typeof jwk.alg === 'string') {
    if (!JOSE_ALGORITHMS.includes(jwk.alg as JoseAlgorithm)) throw new TypeError('the JWK\'s alg must be ES256, PS256 or EdDSA');
    return jwk.alg as JoseAlgorithm;
  }
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ES256';
  if (jwk.kty === 'RSA') return 'PS256';
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA';
  throw new TypeError('the JWK must be an EC P-256, RSA or Ed25519 key');
}
