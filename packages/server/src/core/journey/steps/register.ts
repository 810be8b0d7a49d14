import { isValidPin } from '../../customers/pin.js';
import { weakPinReason } from '../../customers/weak-pin.js';
import { cancelJourney, endJourneyUnmet } from '../cancel.js';
import type { JourneyDeps } from '../deps.js';
import { isOpen, openJourney, pageForState, type StepContext } from '../open.js';
import type { LimitName, Problem, StepResult } from '../outcomes.js';
import { isRefused, postedMobile } from '../posted-mobile.js';
import { sendFirstCode } from '../send-first-code.js';
import { canMove, TRANSITIONS } from '../states.js';
import type { JourneyStep } from '../step.js';

/** What the registration step uses of the journey's dependencies. */
export type RegisterDeps = Pick<
  JourneyDeps,
  'db' | 'findClient' | 'clock' | 'issuer' | 'pinChecks' | 'pinAttempts' | 'sends' | 'sms' | 'otpHasher' | 'audit' | 'log' | 'smsCountries' | 'defaultCountry'
>;

/** The registration form as posted. */
export interface RegistrationForm {
  readonly action?: string | undefined;
  readonly mobile?: string | undefined;
  readonly pin?: string | undefined;
  readonly pinConfirmation?: string | undefined;
}

/** `GET /register`: the registration page, unless `user_id` names an account. */
export async function showRegistration(context: StepContext, deps: RegisterDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (!canMove(journey.record.status, TRANSITIONS.codeSent) || journey.hintRegistered) {
    return journey.record.status === 'pending' ? { kind: 'goto', page: 'login', requestId: journey.requestId } : pageForState(journey);
  }
  return { kind: 'register', journey: journey.view };
}

/**
 * `POST /register`: mobile + PIN twice. A PIN too easy to guess is refused
 * (docs/journey.md, "Registration"). Nothing is created yet: the account
 * exists only once the one-time PIN proved the mobile number.
 *
 * A form that gets as far as the database (whether the mobile is taken)
 * takes one from the client address's budget of failed PIN checks first,
 * and gives it back when its code goes or the number's budgets over every
 * address refuse it ({@link givesAttemptBack}): asking whether numbers are
 * taken costs an address what guessing PINs does, and a stranger who keeps
 * a number's codes spent costs its owner's address nothing. The new PIN is
 * hashed only once a code may go.
 */
export async function submitRegistration(context: StepContext, form: RegistrationForm, deps: RegisterDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (form.action === 'cancel') return cancelJourney(journey, deps);
  if (!canMove(journey.record.status, TRANSITIONS.codeSent)) return pageForState(journey);
  // acr_values=phr: no PIN + SMS sign-in can complete the journey, so none starts and no SMS is
  // sent; "I can't use a passkey" (or a PIN form posted anyway) goes back to the client.
  if (journey.view.requiresPhr) return endJourneyUnmet(journey, deps);
  const page = (problem: Problem, mobile?: string): StepResult => ({ kind: 'register', journey: journey.view, problem, ...(mobile ? { mobile } : {}) });

  const mobile = postedMobile(journey, form.mobile, deps);
  if (isRefused(mobile)) return page(mobile.problem, mobile.shown);
  const pin = form.pin ?? '';
  if (!isValidPin(pin)) return page({ code: 'pin_format', field: 'pin' }, mobile.e164);
  // Only a PIN being chosen must be hard to guess; a login checks whatever PIN the account has.
  const weak = weakPinReason(pin);
  if (weak) return page({ code: `pin_weak_${weak}`, field: 'pin' }, mobile.e164);
  if (pin !== form.pinConfirmation) return page({ code: 'pin_mismatch', field: 'pin_confirmation' }, mobile.e164);

  const limited = await deps.pinAttempts.take(context.address);
  if (limited) return page({ code: 'too_many_attempts', retryAfterSeconds: limited.retryAfterSeconds, limit: 'pin_per_address' }, mobile.e164);
  if (await deps.db.customers.findCustomerByMobile(mobile.e164)) return page({ code: 'mobile_taken', field: 'mobile' }, mobile.e164);
  const hashNewPin = () =>
    deps.pinChecks.run((pins) => pins.hash(pin)).catch(async (error: unknown) => {
      // Busy, or the hash failed: nothing ran, so it does not count against the address.
      await deps.pinAttempts.giveBack(context.address).catch(() => {});
      throw error;
    });
  const result = await sendFirstCode(journey, { purpose: 'register', mobile, profileId: null, hashNewPin }, context, deps);
  if (givesAttemptBack(result)) await deps.pinAttempts.giveBack(context.address);
  return result;
}

/** The budgets over every address of the number whose refusal gives the address its attempt back. */
const NUMBER_BUDGETS: ReadonlySet<LimitName | undefined> = new Set<LimitName>(['reset_sms_unsolicited', 'sms_per_mobile']);

/**
 * Whether a registration form that was accepted gives the address its
 * PIN-check attempt back: when its code went, or when the number's budgets
 * over every address refused it (a stranger may keep those spent; the
 * owner's retries must not cost the owner's address). Otherwise it keeps
 * it: a refusal by the address's own budgets (probing numbers once those
 * are spent must not be free), a journey that ended meanwhile (a form
 * posted and cancelled at once must not hash PINs for nothing).
 */
function givesAttemptBack(result: StepResult): boolean {
  if (result.kind === 'goto') return result.page === 'otp';
  return result.kind === 'register' && NUMBER_BUDGETS.has(result.problem?.limit);
}

/** `/register`: mobile and a new PIN, twice. */
export const registerStep: JourneyStep<RegistrationForm, RegisterDeps> = {
  page: 'register',
  fields: { action: 'action', mobile: 'mobile', pin: 'pin', pinConfirmation: 'pin_confirmation' },
  show: showRegistration,
  submit: submitRegistration,
};
