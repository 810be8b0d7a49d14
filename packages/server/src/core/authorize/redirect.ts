import { conformantDescription } from '../errors.js';

/**
 * The `error` codes a redirect carries back to the client: RFC 6749
 * §4.1.2.1's, OpenID Connect Core 1.0 §3.1.2.6's `login_required` and
 * `consent_required`, the answers to `prompt=none`, and OpenID Connect
 * Core Unmet Authentication Requirements 1.0's
 * `unmet_authentication_requirements`, the answer to an `acr_values=phr`
 * the customer cannot meet (docs/journey.md).
 */
export type RedirectErrorCode =
  | 'invalid_request'
  | 'unauthorized_client'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'login_required'
  | 'consent_required'
  | 'unmet_authentication_requirements';

/**
 * Adds parameters to a redirect URI, keeping any query it already has
 * (RFC 6749 §3.1.2) and never touching anything else of it.
 */
export function buildRedirect(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri);
  const added = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined) added.append(name, value);
  }
  // Appended to the query as registered: going through `url.searchParams`
  // would re-serialise it (`a%20b` becomes `a+b`, `flag` becomes `flag=`).
  const existing = url.search.slice(1);
  const extra = added.toString();
  if (extra) url.search = existing ? `${existing}&${extra}` : extra;
  return url.href;
}

/** The longest redirect URI shown or logged whole; a longer one is cut. */
const SHOWN_URI_LENGTH = 512;

/**
 * A redirect URI as a page or a log line may show it: its query and
 * fragment, which may carry codes or tokens, each replaced by `…`
 * (`https://app.example/cb?…`), and cut after {@link SHOWN_URI_LENGTH}
 * characters. Never a URI to send anyone to.
 */
export function maskedRedirectUri(uri: string): string {
  const masked = uri.replace(/([?#]).*$/s, '$1…');
  return masked.length > SHOWN_URI_LENGTH ? `${masked.slice(0, SHOWN_URI_LENGTH)}…` : masked;
}

/**
 * The redirect that carries an error back to a verified redirect URI, with
 * `state` and `iss`; its description in the characters RFC 6749 §4.1.2.1 allows.
 */
export function buildErrorRedirect(
  redirectUri: string,
  error: RedirectErrorCode,
  description: string,
  state: string | null,
  issuer: string,
): string {
  return buildRedirect(redirectUri, { error, error_description: conformantDescription(description), state, iss: issuer });
}
