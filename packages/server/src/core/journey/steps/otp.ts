import { OTP_MAX_ATTEMPTS } from '../../lifetimes.js';
import { sendsWith } from '../../limits/send-limiter.js';
import { deliverOtp, newChallenge, noteRefusedSend, resendOtp, type OtpSendContext, type SendRefusal } from '../../otp/issue-otp.js';
import type { OtpChallengeRecord } from '../../otp/records.js';
import type { VerifyOtpResult } from '../../otp/verify-otp.js';
import { cancelJourney } from '../cancel.js';
import type { JourneyDeps } from '../deps.js';
import { completed, enterCode, isPasskeyCapable, mobileTaken, otpView, refusalOf, refusalProblem, type OtpForm } from '../one-time-pin.js';
import { deadEnd, firstPage, isOpen, openJourney, pageForState, otpSendContext, whereItStandsNow, type OpenJourney, type StepContext } from '../open.js';
import type { Problem, StepResult } from '../outcomes.js';
import { signInSendOptions } from '../send-first-code.js';
import { canMove, TRANSITIONS } from '../states.js';
import type { JourneyStep } from '../step.js';
import type { SignInCompletion } from '../stores.js';

/** What the one-time-PIN step uses of the journey's dependencies. */
export type OtpDeps = Pick<
  JourneyDeps,
  'db' | 'findClient' | 'clock' | 'lifetimes' | 'issuer' | 'otpEntries' | 'sends' | 'sms' | 'otpHasher' | 'knownDeviceKey' | 'audit' | 'log' | 'countSignIn'
>;

/** `GET /login/otp`: the one-time-PIN page of a journey whose PIN was verified. */
export async function showOtp(context: StepContext, deps: OtpDeps): Promise<StepResult> {
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
export async function submitOtp(context: StepContext, form: OtpForm, deps: OtpDeps): Promise<StepResult> {
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
  // A login's mobile has a budget of wrong entries over all its challenges; the
  // challenge's own 5 entries, counted before they are compared, stay the
  // hard bound (so concurrent entries overshoot this one by at most 5). A
  // registration's entries count against their challenge only: anyone may
  // start one for a number without an account, and what they enter must
  // not refuse the owner's right code; guessing stays bounded by the 3
  // unsolicited codes an hour times 5 (docs/journey.md, "Registration").
  const perMobile = challenge.purpose === 'login';
  const spent = perMobile ? await deps.otpEntries.spent(challenge.mobile) : undefined;
  if (spent) return otpPage(journey, challenge, deps, { code: 'otp_too_many', field: 'otp', retryAfterSeconds: spent.retryAfterSeconds, limit: 'otp_per_mobile' });
  const outcome = await enterCode(journey, challenge, code, context.sessionId, 'sign_in_otp', deps);
  if (perMobile && outcome.kind === 'refused' && (outcome.result.reason === 'wrong' || (outcome.result.reason === 'exhausted' && outcome.result.justNow))) {
    await deps.otpEntries.count(challenge.mobile);
  }
  if (outcome.kind === 'refused') return refusedEntry(journey, challenge, outcome.result, context, deps);
  return completed(journey, outcome, context, deps, isPasskeyCapable(form.passkeyCapable));
}

/** The page for an entry that was not the right code (or could not be checked). */
async function refusedEntry(
  journey: OpenJourney,
  challenge: OtpChallengeRecord,
  result: Exclude<VerifyOtpResult<SignInCompletion>, { ok: true }>,
  context: StepContext,
  deps: OtpDeps,
): Promise<StepResult> {
  const problem = await refusalOf(journey, challenge, result, context, deps);
  // Consumed by a concurrent submit, or retired: where the journey stands now says where to go.
  return problem ? otpPage(journey, challenge, deps, problem) : whereItStandsNow(journey, deps);
}

/**
 * "Send a new code". A live challenge gets a new code (30 s apart, 3 times
 * at most); one that ended (used up, expired, or never delivered) is
 * replaced by a new challenge. Both within the send limits, and only for a
 * customer who is still active: a locked account gets no code
 * (docs/journey.md, "When a sign-in ends"); a registration, only while
 * the number has no account.
 */
async function resend(journey: OpenJourney, challenge: OtpChallengeRecord, context: StepContext, deps: OtpDeps): Promise<StepResult> {
  const now = deps.clock.nowSeconds();
  if (challenge.profileId !== null && (await deps.db.customers.findCustomer(challenge.profileId))?.status !== 'active') {
    return deadEnd('account_unavailable', journey.record, journey.view.clientName);
  }
  // A registration of a number that was registered meanwhile (in another browser) can no longer
  // complete: its page says so, and the number's owner gets no more codes from it.
  if (challenge.purpose === 'register' && (await deps.db.customers.findCustomerByMobile(challenge.mobile))) {
    return mobileTaken(journey, challenge.mobile);
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
        sends: sendsWith(deps.sends, signInSendOptions(challenge.purpose)),
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
  deps: OtpDeps,
): Promise<{ sent: true } | SendRefusal | 'lost'> {
  // A request already answered takes nothing from the budgets.
  context.signal?.throwIfAborted();
  const counted = signInSendOptions(old.purpose);
  const limited = await deps.sends.take(old.mobile, context.address, counted);
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
  if (!moved) {
    // Nothing is sent: what was taken goes back (docs/journey.md, "The one-time PIN").
    await deps.sends.giveBack(old.mobile, context.address, counted).catch(() => {});
    return 'lost';
  }
  if (await deliverOtp(old.mobile, code, sendContext(journey, old, context, deps), deps)) return { sent: true };
  await deps.db.otpChallenges.consumeOtpChallenge(record.id, deps.clock.nowSeconds());
  return { reason: 'sms_unavailable' };
}

function sendContext(journey: OpenJourney, challenge: OtpChallengeRecord, context: StepContext, deps: Pick<JourneyDeps, 'issuer'>): OtpSendContext {
  return otpSendContext(journey, context, deps, challenge.profileId);
}

function otpPage(journey: OpenJourney, challenge: OtpChallengeRecord, deps: Pick<JourneyDeps, 'clock'>, problem?: Problem): StepResult {
  return { kind: 'otp', journey: journey.view, otp: otpView(challenge, deps.clock.nowSeconds()), ...(problem ? { problem } : {}) };
}

/** `/login/otp`: the one-time PIN sent by SMS. */
export const otpStep: JourneyStep<OtpForm, OtpDeps> = {
  page: 'otp',
  fields: { action: 'action', otp: 'otp', passkeyCapable: 'passkey_capable' },
  show: showOtp,
  submit: submitOtp,
};
