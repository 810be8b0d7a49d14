import { auditActor } from '../../audit/audit-actor.js';
import { maskedMobile } from '../../customers/mobile.js';
import { isValidPin } from '../../customers/pin.js';
import { weakPinReason } from '../../customers/weak-pin.js';
import { PIN_RESET_WINDOW_SECONDS } from '../../lifetimes.js';
import type { OtpChallengeRecord } from '../../otp/records.js';
import { atomically } from '../atomic.js';
import { cancelJourney } from '../cancel.js';
import type { JourneyDeps } from '../deps.js';
import { endCustomerAccess, type EndedAccess } from '../end-access.js';
import { proveKnownDevice, type KnownDeviceCustomer } from '../known-device.js';
import { deadEnd, isOpen, openJourney, pageForState, whereItStandsNow, type OpenJourney, type StepContext } from '../open.js';
import type { Problem, StepResult } from '../outcomes.js';

import type { JourneyStep } from '../step.js';

/** What the new PIN step uses of the journey's dependencies. */
export type NewPinDeps = Pick<
  JourneyDeps,
  'db' | 'findClient' | 'clock' | 'issuer' | 'pinChecks' | 'knownDeviceKey' | 'audit'
>;

/** The new-PIN form as posted. */
export interface NewPinForm {
  readonly action?: string | undefined;
  readonly pin?: string | undefined;
  readonly pinConfirmation?: string | undefined;
}

/**
 * The proof a new PIN stands on, at `now`: the journey is `reset_verified`,
 * bound to the customer of its newest challenge, a reset challenge answered
 * less than {@link PIN_RESET_WINDOW_SECONDS} ago.
 */
function proofOf(journey: OpenJourney, now: number): (OtpChallengeRecord & { profileId: string; consumedAt: number }) | undefined {
  const { challenge, record } = journey;
  if (record.profileId === null || challenge?.purpose !== 'reset' || challenge.profileId !== record.profileId || challenge.consumedAt === null) return undefined;
  if (now >= challenge.consumedAt + PIN_RESET_WINDOW_SECONDS) return undefined;
  return { ...challenge, profileId: record.profileId, consumedAt: challenge.consumedAt };
}

/** The reset page again, saying the time to choose a new PIN ran out. */
function tooLate(journey: OpenJourney): StepResult {
  const mobile = journey.challenge?.mobile;
  return { kind: 'reset', journey: journey.view, problem: { code: 'reset_expired' }, ...(mobile ? { mobile } : {}) };
}

/** `GET /login/reset/pin`: the new PIN's page, once the reset code was right. */
export async function showNewPin(context: StepContext, deps: NewPinDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (journey.record.status !== 'reset_verified') return pageForState(journey);
  const proof = proofOf(journey, deps.clock.nowSeconds());
  if (!proof) return tooLate(journey);
  return { kind: 'new_pin', journey: journey.view, maskedMobile: maskedMobile(proof.mobile, 'page') };
}

type Reset = { readonly kind: 'done'; readonly ended: EndedAccess; readonly customer: KnownDeviceCustomer } | { readonly kind: 'lost' } | { readonly kind: 'account_unavailable' };

/**
 * `POST /login/reset/pin`: the new PIN twice, or cancel
 * (docs/hosted-login.md, "Forgot PIN"). The PIN must follow the rules of a
 * PIN being chosen (4 to 6 digits, not too easy to guess); one equal to the
 * old PIN is accepted, since refusing it would need the old PIN checked
 * here, where the 5-try lock does not apply.
 *
 * The new PIN is hashed first; then ONE transaction takes the customer's
 * row (active: the PIN replaced, wrong-PIN count and lock cleared, the
 * credential version one more, which ends every known-device proof made
 * before), spends
 * the journey's proof (`SignInStore.usePinReset`: back to `pending`, so
 * it cannot be replayed), ends every session, unredeemed code and token
 * session of the customer as `customers lock` does, and records
 * `customer.pin_reset`. All of it or none. The customer then logs in with
 * the new PIN, on the login page of the same journey.
 */
export async function submitNewPin(context: StepContext, form: NewPinForm, deps: NewPinDeps): Promise<StepResult> {
  const journey = await openJourney(context, deps);
  if (!isOpen(journey)) return journey;
  if (form.action === 'cancel') return cancelJourney(journey, deps);
  if (journey.record.status !== 'reset_verified') return pageForState(journey);
  const proof = proofOf(journey, deps.clock.nowSeconds());
  if (!proof) return tooLate(journey);
  const page = (problem: Problem): StepResult => ({ kind: 'new_pin', journey: journey.view, maskedMobile: maskedMobile(proof.mobile, 'page'), problem });

  const pin = form.pin ?? '';
  if (!isValidPin(pin)) return page({ code: 'pin_format', field: 'pin' });
  const weak = weakPinReason(pin);
  if (weak) return page({ code: `pin_weak_${weak}`, field: 'pin' });
  if (pin !== form.pinConfirmation) return page({ code: 'pin_mismatch', field: 'pin_confirmation' });

  // Slow on purpose: hashed before the transaction, so that no row is held meanwhile.
  const pinHash = await deps.pinChecks.run((pins) => pins.hash(pin));
  const now = deps.clock.nowSeconds();
  const { profileId } = proof;
  const outcome = await atomically<Reset, Reset>(deps.db, async (tx, rollback) => {
    // The customer's row first, then the journey's: the order every step takes them in.
    // A new credential version: the known-device proofs made before stop counting (docs/journey.md, "After a PIN reset").
    const customer = await tx.customers.replacePin(profileId, pinHash, now);
    if (!customer) return rollback({ kind: 'account_unavailable' });
    const spent = await tx.signIns.usePinReset({
      idHash: journey.record.idHash,
      challengeId: proof.id,
      profileId,
      now,
      answeredAfter: now - PIN_RESET_WINDOW_SECONDS,
    });
    if (!spent) return rollback({ kind: 'lost' });
    const ended = await endCustomerAccess(profileId, tx, now, { by: 'pin_reset', except: journey.record.idHash });
    await deps.audit.recordIn(tx.audit, {
      type: 'customer.pin_reset',
      actor: auditActor({ kind: 'address', ip: context.address.ip }),
      subject: profileId,
      outcome: 'success',
      details: { client_id: journey.client.id, journeys_ended: ended.journeys, sessions_ended: ended.sessions, codes_ended: ended.codes, token_sessions_revoked: ended.tokenSessions },
      requestId: context.correlationId,
    });
    return { kind: 'done', ended, customer };
  });
  switch (outcome.kind) {
    case 'done':
      // This browser's session ended with the others: its cookie goes too. The
      // reset's code proved the phone in this browser: it is a known device of the customer, at the new version.
      return {
        kind: 'goto',
        page: 'login',
        requestId: journey.requestId,
        endSession: true,
        knownDevice: proveKnownDevice(context.knownDevice, outcome.customer, now, deps.knownDeviceKey),
      };
    case 'account_unavailable':
      return deadEnd('account_unavailable', journey.record, journey.view.clientName);
    case 'lost':
      // Set by a concurrent submit, or the time ran out, or another tab moved the journey on.
      return whereItStandsNow(journey, deps);
  }
}

/** `/login/reset/pin`: the new PIN, twice. */
export const newPinStep: JourneyStep<NewPinForm, NewPinDeps> = {
  page: 'new_pin',
  fields: { action: 'action', pin: 'pin', pinConfirmation: 'pin_confirmation' },
  show: showNewPin,
  submit: submitNewPin,
};
