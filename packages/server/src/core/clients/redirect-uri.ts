import type { Environment } from '../environment.js';

/** The longest redirect URI a client may register. */
export const MAX_REDIRECT_URI_LENGTH = 2000;

/** The hosts on which the sandbox accepts `http://` (RFC 8252 §7.3, loopback redirects). */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A native app's private-use scheme: a reverse domain name, e.g. `com.example.app` (RFC 8252 §7.1). */
const REVERSE_DOMAIN_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$/;

/**
 * Why `value` cannot be registered as a redirect URI in `environment`, or
 * `undefined` when it can (docs/operator-guide.md, "Redirect URIs").
 *
 * The rules, in the order they are checked:
 * - the raw string holds no control character, invisible formatting
 *   character, whitespace or backslash: the URL parser would drop or rewrite
 *   them silently, so they are refused before parsing;
 * - no fragment (RFC 6749 §3.1.2) and no wildcard;
 * - it is an absolute URL (WHATWG URL parser) without user info;
 * - `https://` with a host; in the sandbox also `http://` on `localhost`,
 *   `127.0.0.1` or `[::1]`, any port; or a reverse-domain private-use scheme
 *   followed by a path, for native apps (RFC 8252 §7.1);
 * - the string is exactly the parser's serialization of itself. Redirect
 *   URIs are compared character for character at `/authorize`, so a URI the
 *   parser would rewrite (an upper-case or international host, a default
 *   port, a `..` or `%2e%2e` segment, a missing `/` after the host) is refused
 *   with the form it would take, and the operator registers that form.
 *
 * The returned text names no character of the input that cannot be printed.
 */
export function redirectUriProblem(value: string, environment: Environment): string | undefined {
  if (value.length > MAX_REDIRECT_URI_LENGTH) return `redirect URI must be at most ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (/\p{Cc}/u.test(value)) return 'redirect URI must not contain control characters (tabs, line breaks, ...)';
  if (/\s/u.test(value)) return 'redirect URI must not contain spaces or other whitespace';
  if (/\p{Cf}/u.test(value)) return 'redirect URI must not contain invisible formatting characters (zero-width or direction marks, ...)';
  if (value.includes('\\')) return 'redirect URI must not contain a backslash';
  if (value.includes('#')) return 'redirect URI must not contain a fragment (#)';
  if (value.includes('*')) return 'redirect URI must not contain wildcards (*)';

  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'redirect URI must be an absolute URL, e.g. https://merchant.example/callback';
  }
  // The authority of a `scheme://` URL ends at the first `/` or `?`; an `@` in it separates user info.
  if (/^[^:]*:\/\/[^/?]*@/.test(value) || url.username !== '' || url.password !== '') {
    return 'redirect URI must not contain user info (name@ or name:password@ before the host)';
  }

  const scheme = url.protocol.slice(0, -1);
  const schemeProblem = schemeRule(scheme, value, url, environment);
  if (schemeProblem) return schemeProblem;

  if (url.href !== value) {
    return `redirect URI must be written in its standard form, ${url.href} (redirect URIs are compared character for character): register that form`;
  }
  return undefined;
}

function schemeRule(scheme: string, value: string, url: URL, environment: Environment): string | undefined {
  if (scheme === 'https' || scheme === 'http') {
    // The parser reads `https:/host` and `https:///host` as `https://host/`: a host must follow `//` in the string itself.
    if (!/^https?:\/\/[^/?]/i.test(value)) return `redirect URI must have a host: ${scheme}://host/path`;
    if (scheme === 'https') return undefined;
    if (environment !== 'sandbox') return 'redirect URI must use https:// in production';
    if (!LOOPBACK_HOSTS.has(url.hostname)) {
      return 'redirect URI may use http:// only on localhost, 127.0.0.1 or [::1] (sandbox); use https:// for any other host';
    }
    return undefined;
  }
  if (scheme.includes('.')) {
    if (!REVERSE_DOMAIN_SCHEME.test(scheme)) {
      return 'redirect URI scheme of a native app must be a reverse domain name, e.g. com.example.app:/callback';
    }
    if (!value.slice(scheme.length + 1).startsWith('/')) {
      return `redirect URI of a native app must have a path after the scheme, e.g. ${scheme}:/callback`;
    }
    return undefined;
  }
  const http = environment === 'sandbox' ? ' (or, in the sandbox, http://localhost, http://127.0.0.1 or http://[::1])' : '';
  return `redirect URI must use https://${http}, or a native app's reverse-domain scheme such as com.example.app:/callback`;
}
