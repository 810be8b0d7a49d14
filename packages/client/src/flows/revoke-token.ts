import { basicAuthorization, resolveOptions, type ConnectOptions, type RequestOptions } from '../transport/connect-options.js';
import { withRetry } from '../transport/retry.js';
import { sendRequest } from '../transport/send-request.js';

/**
 * Revokes a token at `POST {auth_url}/revoke` (RFC 7009). Revoking a
 * customer's refresh token ends the customer's session with you, its access
 * token included: do it when the customer unlinks. Revocation is idempotent,
 * so transient failures are retried.
 *
 * @example
 * await revokeToken(options, tokens.refreshToken);
 */
export async function revokeToken(options: ConnectOptions, token: string, request: RequestOptions = {}): Promise<void> {
  const resolved = resolveOptions(options);
  await withRetry(
    () =>
      sendRequest(
        {
          method: 'POST',
          url: `${resolved.authUrl}/revoke`,
          headers: {
            authorization: basicAuthorization(resolved.clientId, resolved.clientSecret),
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
          },
          body: new URLSearchParams({ token }).toString(),
          // RFC 7009 §2.2: 200; Connect answers {}, an empty body is taken as success too.
          allowEmpty: true,
        },
        resolved,
        request.signal,
      ),
    resolved.retry,
    request.signal,
  );
}
