import type { ClientAddress } from '../client-address.js';
import type { Client } from '../clients/client.js';
import type { OtpChallengeRecord } from '../login/records.js';
import type { JourneyDeps } from './deps.js';
import type { DeadEndReason, JourneyView, StepResult } from './outcomes.js';
import type { AuthorizationRequestRecord } from './records.js';
import { hashCookieValue, isPlausibleId } from './session.js';
import { FINAL_STATES } from './states.js';

/** A journey opened by the browser it belongs to: its record, its client, and how its pages show it. */
export interface OpenJourney {
  readonly requestId: string;
  readonly record: AuthorizationRequestRecord;
  /** Its newest one-time-PIN challenge, read with it. */
  readonly challenge: OtpChallengeRecord | undefined;
  /** Whether its `user_id` names an account, read with it. */
  readonly hintRegistered: boolean;
  readonly client: Client;
  readonly view: JourneyView;
}

/** How a step is called: the journey's ID, the browser's cookies, the customer's address. */
export interface StepContext {
  /** `?request=` of the page. */
  readonly requestId: string | undefined;
  /** The browser-binding cookie. */
  readonly browserId: string | undefined;
  /** The customer-session cookie. */
  readonly sessionId?: string | undefined;
  /** The client address, parsed at the edge (for the per-address limits and the audit log). */
  readonly address: ClientAddress;
  /** The ID of the request this is part of (its `X-Request-Id`), recorded with the audit events it causes. */
  readonly correlationId?: string | undefined;
  /**
   * Aborted once the request no longer waits for this step (it was answered
   * `503` at its deadline): from then on no SMS is
   * sent for it (docs/operator-guide.md, "Timeouts").
   */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Opens the journey of a page. Only the browser that started it may go on
 * with it, and only until it expires or ends: otherwise a dead end (the
 * same answer for an unknown ID and a foreign browser, so IDs cannot be probed).
 */
export async function openJourney(context: StepContext, deps: Pick<JourneyDeps, 'db' | 'findClient' | 'clock'>): Promise<OpenJourney | StepResult> {
  const { requestId, browserId } = context;
  if (!isPlausibleId(requestId) || !isPlausibleId(browserId)) return { kind: 'dead_end', reason: 'expired' };
  // The journey, its newest challenge and whether its user_id is registered: one statement.
  const found = await deps.db.signIns.findJourney(hashCookieValue(requestId));
  const record = found?.request;
  if (!found || !record || record.browserHash !== hashCookieValue(browserId)) return { kind: 'dead_end', reason: 'expired' };
  if (FINAL_STATES.includes(record.status)) return deadEnd('finished', record);
  if (record.expiresAt <= deps.clock.nowSeconds()) return { kind: 'dead_end', reason: 'expired' };
  const client = await deps.findClient(record.clientId);
  if (!client || client.status !== 'active') return deadEnd('client_unavailable', record);
  return {
    requestId,
    record,
    challenge: found.challenge,
    hintRegistered: found.hintRegistered,
    client,
    view: { requestId, clientName: client.name, redirectUri: record.redirectUri, fixedMobile: record.loginHint, uiLocale: record.uiLocale },
  };
}

/**
 * A dead end of a journey this browser opened: its pages' language goes
 * with it. (`expired` is answered without it, the same whether the journey
 * exists or not.)
 */
export function deadEnd(reason: Exclude<DeadEndReason, 'expired'>, record: Pick<AuthorizationRequestRecord, 'uiLocale'>, clientName?: string): StepResult {
  return {
    kind: 'dead_end',
    reason,
    ...(record.uiLocale === null ? {} : { uiLocale: record.uiLocale }),
    ...(clientName === undefined ? {} : { clientName }),
  };
}

/** Whether `opened` is a journey (not a step result). */
export function isOpen(opened: OpenJourney | StepResult): opened is OpenJourney {
  return 'record' in opened;
}

/**
 * The page a journey's state belongs on: the login (or registration) page
 * while `pending`, the one-time-PIN page once the PIN is verified, the
 * consent page while `consent_required`, and the reset code's and the new
 * PIN's pages during a PIN reset.
 */
export function pageForState(journey: OpenJourney): StepResult {
  switch (journey.record.status) {
    case 'otp_sent':
      return { kind: 'goto', page: 'otp', requestId: journey.requestId };
    case 'reset_otp_sent':
      return { kind: 'goto', page: 'reset_otp', requestId: journey.requestId };
    case 'reset_verified':
      return { kind: 'goto', page: 'new_pin', requestId: journey.requestId };
    case 'consent_required':
      return { kind: 'goto', page: 'consent', requestId: journey.requestId };
    case 'pending':
      return { kind: 'goto', page: firstPage(journey), requestId: journey.requestId };
    default:
      return deadEnd('finished', journey.record);
  }
}

/**
 * Where to go when a step lost a race (another tab or a double submit moved
 * the journey first, or it expired meanwhile): the journey is read again and
 * the customer is shown where it stands now.
 */
export async function whereItStandsNow(journey: OpenJourney, deps: Pick<JourneyDeps, 'db' | 'clock'>): Promise<StepResult> {
  const current = await deps.db.signIns.findJourney(journey.record.idHash);
  if (!current || FINAL_STATES.includes(current.request.status)) return deadEnd('finished', journey.record);
  if (current.request.expiresAt <= deps.clock.nowSeconds()) return { kind: 'dead_end', reason: 'expired' };
  return pageForState({ ...journey, record: current.request, challenge: current.challenge, hintRegistered: current.hintRegistered });
}

/** Where signing in starts (docs/journey.md): registration when `user_id` names no account, else login. */
export function firstPage(journey: OpenJourney): 'login' | 'register' {
  return journey.record.loginHint !== null && !journey.hintRegistered ? 'register' : 'login';
}
