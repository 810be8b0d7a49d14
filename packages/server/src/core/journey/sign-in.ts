import { checkPin } from '../customers/check-pin.js';
import { parseMobile, pinDestinationRefusal } from '../customers/mobile.js';
import { hashPin, isValidPin } from '../customers/pin.js';
import { weakPinReason } from '../customers/weak-pin.js';
import { deliverOtp, newChallenge, noteRefusedSend, type ChallengeInput } from '../otp/issue-otp.js';
import { cancelJourney } from './cancel.js';
import { refusalProblem, resetProvesPhone, signInOnResetProof } from './one-time-pin.js';
import type { JourneyDeps } from './deps.js';
import { firstPage, isOpen, openJourney, pageForState, pinSendContext, whereItStandsNow, type OpenJourney, type StepContext } from './open.js';
import type { Problem, StepResult } from './outcomes.js';
import { canMove, TRANSITIONS } from './states.js';

/** The login form as posted. */
export interface LoginForm {
  readonly action?: string | undefined;
  readonly mobile?: string | undefined;
  readonly pin?: string | undefined;
}

/** The registration form as posted. */
export interface RegistrationForm extends LoginForm {
  readonly pinConfirmation?: string | undefined;
}

/**
 * `GET /login`: the login page, or the page the journey's state belongs on.
 * Right after a PIN reset it says the PIN was changed, its mobile prefilled.
 */
export async function showLogin(context: StepContext, deps: JourneyDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (!canMove(journey.record.status, TRANSITIONS.codeSent) || firstPage(journey) === 'register') return pageForState(journey);
  // Back from a PIN reset (the only way a journey is `pending` with an
  // answered reset challenge as its newest): say so, with that mobile.
  const { challenge } = journey;
  if (journey.record.status === 'pending' && challenge?.purpose === 'reset' && challenge.consumedAt !== null) {
    return { kind: 'login', journey: journey.view, mobile: challenge.mobile, notice: 'pin_changed' };
  }
  return { kind: 'login', journey: journey.view };
}

/** `GET /register`: the registration page, unless `user_id` names an account. */
export async function showRegistration(context: StepContext, deps: JourneyDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (!canMove(journey.record.status, TRANSITIONS.codeSent) || journey.hintRegistered) {
    return journey.record.status === 'pending' ? { kind: 'goto', page: 'login', requestId: journey.requestId } : pageForState(journey);
  }
  return { kind: 'register', journey: journey.view };
}

/**
 * `POST /login`: mobile + PIN (docs/journey.md, "PIN guessing"). The mobile
 * is the journey's `user_id` when it has one, whatever was posted. A wrong
 * mobile and a wrong PIN get one answer.
 *
 * Every check is counted before it runs: first against the client address's
 * budget of failed checks, then against the customer's 5 attempts, in the
 * one statement that also reads the lock; only then is the PIN hashed, in
 * the bounded queue. On success a one-time PIN is sent, unless the journey
 * is back from a PIN reset of this customer whose code proved the phone
 * minutes ago (docs/journey.md, "After a PIN reset"): the sign-in then
 * completes at once.
 */
