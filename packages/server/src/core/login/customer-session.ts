import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Customer } from '../customers/customer.js';
import type { CustomerSessionStore } from '../journey/stores.js';
import type { CustomerStore } from '../customers/customer-store.js';

/** How long customer sessions last. */
export interface SessionPolicy {
  /** A session unused this long ends. */
  readonly sessionIdleSeconds: number;
  /** A session ends this long after login, used or not. */
  readonly sessionTtlSeconds: number;
}

/** What customer sessions need. */
export interface CustomerSessionDeps extends SessionPolicy {
  readonly sessions: CustomerSessionStore;
  readonly customers: Pick<CustomerStore, 'findCustomer'>;
  readonly clock: Clock;
}

/** SHA-256 of a cookie value, as stored: a database copy cannot be replayed as a cookie. */
export function hashCookieValue(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/**
 * Starts a session after a completed login: a new random ID every time (no
 * session fixation), ending the session the browser had before.
 *
 * @returns the cookie value.
 */
export async function startCustomerSession(
  customer: Customer,
  previousSessionId: string | undefined,
  deps: CustomerSessionDeps,
): Promise<string> {
  const now = deps.clock.nowSeconds();
  if (previousSessionId) await deps.sessions.endCustomerSession(hashCookieValue(previousSessionId), now);
  const id = randomBytes(32).toString('base64url');
  await deps.sessions.insertCustomerSession({
    idHash: hashCookieValue(id),
    profileId: customer.profileId,
    createdAt: now,
    lastSeenAt: now,
    expiresAt: now + deps.sessionTtlSeconds,
    endedAt: null,
  });
  return id;
}

/**
 * The customer of a live session, or `undefined`: the session must not have
 * ended, be inside its absolute and idle lifetimes, and its customer must
 * still be allowed to log in. A live session is marked as used.
 */
export async function findSessionCustomer(sessionId: string | undefined, deps: CustomerSessionDeps): Promise<Customer | undefined> {
  if (!sessionId || sessionId.length > 100) return undefined;
  const now = deps.clock.nowSeconds();
  const idHash = hashCookieValue(sessionId);
  const session = await deps.sessions.findCustomerSession(idHash);
  if (!session || session.endedAt !== null) return undefined;
  if (session.expiresAt <= now || session.lastSeenAt + deps.sessionIdleSeconds <= now) return undefined;
  const customer = await deps.customers.findCustomer(session.profileId);
  if (!customer || customer.status !== 'active' || (customer.lockedUntil !== null && customer.lockedUntil > now)) return undefined;
  await deps.sessions.touchCustomerSession(idHash, now);
  return customer;
}

/** Ends a session (logout, or `prompt=login`). */
export async function endCustomerSession(sessionId: string | undefined, deps: Pick<CustomerSessionDeps, 'sessions' | 'clock'>): Promise<void> {
  if (sessionId && sessionId.length <= 100) await deps.sessions.endCustomerSession(hashCookieValue(sessionId), deps.clock.nowSeconds());
}
