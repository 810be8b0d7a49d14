import { SCHEMAS, schemaRef, type JsonSchema } from './schemas.js';
import type { Content, HeaderObject, OpenApiDocument, Parameter, Reference, ResponseObject, SecurityScheme, Server } from './types.js';

/**
 * The reusable parts of Connect's OpenAPI description (`document.ts`):
 * response headers, responses, parameters and security schemes.
 */

/** What the server variables default to: where `npm start` listens when nothing is configured. */
const LOCAL_URL = 'http://127.0.0.1:3000';

/**
 * Where the paths live, as server variables (`GET /openapi.json` fills
 * them in with this server's URLs): the auth URL by default, the base URL
 * for `/tokens` and the platform's APIs, and the root of the auth URL's
 * host for the hosted pages, which link to each other from there.
 */
export const SERVERS = {
  authUrl: {
    url: '{authUrl}',
    description: 'The auth URL (`CONNECT_AUTH_URL`): the issuer.',
    variables: { authUrl: { default: LOCAL_URL, description: 'The auth URL, without a trailing slash.' } },
  },
  baseUrl: {
    url: '{baseUrl}',
    description: 'The base URL (`CONNECT_BASE_URL`; by default the auth URL).',
    variables: { baseUrl: { default: LOCAL_URL, description: 'The base URL, without a trailing slash.' } },
  },
  authOrigin: {
    url: '{authOrigin}',
    description: "The root of the auth URL's host: the same as the auth URL when it has no path.",
    variables: { authOrigin: { default: LOCAL_URL, description: 'The scheme, host and port of the auth URL.' } },
  },
} as const satisfies Record<string, Server>;

/** Response headers, by component name. */
export const HEADERS = {
  RequestId: {
    description:
      'On every response: the request\'s own `X-Request-Id` when it is 1 to 128 of `A-Z a-z 0-9 . _ : -`, else a fresh UUID; the `reqId` of its log lines and the `requestId` of the audit events it caused.',
    required: true,
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
  },
  NoStore: { description: 'Never cached.', required: true, schema: { type: 'string', const: 'no-store' } },
  PragmaNoCache: { description: 'HTTP/1.0 caches too (RFC 6749 §5.1).', required: true, schema: { type: 'string', const: 'no-cache' } },
  PublicCache: {
    description: 'Shared caches may keep it this many seconds.',
    required: true,
    schema: { type: 'string', pattern: '^public, max-age=[0-9]+$' },
  },
  ETag: { description: 'Send it back as `If-None-Match` to get `304` while it has not changed.', required: true, schema: { type: 'string' } },
  RetryAfter: { description: 'Seconds to wait before retrying.', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } },
  BasicChallenge: {
    description: 'On every `invalid_client`, whichever way the client authenticated (RFC 6749 §5.2, RFC 9110 §15.5.2).',
    required: true,
    schema: { type: 'string', const: 'Basic realm="connect"' },
  },
  BearerChallenge: {
    description: 'RFC 6750 §3.1: `Bearer realm="connect"`, without an error code, when the request presented no token (no `Authorization`, or a scheme other than Bearer or DPoP); `Bearer error="invalid_token", error_description="…"` when the token was refused.',
    required: true,
    schema: { type: 'string', pattern: '^Bearer (realm="connect"|error="invalid_token"(, error_description="[^"\\\\]*")?)$' },
  },
  InsufficientScopeChallenge: {
    description: 'RFC 6750 §3.1: the scopes the request needs.',
    required: true,
    schema: { type: 'string', pattern: '^Bearer error="insufficient_scope", scope="[^"\\\\]*"$' },
  },
  Location: { description: 'Where to go next.', required: true, schema: { type: 'string', minLength: 1 } },
  AllowPost: { description: 'The one method the endpoint takes.', required: true, schema: { type: 'string', const: 'POST' } },
  RequestReferenceNo: {
    description: 'The request\'s `Request-Reference-No`, echoed whenever it carried one (errors included).',
    schema: { type: 'string' },
  },
  ContentLanguage: { description: "The page's language.", required: true, schema: { type: 'string', enum: ['en', 'fil'] } },
  SetCookie: {
    description:
      'The hosted pages\' cookies (`HttpOnly`, `SameSite=Lax`; `Secure` and `__Host-` prefixed in production): the browser binding, the CSRF secret, the customer\'s session, and (after a sign-in or a PIN reset, for 180 days) the known device, whose PIN resets draw on a budget of their own.',
    schema: { type: 'string' },
  },
} as const satisfies Record<string, HeaderObject>;

export type HeaderName = keyof typeof HEADERS;

/** A reference to one of {@link HEADERS}. */
export function header(name: HeaderName): Reference {
  return { $ref: `#/components/headers/${name}` };
}

/** A response; every one carries `X-Request-Id`. */
export function response(description: string, parts: { headers?: Record<string, Reference>; content?: Content } = {}): ResponseObject {
  return { description, headers: { 'X-Request-Id': header('RequestId'), ...parts.headers }, ...(parts.content ? { content: parts.content } : {}) };
}

/** A JSON body of `schema`. */
export function json(schema: JsonSchema): Content {
  return { 'application/json': { schema } };
}

/** An HTML page. */
export const HTML: Content = { 'text/html': { schema: { type: 'string', description: 'An HTML page (no inline script; the one-time-PIN pages load `/assets/resend-countdown.js`, the login, one-time-PIN and passkey pages `/assets/simplewebauthn-browser.js` and `/assets/passkeys.js`).' } } };

