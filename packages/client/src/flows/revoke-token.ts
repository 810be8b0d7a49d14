import { resolveOptions, type ConnectOptions, type RequestOptions, type ResolvedOptions } from '../transport/connect-options.js';
import { withRetry } from '../transport/retry.js';
import { postForm } from '../transport/token-endpoint.js';

/**
 * Revokes a token at `POST {auth_url}/revoke` (RFC 7009). Revoking a
 * customer's refresh token ends the customer's session with you, its access
 * token included: do it when the customer unlinks. Revocation is idempotent,
 * so transient failures are retried. The client authenticates as its
 * options say (secret or `private_key_jwt`).
 *
 * @example
 * await revokeToken(options, tokens.refreshToken);
 */
export async function revokeToken(options: ConnectOptions, token: string, request: RequestOptions = {}): Promise<void> {
  return revokeWith(resolveOptions(options), token, request);
}

/** {@link revokeToken} with resolved options (internal). */
export async function revokeWith(resolved: ResolvedOptions, token: string, request: RequestOptions = {}): Promise<void> {
  await withRetry(
    // RFC 7009 §2.2: 200; Connect answers {}, an empty body is taken as success too.
    () => postForm(resolved, '/revoke', { token }, { allowEmpty: true, signal: request.signal }),
    resolved.retry,
    request.signal,
  );
}
