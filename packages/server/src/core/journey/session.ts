import { createHash, randomBytes } from 'node:crypto';
import type { Authentication } from '../authentication.js';
import type { Clock } from '../clock.js';
import { maySignIn, type Customer } from '../customers/customer.js';
import type { Lifetimes } from '../lifetimes.js';
import type { JourneyStores } from './deps.js';
import type { CustomerSessionRecord } from './records.js';

/** SHA-256, base64url: how the journey stores values of 256 random bits (codes, cookie values, journey IDs). */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** A cookie value or journey ID as stored: a database copy cannot be replayed as a cookie. */
export const hashCookieValue = sha256;

/** Cookie values longer than this are not ours: refused before any lookup. */
const MAX_COOKIE_VALUE = 100;

/** Whether a cookie value (or request ID) can be one of ours. */
export function isPlausibleId(value: string | undefined): value is string {
  return value !== undefined && value.length > 0 && value.length <= MAX_COOKIE_VALUE;
}

/**
 * A new customer session after a completed login: a new random ID every
 * time (no session fixation), keeping how the customer signed in. Returns
 * the cookie value and the record to store (in the transaction that
 * completes the login).
 */
export function newSession(
  profileId: string,
  authentication: Authentication,
  now: number,
  lifetimes: Pick<Lifetimes, 'sessionSeconds'>,
): { id: string; record: CustomerSessionRecord } {
  const id = randomBytes(32).toString('base64url');
  return {
    id,
    record: { idHash: hashCookieValue(id), profileId, createdAt: now, lastSeenAt: now, expiresAt: now + lifetimes.sessionSeconds, endedAt: null, authentication },
  };
}

/** A live session's customer, and how that customer signed in to start the session (`null`: unknown). */
export interface SessionCustomer {
  readonly customer: Customer;
  readonly authentication: Authentication | null;
}

/**
 * The customer of a live session, with how the session was signed in to,
 * or `undefined`. The session is checked and marked as used in one
 * conditional update (unended, inside its absolute and idle lifetimes),
 * and its customer must still be allowed to sign in.
 */
export async function useSession(
  sessionId: string | undefined,
  deps: { db: Pick<JourneyStores, 'customerSessions' | 'customers'>; clock: Clock; lifetimes: Pick<Lifetimes, 'sessionIdleSeconds'> },
): Promise<SessionCustomer | undefined> {
  if (!isPlausibleId(sessionId)) return undefined;
  const now = deps.clock.nowSeconds();
  const session = await deps.db.customerSessions.useCustomerSession(hashCookieValue(sessionId), now, deps.lifetimes.sessionIdleSeconds);
  if (!session) return undefined;
  const customer = await deps.db.customers.findCustomer(session.profileId);
  return customer && maySignIn(customer) ? { customer, authentication: session.authentication } : undefined;
}

/** Ends a session (`prompt=login`, or a new login in the same browser). */
export async function endSession(sessionId: string | undefined, stores: Pick<JourneyStores, 'customerSessions'>, now: number): Promise<void> {
  if (isPlausibleId(sessionId)) await stores.customerSessions.endCustomerSession(hashCookieValue(sessionId), now);
}
