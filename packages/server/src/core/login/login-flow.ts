import type { AuditLog } from '../audit/audit-log.js';
import type { Client } from '../clients/client.js';
import type { Clock } from '../clock.js';
import { checkPin } from '../customers/check-pin.js';
import type { Customer } from '../customers/customer.js';
import { createCustomer, CustomerValidationError } from '../customers/manage-customers.js';
import { parseMobile } from '../customers/mobile.js';
import { hashPin, isValidPin } from '../customers/pin.js';
import { errorRedirect, issueCodeRedirect, type IssueCodeDeps } from '../authorize/issue-code.js';
import type { AuthorizationRequestStore } from '../journey/stores.js';
import type { CustomerStore } from '../customers/customer-store.js';
import type { OtpChallengeStore } from './otp-challenge-store.js';
import { hashCookieValue, startCustomerSession, type CustomerSessionDeps } from './customer-session.js';
import { issuePin, resendPin, type IssuePinDeps, type SendRefusal } from './issue-pin.js';
import { OTP_MAX_ATTEMPTS, OTP_MAX_RESENDS, OTP_RESEND_AFTER_SECONDS } from './one-time-pin.js';
import type { AuthorizationRequestRecord } from '../journey/records.js';
import type { OtpChallengeRecord } from './records.js';
import { verifyPin, type VerifyPinDeps } from './verify-pin.js';

/** What the hosted login pages need. */
export interface LoginFlowDeps extends IssueCodeDeps, CustomerSessionDeps {
  findClient(id: string): Promise<Client | undefined>;
  readonly requests: AuthorizationRequestStore;
  readonly customers: CustomerStore;
  readonly audit: AuditLog;
  readonly otp: IssuePinDeps & VerifyPinDeps & { readonly challenges: Pick<OtpChallengeStore, 'findLatestOtpChallenge'> };
  readonly clock: Clock;
}

/** A pending authorization request, opened by the browser it belongs to. */
export interface PendingLogin {
  readonly requestId: string;
  readonly request: AuthorizationRequestRecord;
  readonly client: Client;
  /** Set when `user_id` named a registered account: its mobile is fixed. */
  readonly hintedCustomer: Customer | undefined;
}

/** A message for the customer, tied to a form field when it is about one. */
export interface FormError {
  readonly field?: 'mobile' | 'pin' | 'pin_confirmation' | 'otp';
  readonly message: string;
}

/** What the one-time-PIN page shows. */
export interface OtpView {
  readonly maskedMobile: string;
  /** Seconds until a new code may be sent (0: now). */
  readonly resendInSeconds: number;
  readonly resendsLeft: number;
}

/** What a hosted-page step answers. */
export type FlowResult =
  | { readonly kind: 'login_page' | 'register_page'; readonly pending: PendingLogin; readonly error?: FormError; readonly mobile?: string }
  | { readonly kind: 'otp_page'; readonly pending: PendingLogin; readonly otp: OtpView; readonly error?: FormError; readonly notice?: string }
  /** Post/redirect/get to one of our pages. */
  | { readonly kind: 'goto'; readonly page: 'login' | 'register' | 'otp'; readonly requestId: string }
  /** Back to the client; `sessionId` is a new customer session to set as cookie. */
  | { readonly kind: 'client_redirect'; readonly location: string; readonly sessionId?: string }
  /** The request cannot go on (unknown, expired, finished, another browser). */
  | { readonly kind: 'dead_end'; readonly message: string };

const EXPIRED = 'This sign-in page has expired or was opened in another browser. Go back to the app and start again.';

/**
 * Opens the pending request `requestId` for the browser `browserId`. Only the
 * browser that started it may continue it, and only until it expires or is
 * completed.
 */
