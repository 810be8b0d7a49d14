/**
 * The storage ports of the customer's journey: journeys (pending
 * authorization requests), customer sessions and approvals (authorization
 * codes: `codes/code-store.ts`). Every change that a check depends on is one conditional update.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */
import type { AuthorizationRequestRecord, ConsentRecord, CustomerSessionRecord } from './records.js';
import type { JourneyEnd, JourneyTransition, TRANSITIONS } from './states.js';
import type { AuthorizationCodeRecord } from '../codes/authorization-code.js';
import type { Customer } from '../customers/customer.js';
import type { OtpChallengeRecord } from '../otp/records.js';
import type { MadeEntry } from '../otp/verify-otp.js';

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
  /**
   * Ends every journey of a customer that has not reached its code, in one
   * statement: each unexpired journey at `now` past its first page (`otp_sent`,
   * `reset_otp_sent`, `reset_verified`, `consent_required`) that is bound to
   * `profileId` or holds a one-time-PIN challenge of that customer, and
   * each `pending` one that holds such a challenge (back at its login page
   * after a PIN reset, whose code would prove the phone for the next login:
   * docs/journey.md, "After a PIN reset"), becomes
   * `cancelled` (`completedAt` = `now`, `endedBy` = `endedBy`), but for the
   * journey `except` (the PIN reset's own). Run by `customers lock` and a
   * PIN reset in their transaction (docs/journey.md, "When a sign-in
   * ends"). Returns how many.
   */
  endJourneysOf(profileId: string, now: number, endedBy: JourneyEnd, except?: string): Promise<number>;
  /** Deletes at most `limit` journeys expired by `now` (`expiresAt <= now`); returns how many. */
  deleteExpiredAuthorizationRequests(now: number, limit: number): Promise<number>;
}

/** A journey as its pages read it, in one statement. */
export interface JourneyRecord {
  readonly request: AuthorizationRequestRecord;
  /** Its newest one-time-PIN challenge (answered, retired or live), if it has one. */
  readonly challenge: OtpChallengeRecord | undefined;
  /** Whether its `user_id` names an account (`false` when it has none). */
  readonly hintRegistered: boolean;
  /** Whether the account its `user_id` names has a passkey that is not suspended (the login page then offers it first). */
  readonly hintHasPasskey: boolean;
}

/** What a right PIN (or an accepted registration form, or a PIN reset's mobile) stores, all or nothing. */
export interface ChallengeStart {
  readonly idHash: string;
  readonly now: number;
  /**
   * The move: `codeSent` (a login or a registration; the default),
   * `codeResent` (a new challenge for a journey waiting for its code) or
   * `resetCodeSent` ("Forgot PIN?").
   */
  readonly transition?: typeof TRANSITIONS.codeSent | typeof TRANSITIONS.codeResent | typeof TRANSITIONS.resetCodeSent;
  /** The customer logging in; `null` for a registration. */
  readonly profileId: string | null;
  /** The new challenge (its `requestHash` is `idHash`). */
  readonly challenge: OtpChallengeRecord;
  /**
   * The PIN attempts a right PIN lifts: cleared as `clearPinAttempts` does,
   * whether or not the journey could move.
   */
  readonly clearPin?: { readonly profileId: string; readonly attempt: number } | undefined;
}

/** One entry of a one-time PIN, and everything a right entry completes. */
export interface OtpEntry {
  readonly idHash: string;
  readonly challengeId: string;
  /** The entered code, hashed under every accepted key (`OtpHasher.hashes`): right when one is the stored hash. */
  readonly codeHashes: readonly string[];
  readonly now: number;
  readonly maxAttempts: number;
  /** The customer who signs in: an existing one (login), or the account a registration creates. */
  readonly customer: { readonly profileId: string } | { readonly create: Customer };
  /** SHA-256 of the browser's previous session, ended by the sign-in; `null` when it had none. */
  readonly endSessionHash: string | null;
  readonly session: CustomerSessionRecord;
  readonly consent: ConsentRecord;
  readonly code: AuthorizationCodeRecord;
}

/**
 * What a right entry did: `completed` the sign-in (and used the challenge
 * up), with the customer's credential version as the sign-in held it; found the journey `lost` (moved on or expired meanwhile); or found
 * the customer unavailable (locked meanwhile, or a registration's mobile
 * taken meanwhile). A right entry that cannot complete leaves the challenge
 * as it was but for its count, unless the lock or the other tab changed
 * things in the very instant of the entry: then the challenge may be used up.
 */
export type SignInCompletion =
  | { readonly kind: 'completed'; readonly credentialVersion: number }
  | { readonly kind: 'lost' }
  | { readonly kind: 'customer_unavailable' };

/** A sign-in with a passkey whose answer was verified, and everything it completes. */
export interface PasskeySignIn {
  readonly idHash: string;
  readonly now: number;
  /** The passkey's customer. */
  readonly profileId: string;
  /** The passkey: still unsuspended when the sign-in completes. */
  readonly credentialId: string;
  /** SHA-256 of the browser's previous session, ended by the sign-in; `null` when it had none. */
  readonly endSessionHash: string | null;
  readonly session: CustomerSessionRecord;
  readonly consent: ConsentRecord;
  readonly code: AuthorizationCodeRecord;
}

