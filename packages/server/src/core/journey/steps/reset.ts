import { cancelJourney, endJourneyUnmet } from '../cancel.js';
import type { JourneyDeps } from '../deps.js';
import { refusalProblem } from '../one-time-pin.js';
import { firstPage, isOpen, openJourney, pageForState, whereItStandsNow, type StepContext } from '../open.js';
import type { Problem, StepResult } from '../outcomes.js';
import { isRefused, postedMobile } from '../posted-mobile.js';
import { sendResetCode } from '../send-reset-code.js';
import { canMove, TRANSITIONS } from '../states.js';
import type { JourneyStep } from '../step.js';

/*
 * "Forgot PIN?" (docs/hosted-login.md, "Forgot PIN"): the mobile, then a
 * 6-digit code by SMS (`reset-otp.ts`); a right code leads to the new PIN
 * (`new-pin.ts`). How the code is sent without saying whether the mobile
 * has an account: `../send-reset-code.ts`.
 */

/** What the "Forgot PIN?" step uses of the journey's dependencies. */
export type ResetDeps = Pick<
  JourneyDeps,
  'db' | 'findClient' | 'clock' | 'issuer' | 'resetSends' | 'sms' | 'otpHasher' | 'knownDeviceKey' | 'audit' | 'log' | 'smsCountries' | 'defaultCountry' | 'later'
>;

/** The reset page's form as posted. */
export interface ResetForm {
  readonly action?: string | undefined;
  readonly mobile?: string | undefined;
}

/** `GET /login/reset`: the mobile whose PIN to reset (the journey's `user_id` when it has one, fixed). */
export async function showReset(context: StepContext, deps: ResetDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (!canMove(journey.record.status, TRANSITIONS.resetCodeSent) || firstPage(journey) === 'register') return pageForState(journey);
  // acr_values=phr: only a passkey completes the journey, so no PIN is reset and no SMS sent in it;
  // its login page has no "Forgot PIN?" (docs/journey.md, "`acr_values` and `max_age`").
  if (journey.view.requiresPhr) return { kind: 'goto', page: 'login', requestId: journey.requestId };
  return { kind: 'reset', journey: journey.view };
}

/**
 * `POST /login/reset`: the mobile, or cancel. A mobile that is not one or
 * cannot receive codes is refused on the form (that depends on the number
 * alone); any other goes on to the reset code's page, with a code sent only
 * when it has an account that may reset its PIN.
 */
export async function submitReset(context: StepContext, form: ResetForm, deps: ResetDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (form.action === 'cancel') return cancelJourney(journey, deps);
  if (!canMove(journey.record.status, TRANSITIONS.resetCodeSent) || firstPage(journey) === 'register') return pageForState(journey);
  // A reset form posted anyway on a journey only a passkey completes ends it, as a PIN form does: no SMS.
  if (journey.view.requiresPhr) return endJourneyUnmet(journey, deps);
  const page = (problem: Problem, mobile?: string): StepResult => ({ kind: 'reset', journey: journey.view, problem, ...(mobile ? { mobile } : {}) });

  const mobile = postedMobile(journey, form.mobile, deps);
  if (isRefused(mobile)) return page(mobile.problem, mobile.shown);
  const sent = await sendResetCode(journey, mobile, context, deps);
  // Another tab finished or cancelled this journey meanwhile, or it expired.
  if (sent === 'lost') return whereItStandsNow(journey, deps);
  if ('reason' in sent) return page(refusalProblem(sent), mobile.e164);
  return { kind: 'goto', page: 'reset_otp', requestId: journey.requestId };
}

/** `/login/reset`: the mobile whose PIN to reset. */
export const resetStep: JourneyStep<ResetForm, ResetDeps> = {
  page: 'reset',
  fields: { action: 'action', mobile: 'mobile' },
  show: showReset,
  submit: submitReset,
};