export async function openPendingLogin(
  requestId: string | undefined,
  browserId: string | undefined,
  deps: LoginFlowDeps,
): Promise<PendingLogin | { kind: 'dead_end'; message: string }> {
  if (!requestId || !browserId || requestId.length > 100 || browserId.length > 100) return { kind: 'dead_end', message: EXPIRED };
  const request = await deps.requests.findAuthorizationRequest(hashCookieValue(requestId));
  const now = deps.clock.nowSeconds();
  if (!request || request.browserHash !== hashCookieValue(browserId) || request.completedAt !== null || request.expiresAt <= now) {
    return { kind: 'dead_end', message: EXPIRED };
  }
  const client = await deps.findClient(request.clientId);
  if (!client || client.status !== 'active') return { kind: 'dead_end', message: 'The app that sent you here cannot sign customers in right now.' };
  const hintedCustomer = request.loginHint ? await deps.customers.findCustomerByMobile(request.loginHint) : undefined;
  return { requestId, request, client, hintedCustomer };
}

/** The page a pending request starts on (seed §3.5): registration when `user_id` names no account. */
export function firstPage(pending: PendingLogin): 'login' | 'register' {
  return pending.request.loginHint !== null && !pending.hintedCustomer ? 'register' : 'login';
}

/**
 * Mobile + PIN. The mobile is the request's `user_id` when it has one,
 * whatever was posted. A wrong mobile and a wrong PIN get one message.
 * On success a one-time PIN is sent and the customer goes to its page.
 */
export async function submitLogin(
  pending: PendingLogin,
  form: { mobile?: string | undefined; pin?: string | undefined },
  ip: string,
  deps: LoginFlowDeps,
): Promise<FlowResult> {
  const page = (error: FormError, mobile?: string): FlowResult => ({ kind: 'login_page', pending, error, ...(mobile ? { mobile } : {}) });
  const mobile = pending.request.loginHint ?? parseMobile(form.mobile ?? '')?.e164;
  if (!mobile) return page({ field: 'mobile', message: 'Enter your mobile number in international format, for example +63 917 123 4567.' }, form.mobile);
  const pin = form.pin ?? '';
  if (!isValidPin(pin)) return page({ field: 'pin', message: 'Your PIN is 4 to 6 digits.' }, mobile);

  const result = await checkPin(mobile, pin, { customers: deps.customers, clock: deps.clock });
  if (!result.ok) {
    if (result.reason === 'locked') {
      if (result.justLocked) {
        const locked = await deps.customers.findCustomerByMobile(mobile);
        await deps.audit.record({
          type: 'customer.pin_lockout',
          actor: `ip:${ip}`,
          subject: locked?.profileId ?? null,
          outcome: 'failure',
          details: { client_id: pending.client.id, locked_until: result.until },
        });
      }
      return page({ message: lockedMessage(result.until, deps.clock.nowSeconds()) }, mobile);
    }
    if (result.reason === 'disabled') return page({ message: 'This account is locked. Please contact customer support.' }, mobile);
    const message = pending.request.loginHint ? 'That PIN is not right.' : 'The mobile number or PIN is not right.';
    return page({ field: 'pin', message }, mobile);
  }
  const sent = await issuePin(
    {
      requestHash: pending.request.idHash,
      purpose: 'login',
      mobile,
      profileId: result.customer.profileId,
      pendingPinHash: null,
      clientName: pending.client.name,
      ip,
    },
    deps.otp,
  );
  if ('reason' in sent) return page({ message: refusalMessage(sent) }, mobile);
  return { kind: 'goto', page: 'otp', requestId: pending.requestId };
}

/**
 * Registration: mobile + PIN twice. Nothing is created yet: the account
 * exists only once the one-time PIN proved the mobile number.
 */
