import { auditActor } from '../../audit/audit-actor.js';
import { checkPin } from '../../customers/check-pin.js';
import { isValidPin } from '../../customers/pin.js';
import { cancelJourney, endJourneyUnmet } from '../cancel.js';
import type { JourneyDeps } from '../deps.js';
import { isPasskeyCapable, resetProvesPhone, signInOnResetProof } from '../one-time-pin.js';
import { firstPage, isOpen, openJourney, pageForState, type OpenJourney, type StepContext } from '../open.js';
import type { Problem, StepResult } from '../outcomes.js';
import { isRefused, postedMobile } from '../posted-mobile.js';
import { sendFirstCode, type PinCountToLift } from '../send-first-code.js';
import { canMove, TRANSITIONS } from '../states.js';
import type { JourneyStep } from '../step.js';

/** What the login step uses of the journey's dependencies. */
export type LoginDeps = Pick<
  JourneyDeps,
  'db' | 'findClient' | 'clock' | 'lifetimes' | 'issuer' | 'pinChecks' | 'pinAttempts' | 'sends' | 'sms' | 'otpHasher' | 'knownDeviceKey' | 'audit' | 'log' | 'smsCountries' | 'defaultCountry' | 'countSignIn'
>;

/** The login form as posted. */
export interface LoginForm {
  readonly action?: string | undefined;
  readonly mobile?: string | undefined;
  readonly pin?: string | undefined;
  /** `1` when the page's script found that the browser can make a passkey (docs/journey.md, "Passkeys"). */
  readonly passkeyCapable?: string | undefined;
}

/**
 * `GET /login`: the login page, or the page the journey's state belongs on.
 * Right after a PIN reset it says the PIN was changed, its mobile prefilled.
 */
export async function showLogin(context: StepContext, deps: LoginDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (!canMove(journey.record.status, TRANSITIONS.codeSent) || firstPage(journey) === 'register') return pageForState(journey);
  // Back from a PIN reset (the only way a journey is `pending` with an
  // answered reset challenge as its newest): say so, with that mobile.
  const { challenge } = journey;
  if (journey.record.status === 'pending' && challenge?.purpose === 'reset' && challenge.consumedAt !== null) {
    return { kind: 'login', journey: journey.view, mobile: challenge.mobile, notice: 'pin_changed', ...passkeyFirst(journey) };
  }
  return { kind: 'login', journey: journey.view, ...passkeyFirst(journey) };
}

/**
 * `first` when the mobile the client named (`user_id`) has a usable
 * passkey: the login page offers it before the PIN form
 * (docs/hosted-login.md, "Passkeys").
 */
function passkeyFirst(journey: OpenJourney): { passkey?: 'first' } {
  // Read with the journey, in the same statement (docs/operator-guide.md, "Database round trips").
  return journey.record.loginHint !== null && journey.hintHasPasskey ? { passkey: 'first' } : {};
}

/**
 * `POST /login`: mobile + PIN (docs/journey.md, "PIN guessing"). The mobile
 * is the journey's `user_id` when it has one, whatever was posted. A wrong
 * mobile and a wrong PIN get one answer. On a journey that requires `phr`
 * (`acr_values=phr`) nothing is checked and nothing sent: the customer goes
 * back to the client with `unmet_authentication_requirements`.
 *
 * Every check is counted before it runs: first against the client address's
 * budget of failed checks, then against the customer's 5 attempts, in the
 * one statement that also reads the lock; only then is the PIN hashed, in
 * the bounded queue. On success a one-time PIN is sent, unless the journey
 * is back from a PIN reset of this customer whose code proved the phone
 * minutes ago (docs/journey.md, "After a PIN reset"): the sign-in then
 * completes at once.
 */
