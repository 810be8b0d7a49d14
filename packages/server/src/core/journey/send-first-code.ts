import type { MobileNumber } from '../customers/mobile.js';
import type { SendOptions } from '../limits/send-limiter.js';
import type { OtpChallengeRecord } from '../otp/records.js';
import { deliverOtp, newChallenge, noteRefusedSend, type ChallengeInput } from '../otp/issue-otp.js';
import type { JourneyDeps } from './deps.js';
import { refusalProblem } from './one-time-pin.js';
import { otpSendContext, whereItStandsNow, type OpenJourney, type StepContext } from './open.js';
import type { StepResult } from './outcomes.js';

/** What sending a sign-in's first code uses of the journey's dependencies. */
export type SendFirstCodeDeps = Pick<JourneyDeps, 'db' | 'clock' | 'issuer' | 'sends' | 'otpHasher' | 'sms' | 'audit' | 'log'>;

/**
 * How a sign-in's code is counted: a registration's goes to a number that
 * has no account, which anyone may type in, so it is unsolicited and
 * shares the budgets of unsolicited PIN-reset codes (at most 3 an hour to
 * one mobile, over every address: docs/journey.md, "Registration"); a
 * login's follows a right PIN.
 */
export function signInSendOptions(purpose: OtpChallengeRecord['purpose']): SendOptions {
  return { unsolicited: purpose === 'register' };
}

/** A right PIN's count, lifted once: with the new challenge, or on its own when none is stored. */
export interface PinCountToLift {
  readonly profileId: string;
  readonly attempt: number;
  lifted: boolean;
}

/** What the first code is for: a login's (no PIN to keep), or a registration's, whose new PIN is hashed once the code may go. */
export type FirstCodeInput = Omit<ChallengeInput, 'requestHash' | 'mobile' | 'pendingPinHash'> & {
  readonly mobile: MobileNumber;
  /**
   * A registration's new PIN, hashed (on the PIN-check queue) only once the
   * send budgets let its code go; when it throws, or the request was
   * answered while it ran, the budgets are given back.
   */
  readonly hashNewPin?: () => Promise<string>;
};

/**
 * After a right PIN (or an accepted registration form): within the send
 * limits, one atomic step lifts the PIN's count, moves the journey to
 * `otp_sent` and stores a new challenge; then the code is sent. If the
 * gateway fails, the challenge is retired and the one-time-PIN page offers
 * to send a code again (no PIN needed). A registration's new PIN is hashed
 * between the budgets and the challenge: a send the budgets refuse costs no
 * hash, and a hash that cannot run (busy) gives the budgets back.
 */
export async function sendFirstCode(
  journey: OpenJourney,
  input: FirstCodeInput,
  context: StepContext,
  deps: SendFirstCodeDeps,
  pinCount?: PinCountToLift,
): Promise<StepResult> {
  const kind = input.purpose === 'login' ? 'login' : 'register';
  const sendContext = otpSendContext(journey, context, deps, input.profileId);
  // A request already answered takes nothing from the budgets.
  context.signal?.throwIfAborted();
  const counted = signInSendOptions(input.purpose);
  const limited = await deps.sends.take(input.mobile.e164, context.address, counted);
  if (limited) {
    const refusal = await noteRefusedSend(limited, sendContext, deps);
    return { kind, journey: journey.view, mobile: input.mobile.e164, problem: refusalProblem(refusal) };
  }
  let pendingPinHash: string | null = null;
  if (input.hashNewPin) {
    try {
      pendingPinHash = await input.hashNewPin();
      // Answered meanwhile (the deadline, or the client went away): no code goes, so none is counted.
      context.signal?.throwIfAborted();
    } catch (error) {
      await deps.sends.giveBack(input.mobile.e164, context.address, counted).catch(() => {});
      throw error;
    }
  }
  const now = deps.clock.nowSeconds();
  const { record, code } = newChallenge(
    { purpose: input.purpose, mobile: input.mobile, profileId: input.profileId, pendingPinHash, requestHash: journey.record.idHash },
    { hasher: deps.otpHasher, clock: deps.clock },
  );
  const moved = await deps.db.signIns.startChallenge({
    idHash: journey.record.idHash,
    now,
    profileId: input.profileId,
    challenge: record,
    clearPin: pinCount && { profileId: pinCount.profileId, attempt: pinCount.attempt },
  });
  if (pinCount) pinCount.lifted = true;
  // Another tab finished or cancelled this journey meanwhile, or it expired: nothing is sent,
  // and what was taken goes back (docs/journey.md, "The one-time PIN").
  if (!moved) {
    await deps.sends.giveBack(input.mobile.e164, context.address, counted).catch(() => {});
    return whereItStandsNow(journey, deps);
  }
  if (!(await deliverOtp(input.mobile, code, sendContext, deps))) {
    // The customer never saw this code: nothing may answer it.
    await deps.db.otpChallenges.consumeOtpChallenge(record.id, now);
  }
  return { kind: 'goto', page: 'otp', requestId: journey.requestId };
}
