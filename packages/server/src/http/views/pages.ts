import { fill, html, type SafeHtml } from './html.js';
import { alertIcon, checkIcon, keyIcon, linkIcon, lockIcon } from './icons.js';
import { layout } from './layout.js';
import type { MobileExample } from '../../core/customers/mobile.js';
import type { ScopeToApprove } from '../../core/journey/outcomes.js';
import type { Language } from './messages/index.js';
import { PASSKEY_SCRIPT_PATH, RESEND_COUNTDOWN_PATH, WEBAUTHN_BROWSER_PATH } from './scripts.js';
import { timeOfDay } from './time-of-day.js';
import { describeScope } from './scope-wording.js';

/** A message tied (or not) to a form field. */
export interface PageError {
  readonly field?: string | undefined;
  readonly message: string;
  /** In the sandbox, what sets the limit that refused (views/limit-notes.ts): English, below the message. */
  readonly note?: string | undefined;
}

/** The sandbox's note under a message, if any. */
function sandboxNote(note: SafeHtml | string | undefined): SafeHtml {
  return note ? html`<p class="hint sandbox-note" lang="en">${note}</p>` : html``;
}

/** What every page knows: the language it is in. */
interface Page {
  readonly language: Language;
}

interface FormPage extends Page {
  readonly clientName: string;
  readonly action: string;
  readonly csrfToken: string;
  readonly error?: PageError | undefined;
}

/** How a field renders: its error, if any, and whether it gets the page's focus. */
interface FieldState {
  readonly error: PageError | undefined;
  /** The one field that gets `autofocus`: the field in error, else the first one to fill. */
  readonly focus: string | undefined;
}

/** The field that gets the focus: the one in error, else `first`. */
function focusOf(error: PageError | undefined, first: string | undefined): string | undefined {
  return error?.field ?? first;
}

/**
 * The top of a form page: the consumer and Connect, linked by a locked wire
 * (decoration only), the step's heading and who is asking.
 */
function requestHeader(clientName: string, heading: SafeHtml | string, lead: SafeHtml): SafeHtml {
  const initial = Array.from(clientName.trim())[0]?.toUpperCase() ?? '?';
  return html`<div class="request">
<div class="parties" aria-hidden="true">
<span class="party party-client">${initial}</span>
<span class="wire"><span class="wire-lock">${lockIcon()}</span></span>
<span class="party party-connect">${linkIcon()}</span>
</div>
<h1>${heading}</h1>
${lead}
</div>`;
}

function consent(language: Language, clientName: string, more?: string): SafeHtml {
  return html`<p class="consent">${fill(language.text.page.linkRequest, { client: html`<strong>${clientName}</strong>` })}</p>
${more ? html`<p class="lead">${more}</p>` : html``}`;
}

/** A message about the whole form (not one field). */
function errorSummary(error: PageError | undefined): SafeHtml {
  if (!error || error.field) return html``;
  return html`<div class="alert" role="alert" id="form-error">${alertIcon()}<p>${error.message}</p></div>${sandboxNote(error.note)}`;
}

function fieldError(error: PageError | undefined, field: string): SafeHtml {
  return error?.field === field ? html`<p class="field-error" id="${field}-error" role="alert">${alertIcon()}<span>${error.message}</span></p>${sandboxNote(error.note)}` : html``;
}

/** `aria-invalid`, `aria-describedby` (hint, then error) and `autofocus` of an input. */
function fieldAttributes(state: FieldState, field: string, hint?: string): SafeHtml {
  const inError = state.error?.field === field;
  const ids = [hint, inError ? `${field}-error` : undefined].filter(Boolean).join(' ');
  return html`${inError ? html` aria-invalid="true"` : html``}${ids ? html` aria-describedby="${ids}"` : html``}${state.focus === field ? html` autofocus` : html``}`;
}

function fieldClass(state: FieldState, field: string): string {
  return state.error?.field === field ? 'field has-error' : 'field';
}

/** A page with the mobile field: its value, whether it is fixed, and the example number its hint shows. */
interface MobilePage extends Page {
  readonly mobile?: string | undefined;
  readonly mobileReadonly: boolean;
  readonly mobileExample: MobileExample;
}

