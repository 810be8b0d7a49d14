import { pinSmsAuthentication, type PhoneProof } from '../authentication.js';
import type { Customer } from '../customers/customer.js';
import { newCustomer } from '../customers/manage-customers.js';
import { parseMobile } from '../customers/mobile.js';
import { OTP_MAX_ATTEMPTS, OTP_MAX_RESENDS, OTP_RESEND_AFTER_SECONDS, RESET_PROVES_PHONE_SECONDS } from '../lifetimes.js';
import { deliverOtp, newChallenge, noteRefusedSend, resendOtp, type OtpSendContext, type SendRefusal } from '../otp/issue-otp.js';
import type { OtpChallengeRecord } from '../otp/records.js';
import { verifyOtp, type MakeEntry, type VerifyOtpResult } from '../otp/verify-otp.js';
import { cancelJourney } from './cancel.js';
import { newCode } from './code.js';
import type { JourneyDeps } from './deps.js';
import { proveKnownDevice, type KnownDeviceCustomer } from './known-device.js';
import { deadEnd, firstPage, isOpen, openJourney, pageForState, pinSendContext, whereItStandsNow, type OpenJourney, type StepContext } from './open.js';
import type { LimitName, OtpView, Problem, StepResult } from './outcomes.js';
import { hashCookieValue, isPlausibleId, newSession } from './session.js';
import { canMove, TRANSITIONS } from './states.js';
import type { SignInCompletion } from './stores.js';

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
  login: { readonly mobile: string; readonly profileId: string },
  /** The right PIN's count, lifted with the challenge (`lifted` is then set). */
  pinCount: { readonly profileId: string; readonly attempt: number; lifted: boolean },
  context: StepContext,
  deps: JourneyDeps,
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
  return completed(journey, outcome, context, deps);
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
}

/** `GET /login/otp`: the one-time-PIN page of a journey whose PIN was verified. */
export async function showOtp(context: StepContext, deps: JourneyDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (!canMove(journey.record.status, TRANSITIONS.otpVerified)) return pageForState(journey);
  const { challenge } = journey;
  // A reset's code proves the phone, not the PIN: it never signs anyone in.
  if (!challenge || challenge.purpose === 'reset') return { kind: 'goto', page: firstPage(journey), requestId: journey.requestId };
  return otpPage(journey, challenge, deps, challenge.consumedAt === null ? undefined : { code: 'sms_unavailable' });
}

/**
 * `POST /login/otp`: the one-time PIN, "send a new code", or cancel.
 *
 * The entry is counted, checked and (when right) completes the sign-in in
 * ONE atomic step (docs/journey.md, "Atomicity"): the challenge is used
 * up, the journey moves to `code_issued`, a registration creates the
 * account, the browser's previous session ends and a new one starts, the
 * client is approved and the code is issued. All of it, or (when any write
 * fails) none of it: a one-time PIN is accepted exactly once.
 */
export async function submitOtp(context: StepContext, form: OtpForm, deps: JourneyDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (form.action === 'cancel') return cancelJourney(journey, deps);
  if (!canMove(journey.record.status, TRANSITIONS.otpVerified)) return pageForState(journey);
  const { challenge } = journey;
  // A reset's code proves the phone, not the PIN: it never signs anyone in.
  if (!challenge || challenge.purpose === 'reset') return { kind: 'goto', page: firstPage(journey), requestId: journey.requestId };
  if (form.action === 'resend') return resend(journey, challenge, context, deps);

  const code = (form.otp ?? '').trim();
  // Not 6 digits cannot be the code: said at once, without spending anything.
  if (!/^\d{6}$/.test(code)) return otpPage(journey, challenge, deps, { code: 'otp_format', field: 'otp' });
  // The mobile's budget of wrong entries over all its challenges; the
  // challenge's own 5 entries, counted before they are compared, stay the
  // hard bound (so concurrent entries overshoot this one by at most 5).
  const spent = await deps.otpEntries.spent(challenge.mobile);
  if (spent) return otpPage(journey, challenge, deps, { code: 'otp_too_many', field: 'otp', retryAfterSeconds: spent.retryAfterSeconds, limit: 'otp_per_mobile' });
  const outcome = await enterCode(journey, challenge, code, context.sessionId, 'sign_in_otp', deps);
  if (outcome.kind === 'refused' && (outcome.result.reason === 'wrong' || (outcome.result.reason === 'exhausted' && outcome.result.justNow))) {
    await deps.otpEntries.count(challenge.mobile);
  }
  if (outcome.kind === 'refused') return refusedEntry(journey, challenge, outcome.result, context, deps);
  return completed(journey, outcome, context, deps);
}

