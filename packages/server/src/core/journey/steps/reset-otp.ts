import { OTP_MAX_ATTEMPTS } from '../../lifetimes.js';
import { sendsWith } from '../../limits/send-limiter.js';
import type { OtpChallengeRecord } from '../../otp/records.js';
import { resendOtp } from '../../otp/issue-otp.js';
import { verifyOtp, type MakeEntry } from '../../otp/verify-otp.js';
import { cancelJourney } from '../cancel.js';
import type { JourneyDeps } from '../deps.js';
import { otpView, refusalOf, refusalProblem, type OtpForm } from '../one-time-pin.js';
import { isOpen, openJourney, pageForState, whereItStandsNow, type OpenJourney, type StepContext } from '../open.js';
import type { Problem, StepResult } from '../outcomes.js';
import { sendContextOf, sendLater, sendOptions, sendResetCode } from '../send-reset-code.js';
import { canMove, TRANSITIONS } from '../states.js';
import type { JourneyStep } from '../step.js';
import type { ResetVerification } from '../stores.js';

/** What the reset code's step uses of the journey's dependencies. */
export type ResetOtpDeps = Pick<
  JourneyDeps,
  'db' | 'findClient' | 'clock' | 'issuer' | 'resetSends' | 'resetOtpEntries' | 'sms' | 'otpHasher' | 'knownDeviceKey' | 'audit' | 'log' | 'later'
>;

/** `GET /login/reset/otp`: the reset code's page. */
export async function showResetOtp(context: StepContext, deps: ResetOtpDeps): Promise<StepResult> {
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
export async function submitResetOtp(context: StepContext, form: OtpForm, deps: ResetOtpDeps): Promise<StepResult> {
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
  const enter: MakeEntry<ResetVerification> = (codeHashes, now) =>
    deps.db.signIns.enterResetOtp({ idHash: journey.record.idHash, challengeId: challenge.id, codeHashes, now, maxAttempts: OTP_MAX_ATTEMPTS });
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
 * "Send a new code": a live challenge gets a new code (30 s apart, 3 times
 * at most), one that ended is replaced by a new one, within the send
 * budgets, the same for every mobile; only an account's code is sent.
 */
async function resendResetCode(journey: OpenJourney, challenge: OtpChallengeRecord, context: StepContext, deps: ResetOtpDeps): Promise<StepResult> {
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
        sends: sendsWith(deps.resetSends, sendOptions(challenge.profileId, resettable, context, deps)),
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

function resetOtpPage(journey: OpenJourney, challenge: OtpChallengeRecord, deps: Pick<JourneyDeps, 'clock'>, problem?: Problem): StepResult {
  return { kind: 'reset_otp', journey: journey.view, otp: otpView(challenge, deps.clock.nowSeconds()), ...(problem ? { problem } : {}) };
}

/** `/login/reset/otp`: the reset code sent by SMS. */
export const resetOtpStep: JourneyStep<Omit<OtpForm, 'passkeyCapable'>, ResetOtpDeps> = {
  page: 'reset_otp',
  fields: { action: 'action', otp: 'otp' },
  show: showResetOtp,
  submit: submitResetOtp,
};
