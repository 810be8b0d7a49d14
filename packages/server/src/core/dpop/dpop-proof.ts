import { createHash } from 'node:crypto';
import { base64url, calculateJwkThumbprint, EmbeddedJWK, errors, jwtVerify, type JWK } from 'jose';
import { clockDate, type Clock } from '../clock.js';
import { InvalidDpopProof, UseDpopNonce } from '../errors.js';
import type { ReplayStore } from '../replay/replay-store.js';
import { useJtiOnce } from '../replay/use-jti-once.js';
import type { DpopNonces } from './dpop-nonce.js';
import { normalizeHtu } from './htu.js';

/** The `alg`s a DPoP proof may use (discovery's `dpop_signing_alg_values_supported`). */
export const DPOP_SIGNING_ALGS: readonly string[] = ['ES256', 'PS256', 'EdDSA'];

/** The `typ` of a DPoP proof (RFC 9449 §4.2). */
export const DPOP_PROOF_TYPE = 'dpop+jwt';

/**
 * How far a proof's `iat` may be from the clock, either way, in seconds
 * (docs/resource-servers.md, "DPoP-bound tokens"). Its `jti` is kept in
 * the replay store for as long as it could be accepted.
 */
export const DPOP_IAT_WINDOW_SECONDS = 60;

/**
 * jose's `EmbeddedJWK`, remembered for the last {@link EMBEDDED_KEYS_KEPT}
 * keys by their `alg` and `jwk`: a client sends the same key with every
 * proof, and importing it again costs about as much as checking the
 * signature (bench/README.md, "FAPI 2.0 token requests"). Its checks (an
 * object, `use` and `alg` agreeing, a public key) ran when the key was
 * first seen, and give the same answer for the same `alg` and `jwk`; a key
 * it refused is not remembered.
 */
const embeddedKeys = new Map<string, ReturnType<typeof EmbeddedJWK>>();
const EMBEDDED_KEYS_KEPT = 1000;
function embeddedKey(...[header, token]: Parameters<typeof EmbeddedJWK>): ReturnType<typeof EmbeddedJWK> {
  const id = `${String(header?.alg)}\0${JSON.stringify(header?.jwk)}`;
  const known = embeddedKeys.get(id);
  if (known) return known;
  const imported = EmbeddedJWK(header, token);
  if (embeddedKeys.size >= EMBEDDED_KEYS_KEPT) embeddedKeys.delete(embeddedKeys.keys().next().value as string);
  embeddedKeys.set(id, imported);
  imported.catch(() => embeddedKeys.delete(id));
  return imported;
}

/** Longer than any proof a client sends; longer input is not even parsed. */
const MAX_PROOF_LENGTH = 8192;
/** Members only a private (or symmetric) JWK has (RFC 7517 §9.3, RFC 7518 §6). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
/** The shape of a JWK SHA-256 thumbprint (RFC 7638), base64url: `dpop_jkt` and `cnf.jkt`. */
export const JKT_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** What checking a proof needs. */
export interface DpopProofDeps {
  readonly clock: Clock;
  /** Where proof `jti`s are recorded once, on every instance (`used_jtis`). */
  readonly replay: Pick<ReplayStore, 'useJtiOnce'>;
  readonly nonces: DpopNonces;
}

/** The request a proof must be for. */
export interface DpopProofRequest {
  /** Every `DPoP` header of the request, as sent; more than one is refused (RFC 9449 §4.3). */
  readonly proofs: readonly string[];
  /** The request's method (`htm`). */
  readonly method: string;
  /** The request's URL as Connect or the API publishes it (never one built from `Host`): `htu`. */
  readonly url: string;
  /** The access token presented with the proof: then its `ath` must match (RFC 9449 §4.3). */
  readonly accessToken?: string | undefined;
  /** Whether the proof must carry a current server nonce (RFC 9449 §8). */
  readonly requireNonce: boolean;
  /** Where the request was made: the token endpoint (400) or a protected resource (401 with a DPoP challenge). */
  readonly at: 'token' | 'resource';
}

/** A proof that passed every check. */
export interface VerifiedDpopProof {
  /** The SHA-256 JWK thumbprint of its key (RFC 7638): `cnf.jkt` of the tokens it binds. */
  readonly jkt: string;
}