function mobileField(page: MobilePage, state: FieldState): SafeHtml {
  const text = page.language.text.page;
  if (page.mobileReadonly) {
    return html`<div class="${fieldClass(state, 'mobile')}">
<label for="mobile">${text.mobileLabel}</label>
<p class="hint" id="mobile-hint">${text.mobileFixedHint}</p>
<div class="control locked">
<input id="mobile" name="mobile" type="tel" inputmode="tel" autocomplete="tel" required maxlength="20" value="${page.mobile ?? ''}" readonly aria-readonly="true"${fieldAttributes(state, 'mobile', 'mobile-hint')}>
${lockIcon('icon-field')}
</div>
${fieldError(state.error, 'mobile')}
</div>`;
  }
  return html`<div class="${fieldClass(state, 'mobile')}">
<label for="mobile">${text.mobileLabel}</label>
<p class="hint" id="mobile-hint">${fill(text.mobileHint, {
    example: html`<span class="nowrap">${page.mobileExample.national}</span>`,
    international: html`<span class="nowrap">${page.mobileExample.international}</span>`,
  })}</p>
<div class="control">
<input id="mobile" name="mobile" type="tel" inputmode="tel" autocomplete="tel" required maxlength="20" value="${page.mobile ?? ''}"${fieldAttributes(state, 'mobile', 'mobile-hint')}>
</div>
${fieldError(state.error, 'mobile')}
</div>`;
}

function pinField(name: string, label: string, hint: string, autocomplete: string, state: FieldState): SafeHtml {
  return html`<div class="${fieldClass(state, name)}">
<label for="${name}">${label}</label>
<p class="hint" id="${name}-hint">${hint}</p>
<div class="control">
<input id="${name}" name="${name}" type="password" class="pin" inputmode="numeric" pattern="[0-9]{4,6}" minlength="4" maxlength="6" autocomplete="${autocomplete}" required${fieldAttributes(state, name, `${name}-hint`)}>
</div>
${fieldError(state.error, name)}
</div>`;
}

function hiddenCsrf(token: string): SafeHtml {
  return html`<input type="hidden" name="csrf_token" value="${token}">`;
}

function cancelButton(language: Language): SafeHtml {
  return html`<button type="submit" name="action" value="cancel" class="button secondary" formnovalidate>${language.text.page.cancel}</button>`;
}

/** A notice that something went as asked (a green box, announced politely). */
function notice(message: SafeHtml | string): SafeHtml {
  return html`<div class="notice" role="status">${checkIcon()}<p>${message}</p></div>`;
}

/**
 * The hidden field the pages' script sets to `1` when this browser can make
 * a passkey (views/scripts.ts); empty, a sign-in ends as it always did.
 */
function passkeyCapableField(): SafeHtml {
  return html`<input type="hidden" name="passkey_capable" value="">`;
}

/** The passkey pages' scripts: @simplewebauthn/browser's bundle, then Connect's own (views/scripts.ts); in order, after the page is read. */
function passkeyScripts(): SafeHtml {
  return html`<script src="${WEBAUTHN_BROWSER_PATH}" defer></script>
<script src="${PASSKEY_SCRIPT_PATH}" defer></script>`;
}

/** Where the passkey box of a page sends its requests (docs/journey.md, "Passkeys"). */
export interface PasskeyActions {
  /** `POST /login/passkey/options?request=ID` */
  readonly optionsAction: string;
  /** `POST /login/passkey?request=ID` (signing in) or `POST /login/passkey/enrol?request=ID` (adding one). */
  readonly action: string;
}

/**
 * The box the pages' script runs a passkey ceremony from: hidden until the
 * script finds WebAuthn; the error area it fills with what went wrong; the
 * wordings for a prompt that gave no passkey; the CSRF token of its requests.
 */
function passkeyBox(
  language: Language,
  purpose: 'sign_in' | 'enrol',
  page: { csrfToken: string; actions: PasskeyActions },
  inner: { className: string; before?: SafeHtml; button: SafeHtml | string; primary: boolean },
): SafeHtml {
  const text = language.text.passkey;
  return html`<div class="passkey ${inner.className}" data-passkey="${purpose}" data-options="${page.actions.optionsAction}" data-action="${page.actions.action}" data-cancelled="${text.cancelled}" data-exists="${text.exists}" data-failed="${text.failed}" hidden>
${hiddenCsrf(page.csrfToken)}
${inner.before ?? html``}
<div class="alert" role="alert" id="passkey-error" hidden>${alertIcon()}<p data-passkey-message></p></div>
<button type="button" class="button ${inner.primary ? 'primary' : 'secondary'} passkey-button" data-passkey-start>${keyIcon()}<span>${inner.button}</span></button>
</div>`;
}

