import type { PasskeyErrorCode } from '../../../core/journey/passkeys.js';
import type { PageErrorReason } from '../../../core/authorize/authorization-request.js';
import type { DeadEndReason, ProblemCode } from '../../../core/journey/outcomes.js';

/**
 * Problems whose wording counts something, and what: minutes to wait
 * (`pin_locked`, `too_many_attempts`, `otp_too_many`, `sms_rate_limited`),
 * seconds to wait (`sms_too_soon`), tries left (`otp_wrong`). A wait is
 * said as a duration from now, never as a clock time; only the
 * one-time-PIN page's resend hint names a time of day (`otp.resendFrom`).
 */
export type CountedProblem = 'pin_locked' | 'too_many_attempts' | 'otp_too_many' | 'sms_rate_limited' | 'sms_too_soon' | 'otp_wrong';

/** A title and the sentence under it. */
export interface Notice {
  readonly title: string;
  readonly message: string;
}

/**
 * Everything the hosted pages say, in one language (docs/hosted-login.md,
 * "Languages"). Every language has every entry: a catalogue is typed as a
 * whole `Catalogue`, so one that lacks an entry does not compile.
 *
 * Entries are plain text. `{client}`, `{mobile}` and `{example}` mark where
 * the page puts the client's name, the masked mobile number or an example
 * number (`mobile_invalid` says `{example}` too) (each escaped, and set in bold or kept on one line); a
 * translation keeps the same placeholders, in whatever order its grammar
 * needs. Entries that count are functions of the count.
 */
