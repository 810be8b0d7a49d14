import { encodeBase64Url } from '../transport/base64url.js';

/** A PKCE pair (RFC 7636): keep `codeVerifier` secret until the code exchange. */
export interface Pkce {
  /** 43 characters of base64url from 32 random bytes (RFC 7636 §4.1). */
  readonly codeVerifier: string;
  /** `BASE64URL(SHA-256(codeVerifier))` (RFC 7636 §4.2). */
  readonly codeChallenge: string;
  /** Always `S256`; Connect refuses `plain`. */
  readonly codeChallengeMethod: 'S256';
}

/**
 * A random base64url string from the platform's CSPRNG
 * (`crypto.getRandomValues`), for `state` and PKCE verifiers.
 *
 * @param bytes - How many random bytes; default 32 (256 bits).
 */
export function randomToken(bytes = 32): string {
  return encodeBase64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/**
 * Creates a PKCE verifier and its S256 challenge with Web Crypto.
 *
 * @example
 * const { codeVerifier, codeChallenge } = await createPkce();
 */
export async function createPkce(): Promise<Pkce> {
  const codeVerifier = randomToken(32);
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(codeVerifier));
  return { codeVerifier, codeChallenge: encodeBase64Url(new Uint8Array(digest)), codeChallengeMethod: 'S256' };
}
