/**
 * Records of the customer's journey, as stores keep them.
 * Every timestamp is epoch seconds; every secret is stored only hashed.
 */
import type { Authentication } from '../authentication.js';
import type { UiLocale } from '../authorize/ui-locales.js';
import type { JourneyEnd, JourneyState } from './states.js';

/** A journey: a validated `/authorize` request that needs the customer (login, registration or consent). */
export interface AuthorizationRequestRecord {
  /** SHA-256 of the request ID that travels in the hosted pages' URLs. */
  readonly idHash: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly state: string | null;
  /** PKCE S256 challenge, when the request carried one. */
  readonly codeChallenge: string | null;
  /** The `user_id` of the request (E.164), when given. */
  readonly loginHint: string | null;
  /** SHA-256 of the browser cookie the request is bound to. */
  readonly browserHash: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  /** When it reached a final state (`code_issued`, `cancelled`). */
  readonly completedAt: number | null;
  readonly status: JourneyState;
  /** The customer, once known: the PIN was right, or the session's customer on a consent page. */
  readonly profileId: string | null;
  /** The language the request's `ui_locales` chose for every page of the journey; `null`: the browser's `Accept-Language` decides. */
  readonly uiLocale: UiLocale | null;
  /** The scopes granted to the request (its `scope`, or all the client's), carried to its code (docs/tokens.md, "Scopes"). */
  readonly scopes: readonly string[];
  /** Why it was ended for its customer (`cancelled` by a lock or another journey's PIN reset); `null` otherwise. */
  readonly endedBy: JourneyEnd | null;
  /**
   * The request's `acr_values` that Connect knows, in its order (empty:
   * none); with `maxAge`, what the sign-in must meet to complete the
   * journey (`core/authentication-requirements.ts`).
   */
  readonly acrValues: readonly string[];
  /** The request's `max_age` in seconds; `null`: none. */
  readonly maxAge: number | null;
  /** The request's `dpop_jkt` (RFC 9449 §10), carried to its code; absent (or `null`): none. */
  readonly dpopJkt?: string | null;
}

/** A customer's login session at Connect (the hosted pages' cookie). */
export interface CustomerSessionRecord {
  /** SHA-256 of the session cookie value. */
  readonly idHash: string;
  readonly profileId: string;
  readonly createdAt: number;
  readonly lastSeenAt: number;
  /** Absolute end of the session. */
  readonly expiresAt: number;
  readonly endedAt: number | null;
  /**
   * How the customer signed in to start it (docs/tokens.md, "How the
   * customer signed in"): every code issued from the session, silently or
   * after consent, carries this one, not the time of its own issue.
   */
  readonly authentication: Authentication | null;
}

/** A customer's approval of one client: its sessions then sign in to that client silently. */
export interface ConsentRecord {
  readonly profileId: string;
  readonly clientId: string;
  readonly approvedAt: number;
}
