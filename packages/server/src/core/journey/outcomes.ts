/**
 * What each step of the journey answers, for the HTTP layer to render. No
 * wording here: problems and reasons are codes, and the hosted pages'
 * views (`http/views/`) say them in the customer's language.
 */
import type { UiLocale } from '../authorize/ui-locales.js';

/** A form field a problem can be about. */
export type FormField = 'mobile' | 'pin' | 'pin_confirmation' | 'otp';

/** Something the customer must fix or wait for. */
export type ProblemCode =
  /** Not a mobile number in international format. */
  | 'mobile_invalid'
  /** Registration for a mobile that has an account. */
  | 'mobile_taken'
  /** A PIN is 4 to 6 digits. */
  | 'pin_format'
  /** The two PINs of a registration differ. */
  | 'pin_mismatch'
  /** A new PIN that is one digit, or a short group of digits, repeated (`1111`, `1212`). */
  | 'pin_weak_repeated'
  /** A new PIN whose digits run up or down (`1234`, `9876`). */
  | 'pin_weak_sequence'
  /** A new PIN that is one of the most common ones. */
  | 'pin_weak_common'
  /** Wrong PIN for the mobile the client named (`user_id`). */
  | 'pin_wrong'
  /** Wrong mobile or PIN: one answer for both. */
  | 'credentials_wrong'
  /** Too many wrong PINs: PIN login is locked for `retryAfterSeconds`. */
  | 'pin_locked'
  /** Locked by an operator. */
  | 'account_locked'
  /** Too many failed PIN checks from this address: wait `retryAfterSeconds`. */
  | 'too_many_attempts'
  /** A one-time PIN is 6 digits. */
  | 'otp_format'
  /** Wrong one-time PIN; `attemptsLeft` more. */
  | 'otp_wrong'
  /** The challenge's entries are used up: ask for a new code. */
  | 'otp_exhausted'
  /** The code expired: ask for a new code. */
  | 'otp_expired'
  /** Too many wrong codes for this mobile lately, over all its codes: wait `retryAfterSeconds`. */
  | 'otp_too_many'
  /** Too many codes sent (to this mobile or from this address): wait `retryAfterSeconds`. */
  | 'sms_rate_limited'
  /** The whole deployment's SMS budget is spent: no code can be sent now. */
  | 'sms_budget_spent'
  /** The mobile belongs to no country, or to one whose mobiles may not sign in (`CONNECT_SMS_COUNTRIES`). */
  | 'mobile_country'
  /** A new code can be sent in `retryAfterSeconds`. */
  | 'sms_too_soon'
  /** No more codes for this sign-in. */
  | 'sms_no_more_resends'
  /** The SMS gateway did not take the code: try again. */
  | 'sms_unavailable'
  /** A reset code was right, but the new PIN came too late: ask for a new code. */
  | 'reset_expired';

/**
 * The limit that refused a step: the sandbox's pages name what sets it
 * (docs/journey.md, "Limits in the sandbox"). `sms_per_mobile`,
 * `sms_per_address`, `sms_global`, `pin_per_address` and
 * `journey_per_address` are set by configuration; `pin_lock`,
 * `otp_per_mobile`, `reset_sms_per_requester`, `reset_sms_unsolicited`,
 * `reset_sms_per_device` and `reset_otp_per_address` are fixed rules (`core/lifetimes.ts`).
 */
export type LimitName =
  | 'sms_per_mobile'
  | 'sms_per_address'
  | 'sms_global'
  | 'pin_per_address'
  | 'journey_per_address'
  | 'pin_lock'
  | 'otp_per_mobile'
  | 'reset_sms_per_requester'
  | 'reset_sms_unsolicited'
  | 'reset_sms_per_device'
  | 'reset_otp_per_address';

/** A problem to show, tied to a field when it is about one. */
export interface Problem {
  readonly code: ProblemCode;
  readonly field?: FormField;
  readonly retryAfterSeconds?: number;
  readonly attemptsLeft?: number;
  /** The limit behind a wait (`pin_locked`, `too_many_attempts`, `otp_too_many`, `sms_rate_limited`, `sms_budget_spent`). */
  readonly limit?: LimitName;
}

/** What the pages of an open journey show about it. */
export interface JourneyView {
  /** The journey's ID as it travels in the pages' URLs. */
  readonly requestId: string;
  readonly clientName: string;
  readonly redirectUri: string;
  /** The mobile the client named (`user_id`): shown and fixed, whatever is posted. */
  readonly fixedMobile: string | null;
  /** The language the journey's `ui_locales` chose; `null`: the browser's `Accept-Language` decides. */
  readonly uiLocale: UiLocale | null;
  /**
   * The request asked for `acr_values=phr` (docs/journey.md, "`acr_values`
   * and `max_age`"): only a passkey sign-in out of its hold can complete
   * it, so the login and registration pages offer no PIN form, only a
   * passkey and "I can't use a passkey" (`unmet_authentication_requirements`).
   */
  readonly requiresPhr: boolean;
}

/** A scope as the consent page shows it: its token, and the operator's description of it when there is one. */
export interface ScopeToApprove {
  readonly scope: string;
  readonly description?: string;
}

