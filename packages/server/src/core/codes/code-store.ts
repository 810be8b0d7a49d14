/**
 * The storage port of authorization codes: the journey issues them, the
 * `authorization_code` grant redeems them. Every change that a check
 * depends on is one conditional update.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */
import type { TokenSessionRecord } from '../tokens/records.js';
import type { TokenHolder } from '../tokens/token-session-store.js';
import type { AuthorizationCodeRecord } from './authorization-code.js';

/**
 * The `expiresAt` of a code ended because it was replayed: below 0, so it
 * is ended like any other code (`expiresAt` 0), yet tells it apart from a
 * code an operator ended.
 */
export const REPLAYED_CODE_EXPIRY = -1;

/** What a code must have been issued for to be redeemed: the token request's redirect URI and PKCE challenge. */
export interface CodeBinding {
  readonly redirectUri: string;
  /** The S256 challenge of the request's `code_verifier`; `null` when it sent none. */
  readonly codeChallenge: string | null;
}

/** Authorization codes. */
export interface AuthorizationCodeStore {
  /** Adds a code. Throws `Conflict` when its hash exists. */
  insertAuthorizationCode(code: AuthorizationCodeRecord): Promise<void>;
  findAuthorizationCode(codeHash: string): Promise<AuthorizationCodeRecord | undefined>;
  /**
   * Redeems a code and adds its token session, as one atomic step (one
   * statement on PostgreSQL, one transaction on SQLite): a crash at any
   * instant leaves either the code unused or the code consumed with its
   * session (docs/journey.md, "The code").
   *
   * The code is consumed only when it exists, belongs to the session's
   * client and customer, is unconsumed, `expiresAt > now`, and was issued
   * for `binding` (the same redirect URI and PKCE challenge; `null`: none);
   * of any number of concurrent calls, on any number of instances, at most
   * one consumes it. The session (`session.codeHash` is the code) is added
   * with it only while its customer is active (an operator's lock; wrong
   * PINs lock PIN checks only) and its client is active with the code's
   * redirect URI still its own; otherwise the code is consumed all the same
   * and no session is added. On PostgreSQL the customer's and the client's
   * rows are taken in share mode before the code's, the order a `customers
   * lock` or `clients disable` takes them in, so that one meeting the
   * redemption either waits for it and then revokes the session, or goes
   * first and the code is not redeemed.
   *
   * @returns `redeemed` (consumed, session added), `refused` (not consumed
   *   by this call: unknown, another's, bound otherwise, expired, ended, or
   *   consumed already) or `ended` (consumed, but its customer or client can
   *   no longer sign in: no session).
   */
  redeemAuthorizationCode(
    session: TokenSessionRecord & { readonly codeHash: string },
    now: number,
    binding: CodeBinding,
  ): Promise<'redeemed' | 'refused' | 'ended'>;
  /**
   * Ends a redeemed code that was replayed (its `expiresAt` becomes
   * {@link REPLAYED_CODE_EXPIRY}), so that no token session can be added
   * for it any more; returns whether it was redeemed.
   */
  endReplayedAuthorizationCode(codeHash: string): Promise<boolean>;
  /**
   * Ends every code of a customer or of a client that has not ended yet, in
   * one statement: its `expiresAt` becomes 0, so it can no longer be
   * redeemed whatever the clock of the exchange says (an exchange then gets
   * `invalid_grant`). Returns how many were unredeemed.
   */
  endAuthorizationCodesOf(holder: TokenHolder, now: number): Promise<number>;
  /** Deletes at most `limit` codes expired by `now` (`expiresAt <= now`, redeemed or not); returns how many. */
  deleteExpiredAuthorizationCodes(now: number, limit: number): Promise<number>;
}
