import type { Session, TokenSummary } from './session-store.js';

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · Demo Shop</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}dt{font-weight:600}
pre{background:#f4f4f4;padding:.75rem;overflow:auto}button{font:inherit;padding:.4rem 1rem}.error{color:#a00}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>
${body}
</main></body></html>`;
}

const linkButton = (label: string) => `<form method="post" action="/link"><button type="submit">${escapeHtml(label)}</button></form>`;

/** The home page of a customer who has not linked an account yet. */
export function homePage(): string {
  return layout('Welcome', `<p>Pay with your platform wallet: link your account once, then pay in one step.</p>\n${linkButton('Link my account')}`);
}

/** What the account page shows. */
export interface AccountView {
  readonly linked: NonNullable<Session['linked']>;
  readonly token: TokenSummary;
  readonly profile: { readonly ok: true; readonly body: unknown } | { readonly ok: false; readonly message: string };
  readonly lastRefresh: Session['lastRefresh'];
  /** Whether the shop offers payouts (a platform API with `POST /payouts`), and the last one's outcome. */
  readonly payouts?: { readonly last: Session['lastPayout'] } | undefined;
}

/** The linked account: who, the profile API's answer, the current token, and "Refresh now". */
export function accountPage(view: AccountView): string {
  const profile = view.profile.ok
    ? `<pre id="profile-result">${escapeHtml(JSON.stringify(view.profile.body, null, 2))}</pre>`
    : `<p id="profile-result" class="error">${escapeHtml(view.profile.message)}</p>`;
  const refresh = view.lastRefresh
    ? `<p id="refresh-result">Refreshed: token <code id="old-token">${escapeHtml(view.lastRefresh.before.fingerprint)}</code> (expiring ${time(view.lastRefresh.before.expiresAt)})
 was replaced by <code id="new-token">${escapeHtml(view.lastRefresh.after.fingerprint)}</code> (expiring ${time(view.lastRefresh.after.expiresAt)}).</p>`
    : '';
  return layout(
    'Your linked account',
    `<dl>
<dt>User ID</dt><dd id="user-id">${escapeHtml(view.linked.userId)}</dd>
<dt>Profile ID</dt><dd id="profile-id">${escapeHtml(view.linked.profileId)}</dd>
<dt>Access token</dt><dd><code id="token-id">${escapeHtml(view.token.fingerprint)}</code>, expiring ${time(view.token.expiresAt)}</dd>
</dl>
<h2>The platform's profile API, called with the customer's token</h2>
${profile}
${refresh}
${payouts(view.payouts)}
<form method="post" action="/refresh"><button type="submit">Refresh now</button></form>
<form method="post" action="/unlink"><button type="submit">Unlink</button></form>`,
  );
}

/** The payout button and the last payout's outcome; nothing when the shop offers no payouts. */
function payouts(view: AccountView['payouts']): string {
  if (!view) return '';
  const last = view.last
    ? view.last.ok
      ? `<pre id="payout-result">${escapeHtml(JSON.stringify(view.last.body, null, 2))}</pre>`
      : `<p id="payout-result" class="error">${escapeHtml(view.last.message)}</p>`
    : '';
  return `<h2>A payout: the platform asks for a strong, recent sign-in</h2>
${last}
<form method="post" action="/payout"><button type="submit">Send a payout</button></form>`;
}

/** Something went wrong; `again` offers to link (again). */
export function problemPage(title: string, message: string, again = true): string {
  return layout(title, `<p id="problem" class="error">${escapeHtml(message)}</p>\n${again ? linkButton('Link my account') : '<p><a href="/">Back to the shop</a></p>'}`);
}

/** The customer's link can no longer be renewed: a link to the authorization the SDK prepared. */
export function relinkPage(authorizationUrl: string, reason: string): string {
  return layout(
    'Please link your account again',
    `<p id="problem">${escapeHtml(reason)}.</p>\n<p><a id="relink" href="${escapeHtml(authorizationUrl)}">Link my account again</a></p>`,
  );
}

function time(epochSeconds: number): string {
  return `<time datetime="${new Date(epochSeconds * 1000).toISOString()}">${new Date(epochSeconds * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}</time>`;
}
