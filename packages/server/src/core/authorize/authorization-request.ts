import type { Client } from '../clients/client.js';
import { parseMobile, pinDestinationRefusal } from '../customers/mobile.js';
import { knownAcrValues, parseMaxAge } from '../authentication-requirements.js';
import { InvalidScope, parameterLabel } from '../errors.js';
import { grantScope } from '../scopes.js';
import { CODE_CHALLENGE_PATTERN } from './pkce.js';
import { JKT_PATTERN } from '../dpop/dpop-proof.js';
import type { RedirectErrorCode } from './redirect.js';

/** `prompt` values Connect understands (docs/journey.md, "`GET /authorize`"). */
export type Prompt = 'login' | 'none';

/** A valid authorization request, ready for the customer. */
export interface ValidAuthorizationRequest {
  readonly client: Client;
  readonly redirectUri: string;
  readonly state: string | null;
  readonly codeChallenge: string | null;
  /** `user_id` in E.164, when given. */
  readonly loginHint: string | null;
  readonly prompt: Prompt | null;
  /** The scopes granted: those `scope` names, or every scope of the client when it names none. */
  readonly scopes: readonly string[];
  /** The `acr_values` Connect knows, in the request's order; unknown ones are dropped (docs/journey.md, "`acr_values` and `max_age`"). */
  readonly acrValues: readonly string[];
  /** `max_age` in seconds, when given. */
  readonly maxAge: number | null;
  /** `dpop_jkt` (RFC 9449 §10), when given: the code it leads to is bound to that DPoP key. */
  readonly dpopJkt: string | null;
}

/**
 * Why an `/authorize` request gets an error page (the hosted pages word it
 * in the customer's language): its client or redirect URI cannot be trusted.
 */
export type PageErrorReason =
  | 'client_id_repeated'
  | 'client_id_missing'
  /** No such client (or a `client_id` too long to be one). */
  | 'client_unknown'
  /** The client is disabled; `clientName` says which. */
  | 'client_disabled'
  /** The client is a resource server, which customers do not sign in to; `clientName` says which. */
  | 'client_not_signable'
  | 'redirect_uri_repeated'
  | 'redirect_uri_missing'
  /** Not exactly the client's registered redirect URI; `clientName` says which client. */
  | 'redirect_uri_mismatch'
  /**
   * RFC 9126 §4 `invalid_request_uri`: the `request_uri` is not one this
   * client pushed, or it expired or was used already; `clientName` says
   * which client.
   */
  | 'request_uri_invalid';

/** An error page instead of a redirect: why, and the client's name when it is known. */
export interface PageError {
  readonly kind: 'page_error';
  readonly reason: PageErrorReason;
  readonly clientName?: string;
  /**
   * `redirect_uri_mismatch`: the client's registered redirect URI and the
   * one the request named, as they are (the sandbox's page shows them and
   * the log names them, each without its query; docs/journey.md, "`GET /authorize`").
   */
  readonly redirectUris?: { readonly registered: string; readonly received: string };
}

/** The outcome of checking an `/authorize` query. */
export type AuthorizationRequestCheck =
  | { readonly kind: 'valid'; readonly request: ValidAuthorizationRequest }
  /** The client or redirect URI cannot be trusted: show an error page, never redirect. */
  | PageError
  /** The redirect URI is verified: send the error back to it. */
  | {
      readonly kind: 'redirect_error';
      readonly redirectUri: string;
      readonly error: RedirectErrorCode;
      readonly description: string;
      readonly state: string | null;
    };

/** A query as parsed: a parameter may appear several times. */
export type AuthorizeQuery = Readonly<Record<string, string | readonly string[] | undefined>>;

const MAX_VALUE_LENGTH = 2048;

/**
 * Checks an authorization request (RFC 6749 §4.1.1; docs/journey.md,
 * "`GET /authorize`") in this
 * order: nothing is redirected until the client and its exact redirect URI
 * are verified; after that, errors go back to the redirect URI with `state`.
 *
 * A `fapi2` client (docs/journey.md, "FAPI 2.0 clients") must have pushed
 * the request (`pushed`: the parameters came from `POST /par`) and must use
 * PKCE with S256.
 */
