import { parseMobile } from '../customers/mobile.js';
import { OTP_MAX_ATTEMPTS } from '../lifetimes.js';
import { deliverOtp, newChallenge, noteRefusedSend, resendOtp, type OtpSendContext, type SendRefusal } from '../otp/issue-otp.js';
import type { SendOptions } from '../limits/send-limiter.js';
import type { OtpChallengeRecord } from '../otp/records.js';
import { verifyOtp, type MakeEntry } from '../otp/verify-otp.js';
import { cancelJourney } from './cancel.js';
import type { JourneyDeps } from './deps.js';
import { knownDeviceOf, type KnownDeviceCustomer } from './known-device.js';
import { otpView, refusalOf, refusalProblem, type OtpForm } from './one-time-pin.js';
import { firstPage, isOpen, openJourney, pageForState, pinSendContext, whereItStandsNow, type OpenJourney, type StepContext } from './open.js';
import type { Problem, StepResult } from './outcomes.js';
import { mayReceivePins } from './sign-in.js';
import { canMove, TRANSITIONS } from './states.js';
import type { ResetVerification } from './stores.js';

/*
 * "Forgot PIN?" (docs/hosted-login.md, "Forgot PIN"): the mobile, then a
 * 6-digit code by SMS; a right code leads to the new PIN (`new-pin.ts`).
 *
 * The answer never says whether the mobile has an account that may reset
 * its PIN. For every mobile the same steps run, in the same order: the
 * mobile is looked up, the send budgets are taken (the whole deployment's
 * only checked, in its turn, when nothing will be sent), a challenge is
 * stored and the journey moves; the code's page says "if this number has an
 * account". Only for an active account is the code sent, and only once the
 * page has been answered (`JourneyDeps.later`), so the gateway's time is
 * not in the answer's. A challenge stored for any other mobile (none, or
 * locked by an operator) has no customer: nothing can answer it, and every
 * entry of it is counted wrong, as a wrong code is.
 *
 * Which budgets a code takes (docs/journey.md, "A stranger cannot lock the
 * owner out"): from a known device of the mobile's customer at its
 * current credential version (`known-device.ts`; read with the mobile's
 * lookup that every reset makes), that device's own; from any other browser, the
 * mobile's per address and its unsolicited budget over every address. A
 * mobile without an account has no known device, so it is counted as a
 * registered one asked for from a browser that is not.
 */

/** The reset page's form as posted. */
export interface ResetForm {
  readonly action?: string | undefined;
  readonly mobile?: string | undefined;
}

/** `GET /login/reset`: the mobile whose PIN to reset (the journey's `user_id` when it has one, fixed). */
export async function showReset(context: StepContext, deps: JourneyDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (!canMove(journey.record.status, TRANSITIONS.resetCodeSent) || firstPage(journey) === 'register') return pageForState(journey);
  return { kind: 'reset', journey: journey.view };
}

/**
 * `POST /login/reset`: the mobile, or cancel. A mobile that is not one or
 * cannot receive codes is refused on the form (that depends on the number
 * alone); any other goes on to the reset code's page, with a code sent only
 * when it has an account that may reset its PIN.
 */
export async function submitReset(context: StepContext, form: ResetForm, deps: JourneyDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (form.action === 'cancel') return cancelJourney(journey, deps);
  if (!canMove(journey.record.status, TRANSITIONS.resetCodeSent) || firstPage(journey) === 'register') return pageForState(journey);
  const page = (problem: Problem, mobile?: string): StepResult => ({ kind: 'reset', journey: journey.view, problem, ...(mobile ? { mobile } : {}) });

  const mobile = journey.record.loginHint ?? parseMobile(form.mobile ?? '', { defaultCountry: deps.defaultCountry })?.e164;
  if (!mobile) return page({ code: 'mobile_invalid', field: 'mobile' }, form.mobile);
  if (!mayReceivePins(mobile, deps)) return page({ code: 'mobile_country', field: 'mobile' }, mobile);
  const sent = await sendResetCode(journey, mobile, context, deps);
  // Another tab finished or cancelled this journey meanwhile, or it expired.
  if (sent === 'lost') return whereItStandsNow(journey, deps);
  if ('reason' in sent) return page(refusalProblem(sent), mobile);
  return { kind: 'goto', page: 'reset_otp', requestId: journey.requestId };
}

/** `GET /login/reset/otp`: the reset code's page. */
export async function showResetOtp(context: StepContext, deps: JourneyDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (!canMove(journey.record.status, TRANSITIONS.resetVerified)) return pageForState(journey);
  const { challenge } = journey;
  if (challenge?.purpose !== 'reset') return { kind: 'goto', page: 'reset', requestId: journey.requestId };
  return resetOtpPage(journey, challenge, deps);
}

