/**
 * The storage ports of the customer's journey: pending authorization
 * requests, customer sessions and authorization codes.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `storage/ports.ts`.
 */
import type { AuthorizationCodeRecord, AuthorizationRequestRecord, CustomerSessionRecord } from './records.js';

/** Pending `/authorize` requests, looked up by the hash of their ID. */
export interface AuthorizationRequestStore {
  insertAuthorizationRequest(request: AuthorizationRequestRecord): Promise<void>;
  findAuthorizationRequest(idHash: string): Promise<AuthorizationRequestRecord | undefined>;
  /**
   * Marks the request completed, once: returns `true` for the call that did
   * it, `false` when it was completed before or does not exist.
   */
  completeAuthorizationRequest(idHash: string, now: number): Promise<boolean>;
}

/** Customers' login sessions at Connect. */
export interface CustomerSessionStore {
  insertCustomerSession(session: CustomerSessionRecord): Promise<void>;
  findCustomerSession(idHash: string): Promise<CustomerSessionRecord | undefined>;
  /** Sets `lastSeenAt` of a session that has not ended. */
  touchCustomerSession(idHash: string, now: number): Promise<void>;
  /** Ends a session (no-op when ended before or missing). */
  endCustomerSession(idHash: string, now: number): Promise<void>;
  /** Ends every live session of a customer; returns how many. */
  endCustomerSessionsOf(profileId: string, now: number): Promise<number>;
}

/** Authorization codes. */
export interface AuthorizationCodeStore {
  insertAuthorizationCode(code: AuthorizationCodeRecord): Promise<void>;
  findAuthorizationCode(codeHash: string): Promise<AuthorizationCodeRecord | undefined>;
  /**
   * Redeems a code with one conditional update: only when it exists, belongs
   * to `clientId`, is unconsumed and `expiresAt > now`. Returns the record
   * for the single caller that redeemed it, `undefined` for every other.
   */
  consumeAuthorizationCode(codeHash: string, clientId: string, now: number): Promise<AuthorizationCodeRecord | undefined>;
}

