import { auditActor } from '../audit/audit-actor.js';
import { meetsRequirements, requirementsOf } from '../authentication-requirements.js';
import { pinSmsAuthentication, type PhoneProof } from '../authentication.js';
import type { Customer } from '../customers/customer.js';
import { newCustomer } from '../customers/manage-customers.js';
import { maskedMobile, mobileOf, type MobileNumber } from '../customers/mobile.js';
import { OTP_MAX_ATTEMPTS, OTP_MAX_RESENDS, OTP_RESEND_AFTER_SECONDS, RESET_PROVES_PHONE_SECONDS } from '../lifetimes.js';
import { newChallenge, type SendRefusal } from '../otp/issue-otp.js';
import type { OtpChallengeRecord } from '../otp/records.js';
import { verifyOtp, type MakeEntry, type VerifyOtpResult } from '../otp/verify-otp.js';
import { usablePasskeysOf } from '../passkeys/passkeys.js';
import { newCode } from './code.js';
import { endJourneyUnmet } from './cancel.js';
import type { JourneyDeps } from './deps.js';
import { proveKnownDevice, type KnownDeviceCustomer } from './known-device.js';
import { deadEnd, whereItStandsNow, type OpenJourney, type StepContext } from './open.js';
import type { LimitName, OtpView, Problem, StepResult } from './outcomes.js';
import { hashCookieValue, isPlausibleId, newSession } from './session.js';
import type { SignInCompletion } from './stores.js';

/** What entering a sign-in's code uses of the journey's dependencies. */
export type CodeEntryDeps = Pick<JourneyDeps, 'db' | 'clock' | 'issuer' | 'otpHasher' | 'lifetimes' | 'knownDeviceKey' | 'countSignIn'>;

/**
 * The login right after a PIN reset in the same journey (docs/journey.md,
 * "After a PIN reset"): the reset's code, entered right in this journey
 * less than {@link RESET_PROVES_PHONE_SECONDS} ago, proved the customer's
 * phone, and the new PIN was just checked; no second one-time PIN is sent.
 * The sign-in completes through the same atomic steps as any other: a
 * login challenge is stored with the journey's move to `otp_sent` (lifting
 * the PIN's count, `SignInStore.startChallenge`), and its code, which
 * never leaves the server, is entered at once (`SignInStore.enterOtp`:
 * session, approval and code, all or nothing). Should the second step not
 * happen (the process stopped in between), the journey waits on its
 * one-time-PIN page, and "Send a new code" sends one.
 */
export async function signInOnResetProof(
  journey: OpenJourney,
  login: { readonly mobile: MobileNumber; readonly profileId: string },
  /** The right PIN's count, lifted with the challenge (`lifted` is then set). */
  pinCount: { readonly profileId: string; readonly attempt: number; lifted: boolean },
  context: StepContext,
  deps: CodeEntryDeps,
  /** The page's `passkey_capable`: the browser can make a passkey (docs/journey.md, "Passkeys"). */
  passkeyCapable = false,
): Promise<StepResult> {
  const now = deps.clock.nowSeconds();
  const { record, code } = newChallenge(
    { requestHash: journey.record.idHash, purpose: 'login', mobile: login.mobile, profileId: login.profileId, pendingPinHash: null },
    { hasher: deps.otpHasher, clock: deps.clock },
  );
  const moved = await deps.db.signIns.startChallenge({
    idHash: journey.record.idHash,
    now,
    profileId: login.profileId,
    challenge: record,
    clearPin: { profileId: pinCount.profileId, attempt: pinCount.attempt },
  });
  pinCount.lifted = true;
  // Another tab finished or cancelled this journey meanwhile, or it expired.
  if (!moved) return whereItStandsNow(journey, deps);
  // No second SMS, yet the phone was proved by one: the reset's code (amr still has `sms`).
  const outcome = await enterCode(journey, record, code, context.sessionId, 'reset_otp', deps);
  return completed(journey, outcome, context, deps, passkeyCapable);
}

/**
 * Whether `journey` is back at its login page from a PIN reset of
 * `profileId` whose code was entered right less than
 * {@link RESET_PROVES_PHONE_SECONDS} before `now`.
 */
export function resetProvesPhone(journey: OpenJourney, profileId: string, now: number): boolean {
  const { challenge, record } = journey;
  return (
    record.status === 'pending' &&
    challenge?.purpose === 'reset' &&
    challenge.profileId === profileId &&
    challenge.consumedAt !== null &&
    now < challenge.consumedAt + RESET_PROVES_PHONE_SECONDS
  );
}

/** The one-time-PIN form as posted. */
export interface OtpForm {
  readonly action?: string | undefined;
  readonly otp?: string | undefined;
  /** `1` when the page's script found that the browser can make a passkey (docs/journey.md, "Passkeys"). */
  readonly passkeyCapable?: string | undefined;
}

