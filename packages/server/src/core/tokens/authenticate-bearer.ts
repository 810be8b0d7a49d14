import type { Client } from '../clients/client.js';
import { InvalidToken } from '../errors.js';
import type { DpopProofDeps } from '../dpop/dpop-proof.js';
import { checkPresentation, presentedToken, type ResourceRequest } from '../dpop/presented-token.js';
import { verifyClientAccessToken, type TokenVerifyDeps } from './verify-tokens.js';
import type { RevokedTokenStore } from './token-session-store.js';

/** What checking a client's access token needs. */
export interface BearerDeps extends TokenVerifyDeps {
  findClient(id: string): Promise<Client | undefined>;
  readonly revokedTokens: Pick<RevokedTokenStore, 'isTokenRevoked'>;
  /** DPoP proof checks, for DPoP-bound client tokens (RFC 9449 §7). */
  readonly dpop: DpopProofDeps;
}

/** The client a request's access token stands for, and the DPoP key it proved, if its token is bound. */
export interface AuthenticatedCaller {
  readonly client: Client;
  /** The key of the request's DPoP proof (the token's `cnf.jkt`); absent for a bearer token. */
  readonly dpopJkt?: string | undefined;
}

/**
 * RFC 6750, RFC 9449 §7: the client behind `Authorization: Bearer <token>`
 * or, for a DPoP-bound token, `Authorization: DPoP <token>` with a DPoP
 * proof of its key (`checkPresentation`). The token must be a valid,
 * unexpired, unrevoked client-credentials access token
 * of an enabled client, issued after the client's tokens were last ended
 * (`clients disable`; docs/operator-guide.md, "Disabling a client").
 * Anything else is `invalid_token` (401), or `invalid_dpop_proof` (401) for
 * a bad proof; a request that presents no token
 * at all is marked `credentialsMissing` (RFC 6750 §3.1).
 */
export async function authenticateBearer(request: ResourceRequest, deps: BearerDeps): Promise<AuthenticatedCaller> {
  const presented = presentedToken(request.authorization, 'client');
  const claims = await verifyClientAccessToken(presented.token, deps);
  if (!claims) throw new InvalidToken('the access token is invalid or expired');
  if (await deps.revokedTokens.isTokenRevoked(claims.jti)) throw new InvalidToken('the access token has been revoked');
  const client = await deps.findClient(claims.clientId);
  if (!client || client.status !== 'active') throw new InvalidToken('the client of this access token is disabled');
  if (clientTokenEnded(claims, client)) throw new InvalidToken('the access token was ended when its client was disabled');
  await checkPresentation(presented, claims.jkt, request, deps.dpop);
  return claims.jkt === null ? { client } : { client, dpopJkt: claims.jkt };
}

/**
 * Whether a client access token was ended by `clients disable`: issued at
 * or before the second the client's tokens were last ended. Such a token
 * stays refused after an enable.
 */
export function clientTokenEnded(claims: { readonly iat: number }, client: Pick<Client, 'tokensEndedAt'>): boolean {
  return client.tokensEndedAt !== null && claims.iat <= client.tokensEndedAt;
}
