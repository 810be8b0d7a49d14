import type { ConnectErrorCode, OAuthErrorCode } from './error-codes.js';
import { HINTS, hintFor } from './hints.js';
import type { PendingAuthorization } from './pending-authorization.js';

export type { ConnectErrorCode, OAuthErrorCode, SdkErrorCode } from './error-codes.js';

export { HINTS } from './hints.js';

/** What an error knows besides its description. */
export interface ConnectErrorOptions {
  /** The HTTP status, when Connect answered. */
  readonly status?: number | undefined;
  /** `Retry-After` of the answer, in seconds, when there was one. */
  readonly retryAfter?: number | undefined;
  /** The request that failed, e.g. `POST /token`; added to the message. */
  readonly endpoint?: string | undefined;
  /** The underlying error (a network failure, an abort reason). */
  readonly cause?: unknown;
  /**
   * What to do next, when the caller knows better than the code and
   * description say (e.g. discovery's `IssuerMismatch`); default: the hint
   * for Connect's `error_description`, else the code's.
   */
  readonly hint?: string | undefined;
}

/**
 * The base class of every error the SDK throws. Its `error` property is the
 * code, so `switch (err.error)` narrows; {@link isConnectError} narrows the
 * error object itself to the matching subclass.
 *
 * Messages never contain the client secret or a token.
 *
 * @example
 * try {
 *   await provider.getToken();
 * } catch (err) {
 *   if (!isConnectError(err)) throw err;
 *   switch (err.error) {
 *     case 'invalid_client': // wrong ID or secret, or another environment's
 *     case 'timeout':
 *     default:
 *   }
 * }
 */
export abstract class ConnectError extends Error {
  /** The error code: Connect's on the wire, or the SDK's own. */
  abstract readonly error: ConnectErrorCode;
  /** Connect's `error_description`, or the SDK's explanation. */
  readonly description: string;
  /** The HTTP status, when Connect answered. */
  readonly status: number | undefined;
  /** `Retry-After` in seconds, when the answer carried one. */
  readonly retryAfter: number | undefined;
  readonly #hint: string | undefined;

  constructor(description: string, options: ConnectErrorOptions = {}) {
    const context = [options.endpoint, options.status === undefined ? undefined : `HTTP ${options.status}`].filter(Boolean);
    const what = context.length > 0 ? `${description} (${context.join(', ')})` : description;
    const hint = options.hint ?? hintOf(new.target, description);
    super(hint ? `${what}. ${hint}` : what, options.cause === undefined ? undefined : { cause: options.cause });
    this.description = description;
    this.status = options.status;
    this.retryAfter = options.retryAfter;
    this.#hint = hint;
  }

  /**
   * What to do next; also the last sentence of `message`. It follows what
   * Connect said (`description`) where that matters: a `redirect_uri` or
   * `code_verifier` mismatch says the code is still valid and which value
   * to send, a revoked refresh token says revoked.
   */
  get hint(): string {
    return this.#hint ?? HINTS[this.error];
  }

  /** The class name, e.g. `InvalidClient`. */
  override get name(): string {
    return this.constructor.name;
  }
}

/** RFC 6749 §5.2: a parameter is missing, repeated or malformed (also 406/415 at `/tokens`). */
export class InvalidRequest extends ConnectError { readonly error = 'invalid_request'; }
/** RFC 6749 §5.2: client authentication failed (wrong ID or secret, disabled client, other environment). */
export class InvalidClient extends ConnectError { readonly error = 'invalid_client'; }
/**
 * RFC 6749 §5.2: the code or refresh token was refused: expired, used,
 * revoked, unknown or another client's, or a code sent with the wrong
 * `redirect_uri` or `code_verifier` (it then stays valid). `description`
 * says which, and `hint` follows it.
 */
