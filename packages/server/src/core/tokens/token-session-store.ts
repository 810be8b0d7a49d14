/**
 * The storage ports of customer token sessions and revoked tokens.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */
import type { TokenSessionRecord } from './records.js';

/** Whose tokens an operator ends: every one of a customer, or every one of a client. */
export type TokenHolder = { readonly profileId: string; readonly clientId?: never } | { readonly clientId: string; readonly profileId?: never };

/** What a refresh writes into its token session. */
export interface AccessTokenUpdate {
  readonly clientId: string;
  readonly refreshJti: string;
  readonly accessJti: string;
  readonly accessExpiresAt: number;
  readonly now: number;
  /** The reuse interval; absent: always replace (`CONNECT_REFRESH_REUSE_SECONDS=0`). */
  readonly reuse?: {
    /** A token a refresh minted after this instant (epoch seconds) is kept. */
    readonly since: number;
    /** The scope asked for (space-separated); only a token of the same scope is kept. */
    readonly scope: string;
    /** The new access token, sealed: stored when it replaces the current one. */
    readonly sealedAccess: string;
  };
}

/** What a refresh did to its token session: replaced the access token, or kept the one a refresh just minted. */
export type AccessTokenReplaced =
  | { readonly reused: false }
  | { readonly reused: true; readonly accessJti: string; readonly accessExpiresAt: number; readonly sealedAccess: string };

/** Token sessions (`sid`): what refresh, introspection and revocation check. */
export interface TokenSessionStore {
  insertTokenSession(session: TokenSessionRecord): Promise<void>;
  findTokenSession(sid: string): Promise<TokenSessionRecord | undefined>;
  /** Revokes every session created from a code (a code replay); returns how many. */
  revokeTokenSessionsByCode(codeHash: string, now: number): Promise<number>;
  /**
   * Makes `accessJti` the session's only valid access token, in one
   * conditional update: only while the session is `clientId`'s, unrevoked,
   * its refresh token is `refreshJti` and unexpired at `now`.
   *
   * With `reuse` (docs/tokens.md, "Concurrent refreshes"), the same
   * statement decides instead to keep the session's current access token
   * when a refresh minted it after `reuse.since`, for the same
   * `reuse.scope`, and it is still the session's (not revoked) and
   * unexpired at `now`: nothing changes and that token is returned
   * (`reused`). Otherwise the new one replaces it and is stored sealed
   * (`reuse.sealedAccess`), with `now` and the scope, for the refreshes
   * that follow. Of concurrent refreshes of one session, on any number of
   * instances, the first replaces the token and the others get it.
   *
   * @returns `undefined` when the session refused (unknown, another
   *   client's, revoked, expired, another refresh token).
   */
  replaceAccessToken(sid: string, update: AccessTokenUpdate): Promise<AccessTokenReplaced | undefined>;
  /**
   * Revokes every unrevoked session of a customer or of a client (their
   * refresh and access tokens), in one statement; returns how many.
   */
  revokeTokenSessionsOf(holder: TokenHolder, now: number): Promise<number>;
  /** Revokes one session (its refresh token and its access token); returns whether it was live. */
  revokeTokenSession(sid: string, now: number): Promise<boolean>;
  /** Ends the session's current access token if it is `accessJti` (no refresh reuses it after that), leaving the refresh token valid. */
  revokeAccessToken(sid: string, accessJti: string): Promise<boolean>;
  /**
   * Deletes at most `limit` sessions that can no longer be used at `now`:
   * their refresh token and their access token have both expired (revoked
   * or not). Returns how many.
   */
  deleteExpiredTokenSessions(now: number, limit: number): Promise<number>;
}

/** Revoked self-contained tokens (client access tokens), by `jti`, kept until they expire. */
export interface RevokedTokenStore {
  /** Records a revocation; revoking twice is a no-op. */
  revokeToken(entry: { jti: string; clientId: string; revokedAt: number; expiresAt: number }): Promise<void>;
  isTokenRevoked(jti: string): Promise<boolean>;
  /** Forgets revocations of tokens expired by `now` (at most `limit` of them when given); returns how many. */
  deleteExpiredRevocations(now: number, limit?: number): Promise<number>;
}
