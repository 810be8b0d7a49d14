/**
 * The storage ports of the customer's journey: journeys (pending
 * authorization requests), customer sessions, approvals and authorization
 * codes. Every change that a check depends on is one conditional update.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `storage/ports.ts`.
 */
import type { AuthorizationCodeRecord, AuthorizationRequestRecord, ConsentRecord, CustomerSessionRecord } from './records.js';
import type { JourneyTransition } from './states.js';
import type { TokenHolder } from '../tokens/token-session-store.js';

/** Journeys (validated `/authorize` requests), looked up by the hash of their ID. */
export interface AuthorizationRequestStore {
  /** Adds a journey. Throws `Conflict` when the ID exists. */
  insertAuthorizationRequest(request: AuthorizationRequestRecord): Promise<void>;
  findAuthorizationRequest(idHash: string): Promise<AuthorizationRequestRecord | undefined>;
  /**
   * Moves a journey along `transition` in one conditional update: only while
   * its status is one of `transition.from` and it is unexpired at `now`.
   * `profileId`, when given, binds it to that customer (`null` unbinds). A
   * move to a final state also sets `completedAt`.
   *
   * @returns the journey after the move for the one caller that moved it,
   *   `undefined` for every other (moved meanwhile, expired, or missing).
   */
  transitionAuthorizationRequest(
    idHash: string,
    transition: JourneyTransition,
    now: number,
    profileId?: string | null,
  ): Promise<AuthorizationRequestRecord | undefined>;
  /** Deletes at most `limit` journeys expired by `now` (`expiresAt <= now`); returns how many. */
  deleteExpiredAuthorizationRequests(now: number, limit: number): Promise<number>;
}

/** Customers' login sessions at Connect. */
export interface CustomerSessionStore {
  /** Adds a session. Throws `Conflict` when the ID exists. */
  insertCustomerSession(session: CustomerSessionRecord): Promise<void>;
  findCustomerSession(idHash: string): Promise<CustomerSessionRecord | undefined>;
  /**
   * Uses a session, in one conditional update: sets `lastSeenAt` to `now`
   * only while it has not ended, `expiresAt > now` and
   * `lastSeenAt + idleSeconds > now`. Returns the session when it was live,
   * `undefined` otherwise.
   */
  useCustomerSession(idHash: string, now: number, idleSeconds: number): Promise<CustomerSessionRecord | undefined>;
  /** Ends a session (no-op when ended before or missing). */
  endCustomerSession(idHash: string, now: number): Promise<void>;
  /** Ends every live session of a customer; returns how many. */
  endCustomerSessionsOf(profileId: string, now: number): Promise<number>;
  /**
   * Deletes at most `limit` sessions that can no longer be used at `now`:
   * ended, past `expiresAt`, or unused for `idleSeconds`. Returns how many.
   */
  deleteEndedCustomerSessions(now: number, idleSeconds: number, limit: number): Promise<number>;
}

/** Which clients each customer approved. */
export interface ConsentStore {
  /** Records an approval; approving a client again keeps the first record. */
  insertConsent(consent: ConsentRecord): Promise<void>;
  findConsent(profileId: string, clientId: string): Promise<ConsentRecord | undefined>;
  /** A customer's approvals, oldest first. */
  listConsents(profileId: string): Promise<ConsentRecord[]>;
  /** Removes every approval of a customer; returns how many. */
  deleteConsentsOf(profileId: string): Promise<number>;
}

/**
 * The `expiresAt` of a code ended because it was replayed: below 0, so it
 * is ended like any other code (`expiresAt` 0), yet tells an exchange
 * still between its two steps that a replay ended it.
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
   * Redeems a code with one conditional update: only when it exists, belongs
   * to `clientId`, is unconsumed, `expiresAt > now`, and was issued for
   * `binding`: the same redirect URI and the same PKCE challenge (`null`:
   * none). Returns the record for the single caller that redeemed it,
   * `undefined` for every other.
   */
  consumeAuthorizationCode(codeHash: string, clientId: string, now: number, binding: CodeBinding): Promise<AuthorizationCodeRecord | undefined>;
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
   * `invalid_grant`), and a code already consumed by an exchange still
   * between its two steps gives no token session, even after an unlock or
   * an enable. Returns how many were unredeemed.
   */
  endAuthorizationCodesOf(holder: TokenHolder, now: number): Promise<number>;
  /** Deletes at most `limit` codes expired by `now` (`expiresAt <= now`, redeemed or not); returns how many. */
  deleteExpiredAuthorizationCodes(now: number, limit: number): Promise<number>;
}
