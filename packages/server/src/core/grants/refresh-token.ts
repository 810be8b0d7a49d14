import { refreshCustomerToken, type RefreshDeps } from '../customer-tokens/refresh-customer-token.js';
import type { GrantHandler } from './grant.js';

/**
 * RFC 6749 §6: a new customer access token for the session of a refresh
 * token. The refresh token is not rotated (docs/tokens.md, "Refresh") and
 * is echoed back; the access token keeps the session's scopes, or the
 * narrower `scope` asked for.
 */
export const refreshTokenGrant: GrantHandler<RefreshDeps> = {
  grantType: 'refresh_token',
  // RFC 6749 §6: scope is optional; it may only narrow the session's.
  parameters: ['refresh_token', 'scope'],
  async handle({ params, client, correlationId }, deps) {
    const refreshed = await refreshCustomerToken(params.refresh_token, client, deps, { scope: params.scope, correlationId });
    return {
      accessToken: refreshed.accessToken,
      tokenType: 'Bearer',
      expiresIn: refreshed.expiresIn,
      refreshToken: refreshed.refreshToken,
      scopes: refreshed.scopes,
    };
  },
};
