import { errorForCode, InvalidCallback, IssuerMismatch, StateMismatch } from '../transport/errors.js';

/** A successful callback: the code to exchange and who the customer is. */
export interface AuthorizationCallback {
  /** The authorization code: single use, exchange it within 300 seconds. */
  readonly code: string;
  /** The `state` sent, checked. */
  readonly state: string;
  /** The masked mobile number, e.g. `+63******4567`. */
  readonly userId: string;
  /** The customer's unique numeric ID. */
  readonly profileId: string;
  /** `iss` (RFC 9207): Connect's auth URL, checked. */
  readonly issuer: string;
}

/** What the callback must match. */
export interface CallbackExpectations {
  /** The `state` of the pending authorization. */
  readonly state: string;
  /**
   * Connect's `{auth_url}` (its issuer): the `iss` the callback must carry.
   * Connect puts `iss` on every redirect back and says so in its discovery
   * metadata (`authorization_response_iss_parameter_supported: true`), so a
   * callback without it is refused.
   */
  readonly issuer: string;
}

const CALLBACK_PARAMS = ['code', 'state', 'error', 'error_description', 'iss', 'userId', 'profileId'] as const;

/**
 * Parses and checks the URL Connect redirected the browser to. In order:
 * the URL must parse (`invalid_callback`), its `state` must be the one kept
 * (`state_mismatch`: RFC 6749 §10.12), its `iss` must be present and equal
 * to Connect's auth URL, character for character (`issuer_mismatch`:
 * RFC 9207 §2.4, the defence against a mix-up with another authorization
 * server), an `error` parameter becomes its typed
 * error (`AccessDenied`, `LoginRequired`, …), and a success must carry
 * `code`, `userId` and `profileId` (`invalid_callback`).
 *
 * @param callbackUrl - The full URL, or the request path with its query (`/callback?code=…`).
 * @example
 * const { code, userId, profileId } = parseCallback(request.url, { state: session.state, issuer: authUrl });
 */
export function parseCallback(callbackUrl: string | URL, expected: CallbackExpectations): AuthorizationCallback {
  const params = callbackParams(callbackUrl);
  const state = params.get('state');
  if (state === null) throw new StateMismatch('the callback carries no state');
  if (state !== expected.state) throw new StateMismatch('the callback state is not the one of this authorization');

  // The configured URL may end in a slash (as authUrl may); what the callback carries is compared exactly.
  const expectedIssuer = stripSlash(expected.issuer);
  const issuer = params.get('iss');
  if (issuer === null) {
    throw new IssuerMismatch(`the callback carries no iss, but Connect (${expectedIssuer}) always sends one`);
  }
  if (issuer !== expectedIssuer) {
    throw new IssuerMismatch(`the callback comes from issuer ${JSON.stringify(printable(issuer))}, not ${JSON.stringify(expectedIssuer)}`);
  }

  const error = params.get('error');
  if (error !== null) {
    const description = params.get('error_description') || error;
    throw errorForCode(error, description) ?? new InvalidCallback(`the callback carries an unknown error "${printable(error)}": ${printable(description)}`);
  }

  const code = params.get('code');
  const userId = params.get('userId');
  const profileId = params.get('profileId');
  if (!code) throw new InvalidCallback('the callback has neither a code nor an error');
  if (!userId || !profileId) throw new InvalidCallback('the callback lacks userId or profileId');
  return { code, state, userId, profileId, issuer };
}

function callbackParams(callbackUrl: string | URL): URLSearchParams {
  let url: URL;
  try {
    if (callbackUrl instanceof URL) url = callbackUrl;
    else if (typeof callbackUrl === 'string' && callbackUrl.startsWith('/') && !callbackUrl.startsWith('//')) url = new URL(callbackUrl, 'http://callback.invalid');
    else url = new URL(String(callbackUrl));
  } catch {
    throw new InvalidCallback('the callback URL is malformed');
  }
  const params = url.searchParams;
  for (const name of CALLBACK_PARAMS) {
    // RFC 6749 §3.1: a parameter must not appear more than once.
    if (params.getAll(name).length > 1) throw new InvalidCallback(`the callback repeats the parameter ${name}`);
  }
  return params;
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function printable(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, '?').slice(0, 120);
}