/** Whether a form's `passkey_capable` says the browser can make a passkey. */
export function isPasskeyCapable(value: string | undefined): boolean {
  return value === '1';
}

/**
 * The page for an entry that completed the sign-in, or found it could not.
 * A completed PIN + SMS sign-in goes back to the client, unless the
 * browser can make a passkey (`passkeyCapable`) and the customer has no
 * usable one: then the offer to add one, with the same cookies and a link
 * to the same location (docs/journey.md, "Passkeys").
 */
export async function completed(journey: OpenJourney, outcome: Entry, context: StepContext, deps: CodeEntryDeps, passkeyCapable = false): Promise<StepResult> {
  const { challenge } = journey;
  switch (outcome.kind) {
    case 'refused':
      // Only an entry of the code the server itself made (after a PIN reset) gets here: it cannot be wrong.
      return whereItStandsNow(journey, deps);
    case 'done': {
      deps.countSignIn?.('pin_sms');
      // The one-time PIN proved the phone in this browser: it is a known device of the customer,
      // at the credential version the sign-in completed at (docs/journey.md, "After a PIN reset").
      const knownDevice = proveKnownDevice(context.knownDevice, outcome.customer, deps.clock.nowSeconds(), deps.knownDeviceKey);
      if (passkeyCapable && (await usablePasskeysOf(deps.db.passkeys, outcome.customer.profileId)).length === 0) {
        return {
          kind: 'passkey_offer',
          journey: journey.view,
          location: outcome.location,
          session: outcome.session,
          knownDevice,
          maskedMobile: maskedMobile(mobileOf({ mobile: outcome.mobile }) ?? outcome.mobile, 'page'),
        };
      }
      return { kind: 'redirect', location: outcome.location, session: outcome.session, knownDevice };
    }
    case 'mobile_taken':
      return mobileTaken(journey, challenge?.mobile ?? '');
    case 'account_unavailable':
      return deadEnd('account_unavailable', journey.record, journey.view.clientName);
    case 'unmet':
      return endJourneyUnmet(journey, deps);
    case 'lost':
      // A concurrent submit completed (or another tab ended) the journey, or the code expired meanwhile.
      return whereItStandsNow(journey, deps);
  }
}

/** The registration page of a journey whose mobile was registered meanwhile (in another browser): it says the number has an account. */
export function mobileTaken(journey: OpenJourney, mobile: string): StepResult {
  return { kind: 'register', journey: journey.view, mobile, problem: { code: 'mobile_taken', field: 'mobile' } };
}

/** What one entry of a sign-in's code came to. */
export type Entry =
  | { readonly kind: 'refused'; readonly result: Exclude<VerifyOtpResult<SignInCompletion>, { ok: true }> }
  | { readonly kind: 'done'; readonly location: string; readonly session: string; readonly customer: KnownDeviceCustomer; readonly mobile: string }
  | { readonly kind: 'lost' }
  | { readonly kind: 'mobile_taken' }
  | { readonly kind: 'account_unavailable' }
  /** The sign-in cannot meet the journey's `acr_values` (`phr`): nothing was entered or completed. */
  | { readonly kind: 'unmet' };

/**
 * One entry of the code, in one atomic step (`SignInStore.enterOtp`; on
 * PostgreSQL one statement). Everything a right entry completes is made
 * ready first (the session, the approval, the code, a registration's
 * account) and stored only if the entry is right, the journey can still
 * move and the customer can sign in. Entries of one challenge are counted
 * one after another, on any number of instances, so at most one is right.
 * The session and the code record the sign-in as PIN + SMS completed now
 * (docs/tokens.md, "How the customer signed in"), `proof` saying which SMS
 * code proved the phone. A journey whose `acr_values` that sign-in cannot
 * meet (`phr`) is `unmet`, before anything is entered.
 */
