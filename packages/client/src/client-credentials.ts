import { ConnectError, type ConnectErrorCode } from './errors.js';

/** Where Connect is and who the consumer is. */
export interface ClientCredentialsOptions {
  /** Connect's `{auth_url}`, e.g. `https://auth.sandbox.example`. */
  readonly authUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Give up after this many milliseconds; default 10,000. */
  readonly timeoutMs?: number;
  /** A `fetch` to use instead of the global one. */
  readonly fetch?: typeof fetch;
}

/** A client-credentials access token. */
export interface ClientToken {
  readonly accessToken: string;
  readonly tokenType: 'Bearer';
  /** Lifetime in seconds, as Connect sent it. */
  readonly expiresIn: number;
}

const KNOWN_CODES = new Set<string>([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_token',
  'temporarily_unavailable',
  'server_error',
]);

/**
 * Requests a client-credentials access token (`POST {auth_url}/token`,
 * authenticating with HTTP Basic).
 *
 * @throws ConnectError with Connect's error code, or `invalid_response` when
 *   the answer is not a token response.
 * @example
 * const token = await requestClientToken({ authUrl, clientId, clientSecret });
 * await fetch(url, { headers: { authorization: `Bearer ${token.accessToken}` } });
 */
export async function requestClientToken(options: ClientCredentialsOptions): Promise<ClientToken> {
  const doFetch = options.fetch ?? fetch;
  // RFC 6749 §2.3.1: both parts are form-encoded before Basic encoding.
  const basic = btoa(`${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`);
  const response = await doFetch(`${options.authUrl.replace(/\/+$/, '')}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    },
    body: 'grant_type=client_credentials',
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
  });
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) throw toError(body, response.status);
  const token = body as { access_token?: unknown; token_type?: unknown; expires_in?: unknown } | undefined;
  if (typeof token?.access_token !== 'string' || typeof token.expires_in !== 'number' || token.token_type !== 'Bearer') {
    throw new ConnectError('invalid_response', 'the token endpoint did not answer with a token', response.status);
  }
  return { accessToken: token.access_token, tokenType: 'Bearer', expiresIn: token.expires_in };
}

function toError(body: unknown, status: number): ConnectError {
  const error = (body as { error?: unknown } | undefined)?.error;
  const description = (body as { error_description?: unknown } | undefined)?.error_description;
  if (typeof error === 'string' && KNOWN_CODES.has(error)) {
    return new ConnectError(error as ConnectErrorCode, typeof description === 'string' ? description : undefined, status);
  }
  return new ConnectError('invalid_response', `unexpected answer with HTTP status ${status}`, status);
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}