export class InvalidGrant extends ConnectError { readonly error = 'invalid_grant'; }
/** RFC 6749 §5.2: the client may not use this grant (refresh is enabled per client by the operator). */
export class UnauthorizedClient extends ConnectError { readonly error = 'unauthorized_client'; }
/** RFC 6749 §5.2: the server does not support this grant type. */
export class UnsupportedGrantType extends ConnectError { readonly error = 'unsupported_grant_type'; }
/** RFC 6749 §5.2: the requested scope is not allowed. */
export class InvalidScope extends ConnectError { readonly error = 'invalid_scope'; }
/** RFC 6749 §4.1.2.1: the authorization request used a response type other than `code`. */
export class UnsupportedResponseType extends ConnectError { readonly error = 'unsupported_response_type'; }
/** RFC 6749 §4.1.2.1: the customer cancelled on the hosted pages. */
export class AccessDenied extends ConnectError { readonly error = 'access_denied'; }
/** `prompt=none` and the customer has no session at Connect: start again without `prompt=none`. */
export class LoginRequired extends ConnectError { readonly error = 'login_required'; }
/** `prompt=none` and the customer, signed in at Connect, has not approved this client: start again without `prompt=none`. */
export class ConsentRequired extends ConnectError { readonly error = 'consent_required'; }
/** The customer must interact with the hosted pages before a code can be issued. */
export class InteractionRequired extends ConnectError { readonly error = 'interaction_required'; }
/**
 * The authorization asked for `acr_values=phr` and the customer could not
 * sign in with a passkey ("I can't use a passkey"): offer another way, or
 * say the operation needs a passkey.
 */
export class UnmetAuthenticationRequirements extends ConnectError { readonly error = 'unmet_authentication_requirements'; }
/** RFC 6750 §3.1: the bearer token is missing, malformed, expired or revoked. */
export class InvalidToken extends ConnectError { readonly error = 'invalid_token'; }
/**
 * RFC 6750 §3.1: the token lacks a scope the request needs. An API answers
 * it with 403 and `WWW-Authenticate: Bearer error="insufficient_scope",
 * scope="…"` naming `scope`.
 */
export class InsufficientScope extends ConnectError {
  readonly error = 'insufficient_scope';
  /** The scopes the request needs, space-separated, when known (the verifier's `scopes`). */
  readonly scope: string | undefined;
  constructor(description: string, options: ConnectErrorOptions & { readonly scope?: string | undefined } = {}) {
    super(description, options);
    this.scope = options.scope;
  }
}
/**
 * RFC 9470 §3: the token is valid, but the customer's sign-in is weaker or
 * older than the request needs. An API answers it with 401 and
 * `WWW-Authenticate: Bearer error="insufficient_user_authentication",
 * error_description="…", acr_values="…", max_age="…"` (`stepUpChallenge`
 * builds it); a consumer sends the customer through the authorization
 * again with these `acr_values` and `max_age`.
 */
export class InsufficientUserAuthentication extends ConnectError {
  readonly error = 'insufficient_user_authentication';
  /** The `acr` values of which the sign-in must have one, in order of preference; empty when any will do. */
  readonly acrValues: readonly string[];
  /** The most seconds since the sign-in (`auth_time`) the request accepts; `undefined` when any age will do. */
  readonly maxAge: number | undefined;
  constructor(
    description: string,
    options: ConnectErrorOptions & { readonly acrValues?: readonly string[] | undefined; readonly maxAge?: number | undefined } = {},
  ) {
    super(description, options);
    this.acrValues = [...(options.acrValues ?? [])];
    this.maxAge = options.maxAge;
  }
}
/**
 * RFC 9449 §7.1: the DPoP proof was refused (malformed, wrongly signed, of
 * another key than the token's, stale, or used before).
 */
export class InvalidDpopProof extends ConnectError { readonly error = 'invalid_dpop_proof'; }
/**
 * RFC 9449 §8: the server wants a DPoP proof with its nonce (`DPoP-Nonce`).
 * The SDK answers this itself, once per request; it reaches you only when
 * the proof with the new nonce was refused as well.
 */
export class UseDpopNonce extends ConnectError { readonly error = 'use_dpop_nonce'; }
/**
 * RFC 9126 §4: the `request_uri` of a pushed authorization request is
 * expired (60 seconds), used, or another client's; start the authorization
 * again. Connect shows it to the customer on an error page at `/authorize`
 * (never a redirect), so it reaches the SDK only from a server that redirects it.
 */
