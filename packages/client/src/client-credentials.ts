import { resolveOptions, basicAuthorization, type ConnectOptions, type RequestOptions, type ResolvedOptions } from './connect-options.js';
import { InvalidResponse } from './errors.js';
import { sendRequest } from './send-request.js';

/** A client-credentials access token (seed §5.3): send it as `Authorization: Bearer …`. */
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
  const answer = await sendRequest(
    {
      method: 'POST',
      url: `${options.authUrl}/token`,
      headers: {
        authorization: basicAuthorization(options.clientId, options.clientSecret),
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: 'grant_type=client_credentials',
    },
    options,
    signal,
  );
  const receivedAt = options.clock.nowSeconds();
  const { access_token: accessToken, token_type: tokenType, expires_in: expiresIn } = answer.body;
  // RFC 6749 §7.1: the token type is case-insensitive.
  if (typeof accessToken !== 'string' || accessToken === '' || typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer' || !isLifetime(expiresIn)) {
    throw new InvalidResponse('the token endpoint did not answer with a bearer token and its expires_in', {
      status: answer.status,
      endpoint: `POST ${options.authUrl}/token`,
    });
  }
  return { accessToken, tokenType: 'Bearer', expiresIn, expiresAt: receivedAt + expiresIn };
}

/** A positive whole number of seconds. */
export function isLifetime(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
