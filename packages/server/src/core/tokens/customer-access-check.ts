import type { Authentication } from '../authentication.js';
import { createChangeCache } from '../changes/change-cache.js';
import type { ChangeFeed } from '../changes/change-feed.js';
import type { Clock } from '../clock.js';
import { InsufficientScope, InsufficientUserAuthentication, InvalidToken } from '../errors.js';
import { formatScope, missingScopes, SCOPE_TOKEN_PATTERN } from '../scopes.js';
import type { TokenSessionRecord } from './records.js';
import type { DpopProofDeps } from '../dpop/dpop-proof.js';
import { checkPresentation, presentedToken, type PresentedToken, type ResourceRequest } from '../dpop/presented-token.js';
import type { TokenSessionStore } from './token-session-store.js';
import { decryptCustomerAccessToken, type CustomerTokenClaims, type TokenVerifyDeps } from './verify-tokens.js';

/** What the resource-server check needs. */
export interface CustomerAccessCheckDeps extends TokenVerifyDeps {
  readonly tokenSessions: Pick<TokenSessionStore, 'findTokenSession'>;
  readonly clock: Clock;
  /** The change signal that tells when a token session changed (`core/changes/`). */
  readonly changes: ChangeFeed;
  /** DPoP proof checks (`used_jtis` and the nonce key shared with Connect), for DPoP-bound tokens. */
  readonly dpop: DpopProofDeps;
}

/** The customer and client a valid customer access token stands for. */
export interface CustomerAccess {
  readonly profileId: string;
  readonly clientId: string;
  readonly sid: string;
  readonly jti: string;
  /** Expiry, epoch seconds. */
  readonly expiresAt: number;
  /** The scopes the token was granted (docs/tokens.md, "Scopes"); empty for none. */
  readonly scopes: readonly string[];
  /** How the customer signed in: `acr`, `amr`, `auth_time` (docs/tokens.md, "How the customer signed in"); `null` when the token carries none. */
  readonly authentication: Authentication | null;
  /** `cnf.jkt`: the DPoP key the token is bound to (docs/tokens.md, "DPoP-bound tokens"); `null` for a bearer token. */
  readonly jkt: string | null;
}

/** What one check requires of a token besides being valid. */
export interface CustomerAccessRequirements {
  /**
   * Scopes the token must all have (RFC 6750 §3.1). A token lacking one
   * is refused with `InsufficientScope` (403), after it was found valid.
   */
  readonly scopes?: readonly string[] | undefined;
  /**
   * The `acr` values of which the customer's sign-in must have one (RFC
   * 9470), e.g. `['phr']`. A token of another sign-in, or of none recorded,
   * is refused with `InsufficientUserAuthentication` (401).
   */
  readonly acr?: readonly string[] | undefined;
  /**
   * The most seconds that may have passed since the customer signed in
   * (`auth_time`, by the check's clock; RFC 9470). A token of an older
   * sign-in, or of none recorded, is refused with
   * `InsufficientUserAuthentication` (401).
   */
  readonly maxAge?: number | undefined;
}

/**
 * Checks the scopes a resource server requires: each a scope token (RFC
 * 6749 §3.3), so that it can be named in a `WWW-Authenticate` challenge.
 *
 * @throws TypeError for a malformed required scope (a programming mistake, never the caller's).
 */
export function checkRequiredScopes(scopes: readonly string[]): readonly string[] {
  for (const scope of scopes) {
    if (typeof scope !== 'string' || !SCOPE_TOKEN_PATTERN.test(scope)) throw new TypeError('a required scope must be a scope token (RFC 6749 section 3.3)');
  }
  return scopes;
}

/**
 * Refuses `access` when it lacks one of `required` (RFC 6750 §3.1): 403
 * `insufficient_scope`, naming every required scope in the challenge.
 */
export function requireScopes<T extends { readonly scopes: readonly string[] }>(access: T, required: readonly string[] | undefined): T {
  if (required === undefined || required.length === 0) return access;
  if (missingScopes(access.scopes, checkRequiredScopes(required)).length > 0) {
    throw new InsufficientScope('the access token lacks a scope this request needs', formatScope(required));
  }
  return access;
}

