import { basicAuthorization, type ResolvedOptions } from './connect-options.js';
import { InvalidResponse, UseDpopNonce } from './errors.js';
import { ASSERTION_TYPE, clientAssertion, dpopProof, rememberNonce, type DpopState } from './keys.js';
import { sendRequest, type JsonAnswer } from './send-request.js';

/** The fields of a successful `/token` answer (internal). */
export interface TokenAnswer {
  readonly accessToken: string;
  /** `DPoP` when Connect bound the token to the DPoP key (RFC 9449 §5), else `Bearer`. */
  readonly tokenType: 'Bearer' | 'DPoP';
  readonly expiresIn: number;
  readonly refreshToken: string | undefined;
  /** The scope granted (RFC 6749 §5.1), when Connect sent one. */
  readonly scope: string | undefined;
}

/**
 * The client authentication of one request (internal): the `Authorization`
 * header of `client_secret_basic`, or the body parameters of
 * `private_key_jwt` with a fresh assertion whose `aud` is the issuer
 * (`authUrl`). Built anew for every attempt: an assertion's `jti` is
 * accepted once.
 */
export async function clientAuthentication(
  options: ResolvedOptions,
): Promise<{ readonly headers: Record<string, string>; readonly params: Record<string, string> }> {
  const { credentials } = options;
  if (credentials.kind === 'secret') return { headers: { authorization: basicAuthorization(options.clientId, credentials.clientSecret) }, params: {} };
  const assertion = await clientAssertion(credentials.key, options.clientId, options.authUrl, options.clock);
  return { headers: {}, params: { client_id: options.clientId, client_assertion_type: ASSERTION_TYPE, client_assertion: assertion } };
}

/** How {@link postForm} sends. */
export interface FormPost {
  /** With DPoP on, add a proof (RFC 9449 §5); `/token` only. */
  readonly proof?: boolean;
  /** A 2xx with an empty body is a success (`/revoke`). */
  readonly allowEmpty?: boolean;
  readonly signal?: AbortSignal | undefined;
}

/**
 * One client-authenticated form `POST {auth_url}{path}` (internal), with a
 * DPoP proof when asked and DPoP is on.
 */
export async function postForm(options: ResolvedOptions, path: string, params: Readonly<Record<string, string>>, post: FormPost = {}): Promise<JsonAnswer> {
  const url = `${options.authUrl}${path}`;
  const dpop = post.proof ? options.dpop : undefined;
  return withNonceRetry(dpop, url, async () => {
    const auth = await clientAuthentication(options);
    const headers: Record<string, string> = { ...auth.headers, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (dpop) headers.dpop = await dpopProof(dpop, { method: 'POST', url }, options.clock);
    return sendRequest(
      {
        method: 'POST',
        url,
        headers,
        body: new URLSearchParams({ ...params, ...auth.params }).toString(),
        ...(post.allowEmpty ? { allowEmpty: true } : {}),
        onHeaders: (answered) => rememberNonce(dpop, url, answered),
      },
      options,
      post.signal,
    );
  });
}

/**
 * Runs `attempt` (which sends a DPoP proof to `url`) and, when it fails
 * with `use_dpop_nonce` and the answer brought a new `DPoP-Nonce` for the
 * origin (RFC 9449 §8), runs it once more, and no more (internal).
 */
export async function withNonceRetry<T>(dpop: DpopState | undefined, url: string, attempt: () => Promise<T>): Promise<T> {
  if (!dpop) return attempt();
  const origin = new URL(url).origin;
  const sent = dpop.nonces.get(origin);
  try {
    return await attempt();
  } catch (error) {
    const fresh = dpop.nonces.get(origin);
    if (error instanceof UseDpopNonce && fresh !== undefined && fresh !== sent) return attempt();
    throw error;
  }
}

/**
 * `POST {auth_url}/token`, client-authenticated, for any grant
 * (`client_credentials`, `authorization_code`, `refresh_token`); one
 * attempt (one more after a DPoP nonce challenge). With DPoP on, the
 * request carries a proof, and Connect may answer a `DPoP` or (RFC 9449 §5)
 * a `Bearer` token, which is then used as a bearer token; without DPoP only
 * a `Bearer` token is usable. The answer must hold the token with its
 * lifetime, and a refresh token and a scope only if non-empty ones (internal).
 */
export async function requestTokens(
  options: ResolvedOptions,
  params: Readonly<Record<string, string>>,
  signal?: AbortSignal,
): Promise<TokenAnswer> {
  const answer = await postForm(options, '/token', params, { proof: true, signal });
  const { access_token: accessToken, token_type: rawType, expires_in: expiresIn, refresh_token: refreshToken, scope } = answer.body;
  // RFC 6749 §7.1: the token type is case-insensitive.
  const type = typeof rawType === 'string' ? rawType.toLowerCase() : undefined;
  const tokenType = type === 'bearer' ? 'Bearer' : type === 'dpop' && options.dpop !== undefined ? 'DPoP' : undefined;
  const wellFormed =
    typeof accessToken === 'string' &&
    accessToken !== '' &&
    tokenType !== undefined &&
    isLifetime(expiresIn) &&
    (refreshToken === undefined || (typeof refreshToken === 'string' && refreshToken !== '')) &&
    (scope === undefined || (typeof scope === 'string' && scope !== ''));
  if (!wellFormed) {
    const expected = options.dpop ? 'a DPoP or bearer token' : 'a bearer token';
    throw new InvalidResponse(`the token endpoint did not answer with ${expected} and its expires_in`, {
      status: answer.status,
      endpoint: `POST ${options.authUrl}/token`,
    });
  }
  return { accessToken, tokenType, expiresIn, refreshToken, scope };
}

/** A positive whole number of seconds. */
function isLifetime(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
