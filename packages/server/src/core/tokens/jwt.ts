import { CompactEncrypt, CompactSign, type CompactJWEHeaderParameters, type CompactJWSHeaderParameters, type CryptoKey } from 'jose';

/**
 * The claims set of a token Connect issues (RFC 7519 §4): strings, lists
 * of strings (`amr`), and whole seconds since the epoch for `iat`, `exp`
 * and `auth_time`, all of them values Connect produced itself.
 */
export type JwtClaims = Readonly<Record<string, string | number | readonly string[] | { readonly jkt: string }>>;

/** RFC 9068 §2.1: the `typ` header of a JWT access token. */
export const ACCESS_TOKEN_JWT_TYPE = 'at+jwt';

const encoder = new TextEncoder();
const NUMERIC_DATE_CLAIMS = ['iat', 'nbf', 'exp', 'auth_time'] as const;

/**
 * The claims set as the JWS payload or JWE plaintext: its UTF-8 JSON (RFC 7519
 * §7.1); an error, returned rather than thrown, when a time is not whole seconds.
 */
function claimsBytes(claims: JwtClaims): Uint8Array | TypeError {
  for (const name of NUMERIC_DATE_CLAIMS) {
    const value = claims[name];
    // RFC 7519 §2: a NumericDate is a number of seconds (JSON.stringify would write NaN as null).
    if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value))) return new TypeError(`JWT claim ${name} must be whole seconds`);
  }
  return encoder.encode(JSON.stringify(claims));
}

/**
 * Signs a JWT: jose's `CompactSign` protects the header, builds the signing
 * input, signs with `key` and serializes the compact JWS.
 *
 * jose's `SignJWT` would do the same after copying the claims set with
 * `structuredClone` and checking each claim as it is set: several
 * microseconds more per token, on the token endpoint's hot path
 * (bench/README.md). Connect builds its claims itself, from values it checked.
 *
 * @example
 * await signJwt({ iss, sub, aud, iat, exp, jti }, { alg: 'ES256', typ: 'at+jwt', kid }, key);
 */
export function signJwt(claims: JwtClaims, header: CompactJWSHeaderParameters, key: CryptoKey): Promise<string> {
  // Not an async function: the token endpoint's hot path awaits jose's promise itself.
  const payload = claimsBytes(claims);
  return payload instanceof Error ? Promise.reject(payload) : new CompactSign(payload).setProtectedHeader(header).sign(key);
}

/**
 * Encrypts a JWT (RFC 7519 §7.1 with a JWE): jose's `CompactEncrypt` of the
 * claims set, for the same reason `signJwt` does not use `SignJWT`.
 */
export function encryptJwt(claims: JwtClaims, header: CompactJWEHeaderParameters, key: CryptoKey): Promise<string> {
  const plaintext = claimsBytes(claims);
  return plaintext instanceof Error ? Promise.reject(plaintext) : new CompactEncrypt(plaintext).setProtectedHeader(header).encrypt(key);
}