export async function submitLogin(context: StepContext, form: LoginForm, deps: JourneyDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (form.action === 'cancel') return cancelJourney(journey, deps);
  if (!canMove(journey.record.status, TRANSITIONS.codeSent)) return pageForState(journey);
  const page = (problem: Problem, mobile?: string): StepResult => ({ kind: 'login', journey: journey.view, problem, ...(mobile ? { mobile } : {}) });

  const mobile = journey.record.loginHint ?? parseMobile(form.mobile ?? '', { defaultCountry: deps.defaultCountry })?.e164;
  if (!mobile) return page({ code: 'mobile_invalid', field: 'mobile' }, form.mobile);
  if (!mayReceivePins(mobile, deps)) return page({ code: 'mobile_country', field: 'mobile' }, mobile);
  const pin = form.pin ?? '';
  if (!isValidPin(pin)) return page({ code: 'pin_format', field: 'pin' }, mobile);
  const wrong: Problem = journey.record.loginHint ? { code: 'pin_wrong', field: 'pin' } : { code: 'credentials_wrong', field: 'pin' };

  const limited = await deps.pinAttempts.take(context.address);
  if (limited) return page({ code: 'too_many_attempts', retryAfterSeconds: limited.retryAfterSeconds, limit: 'pin_per_address' }, mobile);

  const checks = { customers: deps.db.customers, queue: deps.pinChecks, clock: deps.clock };
  const result = await checkPin(mobile, pin, checks, { clearLater: true }).catch(async (error: unknown) => {
    // Busy, or the database failed: no PIN was checked, so it does not count against the address.
    await deps.pinAttempts.giveBack(context.address).catch(() => {});
    throw error;
  });
  if (!result.ok) {
    if (result.reason === 'disabled') return page({ code: 'account_locked' }, mobile);
    if (result.reason === 'invalid') return page(wrong, mobile);
    if (result.justLocked) {
      await deps.audit.record({
        type: 'customer.pin_lockout',
        actor: `ip:${context.address.ip}`,
        subject: (await deps.db.customers.findCustomerByMobile(mobile))?.profileId ?? null,
        outcome: 'failure',
        details: { client_id: journey.client.id, locked_until: result.until },
        requestId: context.correlationId,
      });
    }
    return page({ code: 'pin_locked', retryAfterSeconds: result.until - deps.clock.nowSeconds(), limit: 'pin_lock' }, mobile);
  }
  const { customer, attempt } = result;
  const count: PinCountToLift = { profileId: customer.profileId, attempt, lifted: false };
  try {
    await deps.pinAttempts.giveBack(context.address);
    // Back from a PIN reset whose code proved this phone minutes ago: no second SMS.
    if (resetProvesPhone(journey, customer.profileId, deps.clock.nowSeconds())) {
      return await signInOnResetProof(journey, { mobile, profileId: customer.profileId }, count, context, deps);
    }
    return await sendFirstCode(journey, { purpose: 'login', mobile, profileId: customer.profileId, pendingPinHash: null }, context, deps, count);
  } finally {
    // No challenge was stored (a send limit, or a failure before it): the count is lifted on its own.
    if (!count.lifted) await deps.db.customers.clearPinAttempts(customer.profileId, attempt, deps.clock.nowSeconds());
  }
}

/**
 * `POST /register`: mobile + PIN twice. A PIN too easy to guess is refused
 * (docs/journey.md, "Registration"). Nothing is created yet: the account
 * exists only once the one-time PIN proved the mobile number.
 *
 * A form that gets as far as the database (whether the mobile is taken) and
 * the PIN hash takes one from the client address's budget of failed PIN
 * checks first, and gives it back only when the form is accepted (the
 * journey goes on to the one-time PIN): posting
 * registrations costs an address what guessing PINs does.
 */