export async function checkAuthorizationRequest(
  query: AuthorizeQuery,
  deps: {
    findClient(id: string): Promise<Client | undefined>;
    /** `CONNECT_SMS_COUNTRIES`: the countries whose mobiles may receive one-time PINs; unset = every country. */
    readonly smsCountries?: readonly string[] | undefined;
    /** Whether these are the parameters of a pushed request (`POST /par`, RFC 9126), not a query as it came. */
    readonly pushed?: boolean | undefined;
  },
): Promise<AuthorizationRequestCheck> {
  const single = (name: string): string | undefined | 'repeated' => {
    const value = query[name];
    if (Array.isArray(value)) return 'repeated';
    return value === '' ? undefined : (value as string | undefined);
  };

  const clientId = single('client_id');
  if (clientId === 'repeated') return pageError('client_id_repeated');
  if (clientId === undefined) return pageError('client_id_missing');
  const client = clientId.length <= 512 ? await deps.findClient(clientId) : undefined;
  if (!client) return pageError('client_unknown');
  if (client.status !== 'active') return pageError('client_disabled', client.name);
  // A resource server has no redirect URI to trust, so nothing can be sent back to it (docs/resource-servers.md).
  if (client.kind === 'resource_server' || client.redirectUri === null) return pageError('client_not_signable', client.name);

  const redirectUri = single('redirect_uri');
  if (redirectUri === 'repeated') return pageError('redirect_uri_repeated');
  if (redirectUri === undefined) return pageError('redirect_uri_missing');
  // Exact string comparison: no normalisation, no prefix or pattern matching (RFC 9700 §4.1.3).
  if (redirectUri !== client.redirectUri) {
    return { kind: 'page_error', reason: 'redirect_uri_mismatch', clientName: client.name, redirectUris: { registered: client.redirectUri, received: redirectUri } };
  }

  const stateValue = single('state');
  const state = stateValue === 'repeated' || stateValue === undefined || stateValue.length > MAX_VALUE_LENGTH ? null : stateValue;
  const fail = (error: RedirectErrorCode, description: string): AuthorizationRequestCheck => ({
    kind: 'redirect_error',
    redirectUri,
    error,
    description,
    state,
  });

  for (const name of Object.keys(query)) {
    if (Array.isArray(query[name])) return fail('invalid_request', `${parameterLabel(name)} is repeated`);
    if (String(query[name]).length > MAX_VALUE_LENGTH) return fail('invalid_request', `${parameterLabel(name)} is too long`);
  }

  // RFC 9126 §5 (require_pushed_authorization_requests), FAPI 2.0 Security Profile §5.3.2.2: a fapi2 client pushes its requests.
  if (client.profile === 'fapi2' && deps.pushed !== true) {
    return fail('invalid_request', 'this client must push its authorization requests to /par and send only client_id and request_uri here');
  }

  const responseType = single('response_type');
  if (responseType === undefined) return fail('invalid_request', 'response_type is required');
  if (responseType !== 'code') return fail('unsupported_response_type', 'response_type must be code');
  if (!client.grants.includes('authorization_code')) {
    return fail('unauthorized_client', 'this client is not allowed the authorization_code grant');
  }

  const prompt = single('prompt') as string | undefined;
  if (prompt !== undefined && prompt !== 'login' && prompt !== 'none') return fail('invalid_request', 'prompt must be login or none');

  // OpenID Connect Core §3.1.2.1: unknown acr_values are ignored; max_age must be seconds.
  const acrValues = knownAcrValues(single('acr_values') as string | undefined);
  const maxAgeValue = single('max_age') as string | undefined;
  const maxAge = maxAgeValue === undefined ? null : parseMaxAge(maxAgeValue);
  if (maxAge === undefined) return fail('invalid_request', 'max_age must be a whole number of seconds from 0 to 2147483647');

  const userId = single('user_id') as string | undefined;
  const mobile = userId === undefined ? undefined : parseMobile(userId);
  if (userId !== undefined && !mobile) {
    return fail('invalid_request', 'user_id must be a mobile number in international (E.164) format, e.g. +639171234567');
  }
  // A mobile no code can be sent to (no country, or one CONNECT_SMS_COUNTRIES does not list) could
  // never sign in: refused here rather than prefilled on a login page (docs/journey.md, "`GET /authorize`").
  if (mobile && pinDestinationRefusal(mobile, deps.smsCountries)) {
    return fail('invalid_request', 'user_id is a mobile number Connect cannot send codes to');
  }

  const challenge = single('code_challenge') as string | undefined;
  const method = single('code_challenge_method') as string | undefined;
  if (challenge === undefined && method !== undefined) return fail('invalid_request', 'code_challenge_method without code_challenge');
  if (challenge !== undefined) {
    // RFC 9700 §2.1.1: only S256; "plain" (also the default when no method is named) is refused.
    if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    if (!CODE_CHALLENGE_PATTERN.test(challenge)) return fail('invalid_request', 'code_challenge must be 43 base64url characters (S256)');
  } else if (client.requirePkce || client.profile === 'fapi2') {
    // FAPI 2.0 Security Profile §5.3.2.2: PKCE with S256, always.
    return fail('invalid_request', 'this client must use PKCE: code_challenge with code_challenge_method=S256');
  }

  // RFC 9449 §10: dpop_jkt is the SHA-256 JWK thumbprint of the key the code is bound to.
  const dpopJkt = single('dpop_jkt') as string | undefined;
  if (dpopJkt !== undefined && !JKT_PATTERN.test(dpopJkt)) {
    return fail('invalid_request', 'dpop_jkt must be a base64url SHA-256 JWK thumbprint (43 characters)');
  }

  // RFC 6749 §3.3, §4.1.2.1: without scope, every scope of the client; otherwise only scopes it has.
  let scopes: readonly string[];
  try {
    scopes = grantScope(single('scope') as string | undefined, client.scopes);
  } catch (error) {
    if (error instanceof InvalidScope) return fail(error.error, error.description);
    throw error;
  }

  return {
    kind: 'valid',
    request: {
      client,
      redirectUri,
      state,
      codeChallenge: challenge ?? null,
      loginHint: mobile?.e164 ?? null,
      prompt: (prompt as Prompt | undefined) ?? null,
      scopes,
      acrValues,
      maxAge,
      dpopJkt: dpopJkt ?? null,
    },
  };
}

function pageError(reason: PageErrorReason, clientName?: string): PageError {
  return clientName === undefined ? { kind: 'page_error', reason } : { kind: 'page_error', reason, clientName };
}