/**
 * How the login page offers a passkey (docs/hosted-login.md, "Passkeys"):
 * `offered`, below the PIN form; `first`, when the mobile the client named
 * has a passkey: above, with the PIN form folded under "Use my PIN and an
 * SMS code instead". (A journey that requires a passkey has a page of its
 * own: {@link passkeyRequiredPage}.)
 */
export type PasskeyMode = 'offered' | 'first';

/** A form with only the Cancel button (its CSRF token, as every form). */
function cancelForm(page: FormPage, language: Language): SafeHtml {
  return html`<form method="post" action="${page.action}" class="cancel-form" novalidate>
${hiddenCsrf(page.csrfToken)}
<div class="actions">
${cancelButton(language)}
</div>
</form>`;
}

/**
 * The login page: mobile + PIN, and "Forgot PIN?" (a link: it works
 * without JavaScript and keeps the journey). `pinChanged`: right after a
 * PIN reset, with the mobile prefilled and the focus on the PIN.
 * `passkey`: "Sign in with a passkey", shown by the pages' script when the
 * browser has WebAuthn, where {@link PasskeyMode} puts it.
 */
export function loginPage(
  page: FormPage &
    MobilePage & {
      registerHref?: string | undefined;
      forgotHref: string;
      pinChanged?: boolean | undefined;
      passkey?: (PasskeyActions & { mode: PasskeyMode }) | undefined;
    },
): string {
  const { language } = page;
  const text = language.text;
  const mode = page.passkey?.mode;
  // Passkey first: no field takes the focus from the passkey button (unless one is in error).
  const first = mode === 'first' ? undefined : page.mobileReadonly || page.pinChanged ? 'pin' : 'mobile';
  const state: FieldState = { error: page.error, focus: focusOf(page.error, first) };
  const pinForm = (withCancel: boolean) => html`<form method="post" action="${page.action}" novalidate>
${hiddenCsrf(page.csrfToken)}
${passkeyCapableField()}
${mobileField(page, state)}
${pinField('pin', text.page.pinLabel, text.page.pinHint, 'current-password', state)}
<p class="forgot"><a href="${page.forgotHref}">${text.login.forgotPin}</a></p>
<div class="actions">
<button type="submit" name="action" value="login" class="button primary">${text.login.submit}</button>
${withCancel ? cancelButton(language) : html``}
</div>
</form>`;
  const box = (className: string, primary: boolean, before?: SafeHtml) =>
    page.passkey
      ? passkeyBox(language, 'sign_in', { csrfToken: page.csrfToken, actions: page.passkey }, { className, before, button: text.passkey.signIn, primary })
      : html``;
  let main: SafeHtml;
  switch (mode) {
    case 'first':
      main = html`${box('passkey-first', true, html`<p class="passkey-lead">${text.passkey.firstLead}</p>`)}
<details class="pin-fallback" data-pin-fallback open${page.error ? html` data-keep-open` : html``}>
<summary>${text.passkey.usePin}</summary>
${pinForm(false)}
</details>
${cancelForm(page, language)}`;
      break;
    case 'offered':
      main = html`${pinForm(true)}
${box('passkey-offered', false, html`<p class="divider" aria-hidden="true">${text.passkey.or}</p>`)}`;
      break;
    default:
      main = pinForm(true);
  }
  const body = html`${requestHeader(page.clientName, text.login.heading, consent(language, page.clientName))}
${page.pinChanged ? notice(text.login.pinChanged) : html``}
${errorSummary(page.error)}
${main}
${page.registerHref ? html`<p class="switch">${text.login.newHere} <a href="${page.registerHref}">${text.login.toRegister}</a></p>` : html``}
${page.passkey ? passkeyScripts() : html``}`;
  return layout({ language, title: text.login.title, body, clientName: page.clientName });
}

/**
 * The login (or registration) page of a journey that requires `phr`
 * (`acr_values=phr`, docs/hosted-login.md, "When the app asks for a
 * passkey"): no PIN form, since a PIN + SMS sign-in cannot complete it; it
 * says the app asks for a passkey and, on the login page (`passkey`),
 * offers "Sign in with a passkey" (shown by the pages' script when the
 * browser has WebAuthn; otherwise a note says this browser cannot use
 * passkeys); then "I can't use a passkey" (`action=no_passkey`: back to
 * the app) and cancel.
 */
