import { resolveOptions, type ConnectOptions, type RequestOptions, type ResolvedOptions } from '../transport/connect-options.js';
import { scopeParameter, type ScopeInput } from './scope.js';
import { requestTokens } from '../transport/token-endpoint.js';

/**
 * A client-credentials access token (docs/consumer-guide.md): send it as
 * `Authorization: Bearer …`, or, when `tokenType` is `DPoP`, as
 * `Authorization: DPoP …` with a proof (`ClientCredentialsProvider.fetch` does either).
 */
export interface ClientToken {
  /** The token itself, a JWS-signed JWT (RFC 9068). */
  readonly accessToken: string;
  /** `Bearer`, or `DPoP` when the token is bound to the options' DPoP key (`dpop`). */
  readonly tokenType: 'Bearer' | 'DPoP';
  /** Lifetime in seconds, as Connect sent it. */
  readonly expiresIn: number;
  /** When it expires, in epoch seconds on the consumer's clock: receipt time + `expiresIn`. */
  readonly expiresAt: number;
  /**
   * The scopes it was granted, space-separated as Connect sent them
   * (docs/tokens.md, "Scopes"); absent when it has none.
   */
  readonly scope?: string;
}

/** What one client-credentials request asks for. */
export interface ClientTokenRequest extends RequestOptions {
  /**
   * The scopes to ask for (some of the client's registered ones); default
   * none named, which Connect answers with every scope of the client. A
   * scope the client does not have makes Connect refuse (`InvalidScope`).
   */
  readonly scope?: ScopeInput | undefined;
}

/**
 * Requests a client-credentials access token once (`POST {auth_url}/token`,
 * authenticated by secret or `private_key_jwt`, with a DPoP proof when
 * `dpop` is on). No cache and no retries: use
 * {@link ClientCredentialsProvider} for that.
 *
 * @throws ConnectError with Connect's error code (`invalid_client`,
 *   `invalid_scope`, …), or `invalid_response`, `timeout`, `aborted`,
 *   `network_error`.
 * @example
 * const token = await requestClientToken({ authUrl, clientId, clientSecret }, { scope: 'payments:read' });
 * await fetch(url, { headers: { authorization: `Bearer ${token.accessToken}` } });
 */
export async function requestClientToken(options: ConnectOptions, request: ClientTokenRequest = {}): Promise<ClientToken> {
  return fetchClientToken(resolveOptions(options), request.signal, scopeParameter(request.scope));
}

/** {@link requestClientToken} with resolved options and the `scope` parameter as sent (internal). */
export async function fetchClientToken(options: ResolvedOptions, signal?: AbortSignal, scope?: string): Promise<ClientToken> {
  const params: Record<string, string> = scope === undefined ? { grant_type: 'client_credentials' } : { grant_type: 'client_credentials', scope };
  const answer = await requestTokens(options, params, signal);
  const { accessToken, expiresIn, tokenType } = answer;
  const receivedAt = options.clock.nowSeconds();
  return { accessToken, tokenType, expiresIn, expiresAt: receivedAt + expiresIn, ...(answer.scope === undefined ? {} : { scope: answer.scope }) };
}
