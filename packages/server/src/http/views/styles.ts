/** The hosted pages' stylesheet, served at `/assets/connect.css` (no inline styles: the CSP forbids them). */
export const STYLESHEET = `
:root {
  --ink: #0f1b2d; --muted: #5a6b80; --line: #d6dde6; --bg: #f3f6fa; --card: #ffffff;
  --brand: #0b5fff; --brand-dark: #0847c2; --danger: #b42318; --danger-bg: #fef3f2; --ok-bg: #ecfdf3; --ok: #067647;
  --focus: 0 0 0 3px rgba(11, 95, 255, 0.35);
  color-scheme: light;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; min-height: 100vh; background: var(--bg); color: var(--ink);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
.page { max-width: 440px; margin: 0 auto; padding: 24px 16px 32px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 16px; padding: 28px 24px; box-shadow: 0 8px 24px rgba(15, 27, 45, 0.06); }
.brand { display: flex; align-items: center; gap: 10px; margin-bottom: 20px; }
.logo { width: 36px; height: 36px; border-radius: 10px; background: var(--brand); color: #fff; display: grid; place-items: center; font-weight: 700; }
.brand-name { font-weight: 700; letter-spacing: 0.2px; }
h1 { font-size: 1.45rem; line-height: 1.25; margin: 0 0 8px; }
.lead { color: var(--muted); margin: 0 0 20px; }
.lead strong { color: var(--ink); }
.field { margin-bottom: 16px; }
label { display: block; font-weight: 600; margin-bottom: 6px; }
input[type=tel], input[type=password], input[type=text] {
  width: 100%; font: inherit; padding: 12px 14px; border: 1px solid #b8c2cf; border-radius: 10px; background: #fff; color: var(--ink);
}
input:focus { outline: none; border-color: var(--brand); box-shadow: var(--focus); }
input[readonly] { background: #eef2f7; color: var(--muted); }
input[aria-invalid=true] { border-color: var(--danger); }
input.otp { font-size: 1.5rem; letter-spacing: 0.4em; text-align: center; font-variant-numeric: tabular-nums; }
.hint { color: var(--muted); font-size: 0.875rem; margin: 6px 0 0; }
.field-error { color: var(--danger); font-size: 0.9rem; margin: 6px 0 0; font-weight: 500; }
.alert { background: var(--danger-bg); color: var(--danger); border: 1px solid #fecdca; border-radius: 10px; padding: 12px 14px; margin-bottom: 16px; }
.notice { background: var(--ok-bg); color: var(--ok); border: 1px solid #abefc6; border-radius: 10px; padding: 12px 14px; margin-bottom: 16px; }
.actions { display: flex; flex-direction: column; gap: 10px; margin-top: 20px; }
.button { font: inherit; font-weight: 600; border-radius: 10px; padding: 12px 16px; cursor: pointer; border: 1px solid transparent; width: 100%; }
.button:focus-visible { outline: none; box-shadow: var(--focus); }
.primary { background: var(--brand); color: #fff; }
.primary:hover { background: var(--brand-dark); }
.secondary { background: #fff; color: var(--ink); border-color: var(--line); }
.secondary:hover { background: #f6f8fb; }
.link { background: none; color: var(--brand); padding: 6px; width: auto; align-self: center; }
.link:disabled { color: var(--muted); cursor: not-allowed; }
.switch { margin: 20px 0 0; text-align: center; color: var(--muted); }
a { color: var(--brand); }
a:focus-visible { outline: none; box-shadow: var(--focus); border-radius: 4px; }
.footer { text-align: center; color: var(--muted); font-size: 0.8rem; margin-top: 16px; }
@media (min-width: 640px) {
  .page { padding-top: 64px; }
  .card { padding: 36px 40px; }
}
`;