export async function submitLogin(context: StepContext, form: LoginForm, deps: LoginDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (form.action === 'cancel') return cancelJourney(journey, deps);
  if (!canMove(journey.record.status, TRANSITIONS.codeSent)) return pageForState(journey);
  // acr_values=phr: no PIN + SMS sign-in can complete the journey, so none starts and no SMS is
  // sent; "I can't use a passkey" (or a PIN form posted anyway) goes back to the client.
  if (journey.view.requiresPhr) return endJourneyUnmet(journey, deps);
  const page = (problem: Problem, mobile?: string): StepResult => ({ kind: 'login', journey: journey.view, problem, ...(mobile ? { mobile } : {}) });

  const mobile = postedMobile(journey, form.mobile, deps);
  if (isRefused(mobile)) return page(mobile.problem, mobile.shown);
  const pin = form.pin ?? '';
  if (!isValidPin(pin)) return page({ code: 'pin_format', field: 'pin' }, mobile.e164);
  const wrong: Problem = journey.record.loginHint ? { code: 'pin_wrong', field: 'pin' } : { code: 'credentials_wrong', field: 'pin' };

  const limited = await deps.pinAttempts.take(context.address);
  if (limited) return page({ code: 'too_many_attempts', retryAfterSeconds: limited.retryAfterSeconds, limit: 'pin_per_address' }, mobile.e164);

  const checks = { customers: deps.db.customers, queue: deps.pinChecks, clock: deps.clock };
  const result = await checkPin(mobile, pin, checks, { clearLater: true }).catch(async (error: unknown) => {
    // Busy, or the database failed: no PIN was checked, so it does not count against the address.
    await deps.pinAttempts.giveBack(context.address).catch(() => {});
    throw error;
  });
  // `pin_checked`: false when the attempt that locked was counted but its PIN never compared.
  const lockout = (until: number, subject: string | null, pinChecked: boolean) =>
    deps.audit.record({
      type: 'customer.pin_lockout',
      actor: auditActor({ kind: 'address', ip: context.address.ip }),
      subject,
      outcome: 'failure',
      details: { client_id: journey.client.id, locked_until: until, pin_checked: pinChecked },
      requestId: context.correlationId,
    });
  if (!result.ok) {
    if (result.reason === 'disabled') return page({ code: 'account_locked' }, mobile.e164);
    if (result.reason === 'invalid') return page(wrong, mobile.e164);
    if (result.reason === 'unchecked') {
      // No PIN was compared: as for a failure before the count, the address gets its check back.
      await deps.pinAttempts.giveBack(context.address).catch(() => {});
      // The attempt that locked is audited even without an answer (docs/journey.md, "PIN guessing").
      if (result.locked) await lockout(result.locked.until, result.locked.profileId, false);
      throw result.error;
    }
    if (result.justLocked) await lockout(result.until, (await deps.db.customers.findCustomerByMobile(mobile.e164))?.profileId ?? null, true);
    return page({ code: 'pin_locked', retryAfterSeconds: result.until - deps.clock.nowSeconds(), limit: 'pin_lock' }, mobile.e164);
  }
  const { customer, attempt } = result;
  const count: PinCountToLift = { profileId: customer.profileId, attempt, lifted: false };
  try {
    await deps.pinAttempts.giveBack(context.address);
    // Back from a PIN reset whose code proved this phone minutes ago: no second SMS.
    if (resetProvesPhone(journey, customer.profileId, deps.clock.nowSeconds())) {
      return await signInOnResetProof(journey, { mobile, profileId: customer.profileId }, count, context, deps, isPasskeyCapable(form.passkeyCapable));
    }
    return await sendFirstCode(journey, { purpose: 'login', mobile, profileId: customer.profileId }, context, deps, count);
  } finally {
    // No challenge was stored (a send limit, or a failure before it): the count is lifted on its own.
    if (!count.lifted) await deps.db.customers.clearPinAttempts(customer.profileId, attempt, deps.clock.nowSeconds());
  }
}

/** `/login`: mobile and PIN. */
export const loginStep: JourneyStep<LoginForm, LoginDeps> = {
  page: 'login',
  fields: { action: 'action', mobile: 'mobile', pin: 'pin', passkeyCapable: 'passkey_capable' },
  show: showLogin,
  submit: submitLogin,
};
