import { grantScope } from '../scopes.js';
import { issueClientAccessToken, type ClientAccessTokenDeps } from '../tokens/client-access-token.js';
import type { GrantHandler } from './grant.js';

/** What the client_credentials grant reads. */
export type ClientCredentialsDeps = ClientAccessTokenDeps;

/**
 * RFC 6749 §4.4: the client authenticated and is allowed this grant, so it
 * gets an access token for itself, with the scopes it asked for (all of
 * its registered ones when it named none; docs/tokens.md, "Scopes"). No
 * refresh token is issued (§4.4.3).
 */
export const clientCredentialsGrant: GrantHandler<ClientCredentialsDeps> = {
  grantType: 'client_credentials',
  // RFC 6749 §4.4.2: scope is optional.
  parameters: ['scope'],
  async handle(request, deps) {
    const scopes = grantScope(request.params.scope, request.client.scopes);
    const issued = await issueClientAccessToken(request.client, deps, scopes);
    return { accessToken: issued.token, tokenType: 'Bearer', expiresIn: issued.expiresIn, scopes };
  },
};