export async function submitRegistration(
  pending: PendingLogin,
  form: { mobile?: string | undefined; pin?: string | undefined; pinConfirmation?: string | undefined },
  ip: string,
  deps: LoginFlowDeps,
): Promise<FlowResult> {
  const page = (error: FormError, mobile?: string): FlowResult => ({ kind: 'register_page', pending, error, ...(mobile ? { mobile } : {}) });
  const mobile = pending.request.loginHint ?? parseMobile(form.mobile ?? '')?.e164;
  if (!mobile) return page({ field: 'mobile', message: 'Enter your mobile number in international format, for example +63 917 123 4567.' }, form.mobile);
  if (await deps.customers.findCustomerByMobile(mobile)) {
    return page({ field: 'mobile', message: 'This mobile number already has an account. Log in instead.' }, mobile);
  }
  const pin = form.pin ?? '';
  if (!isValidPin(pin)) return page({ field: 'pin', message: 'Choose a PIN of 4 to 6 digits.' }, mobile);
  if (pin !== form.pinConfirmation) return page({ field: 'pin_confirmation', message: 'The two PINs are not the same.' }, mobile);

  const sent = await issuePin(
    {
      requestHash: pending.request.idHash,
      purpose: 'register',
      mobile,
      profileId: null,
      pendingPinHash: await hashPin(pin),
      clientName: pending.client.name,
      ip,
    },
    deps.otp,
  );
  if ('reason' in sent) return page({ message: refusalMessage(sent) }, mobile);
  return { kind: 'goto', page: 'otp', requestId: pending.requestId };
}

/** The one-time-PIN page of a pending request, or back to the first page when no code was sent yet. */
export async function showOtpPage(pending: PendingLogin, deps: LoginFlowDeps): Promise<FlowResult> {
  const challenge = await deps.otp.challenges.findLatestOtpChallenge(pending.request.idHash);
  if (!challenge || challenge.consumedAt !== null) return { kind: 'goto', page: firstPage(pending), requestId: pending.requestId };
  return { kind: 'otp_page', pending, otp: otpView(challenge, deps.clock.nowSeconds()) };
}

/**
 * The one-time PIN. When it is right: a registration creates the account;
 * the request completes; a new customer session starts; the browser goes
 * back to the client with a code.
 */
export async function submitOtp(
  pending: PendingLogin,
  code: string,
  previousSessionId: string | undefined,
  deps: LoginFlowDeps,
): Promise<FlowResult> {
  const challenge = await deps.otp.challenges.findLatestOtpChallenge(pending.request.idHash);
  if (!challenge || challenge.consumedAt !== null) return { kind: 'goto', page: firstPage(pending), requestId: pending.requestId };
  const now = deps.clock.nowSeconds();
  const page = (error: FormError): FlowResult => ({ kind: 'otp_page', pending, otp: otpView(challenge, now), error });

  const result = await verifyPin(challenge.id, code.trim(), deps.otp);
  if (!result.ok) {
    switch (result.reason) {
      case 'malformed':
        return page({ field: 'otp', message: 'Enter the 6-digit code from the SMS.' });
      case 'wrong':
        return page({ field: 'otp', message: `That code is not right. ${result.attemptsLeft} ${result.attemptsLeft === 1 ? 'try' : 'tries'} left.` });
      case 'exhausted':
        if (result.justNow) {
          await deps.audit.record({
            type: 'otp.exhausted',
            actor: 'system',
            // The profile ID, as for every customer event; a registration has none yet.
            subject: challenge.profileId ?? parseMobile(challenge.mobile)?.masked ?? null,
            outcome: 'failure',
            details: { client_id: pending.client.id, purpose: challenge.purpose },
          });
        }
        return page({ field: 'otp', message: 'Too many wrong codes. Ask for a new code.' });
      case 'expired':
        return page({ field: 'otp', message: 'This code has expired. Ask for a new code.' });
      default:
        return { kind: 'goto', page: firstPage(pending), requestId: pending.requestId };
    }
  }

  let customer: Customer | undefined;
  if (challenge.purpose === 'register') {
    try {
      ({ customer } = await createCustomer({ mobile: challenge.mobile, pin: '', pinHash: challenge.pendingPinHash ?? '' }, deps));
    } catch (error) {
      if (!(error instanceof CustomerValidationError)) throw error;
      return { kind: 'register_page', pending, error: { field: 'mobile', message: 'This mobile number already has an account. Log in instead.' } };
    }
  } else {
    customer = challenge.profileId ? await deps.customers.findCustomer(challenge.profileId) : undefined;
    if (!customer || customer.status !== 'active') return { kind: 'dead_end', message: 'This account cannot sign in right now.' };
  }

  if (!(await deps.requests.completeAuthorizationRequest(pending.request.idHash, now))) {
    return { kind: 'dead_end', message: EXPIRED };
  }
  const sessionId = await startCustomerSession(customer, previousSessionId, deps);
  const { request } = pending;
  const location = await issueCodeRedirect(
    { clientId: request.clientId, redirectUri: request.redirectUri, state: request.state, codeChallenge: request.codeChallenge },
    customer,
    deps,
  );
  return { kind: 'client_redirect', location, sessionId };
}

