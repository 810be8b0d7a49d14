import { auditActor } from '../audit/audit-actor.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { Client } from '../clients/client.js';
import { InvalidDpopProof, InvalidGrant, InvalidRequest } from '../errors.js';
import { seal } from '../keys/master-key.js';
import { asSubKeys, unsealAccepted, type SubKeys } from '../keys/master-keys.js';
import { reuseLabel } from '../keys/sealed-labels.js';
import { formatScope, grantScope, keepScopes } from '../scopes.js';
import { mintCustomerAccessToken, type CustomerTokenDeps } from '../tokens/customer-tokens.js';
import { decryptCustomerAccessToken, verifyRefreshToken, type TokenVerifyDeps } from '../tokens/verify-tokens.js';
import type { TokenSessionStore } from '../tokens/token-session-store.js';
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
  async handle({ params, client, correlationId, dpopJkt }, deps) {
    const refreshed = await refreshCustomerToken(params.refresh_token, client, deps, { scope: params.scope, correlationId, dpopJkt });
    return {
      accessToken: refreshed.accessToken,
      tokenType: refreshed.tokenType,
      expiresIn: refreshed.expiresIn,
      refreshToken: refreshed.refreshToken,
      scopes: refreshed.scopes,
    };
  },
};

/**
 * The reuse interval of refreshes (`CONNECT_REFRESH_REUSE_SECONDS`;
 * docs/tokens.md, "Concurrent refreshes").
 */
export interface RefreshReuse {
  /** Refreshes within this long of the refresh that minted the session's access token get it again; 0: never. */
  readonly seconds: number;
  /** Seals the access token a refresh minted, for the refreshes after it (sub-keys derived from the master keys). */
  readonly sealKey: SubKeys | Uint8Array;
}

/** What a refresh needs. */
export interface RefreshDeps extends Omit<CustomerTokenDeps, 'keys'>, Omit<TokenVerifyDeps, 'keys'> {
  readonly keys: CustomerTokenDeps['keys'] & TokenVerifyDeps['keys'];
  readonly tokenSessions: Pick<TokenSessionStore, 'findTokenSession' | 'replaceAccessToken'>;
  readonly audit: AuditLog;
  /** Absent: every refresh mints a new access token (as `CONNECT_REFRESH_REUSE_SECONDS=0`). */
  readonly reuse?: RefreshReuse | undefined;
}

/** A refreshed customer access token. */
export interface RefreshedTokens {
  readonly accessToken: string;
  /** The refresh token, unchanged (docs/tokens.md, "Refresh": it stays valid until it expires). */
  readonly refreshToken: string;
  readonly expiresIn: number;
  /** Expiry of the new access token, epoch seconds. */
  readonly expiresAt: number;
  /** The token session, and the `jti` of its new access token: what a later replay re-checks. */
  readonly sid: string;
  readonly accessJti: string;
  /** The scopes of the new access token (docs/tokens.md, "Scopes"). */
  readonly scopes: readonly string[];
  /** `DPoP` when the new access token is bound to a DPoP key (docs/tokens.md, "DPoP-bound tokens"), else `Bearer`. */
  readonly tokenType: 'Bearer' | 'DPoP';
}

/** What a refresh request says besides its refresh token. */
export interface RefreshOptions {
  /** RFC 6749 §6: a narrower scope for the new access token; absent: the session's. */
  readonly scope?: string | undefined;
  /** The ID of the request this is part of, recorded with the audit event of a revoked token's use. */
  readonly correlationId?: string | undefined;
  /** The key of the request's verified DPoP proof, if one came (RFC 9449 §5). */
  readonly dpopJkt?: string | undefined;
}

/** A refresh whose new access token is minted but not yet the session's: `apply()` makes it so. */
export interface PreparedRefresh {
  readonly refreshed: RefreshedTokens;
  /**
   * Makes the new access token the session's only valid one, with one
   * conditional update, and returns `refreshed`; or, within the reuse
   * interval of the refresh that minted the session's current access token,
   * keeps that one and returns it instead (same token, same expiry). Throws
   * `InvalidGrant` (and audits the use of a revoked refresh token) when
   * the session is unknown, revoked or expired.
   */
  apply(): Promise<RefreshedTokens>;
}

/**
 * Exchanges a refresh token for a new customer access token of the same
 * session (RFC 6749 §6; docs/tokens.md, "Refresh"). The previous access
 * token of the session stops being accepted at once; the refresh token
 * stays valid until its own expiry. Expired, revoked, unknown or another client's refresh tokens get
 * `invalid_grant`. The new access token has the session's scopes, less any
 * the client is no longer registered for, or the narrower `scope` asked
 * for (a scope beyond the session's: `invalid_scope`). Refreshes within
 * `deps.reuse.seconds` of the refresh that minted the session's access
 * token, for the same scope, get that token again (docs/tokens.md,
 * "Concurrent refreshes"). One statement when it succeeds
 * (docs/operator-guide.md, "Database round trips").
 */
export async function refreshCustomerToken(
  refreshToken: string | undefined,
  client: Client,
  deps: RefreshDeps,
  options: RefreshOptions = {},
): Promise<RefreshedTokens> {
  const prepared = await prepareRefresh(refreshToken, client, deps, options);
  return prepared.apply();
}


/**
 * The first half of {@link refreshCustomerToken}: checks the refresh token
 * itself (signature, expiry, client) and mints the new access token from
 * its claims, without reading the database. `apply()` then makes it the
 * session's, where the stored state is checked in the same statement.
 */
