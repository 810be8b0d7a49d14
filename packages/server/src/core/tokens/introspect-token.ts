import type { Client } from '../clients/client.js';
import { authenticationClaims } from '../authentication.js';
import { formatScope } from '../scopes.js';
import { clientTokenEnded } from './authenticate-bearer.js';
import type { RevokedTokenStore, TokenSessionStore } from './token-session-store.js';
import { decryptCustomerAccessToken, verifyClientAccessToken, verifyRefreshToken, type TokenVerifyDeps } from './verify-tokens.js';

/** What introspection and revocation read and write. */
export interface TokenStateDeps extends TokenVerifyDeps {
  readonly tokenSessions: Pick<TokenSessionStore, 'findTokenSession' | 'revokeTokenSession' | 'revokeAccessToken'>;
  readonly revokedTokens: Pick<RevokedTokenStore, 'isTokenRevoked' | 'revokeToken'>;
  /** The client a token was issued to, as it is now (for a resource server's introspection of another client's token). */
  findClient(id: string): Promise<Client | undefined>;
}

/**
 * RFC 7662 §2.2 response. `token_type` is the access token type of RFC 6749
 * §7.1 (`Bearer`), so a refresh token, which has none, is answered without
 * it (docs/consumer-guide.md, "Introspection and revocation").
 */
export type IntrospectionResponse =
  | { readonly active: false }
  | {
      readonly active: true;
      /** `DPoP` for a DPoP-bound access token (RFC 9449 §6.2), else `Bearer`. */
      readonly token_type?: 'Bearer' | 'DPoP';
      /** RFC 9449 §6.2: the key a bound token is bound to; the introspecting resource server checks the proof itself. */
      readonly cnf?: { readonly jkt: string };
      readonly client_id: string;
      readonly sub: string;
      readonly iss: string;
      readonly aud: string;
      readonly iat: number;
      readonly exp: number;
      readonly jti: string;
      readonly sid?: string;
      /** The token's scopes, space-separated; absent when it has none. */
      readonly scope?: string;
      /** Customer tokens: how the customer signed in (docs/tokens.md, "How the customer signed in"); absent when unknown. */
      readonly acr?: string;
      readonly amr?: string[];
      readonly auth_time?: number;
    };

/** A token Connect recognised, with what decides whether it is still good. */
export type IdentifiedToken =
  | { readonly kind: 'client_access'; readonly claims: Awaited<ReturnType<typeof verifyClientAccessToken>> & object }
  | { readonly kind: 'customer_access'; readonly claims: NonNullable<Awaited<ReturnType<typeof decryptCustomerAccessToken>>> }
  | { readonly kind: 'refresh'; readonly claims: NonNullable<Awaited<ReturnType<typeof verifyRefreshToken>>> };

/**
 * Recognises any token Connect issued whose signature or encryption and
 * claims check out (expired ones are not recognised). The hint only picks
 * the first guess (RFC 7009 §2.1); every kind is tried.
 */
export async function identifyToken(token: string, deps: TokenVerifyDeps): Promise<IdentifiedToken | undefined> {
  const parts = token.split('.').length;
  if (parts === 5) {
    const claims = await decryptCustomerAccessToken(token, deps);
    return claims && { kind: 'customer_access', claims };
  }
  if (parts !== 3) return undefined;
  const access = await verifyClientAccessToken(token, deps);
  if (access) return { kind: 'client_access', claims: access };
  const refresh = await verifyRefreshToken(token, deps);
  return refresh && { kind: 'refresh', claims: refresh };
}

/**
 * Whether `client` may learn the state of a token: a consumer sees only its
 * own tokens; a resource server sees every access token of its environment
 * (customer and client access tokens, whoever holds them) and no refresh
 * token, which is never presented to an API (docs/resource-servers.md,
 * "What a resource server's credentials can do").
 */
function mayIntrospect(client: Client, found: IdentifiedToken): boolean {
  if (client.kind === 'resource_server') return found.kind !== 'refresh';
  return found.claims.clientId === client.id;
}

