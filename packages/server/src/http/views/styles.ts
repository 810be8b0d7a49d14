/** The hosted pages' stylesheet, served at `/assets/connect.css` (no inline styles: the CSP forbids them). */
export const STYLESHEET = `
:root {
  --ink: #0f172a; --text: #1e293b; --muted: #475569; --line: #e2e8f0; --field: #7c8799;
  --bg: #f4f6fa; --card: #ffffff; --tint: #f8fafc;
  --brand: #1d4ed8; --brand-strong: #1e40af; --brand-soft: #eff4ff;
  --danger: #b42318; --danger-soft: #fef3f2; --danger-line: #fda29b;
  --ok: #067647; --ok-soft: #ecfdf3; --ok-line: #75e0a7; --secure: #15803d;
  --radius: 12px;
  color-scheme: light;
}
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body {
  margin: 0; min-height: 100vh; background: var(--bg); color: var(--text);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  -webkit-font-smoothing: antialiased; overflow-wrap: anywhere;
}
p { margin: 0; }
/* What the pages' scripts show or hide: hidden wins over any display. */
[hidden] { display: none !important; }
strong { color: var(--ink); font-weight: 650; }
.nowrap { white-space: nowrap; }
h1, .consent, .lead, .resend .hint, .status .message { text-wrap: balance; }

/* Frame */
.shell { min-height: 100vh; display: flex; flex-direction: column; align-items: center; justify-content: center; padding: 32px 16px; }
.topbar, .card, .footer { width: 100%; max-width: 440px; }
.topbar { display: flex; align-items: center; justify-content: space-between; gap: 12px; padding: 0 4px 16px; }
.brand { display: inline-flex; align-items: center; gap: 10px; color: var(--ink); font-weight: 700; font-size: 1.0625rem; letter-spacing: -0.01em; }
.brand-mark { width: 32px; height: 32px; border-radius: 9px; background: var(--brand); color: #fff; display: inline-grid; place-items: center; }
.brand-mark .icon { width: 20px; height: 20px; }
.secure { display: inline-flex; align-items: center; gap: 6px; color: var(--secure); font-size: 0.8125rem; font-weight: 600; }
.secure .icon { width: 16px; height: 16px; }
.card {
  background: var(--card); border: 1px solid var(--line); border-radius: 16px; padding: 32px 40px 36px;
  box-shadow: 0 1px 2px rgba(15, 23, 42, 0.04), 0 12px 32px -12px rgba(15, 23, 42, 0.12);
}
.footer { padding: 20px 4px 0; }
.safety { display: flex; gap: 10px; align-items: flex-start; color: var(--muted); font-size: 0.8125rem; line-height: 1.45; }
.safety .icon { flex: none; width: 18px; height: 18px; color: var(--muted); margin-top: 1px; }

/* The request: consumer and Connect, linked securely */
.request { text-align: center; margin-bottom: 24px; }
.parties { display: flex; align-items: center; justify-content: center; margin-bottom: 20px; }
.party { width: 48px; height: 48px; border-radius: 14px; display: grid; place-items: center; font-weight: 700; font-size: 1.25rem; }
.party-client { background: #f1f5f9; color: var(--ink); border: 1px solid var(--line); }
.party-connect { background: var(--brand); color: #fff; }
.party-connect .icon { width: 26px; height: 26px; }
.wire { position: relative; width: 72px; height: 2px; margin: 0 6px; background: repeating-linear-gradient(90deg, #cbd5e1 0 6px, transparent 6px 10px); }
.wire-lock {
  position: absolute; left: 50%; top: 50%; transform: translate(-50%, -50%); width: 28px; height: 28px; border-radius: 50%;
  background: var(--ok-soft); border: 1px solid var(--ok-line); color: var(--secure); display: grid; place-items: center;
}
.wire-lock .icon { width: 14px; height: 14px; }
h1 { margin: 0 0 6px; color: var(--ink); font-size: 1.5rem; line-height: 1.25; font-weight: 700; letter-spacing: -0.015em; }
.consent { color: var(--muted); font-size: 1rem; }
.lead { color: var(--muted); }
.consent + .lead { margin-top: 8px; font-size: 0.9375rem; }

/* What a consent grants */
.grants { margin: 20px 0 0; padding: 16px; background: var(--tint); border-radius: var(--radius); }
.grants h2 { margin: 0 0 10px; font-size: 0.9375rem; font-weight: 600; color: var(--ink); }
.grant-list { list-style: none; margin: 0; padding: 0; display: grid; gap: 10px; font-size: 0.9375rem; }
.grant-list li { display: flex; gap: 10px; align-items: flex-start; }
.grant-list .icon-check { flex: none; width: 18px; height: 18px; margin-top: 2px; color: var(--ok); }
.scope-name { display: block; color: var(--muted); font-size: 0.8125rem; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }

/* Messages */
.alert, .notice { display: flex; gap: 10px; align-items: flex-start; border-radius: var(--radius); padding: 12px 14px; margin-bottom: 20px; font-size: 0.9375rem; }
.alert { background: var(--danger-soft); color: var(--danger); border: 1px solid var(--danger-line); }
.notice { background: var(--ok-soft); color: var(--ok); border: 1px solid var(--ok-line); }
.alert .icon, .notice .icon { flex: none; width: 20px; height: 20px; margin-top: 1px; }

/* Fields */
form { margin: 0; }
.field { margin-bottom: 20px; }
label { display: block; color: var(--ink); font-weight: 600; font-size: 0.9375rem; }
.hint { color: var(--muted); font-size: 0.875rem; margin-top: 2px; }
.control { position: relative; margin-top: 8px; }
input[type=tel], input[type=password], input[type=text] {
  display: block; width: 100%; min-height: 48px; margin: 0; padding: 11px 14px; font: inherit; font-size: 1.0625rem; color: var(--ink);
  background: #fff; border: 1px solid var(--field); border-radius: 10px; appearance: none;
  transition: border-color 0.15s ease, box-shadow 0.15s ease;
}
input:hover { border-color: #5b6678; }
input:focus { outline: 3px solid rgba(29, 78, 216, 0.28); outline-offset: 0; border-color: var(--brand); }
input:focus-visible { outline: 3px solid rgba(29, 78, 216, 0.28); }
input.pin { letter-spacing: 0.25em; font-variant-numeric: tabular-nums; }
input.otp { font-size: 1.5rem; font-weight: 600; letter-spacing: 0.5em; text-indent: 0.5em; text-align: center; font-variant-numeric: tabular-nums; }
input[readonly] { background: var(--tint); color: var(--text); border-style: dashed; padding-right: 44px; }
input[readonly]:hover { border-color: var(--field); }
.locked .icon-field { position: absolute; right: 14px; top: 50%; transform: translateY(-50%); width: 18px; height: 18px; color: var(--muted); pointer-events: none; }
.has-error input { border-color: var(--danger); border-width: 2px; padding: 10px 13px; }
.has-error input:focus { outline-color: rgba(180, 35, 24, 0.22); border-color: var(--danger); }
.field-error { display: flex; gap: 6px; align-items: flex-start; margin-top: 8px; color: var(--danger); font-size: 0.875rem; font-weight: 600; }
.field-error .icon { flex: none; width: 18px; height: 18px; }

/* Buttons */
.actions { display: flex; flex-direction: column; gap: 12px; margin-top: 28px; }
.button {
  display: block; width: 100%; min-height: 48px; margin: 0; padding: 12px 16px; font: inherit; font-weight: 600; line-height: 1.25;
  border-radius: 10px; border: 1px solid transparent; cursor: pointer; text-align: center;
  transition: background-color 0.15s ease, border-color 0.15s ease;
}
.button:focus-visible, a:focus-visible { outline: 3px solid var(--brand); outline-offset: 2px; }
.primary { background: var(--brand); color: #fff; box-shadow: 0 1px 2px rgba(15, 23, 42, 0.12); }
.primary:hover { background: var(--brand-strong); }
.primary:active { background: #1e3a8a; }
.secondary { background: #fff; color: var(--text); border-color: #cbd5e1; }
.secondary:hover { background: var(--tint); border-color: #94a3b8; }
.link { display: inline-block; width: auto; min-height: 44px; padding: 10px 12px; background: none; color: var(--brand); text-decoration: underline; text-underline-offset: 3px; }
.link:hover { color: var(--brand-strong); background: var(--brand-soft); }
.link:disabled { color: var(--muted); text-decoration: none; cursor: not-allowed; background: none; }
.resend { text-align: center; padding: 4px 0; }
.resend .hint { margin: 0 0 2px; }

a { color: var(--brand); text-underline-offset: 3px; border-radius: 4px; }
a:hover { color: var(--brand-strong); }
.switch { margin-top: 24px; padding-top: 20px; border-top: 1px solid var(--line); text-align: center; color: var(--muted); font-size: 0.9375rem; }
.switch a, .switch .link { font-weight: 600; }
/* Every link is a tap target of at least 44 x 44 px (docs/hosted-login.md, "On a phone"). */
.switch a, .forgot a { display: inline-flex; align-items: center; justify-content: center; min-height: 44px; min-width: 44px; padding: 0 8px; vertical-align: middle; }
.forgot { margin: -8px -8px 0 0; text-align: right; font-size: 0.9375rem; }

/* Passkeys (docs/hosted-login.md, "Passkeys") */
.passkey-button { display: flex; align-items: center; justify-content: center; gap: 10px; }
.passkey-button .icon { flex: none; width: 20px; height: 20px; }
.button[aria-busy=true] { opacity: 0.72; cursor: progress; }
.passkey .alert { margin-bottom: 12px; }
.passkey-lead { text-align: center; color: var(--muted); font-size: 0.9375rem; margin-bottom: 16px; }
.passkey-first .passkey-lead { margin-top: -4px; }
.divider { display: flex; align-items: center; gap: 12px; margin: 24px 0 16px; color: var(--muted); font-size: 0.875rem; }
.divider::before, .divider::after { content: ""; flex: 1; height: 1px; background: var(--line); }
.pin-fallback { margin-top: 20px; padding-top: 8px; border-top: 1px solid var(--line); }
.pin-fallback > summary {
  display: flex; align-items: center; justify-content: center; min-height: 44px; padding: 0 8px; border-radius: 10px;
  color: var(--brand); font-weight: 600; font-size: 0.9375rem; text-align: center; cursor: pointer; list-style: none;
  text-decoration: underline; text-underline-offset: 3px;
}
.pin-fallback > summary::-webkit-details-marker { display: none; }
.pin-fallback > summary:hover { color: var(--brand-strong); background: var(--brand-soft); }
.pin-fallback > summary:focus-visible { outline: 3px solid var(--brand); outline-offset: 2px; }
.pin-fallback[open] > summary { margin-bottom: 16px; }
.cancel-form .actions { margin-top: 12px; }
.benefits { margin-top: 0; }
a.button { text-decoration: none; }

/* Error page */
.status { text-align: center; padding: 8px 0 4px; }
.status-icon { display: inline-grid; place-items: center; width: 56px; height: 56px; border-radius: 50%; background: var(--danger-soft); color: var(--danger); margin-bottom: 16px; }
.status-icon .icon { width: 28px; height: 28px; }
.status h1 { margin-bottom: 12px; }
.status .message { color: var(--text); margin-bottom: 16px; }

/* The sandbox's callback page: long codes and commands wrap, never widen the page */
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.875em; overflow-wrap: anywhere; }
h2 { margin: 28px 0 8px; color: var(--ink); font-size: 1.125rem; line-height: 1.3; }
.received { width: 100%; margin-top: 24px; border-collapse: collapse; table-layout: fixed; font-size: 0.9375rem; }
.received caption { text-align: left; font-weight: 600; color: var(--ink); padding-bottom: 8px; }
.received th, .received td { text-align: left; vertical-align: top; padding: 8px 0; border-top: 1px solid var(--line); }
.received th { width: 38%; padding-right: 12px; color: var(--muted); font-weight: 600; }
.command { margin: 8px 0 0; padding: 12px 14px; background: var(--tint); border: 1px solid var(--line); border-radius: 10px; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.9375rem; line-height: 1.45; }

/* Phones: the page is the card */
@media (max-width: 520px) {
  body { background: var(--card); }
  .shell { justify-content: flex-start; padding: 0; }
  .topbar { padding: 14px 20px; border-bottom: 1px solid var(--line); background: var(--card); max-width: none; }
  .card { border: 0; border-radius: 0; box-shadow: none; padding: 28px 20px 24px; }
  .footer { padding: 4px 20px 28px; }
  .request { margin-bottom: 20px; }
  .parties { margin-bottom: 16px; }
  .party { width: 44px; height: 44px; border-radius: 12px; }
  .wire { width: 60px; }
  h1 { font-size: 1.375rem; }
  .field { margin-bottom: 18px; }
  .actions { margin-top: 24px; }
}
@media (prefers-reduced-motion: reduce) {
  * { transition: none !important; }
}
@media (forced-colors: active) {
  .button, input { border: 1px solid ButtonText; }
  .wire { background: CanvasText; }
}
`;
