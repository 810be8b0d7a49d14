import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { oneTimePinMessage, SmsDeliveryFailed, type SmsSender } from '../sms/sms-sender.js';
import type { OtpChallengeStore } from './otp-challenge-store.js';
import { generateOtp, OTP_MAX_ATTEMPTS, OTP_MAX_RESENDS, OTP_RESEND_AFTER_SECONDS, OTP_TTL_SECONDS, type OtpHasher } from './one-time-pin.js';
import type { OtpPurpose } from './records.js';
import type { SendLimiter } from '../limits/send-limiter.js';

/** What sending one-time PINs needs. */
export interface IssuePinDeps {
  readonly challenges: Pick<OtpChallengeStore, 'insertOtpChallenge' | 'findOtpChallenge' | 'resendOtpChallenge' | 'consumeOtpChallenge'>;
  readonly hasher: OtpHasher;
  readonly sms: SmsSender;
  readonly limiter: SendLimiter;
  readonly clock: Clock;
}

/** Why no code was sent. */
export type SendRefusal =
  | { readonly reason: 'rate_limited'; readonly retryAfterSeconds: number }
  | { readonly reason: 'too_soon'; readonly retryAfterSeconds: number }
  | { readonly reason: 'no_more_resends' }
  | { readonly reason: 'gone' }
  | { readonly reason: 'sms_unavailable' };

/** What a new challenge is for. */
export interface ChallengeInput {
  readonly requestHash: string;
  readonly purpose: OtpPurpose;
  readonly mobile: string;
  readonly profileId: string | null;
  readonly pendingPinHash: string | null;
  /** Named in the message: "to link your account to Acme". */
  readonly clientName: string;
  /** The customer's address, for the per-address send limit. */
  readonly ip: string;
}

/**
 * Starts a one-time-PIN challenge: checks the per-mobile and per-address send
 * limits, stores the hashed code and sends it by SMS.
 *
 * @returns the challenge ID, or why nothing was sent.
 */
export async function issuePin(input: ChallengeInput, deps: IssuePinDeps): Promise<{ challengeId: string } | SendRefusal> {
  const limited = await deps.limiter.take(input.mobile, input.ip);
  if (limited) return { reason: 'rate_limited', retryAfterSeconds: limited.retryAfterSeconds };
  const now = deps.clock.nowSeconds();
  const id = challengeId(now);
  const code = generateOtp();
  await deps.challenges.insertOtpChallenge({
    id,
    requestHash: input.requestHash,
    purpose: input.purpose,
    mobile: input.mobile,
    profileId: input.profileId,
    pendingPinHash: input.pendingPinHash,
    codeHash: deps.hasher.hash(id, code),
    attempts: 0,
    resends: 0,
    lastSentAt: now,
    expiresAt: now + OTP_TTL_SECONDS,
    createdAt: now,
    consumedAt: null,
  });
  if (!(await deliver(input.mobile, code, input.clientName, deps))) {
    // The customer never saw this code: retire the challenge so nothing can answer it.
    // Nobody knows its ID yet, so it has no wrong entries: OTP_MAX_ATTEMPTS always lets
    // this through (a value beyond PostgreSQL's integer range would be refused there).
    await deps.challenges.consumeOtpChallenge(id, now, OTP_MAX_ATTEMPTS);
    return { reason: 'sms_unavailable' };
  }
  return { challengeId: id };
}

/**
 * Sends a new code for a live challenge: no sooner than 30 s after the last
 * send, at most 3 times, within the send limits. The previous code stops
 * working; wrong entries made so far still count.
 */
export async function resendPin(
  challengeId: string,
  context: { clientName: string; ip: string },
  deps: IssuePinDeps,
): Promise<{ sent: true } | SendRefusal> {
  const now = deps.clock.nowSeconds();
  const challenge = await deps.challenges.findOtpChallenge(challengeId);
  // A consumed or expired challenge is over: a new one must be issued, not this one revived.
  if (!challenge || challenge.consumedAt !== null || challenge.expiresAt <= now) return { reason: 'gone' };
  if (challenge.resends >= OTP_MAX_RESENDS) return { reason: 'no_more_resends' };
  const wait = challenge.lastSentAt + OTP_RESEND_AFTER_SECONDS - now;
  if (wait > 0) return { reason: 'too_soon', retryAfterSeconds: wait };
  const limited = await deps.limiter.take(challenge.mobile, context.ip);
  if (limited) return { reason: 'rate_limited', retryAfterSeconds: limited.retryAfterSeconds };
  const code = generateOtp();
  const replaced = await deps.challenges.resendOtpChallenge(challengeId, {
    codeHash: deps.hasher.hash(challengeId, code),
    now,
    expiresAt: now + OTP_TTL_SECONDS,
    sentBefore: now - OTP_RESEND_AFTER_SECONDS,
    maxResends: OTP_MAX_RESENDS,
  });
  // Another request resent first, or the challenge ended meanwhile.
  if (!replaced) return { reason: 'too_soon', retryAfterSeconds: OTP_RESEND_AFTER_SECONDS };
  if (!(await deliver(challenge.mobile, code, context.clientName, deps))) return { reason: 'sms_unavailable' };
  return { sent: true };
}

let sequence = 0;

/**
 * A challenge ID that sorts in creation order: the second, a per-process
 * sequence, then 96 random bits. The newest challenge of a request is found
 * by this order, so two made within one second must not tie at random.
 */
function challengeId(now: number): string {
  sequence = (sequence + 1) % 0x1000000;
  return `${now.toString(16).padStart(12, '0')}${sequence.toString(16).padStart(6, '0')}${randomBytes(12).toString('base64url')}`;
}

async function deliver(to: string, code: string, clientName: string, deps: IssuePinDeps): Promise<boolean> {
  try {
    await deps.sms.send({ to, body: oneTimePinMessage({ code, clientName, ttlSeconds: OTP_TTL_SECONDS }) });
    return true;
  } catch (error) {
    if (error instanceof SmsDeliveryFailed) return false;
    throw error;
  }
}
