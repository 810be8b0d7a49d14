import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import {
  conformantDescription,
  InsufficientScope,
  InsufficientUserAuthentication,
  InvalidClient,
  InvalidDpopProof,
  InvalidRequest,
  InvalidToken,
  OAuthError,
  ServerError,
  TemporarilyUnavailable,
  TooManyRequests,
  UseDpopNonce,
} from '../../core/errors.js';
import { DPOP_SIGNING_ALGS } from '../../core/dpop/dpop-proof.js';
import { StorageUnavailable } from '../../core/storage-errors.js';
import { isHtmlRoute, requestLanguage, sendErrorPage, type PageLanguage } from './hosted-pages.js';
import { RETRY_AFTER_SECONDS } from '../../core/lifetimes.js';
import { RequestTimedOut } from './request-deadline.js';
import { minutesToWait } from '../views/messages/index.js';
import { markUnavailable } from './request-log.js';
import { limitNote } from '../views/limit-notes.js';
import { dependencyOf, type OutageLog } from '../../compose/outage-log.js';

/**
 * THE mapping from errors to HTTP responses, for every route.
 *
 * - `OAuthError`: its status and `{ error, error_description }`.
 * - `StorageUnavailable` (the database or Redis failed or did not answer in
 *   time), and `RequestTimedOut` (the request was not answered within
 *   `CONNECT_REQUEST_TIMEOUT_MS`): `503 temporarily_unavailable`, and on the
 *   hosted pages a page asking the customer to try again shortly
 *   (docs/operator-guide.md). Counted in `outages`, never logged one by one.
 * - Fastify's own request errors (bad content type, body too large, bad
 *   JSON): `invalid_request` with a fixed, client-safe description.
 * - Anything else: a generic `server_error`, logged in full.
 *
 * Every error response carries `Cache-Control: no-store`; every 401
 * carries a `WWW-Authenticate` challenge (RFC 9110 §15.5.2): `Basic
 * realm="connect"` for `invalid_client`, whatever method the client tried
 * or if it tried none; `Bearer realm="connect"` for a request to a protected
 * resource that presented no token, `Bearer error="invalid_token"` for a
 * bad one (RFC 6750 §3.1), `Bearer error="insufficient_user_authentication"`
 * with the `acr_values` and `max_age` needed for a sign-in too weak or too
 * old (RFC 9470 §3); `invalid_dpop_proof` and `use_dpop_nonce` (RFC 9449
 * §7.1, §9) are 400 at `/token` and 401 with a `DPoP` challenge at a
 * protected resource, and `use_dpop_nonce` carries the fresh nonce in
 * `DPoP-Nonce`; a 403
 * `insufficient_scope` carries `Bearer` with the scopes needed; 503s and
 * 429s (`TooManyRequests`, a spent per-address budget) carry `Retry-After`
 * (RFC 9110 §10.2.3, RFC 6585 §4). Every `error_description` is written in
 * the characters RFC 6749 §5.2 allows (`conformantDescription`).
 */
export function registerErrorHandling(app: FastifyInstance, outages?: OutageLog, options: { readonly sandbox?: boolean } = {}): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const oauthError = toOAuthError(error);
    if (oauthError instanceof TemporarilyUnavailable) {
      // Expected while a dependency is down: counted in its outage, which is
      // logged once (docs/operator-guide.md, "When a dependency fails"); the
      // request's own line names what failed, without a stack.
      const dependency = dependencyOf(error);
      markUnavailable(request, dependency ?? 'request_deadline');
      if (dependency) outages?.requestFailed(dependency, error);
    } else if (oauthError.status >= 500) {
      request.log.error({ err: oauthError instanceof ServerError ? error : (oauthError.cause ?? error) }, 'request failed');
    } else {
      request.log.info({ error: oauthError.error, detail: oauthError.detail }, oauthError.description);
    }
    if (isHtmlRoute(request)) {
      if (oauthError instanceof TemporarilyUnavailable) reply.header('retry-after', String(RETRY_AFTER_SECONDS));
      if (oauthError instanceof TooManyRequests) reply.header('retry-after', String(oauthError.retryAfterSeconds));
      const language = requestLanguage(request);
      // Only start-up of a journey answers a page with 429: its budget is the journeys per address.
      const note = oauthError instanceof TooManyRequests ? limitNote('journey_per_address', options.sandbox === true) : undefined;
      return sendErrorPage(reply, oauthError.status, { language, ...pageMessage(error, oauthError, language), note });
    }
    return sendOAuthError(reply, oauthError);
  });

  app.setNotFoundHandler((_request, reply) => {
    return reply
      .code(404)
      .header('cache-control', 'no-store')
      // The method and path are not repeated: a description never echoes the request.
      .send({ error: 'not_found', error_description: 'there is no endpoint for this method and path' });
  });
}

/** The challenge of a protected resource to a request without a token (RFC 6750 §3). */
const BEARER_CHALLENGE = 'Bearer realm="connect"';

