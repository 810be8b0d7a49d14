import { randomBytes } from 'node:crypto';
import type { ClientAddress } from '../client-address.js';
import type { Clock } from '../clock.js';
import { OTP_MAX_RESENDS, OTP_RESEND_AFTER_SECONDS, OTP_TTL_SECONDS } from '../lifetimes.js';
import type { AuditLog } from '../audit/audit-log.js';
import { e164Of, maskedMobile, type MobileNumber } from '../customers/mobile.js';
import { auditActor } from '../audit/audit-actor.js';
import type { SendLimiter, SendRefused } from '../limits/send-limiter.js';
import type { UiLocale } from '../authorize/ui-locales.js';
import { oneTimePinMessage } from '../sms/one-time-pin-message.js';
import { SmsDeliveryFailed, type SmsLog, type SmsSender } from '../sms/sms-sender.js';
import { generateOtp, type OtpHasher } from './otp-hasher.js';
import type { OtpChallengeStore } from './otp-challenge-store.js';
import type { OtpChallengeRecord, OtpPurpose } from './records.js';

/** Why no code was sent; `budget`: the send budget that was spent. */
export type SendRefusal =
  | { readonly reason: 'rate_limited'; readonly budget: Exclude<SendRefused['budget'], 'global'>; readonly retryAfterSeconds: number }
  | { readonly reason: 'budget_spent'; readonly retryAfterSeconds: number }
  | { readonly reason: 'too_soon'; readonly retryAfterSeconds: number }
  | { readonly reason: 'no_more_resends' }
  | { readonly reason: 'gone' }
  | { readonly reason: 'sms_unavailable' };

/** What a new challenge is for. */
export interface ChallengeInput {
  readonly requestHash: string;
  readonly purpose: OtpPurpose;
  /** The mobile number the code goes to: the value, or (a challenge made again) a challenge's stored E.164. */
  readonly mobile: MobileNumber | string;
  readonly profileId: string | null;
  readonly pendingPinHash: string | null;
}

/**
 * A new one-time-PIN challenge and its code, not stored yet: the caller
 * stores the record (in the transaction that moves the journey) and then
 * delivers the code with {@link deliverOtp}. The code itself is never stored.
 */
export function newChallenge(input: ChallengeInput, deps: { hasher: OtpHasher; clock: Clock }): { record: OtpChallengeRecord; code: string } {
  const now = deps.clock.nowSeconds();
  const id = challengeId(now);
  const code = generateOtp();
  return {
    code,
    record: {
      id,
      ...input,
      mobile: e164Of(input.mobile),
      codeHash: deps.hasher.hash(id, code),
      attempts: 0,
      resends: 0,
      lastSentAt: now,
      expiresAt: now + OTP_TTL_SECONDS,
      createdAt: now,
      consumedAt: null,
    },
  };
}

/** What sending a code needs: the gateway, and where a failure is reported. */
export interface OtpDeliveryDeps {
  readonly sms: SmsSender;
  readonly audit: AuditLog;
  readonly log?: SmsLog | undefined;
}

/** Who a code is sent for, as the log and the audit log name them (never the code, never the whole mobile). */
export interface OtpSendContext {
  readonly clientId: string;
  readonly clientName: string;
  /** The client address of the request. */
  readonly address: ClientAddress;
  /** The customer's profile ID; a registration has none yet. */
  readonly profileId: string | null;
  /**
   * The request's signal: once it is aborted (the request was answered, at
   * its deadline or otherwise) no send budget is taken and no code is sent.
   */
  readonly signal?: AbortSignal | undefined;
  /** `reset`: the code is for a PIN reset, and the text says so. */
  readonly purpose?: OtpPurpose | undefined;
  /** The language of the journey the code is for: the SMS is in it. */
  readonly locale: UiLocale;
  /** The host of the auth URL (no port), which the SMS's origin-bound last line names. */
  readonly authHost: string;
}

/**
 * Sends a code by SMS, only while its request is still being answered
 * (docs/operator-guide.md, "Timeouts"): when the request's signal was
 * aborted meanwhile (the request waited past its deadline on a database or
 * Redis that did not answer, and was answered `503`), nothing is sent, and
 * `false` is returned (logged, not audited: the gateway is not at fault).
 * Returns `false` too when the gateway did not take it (audited as
 * `sms.send_failed` with the reason; logged on its own line only when the
 * gateway refused that message, an outage being logged once by the log of
 * outages). Either way the caller then retires
 * the challenge, so nothing can answer a code the customer never saw, and
 * the customer is asked to try again. Any other failure (the sandbox's
 * outbox unreachable: 503) is thrown. `to`: the value, or (a code sent
 * again) a challenge's stored E.164.
 */
export async function deliverOtp(to: MobileNumber | string, code: string, context: OtpSendContext, deps: OtpDeliveryDeps): Promise<boolean> {
  if (context.signal?.aborted) {
    deps.log?.warn({ mobile: maskedMobile(to, 'log'), clientId: context.clientId }, 'one-time PIN not sent: its request was already answered (timed out)');
    return false;
  }
  try {
    const body = oneTimePinMessage({
      code,
      clientName: context.clientName,
      ttlSeconds: OTP_TTL_SECONDS,
      reset: context.purpose === 'reset',
      locale: context.locale,
      authHost: context.authHost,
    });
    await deps.sms.send({ to: e164Of(to), body }, { signal: context.signal });
    return true;
  } catch (error) {
    if (!(error instanceof SmsDeliveryFailed)) throw error;
    const { reason } = error;
    const mobile = maskedMobile(to, 'log');
    // A message refused is this message's matter: one line. A gateway down or
    // too slow is an outage, logged once for all its codes by the log of
    // outages (docs/operator-guide.md, "When a dependency fails").
    if (error.refused) deps.log?.warn({ mobile, clientId: context.clientId, reason }, 'one-time PIN not sent: the SMS gateway refused it');
    await deps.audit.record({
      type: 'sms.send_failed',
      actor: auditActor({ kind: 'address', ip: context.address.ip }),
      subject: context.profileId ?? mobile,
      outcome: 'failure',
      details: { client_id: context.clientId, reason },
    });
    return false;
  }
}