/**
 * Checks the `acr` values and `max_age` a resource server requires: each
 * `acr` value printable ASCII without spaces, `"` or `\` (so that it can be
 * named in a `WWW-Authenticate` challenge), `maxAge` a whole number of
 * seconds from 0.
 *
 * @throws TypeError for a malformed requirement (a programming mistake, never the caller's).
 */
export function checkRequiredAuthentication(requirements: Pick<CustomerAccessRequirements, 'acr' | 'maxAge'>): void {
  for (const acr of requirements.acr ?? []) {
    if (typeof acr !== 'string' || !SCOPE_TOKEN_PATTERN.test(acr)) throw new TypeError('a required acr value must be printable ASCII without spaces, double quotes or backslashes');
  }
  const { maxAge } = requirements;
  if (maxAge !== undefined && (!Number.isSafeInteger(maxAge) || maxAge < 0)) throw new TypeError('maxAge must be a whole number of seconds from 0');
}

/**
 * Refuses `access` when the sign-in it stands for is weaker or older than
 * `required` says (RFC 9470 §3): 401 `insufficient_user_authentication`,
 * naming every requirement of the request in the challenge, so that one new
 * sign-in meets them all. A token without a recorded sign-in meets none.
 * `maxAge` is met while `now - auth_time <= maxAge` (OpenID Connect Core
 * §3.1.2.1).
 */
export function requireAuthentication<T extends { readonly authentication: Authentication | null }>(
  access: T,
  required: Pick<CustomerAccessRequirements, 'acr' | 'maxAge'>,
  now: number,
): T {
  const acrValues = required.acr ?? [];
  const { maxAge } = required;
  if (acrValues.length === 0 && maxAge === undefined) return access;
  checkRequiredAuthentication(required);
  const signIn = access.authentication;
  const challenge = { acrValues, maxAge };
  if (signIn === null) throw new InsufficientUserAuthentication('the access token does not say how the customer signed in; a new sign-in is required', challenge);
  if (acrValues.length > 0 && !acrValues.includes(signIn.acr)) {
    throw new InsufficientUserAuthentication('this request needs a stronger sign-in than the access token stands for', challenge);
  }
  if (maxAge !== undefined && now - signIn.authTime > maxAge) {
    throw new InsufficientUserAuthentication('this request needs a more recent sign-in than the access token stands for', challenge);
  }
  return access;
}

const MAX_CACHED_SESSIONS = 100_000;

/**
 * The resource-server check for the platform's APIs: a customer access token
 * is accepted only if it decrypts with a current key, is unexpired to the
 * second, and is still the current access token of a live token session.
 *
 * Session state is kept in memory until the change signal says the session
 * changed (a refresh, a revocation, a lock, a disabled client: on this
 * instance at once, on every other within a second), so while nothing
 * changes the check needs no database round trip (docs/resource-servers.md).
 *
 * A check may require scopes: a valid token lacking one of them is refused
 * with `InsufficientScope` (403; RFC 6750 §3.1). It may require a strong or
 * recent sign-in (`acr`, `maxAge`): a valid token with every scope whose
 * sign-in falls short is refused with `InsufficientUserAuthentication`
 * (401; RFC 9470 §3).
 *
 * @example
 * const check = createCustomerAccessCheck({ keys, clock, urls, tokenSessions, changes });
 * const access = await check.verify(bearerToken); // throws InvalidToken
 * await check.verify(bearerToken, { scopes: ['payments:read'] }); // and InsufficientScope
 * await check.verify(bearerToken, { acr: ['phr'], maxAge: 300 }); // and InsufficientUserAuthentication
 */