/**
 * Checks a DPoP proof (RFC 9449 §4.3): exactly one `DPoP` header; a JWT
 * with `typ` `dpop+jwt`, `alg` ES256, PS256 or EdDSA, a public `jwk` that
 * verifies its signature; `jti`, `htm` equal to the method, `htu` equal to
 * the URL (both normalised, without query and fragment), `iat` within
 * {@link DPOP_IAT_WINDOW_SECONDS} of the clock; `ath` the SHA-256 of the
 * access token presented with it; a current server `nonce` when required
 * (or whenever it carries one). Its `jti` is then recorded: a second use,
 * on any instance, is refused. Throws `InvalidDpopProof` or `UseDpopNonce`
 * (docs/resource-servers.md, "DPoP-bound tokens").
 */
export async function verifyDpopProof(request: DpopProofRequest, deps: DpopProofDeps): Promise<VerifiedDpopProof> {
  const at = { at: request.at };
  if (request.proofs.length === 0) throw new InvalidDpopProof('a DPoP proof is required: send one DPoP header', at);
  if (request.proofs.length > 1) throw new InvalidDpopProof('exactly one DPoP header is allowed', at);
  const proof = request.proofs[0] ?? '';
  if (proof.length > MAX_PROOF_LENGTH || proof.split('.').length !== 3) throw new InvalidDpopProof('the DPoP proof is not a signed JWT', at);

  let payload: Record<string, unknown>;
  let jwk: JWK;
  try {
    const verified = await jwtVerify(proof, async (header, token) => {
      const key = header.jwk;
      if (key === undefined || key === null || typeof key !== 'object') throw new errors.JWSInvalid('jwk missing');
      // A private key in the header would give it away; it is refused before anything else (RFC 9449 §4.3).
      if (PRIVATE_MEMBERS.some((member) => member in key)) throw new PrivateKeyInProof();
      return embeddedKey(header, token);
    }, {
      typ: DPOP_PROOF_TYPE,
      algorithms: [...DPOP_SIGNING_ALGS],
      currentDate: clockDate(deps.clock),
    });
    payload = verified.payload as Record<string, unknown>;
    jwk = verified.protectedHeader.jwk as JWK;
  } catch (error) {
    if (error instanceof PrivateKeyInProof) throw new InvalidDpopProof('the jwk of the DPoP proof must be a public key', at);
    // WebCrypto refuses a jwk it cannot import (a point off its curve, a curve
    // other than the algorithm's) with a DOMException: the proof's fault too.
    if (error instanceof errors.JOSEError || error instanceof TypeError || error instanceof DOMException) {
      throw new InvalidDpopProof('the DPoP proof is malformed, of another type or algorithm, or its signature does not verify', { ...at, detail: (error as Error).message });
    }
    throw error;
  }

  const { jti, htm, htu, iat, ath, nonce } = payload;
  if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw new InvalidDpopProof('the DPoP proof must carry a jti', at);
  if (htm !== request.method) throw new InvalidDpopProof('the htm of the DPoP proof is not the method of this request', at);
  const expected = normalizeHtu(request.url);
  if (typeof htu !== 'string' || expected === undefined || normalizeHtu(htu) !== expected) throw new InvalidDpopProof('the htu of the DPoP proof is not the URL of this request', at);
  const now = deps.clock.nowSeconds();
  if (typeof iat !== 'number' || !Number.isFinite(iat) || Math.abs(now - iat) > DPOP_IAT_WINDOW_SECONDS) {
    throw new InvalidDpopProof('the iat of the DPoP proof must be within 60 seconds of the server time', at);
  }
  if (request.accessToken !== undefined) {
    const hash = base64url.encode(createHash('sha256').update(request.accessToken).digest());
    if (ath !== hash) throw new InvalidDpopProof('the ath of the DPoP proof is not the hash of the access token presented', at);
  }
  // RFC 9449 §8: a nonce the proof carries is checked whether or not one is required.
  if (nonce !== undefined || request.requireNonce) {
    if (typeof nonce !== 'string' || !deps.nonces.check(nonce)) {
      throw new UseDpopNonce(nonce === undefined ? 'the DPoP proof must carry the nonce in DPoP-Nonce' : 'the nonce of the DPoP proof is stale; use the one in DPoP-Nonce', deps.nonces.issue(), { at: request.at });
    }
  }
  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  // RFC 9449 §11.1: the jti once, on every instance, for as long as the proof could be accepted.
  const first = await useJtiOnce(deps.replay, { kind: 'dpop_proof', issuer: jkt, jti, expiresAt: Math.floor(iat) + DPOP_IAT_WINDOW_SECONDS + 1, now });
  if (!first) throw new InvalidDpopProof('the DPoP proof was used before', at);
  return { jkt };
}

/** Thrown inside the key lookup for a `jwk` with private members. */
class PrivateKeyInProof extends Error {}