/** The page for an entry that completed the sign-in, or found it could not. */
async function completed(journey: OpenJourney, outcome: Entry, context: StepContext, deps: JourneyDeps): Promise<StepResult> {
  const { challenge } = journey;
  switch (outcome.kind) {
    case 'refused':
      // Only an entry of the code the server itself made (after a PIN reset) gets here: it cannot be wrong.
      return whereItStandsNow(journey, deps);
    case 'done':
      // The one-time PIN proved the phone in this browser: it is a known device of the customer,
      // at the credential version the sign-in completed at (docs/journey.md, "After a PIN reset").
      return {
        kind: 'redirect',
        location: outcome.location,
        session: outcome.session,
        knownDevice: proveKnownDevice(context.knownDevice, outcome.customer, deps.clock.nowSeconds(), deps.knownDeviceKey),
      };
    case 'mobile_taken':
      return { kind: 'register', journey: journey.view, mobile: challenge?.mobile ?? '', problem: { code: 'mobile_taken', field: 'mobile' } };
    case 'account_unavailable':
      return deadEnd('account_unavailable', journey.record, journey.view.clientName);
    case 'lost':
      // A concurrent submit completed (or another tab ended) the journey, or the code expired meanwhile.
      return whereItStandsNow(journey, deps);
  }
}

type Entry =
  | { readonly kind: 'refused'; readonly result: Exclude<VerifyOtpResult<SignInCompletion>, { ok: true }> }
  | { readonly kind: 'done'; readonly location: string; readonly session: string; readonly customer: KnownDeviceCustomer }
  | { readonly kind: 'lost' }
  | { readonly kind: 'mobile_taken' }
  | { readonly kind: 'account_unavailable' };

/**
 * One entry of the code, in one atomic step (`SignInStore.enterOtp`; on
 * PostgreSQL one statement). Everything a right entry completes is made
 * ready first (the session, the approval, the code, a registration's
 * account) and stored only if the entry is right, the journey can still
 * move and the customer can sign in. Entries of one challenge are counted
 * one after another, on any number of instances, so at most one is right.
 * The session and the code record the sign-in as PIN + SMS completed now
 * (docs/tokens.md, "How the customer signed in"), `proof` saying which SMS
 * code proved the phone.
 */
