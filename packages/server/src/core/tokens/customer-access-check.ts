import type { Clock } from '../clock.js';
import { InvalidToken } from '../errors.js';
import type { TokenSessionStore } from './token-session-store.js';
import { decryptCustomerAccessToken, type CustomerTokenClaims, type TokenVerifyDeps } from './verify-tokens.js';
import { SESSION_CACHE_SECONDS } from '../lifetimes.js';

/** What the resource-server check needs. */
export interface CustomerAccessCheckDeps extends TokenVerifyDeps {
  readonly tokenSessions: Pick<TokenSessionStore, 'findTokenSession'>;
  readonly clock: Clock;
}

/** The customer and client a valid customer access token stands for. */
export interface CustomerAccess {
  readonly profileId: string;
  readonly clientId: string;
  readonly sid: string;
  readonly jti: string;
  /** Expiry, epoch seconds. */
  readonly expiresAt: number;
}

const MAX_CACHED_SESSIONS = 100_000;

/**
 * The resource-server check for the platform's APIs: a customer access token
 * is accepted only if it decrypts with a current key, is unexpired to the
 * second, and is still the current access token of a live token session.
 *
 * Session state is cached for at most {@link SESSION_CACHE_SECONDS} second
 * (entries expire when the clock's second changes), so the hot path usually
 * needs no database round trip, while a refresh or a revocation on any
 * instance takes effect within one second.
 *
 * @example
 * const check = createCustomerAccessCheck({ keys, clock, urls, tokenSessions });
 * const access = await check.verify(bearerToken); // throws InvalidToken
 */
export function createCustomerAccessCheck(deps: CustomerAccessCheckDeps) {
  const cache = new Map<string, { second: number; accessJti: string; live: boolean; clientId: string; profileId: string }>();

  async function sessionState(sid: string, now: number, token: { jti: string; iat: number }) {
    const hit = cache.get(sid);
    // A state naming another access token is read again when this token was
    // minted in or after the second the state was read: a refresh may just
    // have replaced the cached token, and its successor must not be refused.
    const outdated = hit !== undefined && hit.live && hit.accessJti !== token.jti && token.iat >= hit.second;
    if (hit && hit.second === now && !outdated) return hit;
    const session = await deps.tokenSessions.findTokenSession(sid);
    const state = {
      second: now,
      accessJti: session?.accessJti ?? '',
      live: session !== undefined && session.revokedAt === null,
      clientId: session?.clientId ?? '',
      profileId: session?.profileId ?? '',
    };
    if (cache.size >= MAX_CACHED_SESSIONS) cache.clear();
    cache.set(sid, state);
    return state;
  }

  return {
    /** Checks a customer access token; throws `InvalidToken` when it is not acceptable. */
    async verify(token: string | undefined): Promise<CustomerAccess> {
      const claims: CustomerTokenClaims | undefined = token ? await decryptCustomerAccessToken(token, deps) : undefined;
      if (!claims) throw new InvalidToken('the access token is invalid or expired');
      const state = await sessionState(claims.sid, deps.clock.nowSeconds(), claims);
      if (!state.live || state.accessJti !== claims.jti || state.clientId !== claims.clientId || state.profileId !== claims.sub) {
        throw new InvalidToken('the access token has been replaced or revoked');
      }
      return { profileId: claims.sub, clientId: claims.clientId, sid: claims.sid, jti: claims.jti, expiresAt: claims.exp };
    },
  };
}

/** The check's type, for wiring. */
export type CustomerAccessCheck = ReturnType<typeof createCustomerAccessCheck>;