/**
 * RFC 7662: whether `token` is active, for the client that asks. A consumer
 * sees only its own tokens, a resource server every access token (see
 * {@link mayIntrospect}); any other token is `{ active: false }`, as is
 * anything expired, revoked, replaced by a refresh, ended by `clients
 * disable` or `customers lock`, or not Connect's, and a refresh token of a
 * client that lost the `refresh_token` grant (`/token` refuses it then).
 */
export async function introspectToken(token: string | undefined, client: Client, deps: TokenStateDeps): Promise<IntrospectionResponse> {
  const inactive = { active: false } as const;
  if (!token) return inactive;
  const found = await identifyToken(token, deps);
  if (!found || !mayIntrospect(client, found)) return inactive;
  const { claims } = found;
  const base = {
    client_id: claims.clientId,
    sub: claims.sub,
    iss: claims.iss,
    iat: claims.iat,
    exp: claims.exp,
    jti: claims.jti,
    // RFC 7662 §2.2: the token's scopes, space-separated, when it has any.
    ...(claims.scopes.length > 0 ? { scope: formatScope(claims.scopes) } : {}),
    // RFC 9449 §6.2: a bound token's key, for the resource server to match the request's DPoP proof against.
    ...(claims.jkt !== null ? { cnf: { jkt: claims.jkt } } : {}),
  };
  const tokenType = claims.jkt !== null ? ('DPoP' as const) : ('Bearer' as const);

  if (found.kind === 'client_access') {
    // The token's own client as it is now: the asking one, or (for a resource server) looked up.
    const holder = claims.clientId === client.id ? client : await deps.findClient(claims.clientId);
    if (!holder || holder.status !== 'active' || clientTokenEnded(claims, holder)) return inactive;
    if (await deps.revokedTokens.isTokenRevoked(claims.jti)) return inactive;
    return { active: true, token_type: tokenType, ...base, aud: deps.urls.baseUrl };
  }
  const session = await deps.tokenSessions.findTokenSession(found.claims.sid);
  const now = deps.clock.nowSeconds();
  if (!session || session.revokedAt !== null || session.clientId !== claims.clientId || session.profileId !== claims.sub) return inactive;
  // RFC 7662 §2.2 allows other claims: the sign-in's acr, amr and auth_time, as the token carries them.
  const signIn = authenticationClaims(found.claims.authentication);
  if (found.kind === 'customer_access') {
    if (session.accessJti !== claims.jti) return inactive;
    return { active: true, token_type: tokenType, ...base, aud: deps.urls.baseUrl, sid: found.claims.sid, ...signIn };
  }
  if (session.refreshJti !== claims.jti || session.refreshExpiresAt <= now) return inactive;
  // Only its own client asks (`mayIntrospect`): one that lost the refresh_token grant can no longer use it at /token.
  if (!client.grants.includes('refresh_token')) return inactive;
  return { active: true, ...base, aud: deps.urls.authUrl, sid: found.claims.sid, ...signIn };
}

/**
 * RFC 7009: revokes a token of the asking client. A refresh token ends its
 * whole session, and with it the session's access token; a customer access
 * token ends alone (the refresh token can get a new one); a client access
 * token is refused from then until it expires. Unknown, foreign or already
 * invalid tokens are ignored, as §2.2 asks.
 */
export async function revokeToken(token: string | undefined, client: Client, deps: TokenStateDeps): Promise<void> {
  if (!token) return;
  const found = await identifyToken(token, deps);
  if (!found || found.claims.clientId !== client.id) return;
  const now = deps.clock.nowSeconds();
  switch (found.kind) {
    case 'refresh':
      await deps.tokenSessions.revokeTokenSession(found.claims.sid, now);
      return;
    case 'customer_access':
      await deps.tokenSessions.revokeAccessToken(found.claims.sid, found.claims.jti);
      return;
    case 'client_access':
      await deps.revokedTokens.revokeToken({ jti: found.claims.jti, clientId: client.id, revokedAt: now, expiresAt: found.claims.exp });
      return;
  }
}