/**
 * The challenge refusing a token, in the scheme it was presented with
 * (`authorization`; `undefined` when the refusal chose `Bearer`): a token
 * sent as `DPoP` is refused in a `DPoP` challenge (RFC 9449 §7.1), any
 * other in a `Bearer` one (RFC 6750 §3).
 */
function invalidTokenChallenge(authorization: string | undefined, description: string): string {
  return authorization !== undefined && /^DPoP /i.test(authorization)
    ? `DPoP error="invalid_token", error_description="${description}", algs="${DPOP_SIGNING_ALGS.join(' ')}"`
    : `Bearer error="invalid_token", error_description="${description}"`;
}

/** Writes an OAuth error response (RFC 6749 §5.2, RFC 6750 §3). */
export function sendOAuthError(reply: FastifyReply, error: OAuthError): FastifyReply {
  const description = conformantDescription(error.description);
  reply.code(error.status).header('cache-control', 'no-store').header('pragma', 'no-cache');
  // RFC 6749 §5.2 asks for the challenge when the client used Basic; RFC 9110 §15.5.2 for every 401.
  if (error instanceof InvalidClient) reply.header('www-authenticate', 'Basic realm="connect"');
  if (error instanceof TemporarilyUnavailable) reply.header('retry-after', String(RETRY_AFTER_SECONDS));
  if (error instanceof TooManyRequests) reply.header('retry-after', String(error.retryAfterSeconds));
  // RFC 6750 §3.1: a request that presented no token gets a challenge without an error code.
  if (error instanceof InvalidToken) {
    reply.header('www-authenticate', error.credentialsMissing ? BEARER_CHALLENGE : invalidTokenChallenge(error.challenge === undefined ? reply.request.headers.authorization : undefined, description));
  }
  // RFC 6750 §3.1: the scopes the request needs, in the challenge (scope tokens hold no `"` or `\`).
  if (error instanceof InsufficientScope) reply.header('www-authenticate', `Bearer error="insufficient_scope", scope="${error.scope}"`);
  // RFC 9470 §3: what a new sign-in must meet, in the challenge.
  if (error instanceof InsufficientUserAuthentication) reply.header('www-authenticate', error.challenge);
  // RFC 9449 §7.1, §9: a protected resource names the DPoP error in its challenge; a nonce error carries the nonce.
  if ((error instanceof InvalidDpopProof || error instanceof UseDpopNonce) && error.atResource) {
    reply.header('www-authenticate', `DPoP error="${error.error}", error_description="${description}", algs="${DPOP_SIGNING_ALGS.join(' ')}"`);
  }
  if (error instanceof UseDpopNonce) reply.header('dpop-nonce', error.nonce);
  return reply.type('application/json; charset=utf-8').send({ error: error.error, error_description: description });
}

/**
 * The title and message of the error page a browser route shows instead of
 * JSON, in the page's language; a refused request's own (English,
 * client-safe) description goes below as its details.
 */
function pageMessage(error: FastifyError, oauthError: OAuthError, { text }: PageLanguage): { title: string; message: string; details?: string } {
  if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') return text.failures.formExpired;
  if (oauthError instanceof TemporarilyUnavailable) return text.failures.unavailable;
  if (oauthError instanceof TooManyRequests) {
    const { title, message } = text.failures.tooManyStarts;
    return { title, message: message(minutesToWait(oauthError.retryAfterSeconds)) };
  }
  if (oauthError.status >= 500) return text.failures.serverError;
  return { ...text.failures.badRequest, details: oauthError.description };
}

const REQUEST_ERRORS: Record<string, { status: number; description: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 400, description: 'unsupported Content-Type' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, description: 'request body is too large' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, description: 'Content-Length does not match the body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, description: 'request body is empty' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, description: 'request body is not valid JSON' },
};

function toOAuthError(error: FastifyError | Error): OAuthError {
  if (error instanceof OAuthError) return error;
  if (error instanceof StorageUnavailable || error instanceof RequestTimedOut) {
    return new TemporarilyUnavailable('the service is temporarily unavailable; retry shortly', { cause: error });
  }
  const fastifyError = error as FastifyError;
  const known = fastifyError.code ? REQUEST_ERRORS[fastifyError.code] : undefined;
  if (known) return new InvalidRequest(known.description, { status: known.status, cause: error });
  if (fastifyError.code === 'FST_CSRF_INVALID_TOKEN' || fastifyError.code === 'FST_CSRF_MISSING_SECRET') {
    return new InvalidRequest('missing or invalid CSRF token', { status: 403, cause: error });
  }
  if (fastifyError.validation) return new InvalidRequest('the request does not have the form this endpoint accepts', { cause: error });
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return new InvalidRequest('request body is not valid JSON', { cause: error });
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return new InvalidRequest('malformed request', { status, cause: error });
  }
  return new ServerError('the server could not complete the request', { cause: error });
}
