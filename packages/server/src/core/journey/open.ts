import { requirementsOf, requiresPhr } from '../authentication-requirements.js';
import type { UiLocale } from '../authorize/ui-locales.js';
import type { ClientAddress } from '../client-address.js';
import type { OtpSendContext } from '../otp/issue-otp.js';
import { authHostOf } from '../sms/one-time-pin-message.js';
import type { Client } from '../clients/client.js';
import type { OtpChallengeRecord } from '../otp/records.js';
import type { JourneyDeps } from './deps.js';
import type { DeadEndReason, JourneyView, StepResult } from './outcomes.js';
import type { AuthorizationRequestRecord } from './records.js';
import type { JourneyRecord } from './stores.js';
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
  /** Whether that account has a passkey that is not suspended, read with it. */
  readonly hintHasPasskey: boolean;
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
  /** The known-device cookie (`known-device.ts`). */
  readonly knownDevice?: string | undefined;
  /**
   * The language the browser's `Accept-Language` prefers among the pages'
   * (parsed at the edge); the journey's `ui_locales` comes first
   * ({@link journeyLocale}).
   */
  readonly browserLocale?: UiLocale | undefined;
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
  if (FINAL_STATES.includes(record.status)) return ended(found, deps);
  if (record.expiresAt <= deps.clock.nowSeconds()) return { kind: 'dead_end', reason: 'expired' };
  const client = await deps.findClient(record.clientId);
  // A client disabled, or whose redirect URI an operator replaced, since the
  // journey began: nothing more goes to the address it was begun with.
  if (!client || client.status !== 'active' || client.redirectUri !== record.redirectUri) return deadEnd('client_unavailable', record);
  return {
    requestId,
    record,
    challenge: found.challenge,
    hintRegistered: found.hintRegistered,
    hintHasPasskey: found.hintHasPasskey,
    client,
    view: {
      requestId,
      clientName: client.name,
      redirectUri: record.redirectUri,
      fixedMobile: record.loginHint,
      uiLocale: record.uiLocale,
      requiresPhr: requiresPhr(requirementsOf(record)),
    },
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

/**
 * The dead end of a journey in a final state: one an operator's lock ended
 * says the account cannot sign in while its customer is still locked
 * (docs/journey.md, "When a sign-in ends"); any other, and that one once
 * the customer was unlocked, that the sign-in has finished.
 */
async function ended(found: JourneyRecord, deps: Pick<JourneyDeps, 'db'> & Partial<Pick<JourneyDeps, 'findClient'>>, clientName?: string): Promise<StepResult> {
  const { request, challenge } = found;
  const profileId = request.profileId ?? challenge?.profileId ?? null;
  if (request.endedBy === 'lock' && profileId !== null) {
    const customer = await deps.db.customers.findCustomer(profileId);
    // The page names whose customer support to contact: the client's.
    if (customer?.status !== 'active') return deadEnd('account_unavailable', request, clientName ?? (await deps.findClient?.(request.clientId))?.name);
  }
  return deadEnd('finished', request);
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
  if (!current) return deadEnd('finished', journey.record);
  if (FINAL_STATES.includes(current.request.status)) return ended(current, deps, journey.view.clientName);
  if (current.request.expiresAt <= deps.clock.nowSeconds()) return { kind: 'dead_end', reason: 'expired' };
  return pageForState({ ...journey, record: current.request, challenge: current.challenge, hintRegistered: current.hintRegistered, hintHasPasskey: current.hintHasPasskey });
}

/**
 * The language of a journey for what is sent outside its pages (the SMS
 * with its codes): as its pages' language is chosen (docs/hosted-login.md,
 * "Languages"), the journey's `ui_locales`, else the browser's
 * `Accept-Language`, else English.
 */
export function journeyLocale(journey: OpenJourney, context: StepContext): UiLocale {
  return journey.record.uiLocale ?? context.browserLocale ?? 'en';
}

/**
 * Who a code of this journey is sent for and how its SMS reads: the
 * client, the customer's address and profile, the journey's language and
 * the auth URL's host (its origin-bound last line).
 */
export function otpSendContext(journey: OpenJourney, context: StepContext, deps: Pick<JourneyDeps, 'issuer'>, profileId: string | null): OtpSendContext {
  return {
    clientId: journey.client.id,
    clientName: journey.client.name,
    address: context.address,
    profileId,
    signal: context.signal,
    locale: journeyLocale(journey, context),
    authHost: authHostOf(deps.issuer),
  };
}

/** Where signing in starts (docs/journey.md): registration when `user_id` names no account, else login. */
export function firstPage(journey: OpenJourney): 'login' | 'register' {
  return journey.record.loginHint !== null && !journey.hintRegistered ? 'register' : 'login';
}
