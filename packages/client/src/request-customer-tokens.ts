import { isLifetime } from './client-credentials.js';
import { basicAuthorization, type ResolvedOptions } from './connect-options.js';
import { InvalidResponse } from './errors.js';
import { sendRequest } from './send-request.js';

/** The fields of a `/token` answer for a customer (internal). */
export interface CustomerTokenAnswer {
  readonly accessToken: string;
  readonly expiresIn: number;
  readonly refreshToken: string | undefined;
}

/**
 * `POST {auth_url}/token` for a customer grant (`authorization_code` or
 * `refresh_token`) with `client_secret_basic`; one attempt (internal).
 */
export async function requestCustomerTokens(
  options: ResolvedOptions,
  params: Readonly<Record<string, string>>,
  signal?: AbortSignal,
): Promise<CustomerTokenAnswer> {
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
  const { access_token: accessToken, token_type: tokenType, expires_in: expiresIn, refresh_token: refreshToken } = answer.body;
  const wellFormed =
    typeof accessToken === 'string' &&
    accessToken !== '' &&
    typeof tokenType === 'string' &&
    tokenType.toLowerCase() === 'bearer' &&
    isLifetime(expiresIn) &&
    (refreshToken === undefined || (typeof refreshToken === 'string' && refreshToken !== ''));
  if (!wellFormed) {
    throw new InvalidResponse('the token endpoint did not answer with a bearer token and its expires_in', {
      status: answer.status,
      endpoint: `POST ${options.authUrl}/token`,
    });
  }
  return { accessToken, expiresIn, refreshToken };
}