export function createCustomerAccessCheck(deps: CustomerAccessCheckDeps) {
  type Held = { readonly session: TokenSessionRecord | undefined; readonly readAt: number };
  const sessions = createChangeCache<Held>(deps.changes, 'session', { maxEntries: MAX_CACHED_SESSIONS });
  const read = (sid: string) => async (): Promise<Held> => {
    const readAt = deps.clock.nowSeconds();
    return { session: await deps.tokenSessions.findTokenSession(sid), readAt };
  };

  const acceptable = (session: TokenSessionRecord | undefined, claims: CustomerTokenClaims) =>
    session !== undefined &&
    session.revokedAt === null &&
    session.accessJti === claims.jti &&
    session.clientId === claims.clientId &&
    session.profileId === claims.sub;

  return {
    /**
     * Checks a customer access token; throws `InvalidToken` when it is not
     * acceptable (with `credentialsMissing` when `token` is `undefined` or
     * empty), `InsufficientScope` when it lacks a required scope,
     * `InsufficientUserAuthentication` when its sign-in is weaker or older
     * than `requirements.acr` / `requirements.maxAge` allow.
     */
    async verify(token: string | undefined, requirements: CustomerAccessRequirements = {}): Promise<CustomerAccess> {
      // RFC 6750 §3.1: no token at all is answered without an error code.
      checkRequiredAuthentication(requirements);
      if (!token) throw new InvalidToken('an access token is required: Authorization: Bearer <access_token>', { credentialsMissing: true });
      return check({ scheme: 'Bearer', token }, undefined, requirements);
    },
    /**
     * Checks the token of a whole request (docs/resource-servers.md,
     * "DPoP-bound tokens"): `Authorization: Bearer <token>` for a bearer
     * token, `Authorization: DPoP <token>` with a DPoP proof of its key
     * (`ath` the token's hash, `htm` and `htu` this request's) for a
     * DPoP-bound one. Throws as {@link verify} does, and
     * `InvalidDpopProof` (401) or `UseDpopNonce` (401) for a bad proof.
     */
    async verifyRequest(request: ResourceRequest, requirements: CustomerAccessRequirements = {}): Promise<CustomerAccess> {
      checkRequiredAuthentication(requirements);
      return check(presentedToken(request.authorization), request, requirements);
    },
    /** A fresh DPoP nonce, for `DPoP-Nonce` on a successful answer (RFC 9449 §9). */
    dpopNonce(): string {
      return deps.dpop.nonces.issue();
    },
    /** Stops listening to the change signal. */
    close(): void {
      sessions.close();
    },
  };

  /** A token presented as `presented`: a Bearer one through `verify` (no request), any through `verifyRequest`. */
  async function check(presented: PresentedToken, request: ResourceRequest | undefined, requirements: CustomerAccessRequirements): Promise<CustomerAccess> {
      const token = presented.token;
      const claims: CustomerTokenClaims | undefined = await decryptCustomerAccessToken(token, deps);
      if (!claims) throw new InvalidToken('the access token is invalid or expired');
      let held = await sessions.get(claims.sid, read(claims.sid));
      // A live session naming another access token is read again when the
      // token was minted no earlier than a second before that state was read:
      // it may come from a refresh whose signal has not arrived yet. Older
      // replaced tokens are refused without a read.
      if (held.session && held.session.revokedAt === null && held.session.accessJti !== claims.jti && claims.iat >= held.readAt - 1) {
        sessions.delete(claims.sid);
        held = await sessions.get(claims.sid, read(claims.sid));
      }
      const session = held.session;
      if (!acceptable(session, claims)) throw new InvalidToken('the access token has been replaced or revoked');
      // RFC 9449 §7: a bound token only as DPoP with a proof of its key; a bearer token only as Bearer.
      if (request === undefined) {
        if (claims.jkt !== null) throw new InvalidToken('this access token is DPoP-bound: present it as Authorization: DPoP with a DPoP proof');
      } else {
        await checkPresentation(presented, claims.jkt, request, deps.dpop);
      }
      const access = {
        profileId: claims.sub,
        clientId: claims.clientId,
        sid: claims.sid,
        jti: claims.jti,
        expiresAt: claims.exp,
        scopes: claims.scopes,
        authentication: claims.authentication,
        jkt: claims.jkt,
      };
      return requireAuthentication(requireScopes(access, requirements.scopes), requirements, deps.clock.nowSeconds());
  }
}

/** The check's type, for wiring. */
export type CustomerAccessCheck = ReturnType<typeof createCustomerAccessCheck>;
