import { html, type SafeHtml } from './html.js';
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

function errorSummary(error: PageError | undefined): SafeHtml {
  if (!error || error.field) return html``;
  return html`<div class="alert" role="alert" id="form-error">${error.message}</div>`;
}

function fieldError(error: PageError | undefined, field: string): SafeHtml {
  return error?.field === field ? html`<p class="field-error" id="${field}-error" role="alert">${error.message}</p>` : html``;
}

function describedBy(error: PageError | undefined, field: string, hint?: string): SafeHtml {
  const ids = [hint, error?.field === field ? `${field}-error` : undefined].filter(Boolean).join(' ');
  return ids ? html` aria-describedby="${ids}"` : html``;
}

function invalid(error: PageError | undefined, field: string): SafeHtml {
  return error?.field === field ? html` aria-invalid="true" autofocus` : html``;
}

function mobileField(page: { mobile?: string | undefined; mobileReadonly: boolean; error?: PageError | undefined }): SafeHtml {
  return html`<div class="field">
<label for="mobile">Mobile number</label>
<input id="mobile" name="mobile" type="tel" inputmode="tel" autocomplete="tel" required maxlength="20"
 placeholder="+63 917 123 4567" value="${page.mobile ?? ''}"${page.mobileReadonly ? html` readonly aria-readonly="true"` : html``}${invalid(page.error, 'mobile')}${describedBy(page.error, 'mobile', page.mobileReadonly ? 'mobile-hint' : undefined)}>
${page.mobileReadonly ? html`<p class="hint" id="mobile-hint">This is the number ${page.mobile ?? ''} linked to your request.</p>` : html``}
${fieldError(page.error, 'mobile')}
</div>`;
}

function pinField(name: string, label: string, error: PageError | undefined, autocomplete: string, autofocus: boolean): SafeHtml {
  return html`<div class="field">
<label for="${name}">${label}</label>
<input id="${name}" name="${name}" type="password" inputmode="numeric" pattern="[0-9]{4,6}" minlength="4" maxlength="6"
 autocomplete="${autocomplete}" required${autofocus && error?.field !== name ? html` autofocus` : html``}${invalid(error, name)}${describedBy(error, name, `${name}-hint`)}>
<p class="hint" id="${name}-hint">4 to 6 digits</p>
${fieldError(error, name)}
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
  const body = html`<h1>Log in to continue</h1>
<p class="lead"><strong>${page.clientName}</strong> wants to link your account.</p>
${errorSummary(page.error)}
<form method="post" action="${page.action}" novalidate>
${hiddenCsrf(page.csrfToken)}
${mobileField(page)}
${pinField('pin', 'PIN', page.error, 'current-password', page.mobileReadonly)}
<div class="actions">
<button type="submit" name="action" value="login" class="button primary">Continue</button>
${cancelButton()}
</div>
</form>
${page.registerHref ? html`<p class="switch">New here? <a href="${page.registerHref}">Create an account</a></p>` : html``}`;
  return layout({ title: 'Log in', body, clientName: page.clientName });
}

/** The registration page: mobile + PIN twice. */
export function registerPage(page: FormPage & { mobile?: string | undefined; mobileReadonly: boolean; loginHref?: string | undefined }): string {
  const body = html`<h1>Create your account</h1>
<p class="lead"><strong>${page.clientName}</strong> wants to link your account. Choose a PIN to create one; we will text you a code to confirm your number.</p>
${errorSummary(page.error)}
<form method="post" action="${page.action}" novalidate>
${hiddenCsrf(page.csrfToken)}
${mobileField(page)}
${pinField('pin', 'Choose a PIN', page.error, 'new-password', page.mobileReadonly)}
${pinField('pin_confirmation', 'Enter the PIN again', page.error, 'new-password', false)}
<div class="actions">
<button type="submit" name="action" value="register" class="button primary">Create account</button>
${cancelButton()}
</div>
</form>
${page.loginHref ? html`<p class="switch">Have an account? <a href="${page.loginHref}">Log in</a></p>` : html``}`;
  return layout({ title: 'Create account', body, clientName: page.clientName });
}

/** The one-time-PIN page. */
export function otpPage(
  page: FormPage & { maskedMobile: string; resendInSeconds: number; resendsLeft: number; notice?: string | undefined },
): string {
  const resendHint =
    page.resendsLeft === 0
      ? html`<p class="hint" id="resend-hint">No more new codes can be sent for this sign-in.</p>`
      : page.resendInSeconds > 0
        ? html`<p class="hint" id="resend-hint">Didn't get it? You can ask for a new code in ${page.resendInSeconds} seconds.</p>`
        : html`<p class="hint" id="resend-hint">Didn't get it? Ask for a new code.</p>`;
  const body = html`<h1>Enter the code we texted you</h1>
<p class="lead">We sent a 6-digit code to <strong>${page.maskedMobile}</strong>. It is valid for 5 minutes.</p>
${page.notice ? html`<div class="notice" role="status">${page.notice}</div>` : html``}
${errorSummary(page.error)}
<form method="post" action="${page.action}" novalidate>
${hiddenCsrf(page.csrfToken)}
<div class="field">
<label for="otp">One-time code</label>
<input id="otp" name="otp" type="text" inputmode="numeric" pattern="[0-9]{6}" minlength="6" maxlength="6" autocomplete="one-time-code"
 required autofocus class="otp"${invalid(page.error, 'otp')}${describedBy(page.error, 'otp')}>
${fieldError(page.error, 'otp')}
</div>
<div class="actions">
<button type="submit" name="action" value="verify" class="button primary">Verify</button>
<button type="submit" name="action" value="resend" class="button link" formnovalidate aria-describedby="resend-hint"${page.resendsLeft === 0 ? html` disabled` : html``}>Send a new code</button>
${resendHint}
${cancelButton()}
</div>
</form>`;
  return layout({ title: 'Enter code', body, clientName: page.clientName });
}

/** An error page: nowhere to go but back to the app. */
export function errorPage(title: string, message: string): string {
  const body = html`<h1>${title}</h1>
<div class="alert" role="alert">${message}</div>
<p class="lead">You can close this page and go back to the app you came from.</p>`;
  return layout({ title, body });
}