export async function submitRegistration(context: StepContext, form: RegistrationForm, deps: JourneyDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (form.action === 'cancel') return cancelJourney(journey, deps);
  if (!canMove(journey.record.status, TRANSITIONS.codeSent)) return pageForState(journey);
  const page = (problem: Problem, mobile?: string): StepResult => ({ kind: 'register', journey: journey.view, problem, ...(mobile ? { mobile } : {}) });

  const mobile = journey.record.loginHint ?? parseMobile(form.mobile ?? '', { defaultCountry: deps.defaultCountry })?.e164;
  if (!mobile) return page({ code: 'mobile_invalid', field: 'mobile' }, form.mobile);
  if (!mayReceivePins(mobile, deps)) return page({ code: 'mobile_country', field: 'mobile' }, mobile);
  const pin = form.pin ?? '';
  if (!isValidPin(pin)) return page({ code: 'pin_format', field: 'pin' }, mobile);
  // Only a PIN being chosen must be hard to guess; a login checks whatever PIN the account has.
  const weak = weakPinReason(pin);
  if (weak) return page({ code: `pin_weak_${weak}`, field: 'pin' }, mobile);
  if (pin !== form.pinConfirmation) return page({ code: 'pin_mismatch', field: 'pin_confirmation' }, mobile);

  const limited = await deps.pinAttempts.take(context.address);
  if (limited) return page({ code: 'too_many_attempts', retryAfterSeconds: limited.retryAfterSeconds, limit: 'pin_per_address' }, mobile);
  if (await deps.db.customers.findCustomerByMobile(mobile)) return page({ code: 'mobile_taken', field: 'mobile' }, mobile);
  const pendingPinHash = await deps.pinChecks.run(() => hashPin(pin)).catch(async (error: unknown) => {
    // Busy, or the hash failed: nothing ran, so it does not count against the address.
    await deps.pinAttempts.giveBack(context.address).catch(() => {});
    throw error;
  });
  const result = await sendFirstCode(journey, { purpose: 'register', mobile, profileId: null, pendingPinHash }, context, deps);
  if (result.kind === 'goto' && result.page === 'otp') await deps.pinAttempts.giveBack(context.address);
  return result;
}

/** A right PIN's count, lifted once: with the new challenge, or on its own when none is stored. */
interface PinCountToLift {
  readonly profileId: string;
  readonly attempt: number;
  lifted: boolean;
}

/**
 * After a right PIN (or an accepted registration form): within the send
 * limits, one atomic step lifts the PIN's count, moves the journey to
 * `otp_sent` and stores a new challenge; then the code is sent. If the
 * gateway fails, the challenge is retired and the one-time-PIN page offers
 * to send a code again (no PIN needed).
 */
async function sendFirstCode(
  journey: OpenJourney,
  input: Omit<ChallengeInput, 'requestHash'>,
  context: StepContext,
  deps: JourneyDeps,
  pinCount?: PinCountToLift,
): Promise<StepResult> {
  const kind = input.purpose === 'login' ? 'login' : 'register';
  const sendContext = pinSendContext(journey, context, deps, input.profileId);
  // A request already answered takes nothing from the budgets.
  context.signal?.throwIfAborted();
  const limited = await deps.sends.take(input.mobile, context.address);
  if (limited) {
    const refusal = await noteRefusedSend(limited, sendContext, deps);
    return { kind, journey: journey.view, mobile: input.mobile, problem: refusalProblem(refusal) };
  }
  const now = deps.clock.nowSeconds();
  const { record, code } = newChallenge({ ...input, requestHash: journey.record.idHash }, { hasher: deps.otpHasher, clock: deps.clock });
  const moved = await deps.db.signIns.startChallenge({
    idHash: journey.record.idHash,
    now,
    profileId: input.profileId,
    challenge: record,
    clearPin: pinCount && { profileId: pinCount.profileId, attempt: pinCount.attempt },
  });
  if (pinCount) pinCount.lifted = true;
  // Another tab finished or cancelled this journey meanwhile, or it expired.
  if (!moved) return whereItStandsNow(journey, deps);
  if (!(await deliverOtp(input.mobile, code, sendContext, deps))) {
    // The customer never saw this code: nothing may answer it.
    await deps.db.otpChallenges.consumeOtpChallenge(record.id, now);
  }
  return { kind: 'goto', page: 'otp', requestId: journey.requestId };
}

/**
 * Whether one-time PINs may go to `mobile` (E.164): a number of a country,
 * and of one `CONNECT_SMS_COUNTRIES` lists (docs/operator-guide.md, "SMS
 * budgets"). Checked before anything is counted or sent.
 */
export function mayReceivePins(mobile: string, deps: Pick<JourneyDeps, 'smsCountries'>): boolean {
  const parsed = parseMobile(mobile);
  return parsed !== undefined && pinDestinationRefusal(parsed, deps.smsCountries) === undefined;
}