/**
 * Records a send refused by a spent budget. The whole deployment's budget
 * (`CONNECT_SMS_LIMIT_GLOBAL`) being spent is an operator's matter (SMS
 * pumping, or a budget too small): logged, without the mobile number, and
 * audited as `sms.budget_spent`. The per-mobile and per-address budgets
 * are the customers' own and are not recorded.
 */
export async function noteRefusedSend(refused: SendRefused, context: OtpSendContext, deps: Pick<OtpDeliveryDeps, 'audit' | 'log'>): Promise<SendRefusal> {
  if (refused.budget !== 'global') return { reason: 'rate_limited', budget: refused.budget, retryAfterSeconds: refused.retryAfterSeconds };
  deps.log?.warn({ clientId: context.clientId, retryAfterSeconds: refused.retryAfterSeconds }, 'one-time PIN not sent: the global SMS budget (CONNECT_SMS_LIMIT_GLOBAL) is spent');
  await deps.audit.record({
    type: 'sms.budget_spent',
    actor: auditActor({ kind: 'address', ip: context.address.ip }),
    subject: null,
    outcome: 'failure',
    details: { client_id: context.clientId, budget: 'global', retry_after: refused.retryAfterSeconds },
  });
  return { reason: 'budget_spent', retryAfterSeconds: refused.retryAfterSeconds };
}

/** What resending needs. */
export interface ResendOtpDeps extends OtpDeliveryDeps {
  readonly challenges: Pick<OtpChallengeStore, 'findOtpChallenge' | 'resendOtpChallenge' | 'consumeOtpChallenge'>;
  readonly hasher: OtpHasher;
  readonly sends: SendLimiter;
  readonly clock: Clock;
  /**
   * How the new code goes out; by default {@link deliverOtp}. A PIN reset
   * hands it over after the answer (or, for a mobile without an account,
   * sends nothing) and says it went.
   */
  readonly deliver?: ((to: string, code: string, context: OtpSendContext) => Promise<boolean>) | undefined;
}

/**
 * Sends a new code for a live challenge: no sooner than 30 s after the last
 * send, at most 3 times, within the send limits. The previous code stops
 * working; entries made so far still count. When the gateway does not take
 * the new code the challenge is retired, and the next "send a new code"
 * starts a new one.
 */
export async function resendOtp(
  challengeId: string,
  context: OtpSendContext,
  deps: ResendOtpDeps,
): Promise<{ sent: true } | SendRefusal> {
  const now = deps.clock.nowSeconds();
  const challenge = await deps.challenges.findOtpChallenge(challengeId);
  // A consumed or expired challenge is over: a new one must be issued, not this one revived.
  if (!challenge || challenge.consumedAt !== null || challenge.expiresAt <= now) return { reason: 'gone' };
  if (challenge.resends >= OTP_MAX_RESENDS) return { reason: 'no_more_resends' };
  const wait = challenge.lastSentAt + OTP_RESEND_AFTER_SECONDS - now;
  if (wait > 0) return { reason: 'too_soon', retryAfterSeconds: wait };
  // A request already answered takes nothing from the budgets.
  context.signal?.throwIfAborted();
  const limited = await deps.sends.take(challenge.mobile, context.address);
  if (limited) return noteRefusedSend(limited, context, deps);
  const code = generateOtp();
  // One conditional update: of two concurrent resends, one replaces the code.
  const replaced = await deps.challenges.resendOtpChallenge(challengeId, {
    codeHash: deps.hasher.hash(challengeId, code),
    now,
    expiresAt: now + OTP_TTL_SECONDS,
    sentBefore: now - OTP_RESEND_AFTER_SECONDS,
    maxResends: OTP_MAX_RESENDS,
  });
  if (!replaced) {
    // A concurrent resend (a double click, another tab) replaced the code: this one sends nothing,
    // and what it took goes back, so that it costs the customer none of their codes.
    await deps.sends.giveBack(challenge.mobile, context.address).catch(() => {});
    return { reason: 'too_soon', retryAfterSeconds: OTP_RESEND_AFTER_SECONDS };
  }
  const deliver = deps.deliver ?? ((to: string, otp: string, sent: OtpSendContext) => deliverOtp(to, otp, sent, deps));
  if (!(await deliver(challenge.mobile, code, context))) {
    // As with a first code: nothing may answer a code the customer never saw.
    await deps.challenges.consumeOtpChallenge(challengeId, now);
    return { reason: 'sms_unavailable' };
  }
  return { sent: true };
}

let sequence = 0;

/**
 * A challenge ID that sorts in creation order: the second, a per-process
 * sequence, then 96 random bits. The newest challenge of a journey is found
 * by this order, so two made within one second must not tie at random.
 */
function challengeId(now: number): string {
  sequence = (sequence + 1) % 0x1000000;
  return `${now.toString(16).padStart(12, '0')}${sequence.toString(16).padStart(6, '0')}${randomBytes(12).toString('base64url')}`;
}
