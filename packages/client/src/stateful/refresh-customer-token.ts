import { ClientCredentialsProvider } from './client-credentials-provider.js';
import { resolveOptions, type ConnectOptions, type RequestOptions, type ResolvedOptions } from '../transport/connect-options.js';
import { customerTokensFrom, serverClockOffset, type CustomerTokens } from '../flows/customer-tokens.js';
import { InvalidGrant, InvalidResponse, InvalidToken } from '../transport/errors.js';
import { requestTokens, withNonceRetry } from '../transport/token-endpoint.js';
import { dpopProof, rememberNonce } from '../transport/keys.js';
import { withRetry } from '../transport/retry.js';
import { sendRequest } from '../transport/send-request.js';

/**
 * Where a customer token is refreshed: `token` is `POST {auth_url}/token`
 * with `grant_type=refresh_token` and the client secret; `tokens` is
 * `POST {base_url}/tokens` with a client-credentials token (bearer, or
 * DPoP-bound with a proof) and an idempotent `Request-Reference-No`.
 */
export type RefreshEndpoint = 'token' | 'tokens';

/** How one refresh is made. */
export interface RefreshOptions extends RequestOptions {
  /** The endpoint; default `token`. */
  readonly via?: RefreshEndpoint | undefined;
  /** For `tokens`: where the bearer token comes from; default a new provider on the same options. */
  readonly clientCredentials?: ClientCredentialsProvider | undefined;
}

/**
 * Gets a new customer access token with the refresh token (docs/consumer-guide.md,
 * "When to renew which token", second row). The previous access token stops working at once; the
 * refresh token stays the same. Transient failures are retried: at
 * `/tokens` with the same `Request-Reference-No`, so a lost answer is
 * answered again instead of refreshing twice.
 *
 * @throws InvalidGrant when the refresh token is expired, revoked or unknown
 *   (the customer must authorize again), or another `ConnectError`.
 * @example
 * const fresh = await refreshCustomerToken(options, tokens, { via: 'tokens' });
 */
export async function refreshCustomerToken(options: ConnectOptions, tokens: CustomerTokens, refresh: RefreshOptions = {}): Promise<CustomerTokens> {
  const resolved = resolveOptions(options);

  if (refresh.via === 'tokens') {
    return refreshAtTokens(resolved, tokens, refresh.clientCredentials ?? new ClientCredentialsProvider(options), refresh.signal);
  }
  return refreshAtToken(resolved, tokens, refresh.signal);
}

/** `POST {auth_url}/token` with `grant_type=refresh_token` (internal). */
export async function refreshAtToken(options: ResolvedOptions, tokens: CustomerTokens, signal?: AbortSignal): Promise<CustomerTokens> {
  const answer = await withRetry(
    () => requestTokens(options, { grant_type: 'refresh_token', refresh_token: refreshTokenOf(tokens) }, signal),
    options.retry,
    signal,
  );
  const refreshToken = answer.refreshToken ?? tokens.refreshToken;
  return customerTokensFrom(
    { accessToken: answer.accessToken, tokenType: answer.tokenType, refreshToken, expiresIn: answer.expiresIn, scope: answer.scope },
    options.clock.nowSeconds(),
    tokens,
  );
}

/** `POST {base_url}/tokens` (docs/consumer-guide.md, "Refreshing a customer's access token") (internal). */
export async function refreshAtTokens(
  options: ResolvedOptions,
  tokens: CustomerTokens,
  clientCredentials: ClientCredentialsProvider,
  signal?: AbortSignal,
): Promise<CustomerTokens> {
  // One reference for every attempt: Connect answers a retry with the first answer.
  const reference = crypto.randomUUID();
  const body = JSON.stringify({ refreshToken: refreshTokenOf(tokens) });
  const url = `${options.baseUrl}/tokens`;
  // The client token as Connect issued it: Bearer, or DPoP-bound with a proof (`ath`) and the origin's nonce.
  const send = () =>
    withNonceRetry(options.dpop, url, async () => {
      const clientToken = await clientCredentials.getToken({ signal });
      const dpop = clientToken.tokenType === 'DPoP' ? options.dpop : undefined;
      const headers: Record<string, string> = {
        authorization: `${dpop ? 'DPoP' : 'Bearer'} ${clientToken.accessToken}`,
        accept: 'application/json',
        'content-type': 'application/json',
        'request-reference-no': reference,
      };
      if (dpop) headers.dpop = await dpopProof(dpop, { method: 'POST', url, accessToken: clientToken.accessToken }, options.clock);
      return sendRequest({ method: 'POST', url, headers, body, onHeaders: (answered) => rememberNonce(options.dpop, url, answered) }, options, signal);
    });
  const answer = await withRetry(
    async () => {
      try {
        return await send();
      } catch (error) {
        // Our client token was refused (revoked, or expired early by Connect's clock): get a new one, once.
        if (!(error instanceof InvalidToken)) throw error;
        clientCredentials.invalidate();
        return send();
      }
    },
    options.retry,
    signal,
  );
  const now = options.clock.nowSeconds();
  const { accessToken, refreshToken, expiresAt, scope, tokenType: answeredType } = answer.body;
  const scopeOk = scope === undefined || (typeof scope === 'string' && scope !== '');
  if (typeof accessToken !== 'string' || accessToken === '' || typeof refreshToken !== 'string' || refreshToken === '' || !Number.isSafeInteger(expiresAt) || !scopeOk) {
    throw new InvalidResponse('POST /tokens did not answer with accessToken, refreshToken and expiresAt', {
      status: answer.status,
      endpoint: `POST ${options.baseUrl}/tokens`,
    });
  }
  // expiresAt is on Connect's clock; turn it into a lifetime counted on ours.
  const expiresIn = Math.max(1, (expiresAt as number) - serverClockOffset(tokens) - now);
  // A DPoP-bound session stays bound through its refreshes; Connect may say so itself.
  const tokenType = typeof answeredType === 'string' ? (answeredType.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer') : tokens.tokenType;
  return customerTokensFrom({ accessToken, tokenType, refreshToken, expiresIn, scope: scope as string | undefined }, now, tokens);
}

/** The refresh token of `tokens`; `InvalidGrant` when there is none (a client without the `refresh_token` grant). */
function refreshTokenOf(tokens: CustomerTokens): string {
  if (tokens.refreshToken === undefined) {
    throw new InvalidGrant('these tokens have no refresh token: the client has no refresh_token grant', {
      hint: 'Send the customer through the authorization again; to keep customers linked past the access token\'s lifetime, ask the operator to add the refresh_token grant to the client.',
    });
  }
  return tokens.refreshToken;
}