export async function enterCode(
  journey: OpenJourney,
  challenge: OtpChallengeRecord,
  code: string,
  previousSessionId: string | undefined,
  proof: PhoneProof,
  deps: CodeEntryDeps,
): Promise<Entry> {
  const now = deps.clock.nowSeconds();
  const { record } = journey;
  const created = challenge.purpose === 'register' ? newAccount(challenge, now) : undefined;
  const customer = created ?? { profileId: challenge.profileId ?? '', mobile: challenge.mobile };
  const authentication = pinSmsAuthentication(now, proof);
  // A PIN + SMS sign-in never meets acr_values=phr: the code is not even checked (docs/journey.md, "`acr_values` and `max_age`").
  if (!meetsRequirements(authentication, requirementsOf(record), now)) return { kind: 'unmet' };
  const session = newSession(customer.profileId, authentication, now, deps.lifetimes);
  const issued = newCode(record, customer, authentication, deps, journey.client);
  const enter: MakeEntry<SignInCompletion> = (codeHashes) =>
    deps.db.signIns.enterOtp({
      idHash: record.idHash,
      challengeId: challenge.id,
      codeHashes,
      now,
      maxAttempts: OTP_MAX_ATTEMPTS,
      customer: created ? { create: created } : { profileId: customer.profileId },
      endSessionHash: isPlausibleId(previousSessionId) ? hashCookieValue(previousSessionId) : null,
      session: session.record,
      // Signing in through a client approves it: its later requests may sign in silently.
      consent: { profileId: customer.profileId, clientId: record.clientId, approvedAt: now },
      code: issued.record,
    });
  const result = await verifyOtp(challenge.id, code, enter, { challenges: deps.db.otpChallenges, hasher: deps.otpHasher, clock: deps.clock });
  if (!result.ok) return { kind: 'refused', result };
  switch (result.done.kind) {
    case 'completed':
      return {
        kind: 'done',
        location: issued.location,
        session: session.id,
        customer: { profileId: customer.profileId, credentialVersion: result.done.credentialVersion },
        mobile: customer.mobile,
      };
    case 'lost':
      return { kind: 'lost' };
    case 'customer_unavailable':
      return { kind: challenge.purpose === 'register' ? 'mobile_taken' : 'account_unavailable' };
  }
}

/**
 * What the code's page says of an entry that was not the right code (or
 * could not be checked): a problem, or `undefined` when the challenge was
 * answered or retired meanwhile (the customer is then shown where the
 * journey stands now). The entry that used up the challenge's tries is
 * recorded in the audit log (`otp.exhausted`).
 */
export async function refusalOf(
  journey: OpenJourney,
  challenge: OtpChallengeRecord,
  result: Exclude<VerifyOtpResult<unknown>, { ok: true }>,
  context: StepContext,
  deps: Pick<JourneyDeps, 'audit'>,
): Promise<Problem | undefined> {
  switch (result.reason) {
    case 'malformed':
      return { code: 'otp_format', field: 'otp' };
    case 'wrong':
      return { code: 'otp_wrong', field: 'otp', attemptsLeft: result.attemptsLeft };
    case 'exhausted':
      if (result.justNow) {
        await deps.audit.record({
          type: 'otp.exhausted',
          actor: auditActor({ kind: 'address', ip: context.address.ip }),
          // The profile ID, as for every customer event; a registration has none yet.
          subject: challenge.profileId ?? maskedMobile(challenge.mobile, 'user_id'),
          outcome: 'failure',
          details: { client_id: journey.client.id, purpose: challenge.purpose },
          requestId: context.correlationId,
        });
      }
      return { code: 'otp_exhausted', field: 'otp' };
    case 'expired':
      return { code: 'otp_expired', field: 'otp' };
    default:
      return undefined;
  }
}

/** The account a registration's one-time PIN proves, made ready to be stored with the sign-in. */
function newAccount(challenge: OtpChallengeRecord, now: number): Customer | undefined {
  return challenge.pendingPinHash === null ? undefined : newCustomer({ mobile: challenge.mobile, pinHash: challenge.pendingPinHash }, now);
}

/** What a code's page shows of its challenge at `now`. */
export function otpView(challenge: OtpChallengeRecord, now: number): OtpView {
  const mobile = mobileOf(challenge);
  const resendAt = challenge.lastSentAt + OTP_RESEND_AFTER_SECONDS;
  return {
    maskedMobile: maskedMobile(mobile ?? challenge.mobile, 'page'),
    resendInSeconds: Math.max(0, resendAt - now),
    resendAt,
    mobileCountry: mobile?.country,
    resendsLeft: Math.max(0, OTP_MAX_RESENDS - challenge.resends),
  };
}

/** The limit behind each spent send budget but the whole deployment's. */
const SEND_LIMITS = {
  mobile: 'sms_per_mobile',
  address: 'sms_per_address',
  requester: 'reset_sms_per_requester',
  unsolicited: 'reset_sms_unsolicited',
  device: 'reset_sms_per_device',
} as const satisfies Record<string, LimitName>;

/** A refused send, as the code's page says it. */
export function refusalProblem(refusal: SendRefusal): Problem {
  switch (refusal.reason) {
    case 'rate_limited':
      return { code: 'sms_rate_limited', retryAfterSeconds: refusal.retryAfterSeconds, limit: SEND_LIMITS[refusal.budget] };
    case 'budget_spent':
      return { code: 'sms_budget_spent', retryAfterSeconds: refusal.retryAfterSeconds, limit: 'sms_global' };
    case 'too_soon':
      return { code: 'sms_too_soon', retryAfterSeconds: refusal.retryAfterSeconds };
    case 'no_more_resends':
      return { code: 'sms_no_more_resends' };
    case 'sms_unavailable':
      return { code: 'sms_unavailable' };
    case 'gone':
      return { code: 'otp_expired', field: 'otp' };
  }
}