/** What the one-time-PIN page shows. */
export interface OtpView {
  readonly maskedMobile: string;
  /** Seconds until a new code may be sent (0: now). */
  readonly resendInSeconds: number;
  /** When a new code may be sent: epoch seconds (the page says it as a time of day). */
  readonly resendAt: number;
  /** The ISO 3166 alpha-2 country of the mobile the code went to, if it has one: the time zone `resendAt` is said in. */
  readonly mobileCountry: string | undefined;
  readonly resendsLeft: number;
}

/** A page of the journey: `reset`, `reset_otp` and `new_pin` are the "Forgot PIN?" pages. */
export type JourneyPage = 'login' | 'register' | 'otp' | 'consent' | 'reset' | 'reset_otp' | 'new_pin';

/** Why a journey cannot go on: the customer goes back to the app and starts again. */
export type DeadEndReason =
  /** Unknown, expired, or opened in another browser. */
  | 'expired'
  /** It ended already (a code was issued, or it was cancelled). */
  | 'finished'
  /** The client was disabled meanwhile. */
  | 'client_unavailable'
  /** The customer's account cannot sign in (locked meanwhile). */
  | 'account_unavailable';

/** What one step of the journey answers. */
export type StepResult =
  /**
   * `pin_changed`: the login page right after a PIN reset, its mobile
   * prefilled. `passkey`: `first` when the mobile the client named
   * (`user_id`) has a usable passkey (the page offers it before the PIN);
   * `only` when the journey requires `phr` (no PIN form).
   */
  | {
      readonly kind: 'login';
      readonly journey: JourneyView;
      readonly mobile?: string;
      readonly problem?: Problem;
      readonly notice?: 'pin_changed';
      readonly passkey?: 'first';
    }
  | { readonly kind: 'register'; readonly journey: JourneyView; readonly mobile?: string; readonly problem?: Problem }
  | { readonly kind: 'otp'; readonly journey: JourneyView; readonly otp: OtpView; readonly problem?: Problem; readonly notice?: 'code_sent' }
  /** "Forgot PIN?": the mobile whose PIN to reset. */
  | { readonly kind: 'reset'; readonly journey: JourneyView; readonly mobile?: string; readonly problem?: Problem }
  /** The reset code's page: worded so that it never says whether the mobile has an account. */
  | { readonly kind: 'reset_otp'; readonly journey: JourneyView; readonly otp: OtpView; readonly problem?: Problem; readonly notice?: 'code_sent' }
  /** The new PIN, twice, for the customer whose reset code was right. */
  | { readonly kind: 'new_pin'; readonly journey: JourneyView; readonly maskedMobile: string; readonly problem?: Problem }
  /**
   * The consent page: who is signed in, the client's scopes (each with the
   * operator's description, if any; the pages describe the others), and
   * whether "Not you? Use another account" is offered (not when the client
   * named the customer's mobile, `user_id`: there is no other account to use).
   */
  | {
      readonly kind: 'consent';
      readonly journey: JourneyView;
      readonly maskedMobile: string;
      readonly scopes: readonly ScopeToApprove[];
      readonly otherAccount: boolean;
    }
  /**
   * Post/redirect/get to a page of the journey; `endSession` clears the
   * session cookie (`prompt=login`); `knownDevice` is the known-device
   * cookie's new value (a PIN reset completed: `core/journey/known-device.ts`).
   */
  | { readonly kind: 'goto'; readonly page: JourneyPage; readonly requestId: string; readonly endSession?: boolean; readonly knownDevice?: string }
  /**
   * A PIN + SMS sign-in completed in a browser that can make a passkey, for
   * a customer without a usable one (docs/journey.md, "Passkeys"): the
   * offer to add one, instead of the redirect back to the client. It sets
   * the cookies that redirect would have set (`session`, `knownDevice`);
   * "Not now" (and, once a passkey was added, "Continue") is a plain link
   * to `location`, exactly where the redirect would have gone.
   */
  | {
      readonly kind: 'passkey_offer';
      readonly journey: JourneyView;
      readonly location: string;
      readonly session: string;
      readonly knownDevice?: string;
      /** The customer's mobile as the page shows it (masked). */
      readonly maskedMobile: string;
    }
  /**
   * Back to the client (a code or an error). `session` is a new customer
   * session to set as cookie; `endSession` clears the cookie;
   * `knownDevice` is the known-device cookie's new value (a sign-in
   * completed: `core/journey/known-device.ts`).
   */
  | { readonly kind: 'redirect'; readonly location: string; readonly session?: string; readonly endSession?: boolean; readonly knownDevice?: string }
  /**
   * The customer goes back to the app. `uiLocale`: the language of the
   * journey, when this browser's journey was found and its `ui_locales`
   * chose one (never for `expired`, which must look the same whether or not
   * the journey exists).
   */
  | {
      readonly kind: 'dead_end';
      readonly reason: DeadEndReason;
      readonly uiLocale?: UiLocale;
      /** `account_unavailable`: the client the customer came from, whose support to contact. */
      readonly clientName?: string;
    };