/** `{ error, error_description }` (RFC 6749 §5.2) with `error` one of `codes`. */
export function oauthError(codes: readonly string[]): JsonSchema {
  return {
    type: 'object',
    required: ['error', 'error_description'],
    additionalProperties: false,
    properties: { error: { type: 'string', enum: [...codes] }, error_description: schemaRef('ErrorDescription') },
  };
}

/** An OAuth error response: JSON, never cached, with `headers` besides. */
export function errorResponse(description: string, codes: readonly string[], headers: Record<string, Reference> = {}): ResponseObject {
  return response(description, {
    headers: { 'Cache-Control': header('NoStore'), Pragma: header('PragmaNoCache'), ...headers },
    content: json(oauthError(codes)),
  });
}

/** A hosted page, never cached. */
export function page(description: string, headers: Record<string, Reference> = {}): ResponseObject {
  return response(description, {
    headers: { 'Cache-Control': header('NoStore'), 'Content-Language': header('ContentLanguage'), ...headers },
    content: HTML,
  });
}

/** `303 See Other` (RFC 9700 §4.12: after a form POST, never 307). */
export function seeOther(description: string): ResponseObject {
  return response(description, {
    headers: { Location: header('Location'), 'Cache-Control': header('NoStore'), 'Set-Cookie': header('SetCookie') },
  });
}

/** Responses several operations share, by component name. */
export const RESPONSES = {
  InvalidClient: errorResponse('Client authentication failed: unknown client, wrong secret, a disabled client, another environment\'s credentials, or none.', ['invalid_client'], {
    'WWW-Authenticate': header('BasicChallenge'),
  }),
  InvalidToken: errorResponse('The bearer token is missing, malformed, expired, revoked or not of the kind this endpoint takes (RFC 6750 §3.1).', ['invalid_token'], {
    'WWW-Authenticate': header('BearerChallenge'),
  }),
  BodyTooLarge: errorResponse('The body is larger than 16 KiB.', ['invalid_request']),
  TemporarilyUnavailable: errorResponse(
    'The database or Redis failed or did not answer in time, or the request was not answered within `CONNECT_REQUEST_TIMEOUT_MS`: retry after `Retry-After` seconds.',
    ['temporarily_unavailable'],
    { 'Retry-After': header('RetryAfter') },
  ),
  BadQuery: errorResponse('A query parameter (name or value) holds a control character.', ['invalid_request']),
  MethodNotAllowed: errorResponse('The token endpoint takes POST only.', ['invalid_request'], { Allow: header('AllowPost') }),
  NotFound: response('No endpoint has this path.', {
    headers: { 'Cache-Control': header('NoStore') },
    content: json(oauthError(['not_found'])),
  }),
  ErrorPage: page(
    'An error page: the request is not one the page can serve (a parameter holds a control character, a form that does not parse), or (hosted pages) a journey that expired, finished or belongs to another browser.',
  ),
  FormRefusedPage: page('The form\'s `csrf_token` is missing or does not match this browser\'s cookie: nothing changed.'),
  FormTooLargePage: page('The form is larger than 16 KiB: nothing changed.'),
  UnavailablePage: page('The database or Redis failed or did not answer in time (or PIN checks are queued full): the page asks the customer to try again shortly; nothing changed.', {
    'Retry-After': header('RetryAfter'),
  }),
} as const satisfies Record<string, ResponseObject>;

/** A reference to one of {@link RESPONSES}. */
export function shared(name: keyof typeof RESPONSES): Reference {
  return { $ref: `#/components/responses/${name}` };
}

/** Parameters several operations share. */
export const PARAMETERS = {
  JourneyRequest: {
    name: 'request',
    in: 'query',
    required: true,
    description: 'The pending authorization request, as `/authorize` and the pages link to it.',
    schema: { type: 'string' },
  },
  UiLocales: {
    name: 'ui_locales',
    in: 'query',
    description:
      "The pages' language: BCP 47 tags, space-separated, most preferred first (`en`, `fil`, …); else `Accept-Language`, else English.",
    schema: { type: 'string' },
  },
} as const satisfies Record<string, Parameter>;

/** A reference to one of {@link PARAMETERS}. */
export function parameter(name: keyof typeof PARAMETERS): Reference {
  return { $ref: `#/components/parameters/${name}` };
}

export const SECURITY_SCHEMES = {
  clientSecretBasic: {
    type: 'http',
    scheme: 'basic',
    description:
      '`client_secret_basic` (RFC 6749 §2.3.1): the client ID and secret, each form-encoded, as HTTP Basic. ' +
      '`client_secret_post` is the other way: `client_id` and `client_secret` in the form body (OpenAPI has no security scheme for body parameters, ' +
      'so the operations that take it list it in their request body and allow requests without this header). ' +
      '`private_key_jwt` (RFC 7523) is a third: `client_assertion_type` and `client_assertion` in the form body. Never two at once.',
  },
  clientAccessToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'A client access token of this environment (a JWT, RFC 9068) from `grant_type=client_credentials` at `/token`.',
  },
  customerAccessToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWE',
    description: 'A customer access token (a JWE, opaque to the consumer) from the `authorization_code` or `refresh_token` grant, or from `/tokens`.',
  },
} as const satisfies Record<string, SecurityScheme>;

/** Client authentication at `/token`, `/introspect` and `/revoke`: HTTP Basic, or the form body. */
export const CLIENT_AUTHENTICATION = [{ clientSecretBasic: [] }, {}] as const;

/** Everything of `components`. */
export const COMPONENTS: OpenApiDocument['components'] = {
  schemas: SCHEMAS,
  responses: RESPONSES,
  headers: HEADERS,
  parameters: PARAMETERS,
  securitySchemes: SECURITY_SCHEMES,
};