/**
 * `POST /login/reset/otp`: the code, "send a new code", or cancel. The
 * entry is counted, compared and (when right) moves the journey to
 * `reset_verified` in ONE atomic step (`SignInStore.enterResetOtp`), with
 * the limits of a login's code: valid 5 minutes, single use, 5 entries per
 * challenge; and the requester's address's budget of wrong entries over all
 * its codes (never the mobile's: docs/journey.md, "A stranger cannot lock
 * the owner out").
 */
export async function submitResetOtp(context: StepContext, form: OtpForm, deps: JourneyDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (form.action === 'cancel') return cancelJourney(journey, deps);
  if (!canMove(journey.record.status, TRANSITIONS.resetVerified)) return pageForState(journey);
  const { challenge } = journey;
  if (challenge?.purpose !== 'reset') return { kind: 'goto', page: 'reset', requestId: journey.requestId };
  if (form.action === 'resend') return resendResetCode(journey, challenge, context, deps);

  const code = (form.otp ?? '').trim();
  if (!/^\d{6}$/.test(code)) return resetOtpPage(journey, challenge, deps, { code: 'otp_format', field: 'otp' });
  // Wrong codes count against the challenge (5) and the requester's address, never the mobile:
  // what a stranger enters never refuses the owner's right code (docs/journey.md).
  // Taken before the entry is compared (one atomic step of the counters), given back unless it was
  // wrong: entries sent at once never get past the budget.
  const spent = await deps.resetOtpEntries.take(context.address);
  if (spent) return resetOtpPage(journey, challenge, deps, { code: 'too_many_attempts', field: 'otp', retryAfterSeconds: spent.retryAfterSeconds, limit: 'reset_otp_per_address' });
  const enter: MakeEntry<ResetVerification> = (codeHash, now) =>
    deps.db.signIns.enterResetOtp({ idHash: journey.record.idHash, challengeId: challenge.id, codeHash, now, maxAttempts: OTP_MAX_ATTEMPTS });
  const result = await verifyOtp(challenge.id, code, enter, { challenges: deps.db.otpChallenges, hasher: deps.otpHasher, clock: deps.clock }).catch(
    async (error: unknown) => {
      // Nothing was compared: it does not count.
      await deps.resetOtpEntries.giveBack(context.address).catch(() => {});
      throw error;
    },
  );
  if (result.ok || !(result.reason === 'wrong' || (result.reason === 'exhausted' && result.justNow))) await deps.resetOtpEntries.giveBack(context.address);
  if (result.ok) {
    // `lost`: another tab moved the journey on (or it expired) in the meantime.
    return result.done === 'verified' ? { kind: 'goto', page: 'new_pin', requestId: journey.requestId } : whereItStandsNow(journey, deps);
  }
  const problem = await refusalOf(journey, challenge, result, context, deps);
  // Answered by a concurrent submit: where the journey stands now (the new PIN's page) says where to go.
  return problem ? resetOtpPage(journey, challenge, deps, problem) : whereItStandsNow(journey, deps);
}

/**
 * A new reset code (the first, or one after the last has ended): a new
 * challenge stored with the journey's move to `reset_otp_sent` in one
 * atomic step (`SignInStore.startChallenge`), within the send budgets,
 * which every mobile spends alike but for the whole deployment's, which
 * only a code sent spends (it is checked for every mobile, so that the
 * answers stay alike). Returns `lost` when the journey could
 * not move (another tab finished or cancelled it, or it expired).
 */
async function sendResetCode(journey: OpenJourney, mobile: string, context: StepContext, deps: JourneyDeps): Promise<{ sent: true } | SendRefusal | 'lost'> {
  const customer = await deps.db.customers.findCustomerByMobile(mobile);
  // Only an active account may reset its PIN; an operator's lock is lifted by an operator only.
  const resettable = customer?.status === 'active' ? customer : null;
  const profileId = resettable?.profileId ?? null;
  // A request already answered takes nothing from the budgets.
  context.signal?.throwIfAborted();
  // Every mobile spends the same budgets, but the global one only a code that is sent.
  const limited = await deps.resetSends.take(mobile, context.address, sendOptions(profileId, resettable, context, deps));
  if (limited) return noteRefusedSend(limited, sendContextOf(journey, context, null, deps), deps);
  const { record, code } = newChallenge(
    { requestHash: journey.record.idHash, purpose: 'reset', mobile, profileId, pendingPinHash: null },
    { hasher: deps.otpHasher, clock: deps.clock },
  );
  // Stored only with the journey's move, in one step: a journey another tab finished or cancelled gets no code.
  const moved = await deps.db.signIns.startChallenge({
    idHash: journey.record.idHash,
    now: record.createdAt,
    profileId: null,
    challenge: record,
    transition: TRANSITIONS.resetCodeSent,
  });
  if (!moved) return 'lost';
  if (profileId !== null) await sendLater(mobile, code, sendContextOf(journey, context, profileId, deps), context, deps);
  return { sent: true };
}