export function passkeyRequiredPage(page: FormPage & { passkey?: PasskeyActions | undefined }): string {
  const { language } = page;
  const text = language.text;
  const lead = consent(language, page.clientName, text.passkeyRequired.lead);
  const box = page.passkey
    ? html`${passkeyBox(language, 'sign_in', { csrfToken: page.csrfToken, actions: page.passkey }, { className: 'passkey-only', button: text.passkey.signIn, primary: true })}
<div class="alert" data-passkey-unsupported>${alertIcon()}<p>${text.passkey.unsupported}</p></div>`
    : html``;
  const body = html`${requestHeader(page.clientName, text.passkeyRequired.heading, lead)}
${errorSummary(page.error)}
${box}
<form method="post" action="${page.action}" novalidate>
${hiddenCsrf(page.csrfToken)}
<div class="actions">
<button type="submit" name="action" value="no_passkey" class="button secondary" formnovalidate>${text.passkeyRequired.noPasskey}</button>
${cancelButton(language)}
</div>
</form>
${page.passkey ? passkeyScripts() : html``}`;
  return layout({ language, title: text.passkeyRequired.title, body, clientName: page.clientName });
}

/**
 * The offer to add a passkey after a PIN + SMS sign-in (docs/hosted-login.md,
 * "Passkeys"): "Create a passkey" (the pages' script runs the ceremony
 * through `/login/passkey/options` and `/login/passkey/enrol`, then follows
 * "Not now"), and "Not now", a plain link to where the sign-in goes next.
 */
export function passkeyOfferPage(
  page: Page & { clientName: string; csrfToken: string; maskedMobile: string; continueHref: string; optionsAction: string; enrolAction: string },
): string {
  const { language, clientName } = page;
  const text = language.text.passkeyOffer;
  const lead = html`<p class="lead">${fill(text.lead, { mobile: html`<strong class="nowrap">${page.maskedMobile}</strong>` })}</p>`;
  const actions = { optionsAction: page.optionsAction, action: page.enrolAction };
  const body = html`${requestHeader(clientName, text.heading, lead)}
<div class="grants benefits">
<ul class="grant-list">
${text.benefits.map((benefit) => html`<li>${checkIcon()}<span>${benefit}</span></li>`)}
</ul>
</div>
<div class="actions">
${passkeyBox(language, 'enrol', { csrfToken: page.csrfToken, actions }, { className: 'passkey-enrol', button: text.create, primary: true })}
<a class="button secondary" href="${page.continueHref}" data-passkey-continue>${text.notNow}</a>
</div>
${passkeyScripts()}`;
  return layout({ language, title: text.title, body, clientName });
}

/** The registration page: mobile + PIN twice. */
export function registerPage(page: FormPage & MobilePage & { loginHref?: string | undefined }): string {
  const { language } = page;
  const text = language.text;
  const state: FieldState = { error: page.error, focus: focusOf(page.error, page.mobileReadonly ? 'pin' : 'mobile') };
  const lead = consent(language, page.clientName, text.register.lead);
  const body = html`${requestHeader(page.clientName, text.register.heading, lead)}
${errorSummary(page.error)}
<form method="post" action="${page.action}" novalidate>
${hiddenCsrf(page.csrfToken)}
${mobileField(page, state)}
${pinField('pin', text.register.pinLabel, text.register.pinHint, 'new-password', state)}
${pinField('pin_confirmation', text.register.confirmLabel, text.register.confirmHint, 'new-password', state)}
<div class="actions">
<button type="submit" name="action" value="register" class="button primary">${text.register.submit}</button>
${cancelButton(language)}
</div>
</form>
${page.loginHref ? html`<p class="switch">${text.register.haveAccount} <a href="${page.loginHref}">${text.register.toLogin}</a></p>` : html``}`;
  return layout({ language, title: text.register.title, body, clientName: page.clientName });
}

/**
 * The one-time-PIN page; `reset`: the reset code's, whose wording never
 * says whether the number has an account ("if it has one, we sent…").
 */