export interface Catalogue {
  /** Shared by every page: the frame, the fields, the buttons. */
  readonly page: {
    readonly secureSignIn: string;
    readonly safetyReminder: string;
    /** `{client}` asks to link the customer's account. */
    readonly linkRequest: string;
    readonly mobileLabel: string;
    /**
     * `{example}`: an example number as customers of `CONNECT_DEFAULT_COUNTRY`
     * type it (`0917 123 4567`); `{international}`: the same in international format.
     */
    readonly mobileHint: string;
    readonly mobileFixedHint: string;
    readonly pinLabel: string;
    readonly pinHint: string;
    readonly cancel: string;
  };
  readonly login: {
    readonly title: string;
    readonly heading: string;
    readonly submit: string;
    readonly newHere: string;
    readonly toRegister: string;
    /** The way out to the reset pages. */
    readonly forgotPin: string;
    /** The notice on the login page right after a PIN reset. */
    readonly pinChanged: string;
  };
  /**
   * The login (or registration) page of a request with `acr_values=phr`:
   * only a passkey can sign in, so there is no PIN form
   * (docs/hosted-login.md, "When the app asks for a passkey").
   */
  readonly passkeyRequired: {
    readonly title: string;
    readonly heading: string;
    readonly lead: string;
    /** The button back to the app (`unmet_authentication_requirements`). */
    readonly noPasskey: string;
  };
  readonly register: {
    readonly title: string;
    readonly heading: string;
    readonly lead: string;
    readonly pinLabel: string;
    readonly pinHint: string;
    readonly confirmLabel: string;
    readonly confirmHint: string;
    readonly submit: string;
    readonly haveAccount: string;
    readonly toLogin: string;
  };
  readonly otp: {
    readonly title: string;
    readonly heading: string;
    /** `{mobile}`: where the code went. */
    readonly lead: string;
    readonly label: string;
    readonly hint: string;
    readonly submit: string;
    readonly noMoreCodes: string;
    /**
     * `{time}`: the time of day from which a new code can be asked for,
     * with its zone ("12:35 PM Philippines Time"). What the page says
     * without JavaScript: unlike a count of seconds, it stays true while
     * the page stays open (docs/hosted-login.md, "The resend countdown").
     */
    readonly resendFrom: string;
    /** The countdown the page's script shows instead, `{seconds}` the seconds left: for 1, and for any other number. */
    readonly countdown: { readonly one: string; readonly other: string };
    readonly resendNow: string;
    readonly resend: string;
    /** `{mobile}`: where the new code went. */
    readonly codeSent: string;
  };
  /** "Forgot PIN?": the mobile whose PIN to reset. Never says whether a number has an account. */
  readonly reset: {
    readonly title: string;
    readonly heading: string;
    readonly lead: string;
    readonly submit: string;
    readonly backToLogin: string;
  };
  /**
   * The reset code's page: the one-time-PIN page's field and buttons
   * (`otp`), with its own heading and wording, which never say whether
   * the number has an account.
   */
  readonly resetOtp: {
    readonly title: string;
    readonly heading: string;
    /** `{mobile}`: where the code went, if the number has an account. */
    readonly lead: string;
    /** `{mobile}`: where the new code went, if the number has an account. */
    readonly codeSent: string;
  };
  /** The new PIN, twice, once the reset code was right. */
  readonly newPin: {
    readonly title: string;
    readonly heading: string;
    /** `{mobile}`: whose PIN is changed. */
    readonly lead: string;
    readonly pinLabel: string;
    readonly pinHint: string;
    readonly confirmLabel: string;
    readonly confirmHint: string;
    readonly submit: string;
  };
  readonly consent: {
    /** `{client}` */
    readonly title: string;
    /** `{client}` */
    readonly heading: string;
    /** `{mobile}`: the signed-in customer. */
    readonly signedInAs: string;
    readonly allow: string;
    /** `{client}`: above the list of what approving grants. */
    readonly grants: string;
    /** What every client learns: the first line of the list. */
    readonly identity: string;
    /**
     * How a scope without the operator's description is said
     * (`http/views/scope-wording.ts`): the scopes of OpenID Connect and
     * OAuth by name; `{resource}:read`-like scopes as seeing, and
     * `{resource}:write`-like ones as changing, that resource; any other
     * by its name, `{scope}`.
     */
    readonly scopes: {
      readonly known: { readonly openid: string; readonly profile: string; readonly phone: string; readonly email: string; readonly offline_access: string };
      /** `{resource}`: the scope's resource in words (`payments`, `payment history`). */
      readonly read: string;
      /** `{resource}` */
      readonly write: string;
      /** `{scope}`: the scope's own name. */
      readonly other: string;
    };
    /** Before the button that ends the session and goes to the login page. */
    readonly notYou: string;
    readonly otherAccount: string;
  };
  /** The error pages' line under every message. */
  readonly errorPage: {
    readonly closeHint: string;
    /** Before a request error's technical details (which stay in English, like error codes). */
    readonly details: string;
  };
  /** What a step of the journey refused, by problem code (`core/journey/outcomes.ts`). */
  readonly problems: { readonly [K in ProblemCode]: K extends CountedProblem ? (count: number) => string : string } & {
    /** `pin_format` on the registration and new-PIN pages, where the customer chooses a PIN. */
    readonly pin_format_new: string;
  };
  /** A journey that cannot go on (`core/journey/outcomes.ts`). */
  readonly deadEnds: { readonly [R in DeadEndReason]: Notice };
  /** `/authorize` of a client or redirect URI that cannot be trusted; `{client}` where it is known. */
  readonly linkErrors: { readonly title: string } & { readonly [R in PageErrorReason]: string };
  /** Error pages of failed requests. */
  readonly failures: {
    /** A form without a valid CSRF token. */
    readonly formExpired: Notice;
    /** The database or Redis failed, or the request took too long (503). */
    readonly unavailable: Notice;
    /** Anything else that failed on the server (500). */
    readonly serverError: Notice;
    /** A request the server refused (4xx), with technical details below. */
    readonly badRequest: Notice;
    /** Too many sign-ins started from one address (429): try again in this many minutes. */
    readonly tooManyStarts: { readonly title: string; readonly message: (minutes: number) => string };
  };
  /**
   * Passkeys on the login page, and what the pages' script says when the
   * browser's own passkey prompt did not give one (docs/hosted-login.md,
   * "Passkeys"). The requests' own refusals are worded by the server.
   */
  readonly passkey: {
    readonly signIn: string;
    /** Between the PIN form and the passkey button, when both are offered. */
    readonly or: string;
    /** Above the button when the customer's mobile has a passkey: no SMS is sent. */
    readonly firstLead: string;
    /** What folds the PIN form away under the passkey, when the customer's mobile has one. */
    readonly usePin: string;
    /** When a passkey is required and this browser cannot use one. */
    readonly unsupported: string;
    /** The browser's prompt was cancelled, timed out, or found no passkey it could use. */
    readonly cancelled: string;
    /** Creating a passkey: this device has one for this account already. */
    readonly exists: string;
    /** Anything else that failed (the network, the browser). */
    readonly failed: string;
  };
  /** The offer to add a passkey after a PIN + SMS sign-in (docs/hosted-login.md, "Passkeys"). */
  readonly passkeyOffer: {
    readonly title: string;
    readonly heading: string;
    /** `{mobile}`: the masked mobile signed in. */
    readonly lead: string;
    /** What a passkey brings, one line each. */
    readonly benefits: readonly string[];
    readonly create: string;
    readonly notNow: string;
  };
  /** The JSON errors of the passkey requests, by code (`core/journey/passkeys.ts`). */
  readonly passkeyErrors: { readonly [C in PasskeyErrorCode]: string };
}