async function enterCode(
  journey: OpenJourney,
  challenge: OtpChallengeRecord,
  code: string,
  previousSessionId: string | undefined,
  proof: PhoneProof,
  deps: JourneyDeps,
): Promise<Entry> {
  const now = deps.clock.nowSeconds();
  const { record } = journey;
  const created = challenge.purpose === 'register' ? newAccount(challenge, now) : undefined;
  const customer = created ?? { profileId: challenge.profileId ?? '', mobile: challenge.mobile };
  const authentication = pinSmsAuthentication(now, proof);
  const session = newSession(customer.profileId, authentication, now, deps.lifetimes);
  const issued = newCode(record, customer, authentication, deps);
  const enter: MakeEntry<SignInCompletion> = (codeHash) =>
    deps.db.signIns.enterOtp({
      idHash: record.idHash,
      challengeId: challenge.id,
      codeHash,
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
      return { kind: 'done', location: issued.location, session: session.id, customer: { profileId: customer.profileId, credentialVersion: result.done.credentialVersion } };
    case 'lost':
      return { kind: 'lost' };
    case 'customer_unavailable':
      return { kind: challenge.purpose === 'register' ? 'mobile_taken' : 'account_unavailable' };
  }
}

/** The page for an entry that was not the right code (or could not be checked). */
async function refusedEntry(
  journey: OpenJourney,
  challenge: OtpChallengeRecord,
  result: Exclude<VerifyOtpResult<SignInCompletion>, { ok: true }>,
  context: StepContext,
  deps: JourneyDeps,
): Promise<StepResult> {
  const problem = await refusalOf(journey, challenge, result, context, deps);
  // Consumed by a concurrent submit, or retired: where the journey stands now says where to go.
  return problem ? otpPage(journey, challenge, deps, problem) : whereItStandsNow(journey, deps);
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
          actor: `ip:${context.address.ip}`,
          // The profile ID, as for every customer event; a registration has none yet.
          subject: challenge.profileId ?? parseMobile(challenge.mobile)?.masked ?? null,
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

/**
 * "Send a new code". A live challenge gets a new code (30 s apart, 3 times
 * at most); one that ended (used up, expired, or never delivered) is
 * replaced by a new challenge. Both within the send limits, and only for a
 * customer who is still active: a locked account gets no code
 * (docs/journey.md, "When a sign-in ends").
 */
async function resend(journey: OpenJourney, challenge: OtpChallengeRecord, context: StepContext, deps: JourneyDeps): Promise<StepResult> {
  const now = deps.clock.nowSeconds();
  if (challenge.profileId !== null && (await deps.db.customers.findCustomer(challenge.profileId))?.status !== 'active') {
    return deadEnd('account_unavailable', journey.record, journey.view.clientName);
  }
  const ended = challenge.consumedAt !== null || challenge.attempts >= OTP_MAX_ATTEMPTS || challenge.expiresAt <= now;
  const outcome = ended
    ? await replaceChallenge(journey, challenge, context, deps)
    : await resendOtp(challenge.id, sendContext(journey, challenge, context, deps), {
        challenges: deps.db.otpChallenges,
        hasher: deps.otpHasher,
        sms: deps.sms,
        audit: deps.audit,
        log: deps.log,
        sends: deps.sends,
        clock: deps.clock,
      });
  // The journey ended meanwhile (cancelled here or in another tab, by a lock or a PIN reset): no code.
  if (outcome === 'lost') return whereItStandsNow(journey, deps);
  const latest = (await deps.db.otpChallenges.findLatestOtpChallenge(journey.record.idHash)) ?? challenge;
  if ('reason' in outcome) return otpPage(journey, latest, deps, refusalProblem(outcome));
  return { kind: 'otp', journey: journey.view, otp: otpView(latest, now), notice: 'code_sent' };
}

/**
 * A new challenge for the same sign-in, when the last one can no longer be
 * answered: stored with the journey's move along `codeResent`, in one
 * atomic step (`SignInStore.startChallenge`), so a journey that ended
 * meanwhile gets no challenge and no SMS (`lost`).
 */
async function replaceChallenge(
  journey: OpenJourney,
  old: OtpChallengeRecord,
  context: StepContext,
  deps: JourneyDeps,
): Promise<{ sent: true } | SendRefusal | 'lost'> {
  // A request already answered takes nothing from the budgets.
  context.signal?.throwIfAborted();
  const limited = await deps.sends.take(old.mobile, context.address);
  if (limited) return noteRefusedSend(limited, sendContext(journey, old, context, deps), deps);
  const { record, code } = newChallenge(
    { requestHash: old.requestHash, purpose: old.purpose, mobile: old.mobile, profileId: old.profileId, pendingPinHash: old.pendingPinHash },
    { hasher: deps.otpHasher, clock: deps.clock },
  );
  const moved = await deps.db.signIns.startChallenge({
    idHash: journey.record.idHash,
    now: record.createdAt,
    profileId: journey.record.profileId,
    challenge: record,
    transition: TRANSITIONS.codeResent,
  });
  if (!moved) return 'lost';
  if (await deliverOtp(old.mobile, code, sendContext(journey, old, context, deps), deps)) return { sent: true };
  await deps.db.otpChallenges.consumeOtpChallenge(record.id, deps.clock.nowSeconds());
  return { reason: 'sms_unavailable' };
}

function sendContext(journey: OpenJourney, challenge: OtpChallengeRecord, context: StepContext, deps: Pick<JourneyDeps, 'issuer'>): OtpSendContext {
  return pinSendContext(journey, context, deps, challenge.profileId);
}

function otpPage(journey: OpenJourney, challenge: OtpChallengeRecord, deps: Pick<JourneyDeps, 'clock'>, problem?: Problem): StepResult {
  return { kind: 'otp', journey: journey.view, otp: otpView(challenge, deps.clock.nowSeconds()), ...(problem ? { problem } : {}) };
}

/** What a code's page shows of its challenge at `now`. */
export function otpView(challenge: OtpChallengeRecord, now: number): OtpView {
  const mobile = parseMobile(challenge.mobile);
  const resendAt = challenge.lastSentAt + OTP_RESEND_AFTER_SECONDS;
  return {
    maskedMobile: mobile?.masked ?? challenge.mobile,
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