/** What became of a one-time-PIN entry (`not_counted`: the challenge was answered, used up, expired or is gone). */
export type OtpEntryOutcome = MadeEntry<SignInCompletion>;

/** One entry of a PIN-reset code (the challenge's purpose is `reset`). */
export interface ResetOtpEntry {
  readonly idHash: string;
  readonly challengeId: string;
  /** The entered code, hashed under every accepted key (`OtpHasher.hashes`): right when one is the stored hash. */
  readonly codeHashes: readonly string[];
  readonly now: number;
  readonly maxAttempts: number;
}

/**
 * What a right reset entry did: `verified` (the challenge used up, the
 * journey moved to `reset_verified` and bound to the challenge's customer)
 * or `lost` (the journey moved on or expired meanwhile; the challenge is
 * left as it was but for its count, unless that happened in the very
 * instant of the entry).
 */
export type ResetVerification = 'verified' | 'lost';

/** What became of a reset-code entry (`not_counted`: the challenge was answered, used up, expired or is gone). */
export type ResetOtpOutcome = MadeEntry<ResetVerification>;

/** The proof a new PIN stands on: the journey's answered reset challenge. */
export interface PinResetUse {
  readonly idHash: string;
  /** The reset challenge that was answered on this journey. */
  readonly challengeId: string;
  /** The customer the journey is bound to, whose PIN is being replaced. */
  readonly profileId: string;
  readonly now: number;
  /** The challenge must have been answered after this (`now` less the time allowed to choose the new PIN). */
  readonly answeredAfter: number;
}

/**
 * The steps of signing in that write several tables, each one atomic step
 * (docs/journey.md, "Atomicity"). On PostgreSQL a login's steps are single
 * statements, so a whole login costs few round trips
 * (docs/operator-guide.md, "Database round trips").
 */
export interface SignInStore {
  /** The journey, its newest challenge and whether its `user_id` is registered. */
  findJourney(idHash: string): Promise<JourneyRecord | undefined>;
  /**
   * A right PIN or an accepted registration form: clears the PIN attempts
   * (`clearPin`), and moves the journey along `codeSent` (bound to
   * `profileId`) while it is open and unexpired at `now`, storing the
   * challenge with the move. Returns the journey after the move for the
   * one caller that moved it, `undefined` for every other (no challenge is
   * then stored).
   */
  startChallenge(start: ChallengeStart): Promise<AuthorizationRequestRecord | undefined>;
  /**
   * One entry of a one-time PIN. The entry is counted before anything else
   * (only while the challenge is a login's or a registration's, never a
   * reset's, unanswered, unexpired and has had fewer than `maxAttempts` entries), and compared with the stored hash in the
   * same statement. A right entry uses the challenge up and completes the
   * sign-in, all or nothing, when the journey can move
   * along `otpVerified` and the customer can sign in (an existing one is
   * active, whether or not wrong PINs locked PIN login since its PIN was
   * checked, and held until the step ends; a new one's
   * mobile is free): the journey moves, a new account is created, the
   * browser's previous session ends, the new session, the approval and the
   * code are stored. Of concurrent entries of one challenge, on any number
   * of instances, they are counted one after another, and at most one is right.
   */
  enterOtp(entry: OtpEntry): Promise<OtpEntryOutcome>;
  /**
   * Completes a sign-in with a passkey, all or nothing, in one atomic step:
   * the customer is active and held until the step ends, the passkey is
   * theirs and not suspended, the journey moves along `passkeyVerified`
   * (bound to the customer) while it is open and unexpired at `now`, the
   * browser's previous session ends, the new session, the approval and the
   * code are stored. `lost`: the journey moved on or expired meanwhile;
   * `customer_unavailable`: the customer was locked (or the passkey
   * suspended) meanwhile.
   */
  signInWithPasskey(signIn: PasskeySignIn): Promise<SignInCompletion>;
  /**
   * One entry of a PIN-reset code, in one atomic step. The entry is counted
   * before anything else (only while the challenge is a `reset` challenge
   * of this journey, unanswered, unexpired at `now` and has had fewer than
   * `maxAttempts` entries) and compared in the same statement. It is right
   * only when the code matches AND the challenge's customer exists and is
   * `active`: a challenge stored for a mobile without such an account (its
   * code never sent) can never be answered, and neither can one whose
   * customer an operator locked meanwhile; every entry of those is wrong.
   * A right entry uses the challenge up and moves the journey along
   * `resetVerified`, bound to the challenge's customer, when the journey
   * can still move. Of concurrent entries of one challenge, on any number
   * of instances, they are counted one after another, and at most one is right.
   */
  enterResetOtp(entry: ResetOtpEntry): Promise<ResetOtpOutcome>;
  /**
   * Spends a journey's proof of a PIN reset, in one conditional update: the
   * journey moves along `pinReset` (back to `pending`, unbound) only while
   * it is `reset_verified`, bound to `profileId` and unexpired at `now`, and
   * `challengeId` is a `reset` challenge of this journey and of that
   * customer, answered after `answeredAfter`. Run in the transaction that
   * replaces the PIN, after the customer's row was taken (the order every
   * step takes them in). Returns the journey after the move for the one
   * caller that moved it, `undefined` for every other: a proof is spent once.
   */
  usePinReset(use: PinResetUse): Promise<AuthorizationRequestRecord | undefined>;
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