/**
 * "Send a new code": a live challenge gets a new code (30 s apart, 3 times
 * at most), one that ended is replaced by a new one, within the send
 * budgets, the same for every mobile; only an account's code is sent.
 */
async function resendResetCode(journey: OpenJourney, challenge: OtpChallengeRecord, context: StepContext, deps: JourneyDeps): Promise<StepResult> {
  const now = deps.clock.nowSeconds();
  // The customer's credential version as it is now (a known-device proof made before a PIN change
  // or a lock no longer counts); read for every mobile alike, as the first code's step reads it.
  const customer = await deps.db.customers.findCustomerByMobile(challenge.mobile);
  const resettable = challenge.profileId !== null && customer?.status === 'active' && customer.profileId === challenge.profileId ? customer : null;
  const ended = challenge.consumedAt !== null || challenge.attempts >= OTP_MAX_ATTEMPTS || challenge.expiresAt <= now;
  const outcome = ended
    ? await sendResetCode(journey, challenge.mobile, context, deps)
    : await resendOtp(challenge.id, sendContextOf(journey, context, challenge.profileId, deps), {
        challenges: deps.db.otpChallenges,
        hasher: deps.otpHasher,
        sms: deps.sms,
        audit: deps.audit,
        log: deps.log,
        // Nothing is sent for a mobile without an account: the global budget is not spent.
        sends: { take: (to, address) => deps.resetSends.take(to, address, sendOptions(challenge.profileId, resettable, context, deps)) },
        clock: deps.clock,
        deliver: async (to, code, sent) => {
          if (challenge.profileId !== null) await sendLater(to, code, sent, context, deps);
          return true;
        },
      });
  if (outcome === 'lost') return whereItStandsNow(journey, deps);
  const latest = (await deps.db.otpChallenges.findLatestOtpChallenge(journey.record.idHash)) ?? challenge;
  if ('reason' in outcome) return resetOtpPage(journey, latest, deps, refusalProblem(outcome));
  return { kind: 'reset_otp', journey: journey.view, otp: otpView(latest, now), notice: 'code_sent' };
}

/**
 * Hands a reset code to the SMS gateway once the page has been answered
 * (`JourneyDeps.later`), unless the request was answered already (503 at
 * its deadline). A gateway that does not take it is logged and audited
 * (`sms.send_failed`) as for any code, and the challenge stays as it is,
 * like one whose SMS never arrived: the customer asks for a new code. (A
 * retired challenge would make the page differ from a mobile's without an
 * account.)
 */
async function sendLater(mobile: string, code: string, sendContext: OtpSendContext, context: StepContext, deps: JourneyDeps): Promise<void> {
  if (context.signal?.aborted) return;
  // The request's signal ends with its answer: the send after it goes without.
  const work = async () => {
    await deliverOtp(mobile, code, { ...sendContext, signal: undefined }, deps);
  };
  if (deps.later) deps.later(work);
  else await work();
}

/**
 * How a reset code for the customer `profileId` (`null`: no account that
 * may reset its PIN) is counted: nothing is sent without a customer, so the
 * global budget is only checked; a browser holding a proof of that customer
 * at the credential version just read (`current`; `null` when the account
 * is not the challenge's or may not reset its PIN now) is a known device and
 * spends its own budget.
 */
function sendOptions(
  profileId: string | null,
  current: KnownDeviceCustomer | null,
  context: StepContext,
  deps: Pick<JourneyDeps, 'clock' | 'knownDeviceKey'>,
): SendOptions {
  // Checked for every mobile alike (a mobile without an account has no proof), so that its time says nothing either.
  const deviceId = knownDeviceOf(context.knownDevice, current ?? NO_CUSTOMER, deps.clock.nowSeconds(), deps.knownDeviceKey);
  if (profileId === null) return { sendsNothing: true };
  return deviceId === undefined || current?.profileId !== profileId ? {} : { knownDevice: { profileId, deviceId } };
}

/** Stands for a mobile without an account that may reset its PIN: no proof is ever made for it. */
const NO_CUSTOMER: KnownDeviceCustomer = { profileId: '', credentialVersion: 0 };

function sendContextOf(journey: OpenJourney, context: StepContext, profileId: string | null, deps: Pick<JourneyDeps, 'issuer'>): OtpSendContext {
  return { ...pinSendContext(journey, context, deps, profileId), purpose: 'reset' };
}

function resetOtpPage(journey: OpenJourney, challenge: OtpChallengeRecord, deps: Pick<JourneyDeps, 'clock'>, problem?: Problem): StepResult {
  return { kind: 'reset_otp', journey: journey.view, otp: otpView(challenge, deps.clock.nowSeconds()), ...(problem ? { problem } : {}) };
}