/**
 * "Send a new code". A live challenge gets a new code (30 s apart, 3 times
 * at most); one that ended (5 wrong codes, or expired) is replaced by a new
 * challenge. Both within the per-mobile and per-address send limits.
 */
export async function resendOtp(pending: PendingLogin, ip: string, deps: LoginFlowDeps): Promise<FlowResult> {
  const challenge = await deps.otp.challenges.findLatestOtpChallenge(pending.request.idHash);
  if (!challenge || challenge.consumedAt !== null) return { kind: 'goto', page: firstPage(pending), requestId: pending.requestId };
  const now = deps.clock.nowSeconds();
  const ended = challenge.attempts >= OTP_MAX_ATTEMPTS || challenge.expiresAt <= now;
  const outcome = ended
    ? await issuePin(
        {
          requestHash: challenge.requestHash,
          purpose: challenge.purpose,
          mobile: challenge.mobile,
          profileId: challenge.profileId,
          pendingPinHash: challenge.pendingPinHash,
          clientName: pending.client.name,
          ip,
        },
        deps.otp,
      )
    : await resendPin(challenge.id, { clientName: pending.client.name, ip }, deps.otp);
  const latest = (await deps.otp.challenges.findLatestOtpChallenge(pending.request.idHash)) ?? challenge;
  const view = otpView(latest, deps.clock.nowSeconds());
  if ('reason' in outcome) return { kind: 'otp_page', pending, otp: view, error: { message: refusalMessage(outcome) } };
  return { kind: 'otp_page', pending, otp: view, notice: `We sent a new code to ${view.maskedMobile}.` };
}

/** The customer cancels: back to the client with `access_denied` (RFC 6749 §4.1.2.1). */
export async function cancelLogin(pending: PendingLogin, deps: LoginFlowDeps): Promise<FlowResult> {
  await deps.requests.completeAuthorizationRequest(pending.request.idHash, deps.clock.nowSeconds());
  const { request } = pending;
  return {
    kind: 'client_redirect',
    location: errorRedirect(request.redirectUri, 'access_denied', 'the customer cancelled', request.state, deps.issuer),
  };
}

function otpView(challenge: OtpChallengeRecord, now: number): OtpView {
  return {
    maskedMobile: parseMobile(challenge.mobile)?.masked ?? challenge.mobile,
    resendInSeconds: Math.max(0, challenge.lastSentAt + OTP_RESEND_AFTER_SECONDS - now),
    resendsLeft: Math.max(0, OTP_MAX_RESENDS - challenge.resends),
  };
}

function lockedMessage(until: number, now: number): string {
  const minutes = Math.max(1, Math.ceil((until - now) / 60));
  const secondsOfDay = until % 86_400;
  const time = `${String(Math.floor(secondsOfDay / 3600)).padStart(2, '0')}:${String(Math.floor((secondsOfDay % 3600) / 60)).padStart(2, '0')}`;
  return `Too many wrong PINs. For your security this account is locked until ${time} UTC (about ${minutes} minute${minutes === 1 ? '' : 's'}).`;
}

function refusalMessage(refusal: SendRefusal): string {
  switch (refusal.reason) {
    case 'rate_limited':
      return `Too many codes were sent. Try again in ${Math.ceil(refusal.retryAfterSeconds / 60)} minute(s).`;
    case 'too_soon':
      return `You can ask for a new code in ${refusal.retryAfterSeconds} second${refusal.retryAfterSeconds === 1 ? '' : 's'}.`;
    case 'no_more_resends':
      return 'No more codes can be sent for this sign-in. Go back to the app and start again.';
    case 'sms_unavailable':
      return 'We could not send the SMS just now. Please try again in a moment.';
    case 'gone':
      return 'This code is no longer valid. Go back to the app and start again.';
  }
}
