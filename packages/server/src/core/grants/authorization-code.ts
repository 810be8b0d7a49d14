import { InvalidRequest } from '../errors.js';
import { redeemCode, type RedeemCodeDeps } from '../journey/code.js';
import type { GrantHandler } from './grant.js';

/**
 * RFC 6749 §4.1.3: exchanges an authorization code for a customer access
 * token (JWE) and, when the client has the `refresh_token` grant, a refresh
 * token (JWT; RFC 6749 §5.1 makes it optional), with the scopes granted at
 * `/authorize` (RFC 6749 §4.1.3 takes no `scope`). The redemption itself is
 * the last step of the customer's journey (`journey/code.ts`).
 */
export const authorizationCodeGrant: GrantHandler<RedeemCodeDeps> = {
  grantType: 'authorization_code',
  parameters: ['code', 'redirect_uri', 'code_verifier'],
  async handle({ params, client, correlationId }, deps) {
    const { code, redirect_uri: redirectUri, code_verifier: verifier } = params;
    if (code === undefined) throw new InvalidRequest('code is required');
    if (redirectUri === undefined) throw new InvalidRequest('redirect_uri is required');
    const { accessToken, refreshToken, scopes } = await redeemCode({ code, redirectUri, verifier, correlationId }, client, deps);
    return {
      accessToken: accessToken.token,
      tokenType: 'Bearer',
      expiresIn: deps.lifetimes.accessTokenSeconds,
      ...(refreshToken ? { refreshToken: refreshToken.token } : {}),
      scopes,
    };
  },
};
