/** Where the one-time-PIN page's countdown script is served (a file of Connect's own: the pages' CSP allows `script-src 'self'`, never inline script). */
export const RESEND_COUNTDOWN_PATH = '/assets/resend-countdown.js';

/**
 * The one-time-PIN page's countdown (docs/hosted-login.md, "The resend
 * countdown"), a progressive enhancement: without it the hint names the
 * time of day from which a new code can be asked for, and "Send a new
 * code" can always be pressed (too early, the page says how long to wait).
 * With it, the button is disabled and the hint counts the seconds down
 * from those the page was rendered with, measured by the browser's
 * monotonic clock (so a phone's wrong clock does not matter), in the
 * page's own wordings; at zero the hint says a new code can be asked for
 * and the button is enabled. Plain ES5, no dependencies.
 */
export const RESEND_COUNTDOWN_SCRIPT = `(function () {
  'use strict';
  var hint = document.getElementById('resend-hint');
  var button = document.getElementById('resend');
  if (!hint || !button || button.disabled) return;
  var wait = Number(hint.getAttribute('data-resend-in'));
  if (!(wait > 0)) return;
  var one = hint.getAttribute('data-one') || '';
  var other = hint.getAttribute('data-other') || '';
  var ready = hint.getAttribute('data-ready') || '';
  var start = performance.now();
  var timer;
  button.disabled = true;
  function tick() {
    clearTimeout(timer);
    var left = Math.ceil(wait - (performance.now() - start) / 1000);
    if (left <= 0) {
      hint.textContent = ready;
      button.disabled = false;
      return;
    }
    hint.textContent = (left === 1 ? one : other).replace('{seconds}', String(left));
    timer = setTimeout(tick, 250);
  }
  // A tab in the background has its timers slowed: back in front, it counts at once.
  document.addEventListener('visibilitychange', tick);
  tick();
})();
`;

/** Where the browser side of WebAuthn is served: @simplewebauthn/browser's own bundle, from Connect (routes/assets.ts). */
export const WEBAUTHN_BROWSER_PATH = '/assets/simplewebauthn-browser.js';

/** Where the passkey pages' script is served. */
export const PASSKEY_SCRIPT_PATH = '/assets/passkeys.js';

/**
 * The passkey pages' script (docs/hosted-login.md, "Passkeys"), loaded
 * after the @simplewebauthn/browser bundle (global `SimpleWebAuthnBrowser`).
 * Without it, or without WebAuthn, nothing changes: the PIN and SMS forms
 * work as they do without JavaScript.
 *
 * - Every form field `passkey_capable` is set to `1` when the browser has
 *   a platform authenticator that verifies the user
 *   (`isUserVerifyingPlatformAuthenticatorAvailable()`): only then does a
 *   PIN + SMS sign-in end on the offer of a passkey.
 * - The page's `[data-passkey]` box (the login page's "Sign in with a
 *   passkey", the offer page's "Create a passkey") is shown when WebAuthn
 *   is there; on the login page, the PIN form behind "Use my PIN and an SMS
 *   code instead" folds away unless it is `data-keep-open` (it shows an
 *   error), and a `[data-passkey-unsupported]` note is hidden.
 * - Its button asks `data-options` for the options (`purpose` =
 *   `data-passkey`), runs the browser's prompt, and posts the credential
 *   to `data-action`: signed in, the browser goes to the answer's
 *   `location`; a passkey added, it follows `[data-passkey-continue]`.
 * - A refusal shows the answer's `message` (in the page's language) in
 *   `#passkey-error`; `journey_ended` goes where the journey stands now;
 *   a prompt the customer cancelled, or that failed, shows the box's own
 *   wording (`data-cancelled`, `data-exists`, `data-failed`). The button
 *   stays usable, and so does the PIN form.
 */
export const PASSKEY_SCRIPT = `(function () {
  'use strict';
  var api = window.SimpleWebAuthnBrowser;
  var supported = !!(api && api.browserSupportsWebAuthn());
  if (!supported) return;

  var pkc = window.PublicKeyCredential;
  if (pkc && typeof pkc.isUserVerifyingPlatformAuthenticatorAvailable === 'function') {
    pkc.isUserVerifyingPlatformAuthenticatorAvailable().then(function (available) {
      if (!available) return;
      var fields = document.querySelectorAll('input[name="passkey_capable"]');
      for (var i = 0; i < fields.length; i++) fields[i].value = '1';
    }, function () {});
  }

  var box = document.querySelector('[data-passkey]');
  if (!box) return;
  var purpose = box.getAttribute('data-passkey');
  var button = box.querySelector('[data-passkey-start]');
  var csrf = box.querySelector('input[name="csrf_token"]');
  var errorBox = document.getElementById('passkey-error');
  var errorText = errorBox && errorBox.querySelector('[data-passkey-message]');
  if (!button || !csrf || !errorBox || !errorText) return;
  box.hidden = false;
  var unsupported = document.querySelector('[data-passkey-unsupported]');
  if (unsupported) unsupported.hidden = true;
  var fallback = document.querySelector('[data-pin-fallback]');
  if (fallback && !fallback.hasAttribute('data-keep-open')) fallback.open = false;

  function post(url, fields) {
    var body = new URLSearchParams();
    for (var name in fields) body.append(name, fields[name]);
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: body.toString()
    }).then(function (response) {
      return response.json().then(function (answer) {
        return { ok: response.ok, answer: answer || {} };
      }, function () {
        return { ok: false, answer: {} };
      });
    });
  }

  // Shown first, then filled: its role=alert announces the new text.
  function show(message) {
    errorBox.hidden = false;
    errorText.textContent = message || box.getAttribute('data-failed') || '';
  }

  function refused(answer) {
    if (answer.error === 'journey_ended' && typeof answer.location === 'string') {
      window.location.assign(answer.location);
      return;
    }
    show(answer.message);
  }

  function promptFailed(error) {
    var name = error && error.name;
    if (name === 'NotAllowedError' || name === 'AbortError') show(box.getAttribute('data-cancelled'));
    else if (name === 'InvalidStateError' && purpose === 'enrol') show(box.getAttribute('data-exists'));
    else show(box.getAttribute('data-failed'));
  }

  function finished(answer) {
    if (purpose === 'enrol') {
      var next = document.querySelector('[data-passkey-continue]');
      if (next) window.location.assign(next.href);
    } else if (typeof answer.location === 'string') {
      window.location.assign(answer.location);
    }
  }

  var busy = false;
  button.addEventListener('click', function () {
    if (busy) return;
    busy = true;
    button.setAttribute('aria-busy', 'true');
    errorBox.hidden = true;
    var token = csrf.value;
    var done = function () {
      busy = false;
      button.removeAttribute('aria-busy');
    };
    post(box.getAttribute('data-options'), { csrf_token: token, purpose: purpose })
      .then(function (options) {
        if (!options.ok) return refused(options.answer);
        var prompt = purpose === 'enrol'
          ? api.startRegistration({ optionsJSON: options.answer })
          : api.startAuthentication({ optionsJSON: options.answer });
        return prompt.then(function (credential) {
          return post(box.getAttribute('data-action'), { csrf_token: token, credential: JSON.stringify(credential) }).then(function (result) {
            if (!result.ok) return refused(result.answer);
            finished(result.answer);
          });
        }, promptFailed);
      })
      .catch(function () {
        show(box.getAttribute('data-failed'));
      })
      .then(done, done);
  });
})();
`;
