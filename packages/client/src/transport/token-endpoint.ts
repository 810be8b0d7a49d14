import { basicAuthorization, type ResolvedOptions } from './connect-options.js';
import { InvalidResponse } from './errors.js';
import { sendRequest } from './send-request.js';

/** The fields of a successful `/token` answer (internal). */
export interface TokenAnswer {
  readonly accessToken: string;
  readonly expiresIn: number;
  readonly refreshToken: string | undefined;
  /** The scope granted (RFC 6749 §5.1), when Connect sent one. */
  readonly scope: string | undefined;
}

/**
 * `POST {auth_url}/token` with `client_secret_basic`, for any grant
 * (`client_credentials`, `authorization_code`, `refresh_token`); one attempt.
 * The answer must hold a bearer token with its lifetime, and a refresh token
 * and a scope only if non-empty ones (internal).
 */
export async function requestTokens(
  options: ResolvedOptions,
  params: Readonly<Record<string, string>>,
  signal?: AbortSignal,
): Promise<TokenAnswer> {
  const answer = await sendRequest(
    {
      method: 'POST',
      url: `${options.authUrl}/token`,
      headers: {
        authorization: basicAuthorization(options.clientId, options.clientSecret),
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams(params).toString(),
    },
    options,
    signal,
  );
  const { access_token: accessToken, token_type: tokenType, expires_in: expiresIn, refresh_token: refreshToken, scope } = answer.body;
  const wellFormed =
    typeof accessToken === 'string' &&
    accessToken !== '' &&
    typeof tokenType === 'string' &&
    // RFC 6749 §7.1: the token type is case-insensitive.
    tokenType.toLowerCase() === 'bearer' &&
    isLifetime(expiresIn) &&
    (refreshToken === undefined || (typeof refreshToken === 'string' && refreshToken !== '')) &&
    (scope === undefined || (typeof scope === 'string' && scope !== ''));
  if (!wellFormed) {
    throw new InvalidResponse('the token endpoint did not answer with a bearer token and its expires_in', {
      status: answer.status,
      endpoint: `POST ${options.authUrl}/token`,
    });
  }
  return { accessToken, expiresIn, refreshToken, scope };
}

/** A positive whole number of seconds. */
function isLifetime(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
