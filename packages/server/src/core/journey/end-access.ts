import type { OtpChallengeStore } from '../otp/otp-challenge-store.js';
import type { TokenSessionStore } from '../tokens/token-session-store.js';
import type { AuthorizationCodeStore } from '../codes/code-store.js';
import type { AuthorizationRequestStore, CustomerSessionStore } from './stores.js';

/** The stores {@link endCustomerAccess} writes, all of the caller's transaction. */
export interface CustomerAccessStores {
  readonly authorizationRequests: Pick<AuthorizationRequestStore, 'endJourneysOf'>;
  readonly customerSessions: Pick<CustomerSessionStore, 'endCustomerSessionsOf'>;
  readonly codes: Pick<AuthorizationCodeStore, 'endAuthorizationCodesOf'>;
  readonly tokenSessions: Pick<TokenSessionStore, 'revokeTokenSessionsOf'>;
  readonly otpChallenges: Pick<OtpChallengeStore, 'endOtpChallengesOf'>;
}

/** What {@link endCustomerAccess} ended, by kind. */
export interface EndedAccess {
  /** Journeys that had not reached their code, now `cancelled`. */
  readonly journeys: number;
  /** The customer's login sessions at Connect. */
  readonly sessions: number;
  /** Unredeemed authorization codes. */
  readonly codes: number;
  /** Token sessions: each a refresh token and its access token. */
  readonly tokenSessions: number;
}

/**
 * Ends everything that lets anyone act for a customer, in the caller's
 * transaction: their journeys that have not reached their code (`cancelled`:
 * no page of them goes on, "Send a new code" sends nothing; each records
 * the `cause`, so that its pages say why; the journey of a PIN reset
 * itself, `cause.except`, is spared), their one-time PINs not yet answered (a sign-in begun with
 * the old PIN cannot finish), their login sessions at Connect, their
 * unredeemed codes (an exchange then gets `invalid_grant`) and their token sessions (refresh and
 * access tokens: introspection says inactive, refreshes and the
 * resource-server check refuse them). Each is one statement; a revoked
 * token session is announced by the database's change signal, so every
 * instance refuses its tokens within a second (docs/operator-guide.md,
 * "Changes reach every instance").
 *
 * Used by an operator's `customers lock` and by a PIN reset. The caller
 * holds the customer's row first, so a sign-in or code exchange completing
 * at the same moment (which holds that row) either finishes before, and
 * what it created is ended here, or waits. Codes before token sessions, in
 * the order `clients disable` takes them, so the two take turns on shared rows.
 */
export async function endCustomerAccess(
  profileId: string,
  stores: CustomerAccessStores,
  now: number,
  cause: { readonly by: 'lock' } | { readonly by: 'pin_reset'; readonly except: string },
): Promise<EndedAccess> {
  // After the customer's row (the caller's), the challenges before their journeys: the order an
  // entry of a code takes them in, so the two never wait on each other in a cycle (docs/journey.md,
  // "Atomicity"; a journey is found by any challenge of the customer, ended or not).
  await stores.otpChallenges.endOtpChallengesOf(profileId, now);
  const journeys = await stores.authorizationRequests.endJourneysOf(profileId, now, cause.by, cause.by === 'pin_reset' ? cause.except : undefined);
  const sessions = await stores.customerSessions.endCustomerSessionsOf(profileId, now);
  const codes = await stores.codes.endAuthorizationCodesOf({ profileId }, now);
  const tokenSessions = await stores.tokenSessions.revokeTokenSessionsOf({ profileId }, now);
  return { journeys, sessions, codes, tokenSessions };
}
