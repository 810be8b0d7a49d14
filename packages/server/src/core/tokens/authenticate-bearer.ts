import type { Client } from '../clients/client.js';
import { InvalidToken, presentsToken } from '../errors.js';
import { verifyClientAccessToken, type TokenVerifyDeps } from './verify-tokens.js';
import type { RevokedTokenStore } from './token-session-store.js';

/** What checking a client's bearer token needs. */
export interface BearerDeps extends TokenVerifyDeps {
  findClient(id: string): Promise<Client | undefined>;
  readonly revokedTokens: Pick<RevokedTokenStore, 'isTokenRevoked'>;
}

/**
 * RFC 6750: the client behind `Authorization: Bearer <token>`, where the
 * token must be a valid, unexpired, unrevoked client-credentials access token
 * of an enabled client, issued after the client's tokens were last ended
 * (`clients disable`; docs/operator-guide.md, "Disabling a client").
 * Anything else is `invalid_token` (401); a request that presents no token
 * at all is marked `credentialsMissing` (RFC 6750 §3.1).
 */
export async function authenticateBearer(authorization: string | undefined, deps: BearerDeps): Promise<Client> {
  const match = authorization === undefined ? null : /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(authorization);
  if (!match?.[1]) {
    throw new InvalidToken('a client access token is required: Authorization: Bearer <access_token>', { credentialsMissing: !presentsToken(authorization) });
  }
  const claims = await verifyClientAccessToken(match[1], deps);
  if (!claims) throw new InvalidToken('the access token is invalid or expired');
  if (await deps.revokedTokens.isTokenRevoked(claims.jti)) throw new InvalidToken('the access token has been revoked');
  const client = await deps.findClient(claims.clientId);
  if (!client || client.status !== 'active') throw new InvalidToken('the client of this access token is disabled');
  if (clientTokenEnded(claims, client)) throw new InvalidToken('the access token was ended when its client was disabled');
  return client;
}

/**
 * Whether a client access token was ended by `clients disable`: issued at
 * or before the second the client's tokens were last ended. Such a token
 * stays refused after an enable.
 */
export function clientTokenEnded(claims: { readonly iat: number }, client: Pick<Client, 'tokensEndedAt'>): boolean {
  return client.tokensEndedAt !== null && claims.iat <= client.tokensEndedAt;
}
