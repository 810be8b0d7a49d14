import { deliverOtp, newChallenge, noteRefusedSend, type OtpSendContext, type SendRefusal } from '../otp/issue-otp.js';
import type { SendOptions } from '../limits/send-limiter.js';
import { e164Of, type MobileNumber } from '../customers/mobile.js';
import type { JourneyDeps } from './deps.js';
import { knownDeviceOf, type KnownDeviceCustomer } from './known-device.js';
import { otpSendContext, type OpenJourney, type StepContext } from './open.js';
import { TRANSITIONS } from './states.js';

/*
 * "Forgot PIN?" (docs/hosted-login.md, "Forgot PIN"): the mobile, then a
 * 6-digit code by SMS; a right code leads to the new PIN (`steps/new-pin.ts`).
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

/** What sending a reset code uses of the journey's dependencies. */
export type SendResetCodeDeps = Pick<JourneyDeps, 'db' | 'clock' | 'issuer' | 'resetSends' | 'otpHasher' | 'knownDeviceKey' | 'sms' | 'audit' | 'log' | 'later'>;

/**
 * A new reset code (the first, or one after the last has ended): a new
 * challenge stored with the journey's move to `reset_otp_sent` in one
 * atomic step (`SignInStore.startChallenge`), within the send budgets,
 * which every mobile spends alike but for the whole deployment's, which
 * only a code sent spends (it is checked for every mobile, so that the
 * answers stay alike). Returns `lost` when the journey could
 * not move (another tab finished or cancelled it, or it expired).
 * `mobile`: the value the form posted, or (a code asked for again once the
 * last one ended) the last challenge's stored E.164.
 */
export async function sendResetCode(journey: OpenJourney, mobile: MobileNumber | string, context: StepContext, deps: SendResetCodeDeps): Promise<{ sent: true } | SendRefusal | 'lost'> {
  const e164 = e164Of(mobile);
  const customer = await deps.db.customers.findCustomerByMobile(e164);
  // Only an active account may reset its PIN; an operator's lock is lifted by an operator only.
  const resettable = customer?.status === 'active' ? customer : null;
  const profileId = resettable?.profileId ?? null;
  // A request already answered takes nothing from the budgets.
  context.signal?.throwIfAborted();
  // Every mobile spends the same budgets, but the global one only a code that is sent.
  const counted = sendOptions(profileId, resettable, context, deps);
  const limited = await deps.resetSends.take(e164, context.address, counted);
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
  if (!moved) {
    // Nothing is sent: what was taken goes back (docs/journey.md, "The one-time PIN").
    await deps.resetSends.giveBack(e164, context.address, counted).catch(() => {});
    return 'lost';
  }
  if (profileId !== null) await sendLater(mobile, code, sendContextOf(journey, context, profileId, deps), context, deps);
  return { sent: true };
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
export async function sendLater(mobile: MobileNumber | string, code: string, sendContext: OtpSendContext, context: StepContext, deps: Pick<JourneyDeps, 'sms' | 'audit' | 'log' | 'later'>): Promise<void> {
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
export function sendOptions(
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

/** How a reset code is sent: for the customer `profileId` (`null`: none), as a reset. */
export function sendContextOf(journey: OpenJourney, context: StepContext, profileId: string | null, deps: Pick<JourneyDeps, 'issuer'>): OtpSendContext {
  return { ...otpSendContext(journey, context, deps, profileId), purpose: 'reset' };
}
