import { html, type SafeHtml } from './html.js';
import { alertIcon, checkIcon, linkIcon, lockIcon } from './icons.js';
import { layout } from './layout.js';

/** A message tied (or not) to a form field. */
export interface PageError {
  readonly field?: string | undefined;
  readonly message: string;
}

interface FormPage {
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
function requestHeader(clientName: string, heading: string, lead: SafeHtml): SafeHtml {
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

function consent(clientName: string, more?: string): SafeHtml {
  return html`<p class="consent"><strong>${clientName}</strong> wants to link your account.</p>
${more ? html`<p class="lead">${more}</p>` : html``}`;
}

/** A message about the whole form (not one field). */
function errorSummary(error: PageError | undefined): SafeHtml {
  if (!error || error.field) return html``;
  return html`<div class="alert" role="alert" id="form-error">${alertIcon()}<p>${error.message}</p></div>`;
}

function fieldError(error: PageError | undefined, field: string): SafeHtml {
  return error?.field === field ? html`<p class="field-error" id="${field}-error" role="alert">${alertIcon()}<span>${error.message}</span></p>` : html``;
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

function mobileField(page: { mobile?: string | undefined; mobileReadonly: boolean }, state: FieldState): SafeHtml {
  if (page.mobileReadonly) {
    return html`<div class="${fieldClass(state, 'mobile')}">
<label for="mobile">Mobile number</label>
<p class="hint" id="mobile-hint">This is the number linked to your request; it cannot be changed here.</p>
<div class="control locked">
<input id="mobile" name="mobile" type="tel" inputmode="tel" autocomplete="tel" required maxlength="20" value="${page.mobile ?? ''}" readonly aria-readonly="true"${fieldAttributes(state, 'mobile', 'mobile-hint')}>
${lockIcon('icon-field')}
</div>
${fieldError(state.error, 'mobile')}
</div>`;
  }
  return html`<div class="${fieldClass(state, 'mobile')}">
<label for="mobile">Mobile number</label>
<p class="hint" id="mobile-hint">With country code, for example <span class="nowrap">+63 917 123 4567</span></p>
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

function cancelButton(): SafeHtml {
  return html`<button type="submit" name="action" value="cancel" class="button secondary" formnovalidate>Cancel</button>`;
}

/** The login page: mobile + PIN. */
export function loginPage(page: FormPage & { mobile?: string | undefined; mobileReadonly: boolean; registerHref?: string | undefined }): string {
  const state: FieldState = { error: page.error, focus: focusOf(page.error, page.mobileReadonly ? 'pin' : 'mobile') };
  const body = html`${requestHeader(page.clientName, 'Log in to continue', consent(page.clientName))}
${errorSummary(page.error)}
<form method="post" action="${page.action}" novalidate>
${hiddenCsrf(page.csrfToken)}
${mobileField(page, state)}
${pinField('pin', 'PIN', '4 to 6 digits', 'current-password', state)}
<div class="actions">
<button type="submit" name="action" value="login" class="button primary">Continue</button>
${cancelButton()}
</div>
</form>
${page.registerHref ? html`<p class="switch">New to Connect? <a href="${page.registerHref}">Create an account</a></p>` : html``}`;
  return layout({ title: 'Log in', body, clientName: page.clientName });
}

/** The registration page: mobile + PIN twice. */
export function registerPage(page: FormPage & { mobile?: string | undefined; mobileReadonly: boolean; loginHref?: string | undefined }): string {
  const state: FieldState = { error: page.error, focus: focusOf(page.error, page.mobileReadonly ? 'pin' : 'mobile') };
  const lead = consent(page.clientName, 'Choose a PIN to create your Connect account. We will text you a code to confirm your number.');
  const body = html`${requestHeader(page.clientName, 'Create your account', lead)}
${errorSummary(page.error)}
<form method="post" action="${page.action}" novalidate>
${hiddenCsrf(page.csrfToken)}
${mobileField(page, state)}
${pinField('pin', 'Choose a PIN', '4 to 6 digits. Avoid easy ones like 1234 or your birthday.', 'new-password', state)}
${pinField('pin_confirmation', 'Enter the PIN again', 'The same 4 to 6 digits, to be sure.', 'new-password', state)}
<div class="actions">
<button type="submit" name="action" value="register" class="button primary">Create account</button>
${cancelButton()}
</div>
</form>
${page.loginHref ? html`<p class="switch">Already have an account? <a href="${page.loginHref}">Log in</a></p>` : html``}`;
  return layout({ title: 'Create account', body, clientName: page.clientName });
}

/** The one-time-PIN page. */
export function otpPage(
  page: FormPage & { maskedMobile: string; resendInSeconds: number; resendsLeft: number; notice?: string | undefined },
): string {
  const state: FieldState = { error: page.error, focus: 'otp' };
  const resendHint =
    page.resendsLeft === 0
      ? html`<p class="hint" id="resend-hint">No more new codes can be sent for this sign-in.</p>`
      : page.resendInSeconds > 0
        ? html`<p class="hint" id="resend-hint">Didn't get it? You can ask for a new code in ${page.resendInSeconds} ${page.resendInSeconds === 1 ? 'second' : 'seconds'}.</p>`
        : html`<p class="hint" id="resend-hint">Didn't get it? Ask for a new code.</p>`;
  const lead = html`<p class="lead">We sent a 6-digit code by SMS to <strong class="nowrap">${page.maskedMobile}</strong>.</p>`;
  const body = html`${requestHeader(page.clientName, 'Enter the code we texted you', lead)}
${page.notice ? html`<div class="notice" role="status">${checkIcon()}<p>${page.notice}</p></div>` : html``}
${errorSummary(page.error)}
<form method="post" action="${page.action}" novalidate>
${hiddenCsrf(page.csrfToken)}
<div class="${fieldClass(state, 'otp')}">
<label for="otp">One-time code</label>
<p class="hint" id="otp-hint">6 digits, valid for 5 minutes</p>
<div class="control">
<input id="otp" name="otp" type="text" class="otp" inputmode="numeric" pattern="[0-9]{6}" minlength="6" maxlength="6" autocomplete="one-time-code" required${fieldAttributes(state, 'otp', 'otp-hint')}>
</div>
${fieldError(page.error, 'otp')}
</div>
<div class="actions">
<button type="submit" name="action" value="verify" class="button primary">Verify</button>
<div class="resend">
${resendHint}
<button type="submit" name="action" value="resend" class="button link" formnovalidate aria-describedby="resend-hint"${page.resendsLeft === 0 ? html` disabled` : html``}>Send a new code</button>
</div>
${cancelButton()}
</div>
</form>`;
  return layout({ title: 'Enter code', body, clientName: page.clientName });
}

/** The consent page: a signed-in customer approves (or not) a client they have not used Connect with. */
export function consentPage(page: { clientName: string; action: string; csrfToken: string; maskedMobile: string }): string {
  const lead = html`${consent(page.clientName)}
<p class="lead">You are signed in as <strong class="nowrap">${page.maskedMobile}</strong>. Your answer is for this app only.</p>`;
  const body = html`${requestHeader(page.clientName, `Allow ${page.clientName}?`, lead)}
<form method="post" action="${page.action}">
${hiddenCsrf(page.csrfToken)}
<div class="actions">
<button type="submit" name="action" value="approve" class="button primary">Allow</button>
<button type="submit" name="action" value="cancel" class="button secondary">Cancel</button>
</div>
</form>`;
  return layout({ title: `Allow ${page.clientName}`, body, clientName: page.clientName });
}

/** An error page: nowhere to go but back to the app. */
export function errorPage(title: string, message: string): string {
  const body = html`<div class="status">
<span class="status-icon">${alertIcon()}</span>
<h1>${title}</h1>
<div class="message" role="alert">${message}</div>
<p class="lead">You can close this page and go back to the app you came from.</p>
</div>`;
  return layout({ title, body });
}
