import { resolveOptions, type ConnectOptions, type RequestOptions, type ResolvedOptions } from '../transport/connect-options.js';
import { customerTokensFrom, type CustomerTokens } from './customer-tokens.js';
import { requestTokens } from '../transport/token-endpoint.js';

/** The authorization code and what the authorization request said. */
export interface CodeGrant {
  /** The `code` of the callback. */
  readonly code: string;
  /** The redirect URI of the authorization request (RFC 6749 §4.1.3: must be repeated). */
  readonly redirectUri: string;
  /** The PKCE verifier of the authorization request, if it used PKCE. */
  readonly codeVerifier?: string | undefined;
}

/**
 * Exchanges an authorization code for the customer's tokens
 * (`POST {auth_url}/token`, `grant_type=authorization_code`,
 * client-authenticated, with a DPoP proof when `dpop` is on: the tokens are
 * then bound to the key, `tokenType: 'DPoP'`). `expiresAt` is counted from the answer's arrival
 * on the injected clock.
 *
 * Never retried: a code is single use, and a second exchange makes Connect
 * revoke every token of the first (RFC 6749 §4.1.2), so a lost answer
 * means starting the authorization again.
 *
 * @example
 * const callback = parseCallback(url, { state: pending.state, issuer: authUrl });
 * const tokens = await exchangeCode(options, { ...pending, code: callback.code });
 */
export async function exchangeCode(options: ConnectOptions, grant: CodeGrant, request: RequestOptions = {}): Promise<CustomerTokens> {
  return exchangeCodeWith(resolveOptions(options), grant, request.signal);
}

/** {@link exchangeCode} with resolved options (internal). */
export async function exchangeCodeWith(resolved: ResolvedOptions, grant: CodeGrant, signal?: AbortSignal): Promise<CustomerTokens> {
  const answer = await requestTokens(
    resolved,
    {
      grant_type: 'authorization_code',
      code: grant.code,
      redirect_uri: grant.redirectUri,
      ...(grant.codeVerifier === undefined ? {} : { code_verifier: grant.codeVerifier }),
    },
    signal,
  );
  // No refresh token for a client without the refresh_token grant.
  return customerTokensFrom(answer, resolved.clock.nowSeconds());
}
