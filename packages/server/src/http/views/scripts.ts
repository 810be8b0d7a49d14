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