export function otpPage(
  page: FormPage & {
    maskedMobile: string;
    resendInSeconds: number;
    resendAt: number;
    mobileCountry: string | undefined;
    resendsLeft: number;
    codeSent?: boolean | undefined;
    reset?: boolean | undefined;
  },
): string {
  const { language } = page;
  const text = language.text;
  const wording = page.reset ? text.resetOtp : text.otp;
  const state: FieldState = { error: page.error, focus: 'otp' };
  const waiting = page.resendsLeft > 0 && page.resendInSeconds > 0;
  const resendHint =
    page.resendsLeft === 0
      ? html`<p class="hint" id="resend-hint">${text.otp.noMoreCodes}</p>`
      : waiting
        ? resendCountdown(page.language, page.resendInSeconds, timeOfDay(page.resendAt, page.mobileCountry, language.locale))
        : html`<p class="hint" id="resend-hint">${text.otp.resendNow}</p>`;
  const mobile = html`<strong class="nowrap">${page.maskedMobile}</strong>`;
  const lead = html`<p class="lead">${fill(wording.lead, { mobile })}</p>`;
  const body = html`${requestHeader(page.clientName, wording.heading, lead)}
${page.codeSent ? notice(fill(wording.codeSent, { mobile: page.maskedMobile })) : html``}
${errorSummary(page.error)}
<form method="post" action="${page.action}" novalidate>
${hiddenCsrf(page.csrfToken)}
${page.reset ? html`` : passkeyCapableField()}
<div class="${fieldClass(state, 'otp')}">
<label for="otp">${text.otp.label}</label>
<p class="hint" id="otp-hint">${text.otp.hint}</p>
<div class="control">
<input id="otp" name="otp" type="text" class="otp" inputmode="numeric" pattern="[0-9]{6}" minlength="6" maxlength="6" autocomplete="one-time-code" required${fieldAttributes(state, 'otp', 'otp-hint')}>
</div>
${fieldError(page.error, 'otp')}
</div>
<div class="actions">
<button type="submit" name="action" value="verify" class="button primary">${text.otp.submit}</button>
<div class="resend">
${resendHint}
<button type="submit" name="action" value="resend" id="resend" class="button link" formnovalidate aria-describedby="resend-hint"${page.resendsLeft === 0 ? html` disabled` : html``}>${text.otp.resend}</button>
</div>
${cancelButton(language)}
</div>
</form>
${waiting ? html`<script src="${RESEND_COUNTDOWN_PATH}" defer></script>` : html``}
${page.reset ? html`` : passkeyScripts()}`;
  return layout({ language, title: wording.title, body, clientName: page.clientName });
}

/**
 * The resend hint while a new code must wait (docs/hosted-login.md, "The
 * resend countdown"): the time of day it can be asked for, which stays
 * true without JavaScript; and, for the page's script, the seconds left
 * and the wordings it counts down with.
 */
function resendCountdown(language: Language, seconds: number, time: string): SafeHtml {
  const { otp } = language.text;
  return html`<p class="hint" id="resend-hint" data-resend-in="${seconds}" data-one="${otp.countdown.one}" data-other="${otp.countdown.other}" data-ready="${otp.resendNow}">${fill(otp.resendFrom, { time: html`<span class="nowrap">${time}</span>` })}</p>`;
}

/** "Forgot PIN?": the mobile whose PIN to reset (fixed, as on the login page, when the client named it). */
export function resetPage(page: FormPage & MobilePage & { loginHref: string }): string {
  const { language } = page;
  const text = language.text;
  const state: FieldState = { error: page.error, focus: focusOf(page.error, page.mobileReadonly ? undefined : 'mobile') };
  const lead = consent(language, page.clientName, text.reset.lead);
  const body = html`${requestHeader(page.clientName, text.reset.heading, lead)}
${errorSummary(page.error)}
<form method="post" action="${page.action}" novalidate>
${hiddenCsrf(page.csrfToken)}
${mobileField(page, state)}
<div class="actions">
<button type="submit" name="action" value="send" class="button primary">${text.reset.submit}</button>
${cancelButton(language)}
</div>
</form>
<p class="switch"><a href="${page.loginHref}">${text.reset.backToLogin}</a></p>`;
  return layout({ language, title: text.reset.title, body, clientName: page.clientName });
}

