import { fill, html, type SafeHtml } from './html.js';
import type { Catalogue } from './messages/index.js';

/** Actions that only read: a scope `payments:read` lets the client see payments. */
const READ = new Set(['read', 'view', 'get', 'list', 'readonly']);
/** Actions that change: a scope `payments:write` lets the client change payments. */
const WRITE = new Set(['write', 'manage', 'create', 'update', 'edit', 'delete', 'send', 'pay', 'transfer', 'readwrite']);

/**
 * How the consent page says a scope the operator did not describe
 * (docs/hosted-login.md, "Consent"), in the page's language: the scopes
 * of OpenID Connect and OAuth (`openid`, `profile`, `phone`, `email`,
 * `offline_access`) by name; a scope of a resource and an action, in
 * either order and separated by `:` or `.` (`payments:read`,
 * `read:payments`, `payment_history.write`, a URL's last path segment
 * first), as seeing or changing that resource, its `_` and `-` read as
 * spaces; any other by its own name. Escaped HTML.
 *
 * @example
 * describeScope(en, 'payments:read'); // See your payments
 * describeScope(fil, 'payment_history.write'); // Gumawa ng mga pagbabago sa iyong payment history
 */
export function describeScope(text: Catalogue, scope: string): SafeHtml {
  const wording = text.consent.scopes;
  if (Object.hasOwn(wording.known, scope)) return html`${wording.known[scope as keyof typeof wording.known]}`;
  const last = scope.split('/').filter(Boolean).at(-1) ?? scope;
  const parts = last.split(/[:.]/);
  if (parts.length === 2) {
    const [first = '', second = ''] = parts.map((part) => part.toLowerCase());
    const [action, resource] = READ.has(second) || WRITE.has(second) ? [second, parts[0] ?? ''] : [first, parts[1] ?? ''];
    const words = resource.replace(/[_-]+/g, ' ').trim();
    if (words !== '' && /^[\p{L}\p{N} ]+$/u.test(words)) {
      if (READ.has(action)) return fill(wording.read, { resource: words });
      if (WRITE.has(action)) return fill(wording.write, { resource: words });
    }
  }
  return fill(wording.other, { scope: `“${scope}”` });
}
