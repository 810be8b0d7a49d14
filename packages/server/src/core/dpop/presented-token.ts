import { InvalidDpopProof, InvalidToken, presentsToken } from '../errors.js';
import { verifyDpopProof, type DpopProofDeps } from './dpop-proof.js';

/** An access token as an `Authorization` header presented it. */
export interface PresentedToken {
  /** `Bearer` (RFC 6750 §2.1) or `DPoP` (RFC 9449 §7.1), whatever case the request wrote. */
  readonly scheme: 'Bearer' | 'DPoP';
  readonly token: string;
}

/** A request to a protected resource, as far as presenting a token goes. */
export interface ResourceRequest {
  /** The `Authorization` header, as sent. */
  readonly authorization: string | undefined;
  /** Every `DPoP` header, as sent. */
  readonly dpopProofs: readonly string[];
  /** The request's method. */
  readonly method: string;
  /** The request's URL as the API publishes it (never one built from `Host`), for the proof's `htu`. */
  readonly url: string;
}

/**
 * The token of an `Authorization: Bearer <token>` or `Authorization: DPoP
 * <token>` header. Throws `InvalidToken`: with `credentialsMissing` when
 * the request presents no token at all (no header, another scheme), and
 * without when the header names one of the two schemes but no well-formed
 * token (RFC 6750 §3.1); `of` says whose token the description asks for.
 */
export function presentedToken(authorization: string | undefined, of: 'customer' | 'client' = 'customer'): PresentedToken {
  const match = authorization === undefined ? null : /^(Bearer|DPoP) +([A-Za-z0-9._~+/-]+=*) *$/i.exec(authorization);
  if (!match?.[1] || !match[2]) {
    const credentialsMissing = !presentsToken(authorization);
    // POST /tokens has always worded both alike (docs/consumer-guide.md).
    if (of === 'client') throw new InvalidToken('a client access token is required: Authorization: Bearer <access_token>', { credentialsMissing });
    if (!credentialsMissing) throw new InvalidToken('the access token is invalid or expired');
    throw new InvalidToken('an access token is required: Authorization: Bearer <access_token>', { credentialsMissing: true });
  }
  return { scheme: match[1].toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer', token: match[2] };
}

/**
 * Checks how a valid token was presented against its binding (RFC 9449
 * §7; docs/resource-servers.md, "DPoP-bound tokens"):
 *
 * - a DPoP-bound token (`jkt`) must come as `Authorization: DPoP`, with one
 *   DPoP proof of that very key, for this method and URL, whose `ath` is the
 *   token's hash: as `Bearer` it is `invalid_token`; without a good proof,
 *   or with another key's, `invalid_dpop_proof` (401);
 * - a bearer token (`jkt` `null`) must come as `Bearer`: the DPoP scheme
 *   names a bound token (RFC 9449 §7.1), so it is `invalid_token`.
 *
 * The proof's nonce is checked only when it carries one.
 */
export async function checkPresentation(presented: PresentedToken, jkt: string | null, request: ResourceRequest, deps: DpopProofDeps): Promise<void> {
  if (jkt === null) {
    if (presented.scheme === 'DPoP') throw new InvalidToken('this access token is not DPoP-bound: present it as Authorization: Bearer', { challenge: 'Bearer' });
    return;
  }
  if (presented.scheme === 'Bearer') throw new InvalidToken('this access token is DPoP-bound: present it as Authorization: DPoP with a DPoP proof');
  const proof = await verifyDpopProof(
    { proofs: request.dpopProofs, method: request.method, url: request.url, accessToken: presented.token, requireNonce: false, at: 'resource' },
    deps,
  );
  if (proof.jkt !== jkt) throw new InvalidDpopProof('the DPoP proof is signed by another key than the access token is bound to', { at: 'resource' });
}