export class InvalidRequestUri extends ConnectError { readonly error = 'invalid_request_uri'; }
/** Connect failed unexpectedly (retried by the SDK where that is safe). */
export class ServerError extends ConnectError { readonly error = 'server_error'; }
/** Connect is overloaded or down for a moment (503 or 429; retried by the SDK where that is safe). */
export class TemporarilyUnavailable extends ConnectError { readonly error = 'temporarily_unavailable'; }
/** The answer was not Connect's: HTML, garbage, or JSON of the wrong shape. */
export class InvalidResponse extends ConnectError { readonly error = 'invalid_response'; }
/** The callback URL is malformed or lacks a parameter Connect always sends. */
export class InvalidCallback extends ConnectError { readonly error = 'invalid_callback'; }
/** The callback's `state` is not the one of the pending authorization (RFC 6749 §10.12: possible CSRF). */
export class StateMismatch extends ConnectError { readonly error = 'state_mismatch'; }
/** The callback's `iss` is not Connect's auth URL (RFC 9207: possible mix-up attack). */
export class IssuerMismatch extends ConnectError { readonly error = 'issuer_mismatch'; }
/** No answer within the configured timeout (`timeoutMs`). */
export class Timeout extends ConnectError { readonly error = 'timeout'; }
/** The caller's `AbortSignal` fired; `cause` is its reason. */
export class Aborted extends ConnectError { readonly error = 'aborted'; }
/** The request did not reach Connect or the connection broke (DNS, refused, reset). */
export class NetworkError extends ConnectError { readonly error = 'network_error'; }

/** Why a customer must go through the authorization again. */
export type ReauthorizationReason =
  /** Nothing is stored for this customer key. */
  | 'no_tokens'
  /** The refresh token has expired (docs/consumer-guide.md, "When to renew which token": both tokens expired). */
  | 'refresh_expired'
  /** Connect refused the refresh token (`invalid_grant`: revoked, expired by its clock, unknown). */
  | 'refresh_rejected'
  /**
   * The access token expired and there is no refresh token: the client has
   * no `refresh_token` grant, so Connect issued none.
   */
  | 'no_refresh_token';

/**
 * The customer's tokens can no longer be renewed: send the customer's
 * browser to `authorization.url`, keep `authorization.state` and
 * `authorization.codeVerifier` with the customer's session, and complete
 * the link when the callback arrives (docs/consumer-guide.md, "When to renew
 * which token", last row).
 */
export class ReauthorizationRequired extends ConnectError {
  readonly error = 'reauthorization_required';
  /** A ready authorization request: the URL plus what to keep until the callback. */
  readonly authorization: PendingAuthorization;
  /** Why the stored tokens cannot be used. */
  readonly reason: ReauthorizationReason;
  /** The customer key the tokens were stored under. */
  readonly customerKey: string;

  constructor(customerKey: string, reason: ReauthorizationReason, authorization: PendingAuthorization, options: ConnectErrorOptions = {}) {
    // Connect's own words when it refused the refresh token: revoked is not expired.
    const refused = options.cause instanceof ConnectError ? `Connect refused the refresh token: ${options.cause.description}` : 'Connect refused the refresh token';
    const why = {
      no_tokens: 'no tokens are stored for this customer',
      refresh_expired: 'the refresh token has expired',
      refresh_rejected: refused,
      no_refresh_token: 'the access token has expired and there is no refresh token (the client has no refresh_token grant)',
    }[reason];
    const hint =
      reason === 'no_refresh_token'
        ? `${HINTS.reauthorization_required.slice(0, -1)}; to keep customers linked past the access token's lifetime, ask the operator to add the refresh_token grant to the client.`
        : undefined;
    super(`${why}; the customer must authorize again`, { hint, ...options });
    this.customerKey = customerKey;
    this.reason = reason;
    this.authorization = authorization;
  }
}

/** Every concrete error class; `isConnectError` narrows to this union, which discriminates on `error`. */
export type AnyConnectError =
  | InvalidRequest
  | InvalidClient
  | InvalidGrant
  | UnauthorizedClient
  | UnsupportedGrantType
  | InvalidScope
  | UnsupportedResponseType
  | AccessDenied
  | LoginRequired
  | ConsentRequired
  | InteractionRequired
  | UnmetAuthenticationRequirements
  | InvalidToken
  | InsufficientScope
  | InsufficientUserAuthentication
  | InvalidDpopProof
  | UseDpopNonce
  | InvalidRequestUri
  | ServerError
  | TemporarilyUnavailable
  | InvalidResponse
  | InvalidCallback
  | StateMismatch
  | IssuerMismatch
  | Timeout
  | Aborted
  | NetworkError
  | ReauthorizationRequired;

