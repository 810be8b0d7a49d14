import { randomUUID } from 'node:crypto';
import type { Client } from '../clients/client.js';
import type { Clock } from '../clock.js';
import type { ActiveSigningKey } from '../keys/key-ring.js';
import type { Lifetimes } from '../lifetimes.js';
import { formatScope, grantScope } from '../scopes.js';
import { ACCESS_TOKEN_JWT_TYPE, signJwt } from '../tokens/jwt.js';
import type { PublicUrls } from '../tokens/public-urls.js';
import type { GrantHandler } from './grant.js';

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
    const issued = await issueClientAccessToken(request.client, deps, scopes, request.dpopJkt);
    return { accessToken: issued.token, tokenType: request.dpopJkt ? 'DPoP' : 'Bearer', expiresIn: issued.expiresIn, scopes };
  },
};

/** What the client_credentials grant reads: what minting a client access token needs. */
export interface ClientCredentialsDeps {
  readonly keys: { signingKey(): ActiveSigningKey };
  readonly clock: Clock;
  readonly urls: PublicUrls;
  readonly lifetimes: Pick<Lifetimes, 'accessTokenSeconds'>;
}

/** An access token with its lifetime. */
export interface IssuedAccessToken {
  readonly token: string;
  /** Seconds until expiry (`exp - iat`). */
  readonly expiresIn: number;
  /** Expiry as epoch seconds. */
  readonly expiresAt: number;
}

/**
 * Mints a client-credentials access token: an RFC 9068 JWT signed with the
 * active key, `sub` and `client_id` both the client ID, `aud` the base URL,
 * `scope` (space-separated) when it was granted any, and `cnf.jkt` when
 * bound to a DPoP key (RFC 9449 §6).
 * `exp - iat` is exactly the configured lifetime (docs/tokens.md).
 */
export async function issueClientAccessToken(
  client: Pick<Client, 'id'>,
  deps: ClientCredentialsDeps,
  scopes: readonly string[] = [],
  jkt?: string | undefined,
): Promise<IssuedAccessToken> {
  const now = deps.clock.nowSeconds();
  const expiresAt = now + deps.lifetimes.accessTokenSeconds;
  const { kid, alg, key } = deps.keys.signingKey();
  // RFC 9068 §2.2: iss, exp, aud, sub, client_id, iat and jti; §2.2.3: scope, when there is one.
  // Claims added one by one rather than spread in: this runs for every token request.
  const claims: Record<string, string | number | { readonly jkt: string }> = {
    iss: deps.urls.authUrl,
    sub: client.id,
    aud: deps.urls.baseUrl,
    iat: now,
    exp: expiresAt,
    jti: randomUUID(),
    client_id: client.id,
  };
  if (scopes.length > 0) claims.scope = formatScope(scopes);
  // RFC 9449 §6.1: bound to the key of the request's DPoP proof.
  if (jkt) claims.cnf = { jkt };
  const token = await signJwt(claims, { alg, typ: ACCESS_TOKEN_JWT_TYPE, kid }, key);
  return { token, expiresIn: deps.lifetimes.accessTokenSeconds, expiresAt };
}
