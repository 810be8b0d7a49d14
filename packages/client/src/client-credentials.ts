import { resolveOptions, type ConnectOptions, type RequestOptions, type ResolvedOptions } from './connect-options.js';
import { requestTokens } from './token-endpoint.js';

/** A client-credentials access token (docs/consumer-guide.md): send it as `Authorization: Bearer …`. */
export interface ClientToken {
  /** The token itself, a JWS-signed JWT (RFC 9068). */
  readonly accessToken: string;
  /** Always `Bearer`. */
  readonly tokenType: 'Bearer';
  /** Lifetime in seconds, as Connect sent it. */
  readonly expiresIn: number;
  /** When it expires, in epoch seconds on the consumer's clock: receipt time + `expiresIn`. */
  readonly expiresAt: number;
}

/**
 * Requests a client-credentials access token once (`POST {auth_url}/token`,
 * `client_secret_basic`). No cache and no retries: use
 * {@link ClientCredentialsProvider} for that.
 *
 * @throws ConnectError with Connect's error code (`invalid_client`, …), or
 *   `invalid_response`, `timeout`, `aborted`, `network_error`.
 * @example
 * const token = await requestClientToken({ authUrl, clientId, clientSecret });
 * await fetch(url, { headers: { authorization: `Bearer ${token.accessToken}` } });
 */
export async function requestClientToken(options: ConnectOptions, request: RequestOptions = {}): Promise<ClientToken> {
  return fetchClientToken(resolveOptions(options), request.signal);
}

/** {@link requestClientToken} with resolved options (internal). */
export async function fetchClientToken(options: ResolvedOptions, signal?: AbortSignal): Promise<ClientToken> {
  const { accessToken, expiresIn } = await requestTokens(options, { grant_type: 'client_credentials' }, signal);
  const receivedAt = options.clock.nowSeconds();
  return { accessToken, tokenType: 'Bearer', expiresIn, expiresAt: receivedAt + expiresIn };
}
