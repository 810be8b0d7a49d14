/**
 * The OAuth 2.0 error catalogue.
 *
 * Core code throws these; `http/plugins/oauth-errors.ts` is the one place that
 * turns them into HTTP responses. `description` is shown to the API consumer
 * and must never contain a secret; `detail` and `cause` go to logs only.
 */
export abstract class OAuthError extends Error {
  /** The RFC 6749 / 6750 / 7009 error code sent on the wire. */
  abstract readonly error: string;
  /** The HTTP status this error is sent with. */
  abstract readonly status: number;
  /** Client-safe explanation (`error_description`). */
  readonly description: string;
  /** Extra context for the logs only; never sent to the client. */
  readonly detail: string | undefined;

  constructor(description: string, options: { detail?: string; cause?: unknown } = {}) {
    super(description, options.cause === undefined ? undefined : { cause: options.cause });
    this.description = description;
    this.detail = options.detail;
  }

  override get name(): string {
    return this.constructor.name;
  }
}

/**
 * RFC 6749 §5.2 (and §4.1.2.1): the only characters an `error_description`
 * may use: printable ASCII without `"` and `\`.
 */
export const ERROR_DESCRIPTION_PATTERN = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * `description` in the characters RFC 6749 allows: `"` becomes `'`, `\`
 * becomes `/`, and anything else outside printable ASCII becomes `?`. Every
 * description Connect writes already conforms; this is the guard of the one
 * error mapping and of the error redirects, so that no description that
 * slipped through can break a client's parser.
 */
export function conformantDescription(description: string): string {
  if (ERROR_DESCRIPTION_PATTERN.test(description)) return description;
  return description.replace(/"/g, "'").replace(/\\/g, '/').replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '?');
}

/** The names of the parameters Connect reads, on any endpoint or page. */
const KNOWN_PARAMETERS: ReadonlySet<string> = new Set([
  'grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'client_id', 'client_secret', 'scope',
  'token', 'token_type_hint',
  'response_type', 'state', 'prompt', 'user_id', 'code_challenge', 'code_challenge_method', 'ui_locales', 'acr_values', 'max_age',
  'request', 'request_uri', 'dpop_jkt', 'csrf_token', 'mobile', 'pin', 'pin_confirmation', 'otp', 'action', 'to', 'refreshToken',
]);

/**
 * How an error description names the parameter `name` a request sent: by
 * its name when it is one Connect reads (then the name is Connect's own
 * word), otherwise as "a parameter", so that a description never repeats
 * what a request made up.
 *
 * @example
 * `${parameterLabel('grant_type')} is repeated` // 'grant_type is repeated'
 * `${parameterLabel('x"y')} is repeated`        // 'a parameter is repeated'
 */
export function parameterLabel(name: string): string {
  return KNOWN_PARAMETERS.has(name) ? name : 'a parameter';
}

/** RFC 6749 §5.2: the request is missing, repeats or malforms a parameter. */
export class InvalidRequest extends OAuthError {
  readonly error = 'invalid_request';
  readonly status: number;
  constructor(description: string, options: { detail?: string; cause?: unknown; status?: number } = {}) {
    super(description, options);
    this.status = options.status ?? 400;
  }
}

/** How the client tried to authenticate (recorded in the audit log of a failure). */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

/**
 * RFC 6749 §5.2: client authentication failed. Always answered with the
 * `WWW-Authenticate: Basic` challenge, whatever the method tried.
 */
export class InvalidClient extends OAuthError {
  readonly error = 'invalid_client';
  readonly status = 401;
  /** The method the client attempted (for the audit log). */
  readonly attemptedMethod: ClientAuthMethod;
  /** The client ID the request claimed, when it named one (for the audit log). */
  readonly claimedClientId: string | undefined;
  /** Whether the claimed client exists here (a wrong secret, a disabled client), not an ID made up (for the audit log). */
  readonly claimedClientKnown: boolean;
  constructor(
    description: string,
    attemptedMethod: ClientAuthMethod,
    options: { detail?: string; cause?: unknown; claimedClientId?: string | undefined; claimedClientKnown?: boolean } = {},
  ) {
    super(description, options);
    this.attemptedMethod = attemptedMethod;
    this.claimedClientId = options.claimedClientId;
    this.claimedClientKnown = options.claimedClientKnown ?? false;
  }
}

/** RFC 6749 §5.2: the grant (code, refresh token, ...) is invalid, expired, revoked or foreign. */
export class InvalidGrant extends OAuthError {
  readonly error = 'invalid_grant';
  readonly status = 400;
}

/** RFC 6749 §5.2: the client may not use this grant type. */
export class UnauthorizedClient extends OAuthError {
  readonly error = 'unauthorized_client';
  readonly status: number;
  constructor(description: string, options: { detail?: string; cause?: unknown; status?: number } = {}) {
    super(description, options);
    this.status = options.status ?? 400;
  }
}

/** RFC 6749 §4.1.2.1: the `response_type` is not one this server issues (`POST /par`'s answer; `/authorize` redirects it). */
export class UnsupportedResponseType extends OAuthError {
  readonly error = 'unsupported_response_type';
  readonly status = 400;
}

/** RFC 6749 §5.2: the grant type is not supported by this server. */
export class UnsupportedGrantType extends OAuthError {
  readonly error = 'unsupported_grant_type';
  readonly status = 400;
}

/** RFC 6749 §5.2, §4.1.2.1: the requested scope is malformed, or more than the client is registered for. */
export class InvalidScope extends OAuthError {
  readonly error = 'invalid_scope';
  readonly status = 400;
}

/**
 * RFC 6750 §3.1: the bearer token is missing, malformed, expired or revoked.
 *
 * `credentialsMissing` marks a request that presented no token at all (no
 * `Authorization` header, a scheme other than Bearer or DPoP, or the scheme
 * without a token): RFC 6750 §3.1 answers it with a challenge that carries
 * no error code (`Bearer realm="connect"`), while the JSON body still says
 * `invalid_token` (docs/resource-servers.md, docs/consumer-guide.md).
 */
export class InvalidToken extends OAuthError {
  readonly error = 'invalid_token';
  readonly status = 401;
  /** Whether the request presented no token at all (then the challenge has no error code). */
  readonly credentialsMissing: boolean;
  /**
   * The scheme of the challenge, when the refusal decides it (a bearer
   * token sent as `DPoP` is told to come as `Bearer`); otherwise the scheme
   * the token was presented with (RFC 9449 §7.1).
   */
  readonly challenge: 'Bearer' | undefined;
  constructor(description: string, options: { detail?: string; cause?: unknown; credentialsMissing?: boolean; challenge?: 'Bearer' } = {}) {
    super(description, options);
    this.credentialsMissing = options.credentialsMissing ?? false;
    this.challenge = options.challenge;
  }
}

/**
 * Whether an `Authorization` header presents a token: the Bearer (RFC 6750
 * §2.1) or DPoP (RFC 9449 §7.1) scheme, case-insensitive, followed by
 * something. Without one, a protected resource's 401 carries no error code
 * (RFC 6750 §3.1).
 */
export function presentsToken(authorization: string | undefined): boolean {
  return authorization !== undefined && /^(?:Bearer|DPoP) +\S/i.test(authorization);
}

/**
 * RFC 6750 §3.1: the bearer token is valid but lacks a scope the request
 * needs. Answered with 403 and a `WWW-Authenticate: Bearer` challenge
 * naming the scopes needed (`scope`).
 */
export class InsufficientScope extends OAuthError {
  readonly error = 'insufficient_scope';
  readonly status = 403;
  /** The scopes the request needs, space-separated (RFC 6750 §3: the challenge's `scope`). */
  readonly scope: string;
  constructor(description: string, scope: string, options: { detail?: string; cause?: unknown } = {}) {
    super(description, options);
    this.scope = scope;
  }
}

/**
 * RFC 9470 §3: the bearer token is valid, but the sign-in it stands for is
 * weaker or older than the request needs (docs/resource-servers.md,
 * "Requiring a strong or recent sign-in"). Answered with 401 and a
 * `WWW-Authenticate: Bearer error="insufficient_user_authentication"`
 * challenge naming what a new sign-in must meet (`challenge`).
 */
export class InsufficientUserAuthentication extends OAuthError {
  readonly error = 'insufficient_user_authentication';
  readonly status = 401;
  /** The `acr` values of which the sign-in must have one, in order of preference; empty when any will do. */
  readonly acrValues: readonly string[];
  /** The most seconds since the sign-in (`auth_time`) the request accepts; `undefined` when any age will do. */
  readonly maxAge: number | undefined;
  constructor(description: string, requirement: { readonly acrValues?: readonly string[] | undefined; readonly maxAge?: number | undefined }, options: { detail?: string; cause?: unknown } = {}) {
    super(description, options);
    this.acrValues = [...(requirement.acrValues ?? [])];
    this.maxAge = requirement.maxAge;
  }

  /**
   * The `WWW-Authenticate` value of RFC 9470 §3: `Bearer
   * error="insufficient_user_authentication", error_description="…"`, then
   * `acr_values="…"` (space-separated) and `max_age="…"` when required.
   */
  get challenge(): string {
    const parts = [`Bearer error="${this.error}"`, `error_description="${conformantDescription(this.description)}"`];
    if (this.acrValues.length > 0) parts.push(`acr_values="${this.acrValues.join(' ')}"`);
    if (this.maxAge !== undefined) parts.push(`max_age="${this.maxAge}"`);
    return parts.join(', ');
  }
}

/**
 * Too many requests from one client address: a per-address budget of
 * Connect's is spent (RFC 6585 §4). Answered with 429 and `Retry-After`;
 * on the hosted pages with a page saying when to try again
 * (docs/lifetimes.md, "Journeys").
 */
export class TooManyRequests extends OAuthError {
  readonly error = 'too_many_requests';
  readonly status = 429;
  /** Seconds until the budget has room again (`Retry-After`). */
  readonly retryAfterSeconds: number;
  constructor(description: string, retryAfterSeconds: number, options: { detail?: string; cause?: unknown } = {}) {
    super(description, options);
    this.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterSeconds));
  }
}

/**
 * RFC 9449 §5, §7.1: a DPoP proof is missing where one is required, or
 * malformed, badly signed, stale, replayed or not for this request
 * (docs/resource-servers.md, "DPoP-bound tokens"). 400 at `/token`; 401
 * with `WWW-Authenticate: DPoP error="invalid_dpop_proof"` where a
 * protected resource is asked (`at: 'resource'`).
 */
export class InvalidDpopProof extends OAuthError {
  readonly error = 'invalid_dpop_proof';
  readonly status: number;
  /** Whether a protected resource refused it (401 with a DPoP challenge) rather than the token endpoint (400). */
  readonly atResource: boolean;
  constructor(description: string, options: { detail?: string; cause?: unknown; at?: 'token' | 'resource' } = {}) {
    super(description, options);
    this.atResource = options.at === 'resource';
    this.status = this.atResource ? 401 : 400;
  }
}

/**
 * RFC 9449 §8, §9: the proof must carry a server nonce it lacks, or its
 * nonce is stale. Answered with a fresh one in `DPoP-Nonce`: 400 at
 * `/token`; 401 with `WWW-Authenticate: DPoP error="use_dpop_nonce"` where
 * a protected resource is asked.
 */
export class UseDpopNonce extends OAuthError {
  readonly error = 'use_dpop_nonce';
  readonly status: number;
  readonly atResource: boolean;
  /** The nonce the next proof must carry (`DPoP-Nonce`). */
  readonly nonce: string;
  constructor(description: string, nonce: string, options: { detail?: string; cause?: unknown; at?: 'token' | 'resource' } = {}) {
    super(description, options);
    this.nonce = nonce;
    this.atResource = options.at === 'resource';
    this.status = this.atResource ? 401 : 400;
  }
}

/** RFC 6749 §4.1.2.1: a dependency is down; the client may retry later. */
export class TemporarilyUnavailable extends OAuthError {
  readonly error = 'temporarily_unavailable';
  readonly status = 503;
}

/** An unexpected failure; the description is generic and the cause is logged. */
export class ServerError extends OAuthError {
  readonly error = 'server_error';
  readonly status = 500;
}
