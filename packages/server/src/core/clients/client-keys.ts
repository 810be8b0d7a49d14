import { createPublicKey, type JsonWebKey } from 'node:crypto';
import type { Environment } from '../environment.js';
import { hasControlCharacter } from '../control-characters.js';

/** The algorithms a client assertion may be signed with (FAPI 2.0 Security Profile §5.4): no HS*, no RS256, no `none`. */
export const CLIENT_ASSERTION_ALGORITHMS = ['ES256', 'PS256', 'EdDSA'] as const;

/** The most keys a client registers: enough for a rotation (docs/operator-guide.md, "FAPI 2.0 clients"). */
export const MAX_CLIENT_KEYS = 10;

/** The members of a private or secret key that a registered key must not carry. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/**
 * What is wrong with a JWK Set a client registers for `private_key_jwt`, or
 * `undefined` when it is usable: a JSON object with a `keys` array of 1 to
 * {@link MAX_CLIENT_KEYS} public keys (no `d` or other private member, no
 * symmetric `oct` key), each able to verify one of
 * {@link CLIENT_ASSERTION_ALGORITHMS} (`EC` on P-256, `RSA` of at least
 * 2048 bits, `OKP` Ed25519), its `alg` (when given) one of them and fitting
 * its type, its `use` (when given) `sig`, and a `kid` on each when there
 * are several, each different.
 */
export function clientJwksProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'the JWK Set must be a JSON object with a "keys" array';
  const keys = (value as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || keys.length === 0) return 'the JWK Set must have a non-empty "keys" array';
  if (keys.length > MAX_CLIENT_KEYS) return `the JWK Set has ${keys.length} keys; at most ${MAX_CLIENT_KEYS}`;
  const kids = new Set<string>();
  for (const [index, key] of keys.entries()) {
    const which = `key ${index + 1}`;
    if (key === null || typeof key !== 'object' || Array.isArray(key)) return `${which} is not a JSON object`;
    const jwk = key as Record<string, unknown>;
    const problem = keyProblem(jwk);
    if (problem) return `${which}: ${problem}`;
    if (jwk.kid !== undefined) {
      if (typeof jwk.kid !== 'string' || jwk.kid === '' || jwk.kid.length > 200 || hasControlCharacter(jwk.kid)) return `${which}: "kid" must be a non-empty string`;
      if (kids.has(jwk.kid)) return `${which}: "kid" ${JSON.stringify(jwk.kid)} is used by another key; each key needs its own`;
      kids.add(jwk.kid);
    } else if (keys.length > 1) {
      return `${which} has no "kid": with several keys, each needs a "kid" so that an assertion names the one it was signed with`;
    }
  }
  return undefined;
}

function keyProblem(jwk: Record<string, unknown>): string | undefined {
  const problem = shapeProblem(jwk);
  if (problem) return problem;
  // Its members have the right form; the key must also be one (an EC point on
  // P-256, an RSA modulus, an Ed25519 key): one that cannot be imported would
  // fail every assertion of the client.
  try {
    createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    const why = jwk.kty === 'EC' ? '"x" and "y" are not a point on P-256' : jwk.kty === 'RSA' ? '"n" and "e" do not make one' : '"x" is not an Ed25519 key';
    return `it is not a usable ${String(jwk.kty)} public key: ${why}`;
  }
  return undefined;
}

function shapeProblem(jwk: Record<string, unknown>): string | undefined {
  if (jwk.kty === 'oct') return 'a symmetric ("oct") key is refused: register public keys only';
  const secret = PRIVATE_MEMBERS.filter((member) => jwk[member] !== undefined);
  if (secret.length > 0) return `it holds private key material ("${secret.join('", "')}"): register the public key only, and keep the private key with the client`;
  if (jwk.use !== undefined && jwk.use !== 'sig') return '"use" must be "sig"';
  const alg = jwk.alg;
  if (alg !== undefined && !(CLIENT_ASSERTION_ALGORITHMS as readonly unknown[]).includes(alg)) {
    return `"alg" must be one of ${CLIENT_ASSERTION_ALGORITHMS.join(', ')}`;
  }
  const text = (name: string) => typeof jwk[name] === 'string' && /^[A-Za-z0-9_-]+$/.test(jwk[name] as string);
  switch (jwk.kty) {
    case 'EC':
      if (jwk.crv !== 'P-256') return 'an EC key must be on P-256 (for ES256)';
      if (alg !== undefined && alg !== 'ES256') return 'an EC key verifies ES256 only';
      if (!text('x') || !text('y')) return 'an EC key needs "x" and "y"';
      return undefined;
    case 'RSA': {
      if (alg !== undefined && alg !== 'PS256') return 'an RSA key verifies PS256 only';
      if (!text('n') || !text('e')) return 'an RSA key needs "n" and "e"';
      const bits = Buffer.from(jwk.n as string, 'base64url').length * 8;
      if (bits < 2048) return 'an RSA key must have at least 2048 bits';
      return undefined;
    }
    case 'OKP':
      if (jwk.crv !== 'Ed25519') return 'an OKP key must be Ed25519 (for EdDSA)';
      if (alg !== undefined && alg !== 'EdDSA') return 'an OKP key verifies EdDSA only';
      if (!text('x')) return 'an OKP key needs "x"';
      return undefined;
    default:
      return '"kty" must be EC, RSA or OKP';
  }
}

/**
 * What is wrong with a client's `jwks_uri`, or `undefined`: an absolute
 * `https://` URL with a host, no user info or fragment, at most 2000
 * characters. In sandbox `http://localhost`, `http://127.0.0.1` and
 * `http://[::1]` are also accepted, for a consumer's tests on its own
 * machine; production fetches `https://` only.
 */
export function jwksUriProblem(value: string, environment: Environment): string | undefined {
  if (value.length > 2000) return 'the jwks_uri is longer than 2000 characters';
  if (hasControlCharacter(value) || /\s|\\/.test(value)) return 'the jwks_uri must not contain whitespace, a backslash or control characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'the jwks_uri must be an absolute URL';
  }
  if (url.username !== '' || url.password !== '') return 'the jwks_uri must not carry user info';
  if (url.hash !== '' || value.includes('#')) return 'the jwks_uri must not have a fragment';
  if (url.protocol === 'https:' && url.hostname !== '') return undefined;
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol === 'http:' && local && environment === 'sandbox') return undefined;
  return environment === 'sandbox'
    ? 'the jwks_uri must be https:// (or http://localhost, http://127.0.0.1 or http://[::1] in sandbox)'
    : 'the jwks_uri must be https://';
}