export async function prepareRefresh(
  refreshToken: string | undefined,
  client: Client,
  deps: RefreshDeps,
  options: RefreshOptions = {},
): Promise<PreparedRefresh> {
  const { correlationId } = options;
  if (refreshToken === undefined || refreshToken === '') throw new InvalidRequest('refresh_token is required');
  const claims = await verifyRefreshToken(refreshToken, deps);
  if (!claims) throw new InvalidGrant('refresh token is invalid or expired');
  if (claims.clientId !== client.id) throw new InvalidGrant('refresh token was issued to another client');
  // RFC 9449 §5: the refresh token of a DPoP-bound session is bound too: only a proof of its key refreshes it.
  if (claims.jkt !== null && options.dpopJkt === undefined) {
    throw new InvalidDpopProof('this refresh token is bound to a DPoP key: send a DPoP proof of that key');
  }
  if (claims.jkt !== null && options.dpopJkt !== claims.jkt) throw new InvalidGrant('this refresh token is bound to another DPoP key');
  // A bound session's tokens stay bound to its key; a bearer session's new access token is bound to the proof's key when one came.
  const jkt = claims.jkt ?? options.dpopJkt ?? null;
  // RFC 6749 §6: at most the scope the session was granted (the refresh token carries it),
  // and never a scope the client has lost since.
  const scopes = grantScope(options.scope, keepScopes(claims.scopes, client.scopes), 'session');

  const now = deps.clock.nowSeconds();
  // A refresh token's subject and session are those of its token session, minted together.
  // `acr`, `amr` and `auth_time` stay those of the sign-in (docs/tokens.md, "How the customer signed in"): a refresh is no new authentication.
  const access = await mintCustomerAccessToken(
    { profileId: claims.sub, clientId: client.id, sid: claims.sid, scopes, authentication: claims.authentication, jkt },
    deps,
  );
  const refreshed: RefreshedTokens = {
    accessToken: access.token,
    refreshToken,
    expiresIn: deps.lifetimes.accessTokenSeconds,
    expiresAt: access.expiresAt,
    sid: claims.sid,
    accessJti: access.jti,
    scopes,
    tokenType: jkt ? 'DPoP' : 'Bearer',
  };
  const reuse = deps.reuse !== undefined && deps.reuse.seconds > 0 ? deps.reuse : undefined;
  // Kept sealed (never in the clear) for the refreshes of its reuse interval.
  const sealedAccess = reuse ? await seal(asSubKeys(reuse.sealKey).writing, reuseLabel(claims.sid), access.token) : undefined;
  return {
    refreshed,
    async apply() {
      const replace = (since: number) =>
        deps.tokenSessions.replaceAccessToken(claims.sid, {
          clientId: client.id,
          refreshJti: claims.jti,
          accessJti: access.jti,
          accessExpiresAt: access.expiresAt,
          now,
          // Reused only for the same scope and the same binding: a token bound to one key is never handed to a request with another, or none.
          ...(reuse && sealedAccess ? { reuse: { since, scope: jkt ? `${formatScope(scopes)} cnf#${jkt}` : formatScope(scopes), sealedAccess } } : {}),
        });
      let replaced = await replace(now - (reuse?.seconds ?? 0));
      if (!replaced) throw await whyNotRefreshed(claims, client, now, deps, correlationId);
      if (!replaced.reused || !reuse) return refreshed;
      // Another refresh of this session minted its access token moments ago: that one, as it is,
      // while it still verifies. One a key revoked since (`keys revoke`) made is never handed out:
      // the new token replaces it (no reuse), and the refreshes after get the new one.
      const kept = await unsealAccepted(reuse.sealKey, reuseLabel(claims.sid), replaced.sealedAccess);
      if ((await decryptCustomerAccessToken(kept, deps)) === undefined) {
        replaced = await replace(Number.MAX_SAFE_INTEGER);
        if (!replaced) throw await whyNotRefreshed(claims, client, now, deps, correlationId);
        if (!replaced.reused) return refreshed;
        throw new Error(`token session ${claims.sid} kept an access token after a refresh that reuses none`);
      }
      return {
        ...refreshed,
        accessToken: kept,
        accessJti: replaced.accessJti,
        expiresAt: replaced.accessExpiresAt,
        expiresIn: Math.max(0, replaced.accessExpiresAt - now),
      };
    },
  };
}

/** Why a session's access token was not replaced, read after the conditional update refused it. */
async function whyNotRefreshed(
  claims: { sid: string; jti: string },
  client: Client,
  now: number,
  deps: RefreshDeps,
  correlationId: string | undefined,
): Promise<InvalidGrant> {
  const session = await deps.tokenSessions.findTokenSession(claims.sid);
  if (!session || session.refreshJti !== claims.jti || session.clientId !== client.id) return new InvalidGrant('refresh token is invalid');
  if (session.revokedAt !== null) {
    await deps.audit.record({
      type: 'refresh_token.revoked_use',
      actor: auditActor({ kind: 'client', clientId: client.id }),
      subject: session.profileId,
      outcome: 'failure',
      details: { sid: session.sid },
      requestId: correlationId,
    });
    return new InvalidGrant('refresh token has been revoked', { detail: `sid ${session.sid}` });
  }
  if (session.refreshExpiresAt <= now) return new InvalidGrant('refresh token has expired');
  // Revoked or expired between the update and this read.
  return new InvalidGrant('refresh token has been revoked');
}