/** The new PIN, twice, for the customer whose reset code was right. */
export function newPinPage(page: FormPage & { maskedMobile: string }): string {
  const { language } = page;
  const text = language.text;
  const state: FieldState = { error: page.error, focus: focusOf(page.error, 'pin') };
  const lead = html`<p class="lead">${fill(text.newPin.lead, { mobile: html`<strong class="nowrap">${page.maskedMobile}</strong>` })}</p>`;
  const body = html`${requestHeader(page.clientName, text.newPin.heading, lead)}
${errorSummary(page.error)}
<form method="post" action="${page.action}" novalidate>
${hiddenCsrf(page.csrfToken)}
${pinField('pin', text.newPin.pinLabel, text.newPin.pinHint, 'new-password', state)}
${pinField('pin_confirmation', text.newPin.confirmLabel, text.newPin.confirmHint, 'new-password', state)}
<div class="actions">
<button type="submit" name="action" value="change" class="button primary">${text.newPin.submit}</button>
${cancelButton(language)}
</div>
</form>`;
  return layout({ language, title: text.newPin.title, body, clientName: page.clientName });
}

/**
 * The consent page: a signed-in customer approves (or not) a client they
 * have not used Connect with, seeing what approving grants: who they are
 * (always), then each of the client's scopes, in the operator's words or
 * the page's default ones (docs/hosted-login.md, "Consent"). `otherAccount`:
 * "Not you? Use another account", a submit button of the same form, so it
 * works without JavaScript and carries the CSRF token.
 */
export function consentPage(
  page: Page & { clientName: string; action: string; csrfToken: string; maskedMobile: string; scopes: readonly ScopeToApprove[]; otherAccount: boolean },
): string {
  const { language, clientName } = page;
  const text = language.text;
  const lead = html`${consent(language, clientName)}
<p class="lead">${fill(text.consent.signedInAs, { mobile: html`<strong class="nowrap">${page.maskedMobile}</strong>` })}</p>`;
  const scopeItems = page.scopes.map(
    ({ scope, description }) =>
      html`<li>${checkIcon()}<span>${description ?? describeScope(text, scope)}<span class="scope-name" lang="en">${scope}</span></span></li>`,
  );
  const body = html`${requestHeader(clientName, fill(text.consent.heading, { client: clientName }), lead)}
<section class="grants" aria-labelledby="grants-heading">
<h2 id="grants-heading">${fill(text.consent.grants, { client: clientName })}</h2>
<ul class="grant-list">
<li>${checkIcon()}<span>${text.consent.identity}</span></li>
${scopeItems}
</ul>
</section>
<form method="post" action="${page.action}">
${hiddenCsrf(page.csrfToken)}
<div class="actions">
<button type="submit" name="action" value="approve" class="button primary">${text.consent.allow}</button>
<button type="submit" name="action" value="cancel" class="button secondary">${text.page.cancel}</button>
</div>
${page.otherAccount ? html`<p class="switch">${text.consent.notYou} <button type="submit" name="action" value="switch_account" class="button link">${text.consent.otherAccount}</button></p>` : html``}
</form>`;
  return layout({ language, title: fill(text.consent.title, { client: clientName }), body, clientName });
}

/**
 * The sandbox's note on a redirect URI that is not the registered one:
 * both, as text (never a link), the received one without its query.
 */
export function redirectMismatchNote(registered: string, receivedMasked: string): SafeHtml {
  return html`Sandbox: the redirect URI registered for this client is <code>${registered}</code>; this request named <code>${receivedMasked}</code>. They must be equal, character for character (connect-auth clients update ID --redirect-uri URI changes the registered one).`;
}

/**
 * An error page: nowhere to go but back to the app. `details`: a request
 * error's technical description, shown below the message as it is (in
 * English, like an error code). `note`: the sandbox's word to the
 * developer, in English (what sets a limit, which redirect URIs differ).
 */
export function errorPage(page: Page & { title: string; message: SafeHtml | string; details?: string | undefined; note?: SafeHtml | string | undefined }): string {
  const text = page.language.text;
  const body = html`<div class="status">
<span class="status-icon">${alertIcon()}</span>
<h1>${page.title}</h1>
<div class="message" role="alert">${page.message}</div>
${page.details ? html`<p class="hint">${text.errorPage.details} <code lang="en">${page.details}</code></p>` : html``}
${sandboxNote(page.note)}
<p class="lead">${text.errorPage.closeHint}</p>
</div>`;
  return layout({ language: page.language, title: page.title, body });
}
