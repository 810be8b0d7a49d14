import type { ResolvedOptions } from './connect-options.js';
import { dpopProof, rememberNonce } from './keys.js';

/** An access token and how it is presented. */
export interface PresentedToken {
  readonly accessToken: string;
  /** `DPoP`: `Authorization: DPoP …` with a proof; otherwise `Bearer`. */
  readonly tokenType?: 'Bearer' | 'DPoP' | undefined;
}

/**
 * Calls an API with an access token (internal): `Authorization: Bearer …`,
 * or for a DPoP-bound token `Authorization: DPoP …` and a `DPoP` proof
 * with `htm`, `htu`, `ath` and the origin's latest nonce. An answer `401`
 * with `WWW-Authenticate: DPoP error="use_dpop_nonce"` and a new
 * `DPoP-Nonce` is answered once, when the body can be sent again.
 */
export async function fetchWithToken(options: ResolvedOptions, input: string | URL, init: RequestInit, token: PresentedToken): Promise<Response> {
  const url = new URL(input);
  const method = (init.method ?? 'GET').toUpperCase();
  const dpop = token.tokenType === 'DPoP' ? options.dpop : undefined;
  if (token.tokenType === 'DPoP' && !dpop) {
    throw new TypeError('the token is DPoP-bound: set dpop in the options, with the key pair it was bound to');
  }
  const send = async () => {
    const headers = new Headers(init.headers);
    if (dpop) {
      headers.set('authorization', `DPoP ${token.accessToken}`);
      headers.set('dpop', await dpopProof(dpop, { method, url, accessToken: token.accessToken }, options.clock));
    } else {
      headers.set('authorization', `Bearer ${token.accessToken}`);
    }
    const response = await options.fetch(input, { ...init, headers });
    // Any answer may carry the origin's next nonce (RFC 9449 §8.2).
    rememberNonce(options.dpop, url, response.headers);
    return response;
  };
  const sent = dpop?.nonces.get(url.origin);
  const first = await send();
  if (!dpop || first.status !== 401 || !isNonceChallenge(first)) return first;
  const fresh = dpop.nonces.get(url.origin);
  if (fresh === undefined || fresh === sent || !replayable(init.body)) return first;
  await first.body?.cancel();
  return send();
}

/** Whether a 401 asks for a DPoP nonce (RFC 9449 §9). */
export function isNonceChallenge(response: Response): boolean {
  const challenge = response.headers.get('www-authenticate') ?? '';
  return /(?:^|,)\s*DPoP\b[^]*?\berror\s*=\s*"?use_dpop_nonce"?/i.test(challenge);
}

/** Whether a `fetch` body can be sent a second time. */
export function replayable(body: RequestInit['body']): boolean {
  if (body === undefined || body === null || typeof body === 'string') return true;
  if (body instanceof URLSearchParams || body instanceof Blob || body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return true;
  if (typeof FormData !== 'undefined' && body instanceof FormData) return true;
  // A ReadableStream, or an async iterable Node's fetch accepts: consumed by the first attempt.
  return false;
}