/**
 * Whether `value` is an error from this SDK. Narrows to {@link AnyConnectError},
 * so a `switch` on `error` gives each case its own class (and, for
 * `reauthorization_required`, its `authorization`).
 *
 * @example
 * if (isConnectError(err) && err.error === 'reauthorization_required') redirect(err.authorization.url);
 */
export function isConnectError(value: unknown): value is AnyConnectError {
  return value instanceof ConnectError;
}

/** The code of each class, for the message built before the subclass's own fields exist. */
const CODE_OF_CLASS = new Map<Function, ConnectErrorCode>([
  [InvalidRequest, 'invalid_request'],
  [InvalidClient, 'invalid_client'],
  [InvalidGrant, 'invalid_grant'],
  [UnauthorizedClient, 'unauthorized_client'],
  [UnsupportedGrantType, 'unsupported_grant_type'],
  [InvalidScope, 'invalid_scope'],
  [UnsupportedResponseType, 'unsupported_response_type'],
  [AccessDenied, 'access_denied'],
  [LoginRequired, 'login_required'],
  [ConsentRequired, 'consent_required'],
  [InteractionRequired, 'interaction_required'],
  [UnmetAuthenticationRequirements, 'unmet_authentication_requirements'],
  [InvalidToken, 'invalid_token'],
  [InsufficientScope, 'insufficient_scope'],
  [InsufficientUserAuthentication, 'insufficient_user_authentication'],
  [InvalidDpopProof, 'invalid_dpop_proof'],
  [UseDpopNonce, 'use_dpop_nonce'],
  [InvalidRequestUri, 'invalid_request_uri'],
  [ServerError, 'server_error'],
  [TemporarilyUnavailable, 'temporarily_unavailable'],
  [InvalidResponse, 'invalid_response'],
  [InvalidCallback, 'invalid_callback'],
  [StateMismatch, 'state_mismatch'],
  [IssuerMismatch, 'issuer_mismatch'],
  [Timeout, 'timeout'],
  [Aborted, 'aborted'],
  [NetworkError, 'network_error'],
  [ReauthorizationRequired, 'reauthorization_required'],
]);

function hintOf(errorClass: Function, description: string): string | undefined {
  // A consumer's own subclass of one of these classes gets its parent's hint.
  for (let current: unknown = errorClass; typeof current === 'function'; current = Object.getPrototypeOf(current)) {
    const code = CODE_OF_CLASS.get(current);
    if (code) return hintFor(code, description);
  }
  return undefined;
}

type WireErrorClass = new (description: string, options?: ConnectErrorOptions) => ConnectError & { readonly error: OAuthErrorCode };

const WIRE_ERRORS: Readonly<Record<OAuthErrorCode, WireErrorClass>> = {
  invalid_request: InvalidRequest,
  invalid_client: InvalidClient,
  invalid_grant: InvalidGrant,
  unauthorized_client: UnauthorizedClient,
  unsupported_grant_type: UnsupportedGrantType,
  invalid_scope: InvalidScope,
  unsupported_response_type: UnsupportedResponseType,
  access_denied: AccessDenied,
  login_required: LoginRequired,
  consent_required: ConsentRequired,
  interaction_required: InteractionRequired,
  unmet_authentication_requirements: UnmetAuthenticationRequirements,
  invalid_token: InvalidToken,
  insufficient_scope: InsufficientScope,
  insufficient_user_authentication: InsufficientUserAuthentication,
  invalid_dpop_proof: InvalidDpopProof,
  use_dpop_nonce: UseDpopNonce,
  invalid_request_uri: InvalidRequestUri,
  server_error: ServerError,
  temporarily_unavailable: TemporarilyUnavailable,
};

/**
 * The error for a code Connect sent on the wire, or `undefined` for a code
 * this SDK does not know (the caller then reports an invalid answer).
 */
export function errorForCode(code: unknown, description: string, options: ConnectErrorOptions = {}): ConnectError | undefined {
  if (typeof code !== 'string' || !Object.hasOwn(WIRE_ERRORS, code)) return undefined;
  const ErrorClass = WIRE_ERRORS[code as OAuthErrorCode];
  return new ErrorClass(description, options);
}
