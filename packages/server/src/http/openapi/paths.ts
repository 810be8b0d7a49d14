import {
  CLIENT_AUTHENTICATION,
  errorResponse,
  header,
  json,
  page,
  parameter,
  response,
  seeOther,
  SERVERS,
  shared,
} from './components.js';
import { schemaRef, type JsonSchema } from './schemas.js';
import type { Operation, Parameter, PathItem } from './types.js';

/**
 * The paths of Connect's OpenAPI description: every route of the public
 * listener, each with every status it answers.
 */

const { baseUrl: BASE_URL, authOrigin: AUTH_ORIGIN } = SERVERS;

const query = (name: string, description: string, schema: JsonSchema = { type: 'string' }, required = false): Parameter => ({
  name,
  in: 'query',
  description,
  schema,
  ...(required ? { required } : {}),
});

const form = (schema: JsonSchema) => ({ required: true, content: { 'application/x-www-form-urlencoded': { schema } } });

/** The token endpoint's other methods: 405 with `Allow: POST`. */
function notPost(method: string): Operation {
  return {
    operationId: `token${method}`,
    summary: 'Not allowed: the token endpoint takes POST only',
    tags: ['tokens'],
    responses: { 400: shared('BadQuery'), 405: shared('MethodNotAllowed') },
  };
}

/** What a hosted page is, for {@link hostedPage}. */
interface HostedPage {
  /** As the summaries name it: `login`. */
  readonly name: string;
  /** As operation IDs name it: `Login`. */
  readonly id: string;
  /** What the page shows. */
  readonly shows: string;
  readonly form: JsonSchema;
  /** What a POST does. */
  readonly handles: string;
  /** When a POST answers the page itself (200), if ever. */
  readonly again?: string;
  /** What a POST may be asked to fix (the form again, 400), if anything. */
  readonly problems?: string;
}

/** A hosted page: a GET that shows its form and a POST that handles it. */
function hostedPage({ name, id, shows, form: formSchema, handles, again, problems }: HostedPage): PathItem {
  return {
    servers: [AUTH_ORIGIN],
    get: {
      operationId: `show${id}`,
      summary: `The ${name} page`,
      description: shows,
      tags: ['hosted pages'],
      parameters: [parameter('JourneyRequest')],
      responses: {
        200: page(`The ${name} page, with its form.`, { 'Set-Cookie': header('SetCookie') }),
        303: seeOther('The journey is at another step: to its page (same `?request=`).'),
        400: shared('ErrorPage'),
        503: shared('UnavailablePage'),
      },
    },
    post: {
      operationId: `submit${id}`,
      summary: `Submits the ${name} form`,
      description: handles,
      tags: ['hosted pages'],
      parameters: [parameter('JourneyRequest')],
      requestBody: form(formSchema),
      responses: {
        ...(again ? { 200: page(again, { 'Set-Cookie': header('SetCookie') }) } : {}),
        303: seeOther(
          'The next step: another hosted page (same `?request=`; also when the journey is at another step), or back to the client\'s `redirect_uri` with `code`, `state`, `userId`, `profileId` and `iss` (or `error`, e.g. `access_denied` after `action=cancel`).',
        ),
        400: problems
          ? page(`The form again with what to fix (${problems}), or an error page: a journey that expired, finished or belongs to another browser; a form that does not parse.`)
          : shared('ErrorPage'),
        403: shared('FormRefusedPage'),
        413: shared('FormTooLargePage'),
        503: shared('UnavailablePage'),
      },
    },
  };
}

/** The JSON error of a passkey request (docs/journey.md, "Passkeys"). */
const PASSKEY_ERROR = json({
  type: 'object',
  required: ['error', 'message'],
  properties: {
    error: { type: 'string', enum: ['passkey_refused', 'passkey_expired', 'account_unavailable', 'too_many_attempts', 'journey_ended', 'csrf'] },
    message: { type: 'string', description: "What to tell the customer, in the journey's language." },
    retry_after: { type: 'integer', description: '`too_many_attempts`: seconds to wait.' },
    location: { type: 'string', description: '`journey_ended`: where the journey stands now.' },
  },
});

/** A passkey request of the hosted pages' script: a form POST answered with JSON. */
function passkeyRequest(id: string, summary: string, formSchema: JsonSchema, ok: string, okSchema: JsonSchema): PathItem {
  return {
    servers: [AUTH_ORIGIN],
    post: {
      operationId: id,
      summary,
      description: 'Called by the hosted pages\' script (docs/journey.md, "Passkeys"); answers JSON, `Cache-Control: no-store`.',
      tags: ['hosted pages'],
      parameters: [parameter('JourneyRequest')],
      requestBody: form(formSchema),
      responses: {
        200: response(ok, { headers: { 'Set-Cookie': header('SetCookie') }, content: json(okSchema) }),
        400: response('`passkey_refused` (one answer for every reason an answer is refused) or `passkey_expired` (the challenge expired or was used).', { content: PASSKEY_ERROR }),
        403: response('`account_unavailable` (the customer is locked), or `csrf` (no valid CSRF token).', { content: PASSKEY_ERROR }),
        409: response('`journey_ended`, with `location`.', { content: PASSKEY_ERROR }),
        413: shared('BodyTooLarge'),
        ...(id === 'passkeySignIn'
          ? { 429: response('`too_many_attempts`, with `retry_after`.', { headers: { 'Retry-After': header('RetryAfter') }, content: PASSKEY_ERROR }) }
          : {}),
        503: shared('TemporarilyUnavailable'),
      },
    },
  };
}

const TOKEN_STATE_RESPONSES = {
  400: errorResponse('`token` is missing; a parameter is repeated or holds a control character; both ways of client authentication at once; not a form.', ['invalid_request']),
  401: shared('InvalidClient'),
  413: shared('BodyTooLarge'),
  503: shared('TemporarilyUnavailable'),
} as const;

const METADATA_RESPONSE = response('The metadata.', {
  headers: { 'Cache-Control': header('PublicCache') },
  content: json(schemaRef('ServerMetadata')),
});

export const PATHS: Record<string, PathItem> = {
  '/token': {
    post: {
      operationId: 'token',
      summary: 'Issues tokens (RFC 6749 §3.2)',
      description:
        'Three grants: `client_credentials` (a client access token), `authorization_code` (customer tokens for the code of an authorization) and `refresh_token` (a new customer access token). ' +
        'A refresh token comes only to a client with the `refresh_token` grant. The client authenticates by HTTP Basic or with `client_id` and `client_secret` in the body, never both.',
      tags: ['tokens'],
      security: CLIENT_AUTHENTICATION,
      requestBody: form(schemaRef('TokenRequest')),
      responses: {
        200: response('Tokens.', {
          headers: { 'Cache-Control': header('NoStore'), Pragma: header('PragmaNoCache') },
          content: json(schemaRef('TokenResponse')),
        }),
        400: errorResponse(
          '`invalid_request`: a parameter missing, repeated or holding a control character, both ways of client authentication, not a form, a malformed `code_verifier`. ' +
            '`invalid_grant`: the code or refresh token is unknown, expired, used, revoked or another client\'s, or `redirect_uri` / PKCE does not match (a `code_verifier` without a `code_challenge` too; a second exchange of a code also revokes what the first one issued). ' +
            '`unauthorized_client`: the client may not use this grant. `unsupported_grant_type`. `invalid_scope`: a scope the client is not registered with.',
          ['invalid_request', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope'],
        ),
        401: shared('InvalidClient'),
        413: shared('BodyTooLarge'),
        503: shared('TemporarilyUnavailable'),
      },
    },
    get: notPost('Get'),
    put: notPost('Put'),
    patch: notPost('Patch'),
    delete: notPost('Delete'),
    options: notPost('Options'),
  },

  '/par': {
    post: {
      operationId: 'pushAuthorizationRequest',
      summary: 'Pushes an authorization request (RFC 9126)',
      description:
        'The client, authenticated as at `/token`, sends the parameters of `GET /authorize` and gets a `request_uri`; the browser then goes to `/authorize?client_id=…&request_uri=…`, whose other parameters are ignored. ' +
        'A `request_uri` is bound to its client, expires after 60 seconds and is used by the first `/authorize` that names it. Required for clients of the `fapi2` profile.',
      tags: ['authorization'],
      security: CLIENT_AUTHENTICATION,
      requestBody: form(schemaRef('PushedAuthorizationRequest')),
      responses: {
        201: response('The pushed request is stored.', {
          headers: { 'Cache-Control': header('NoStore'), Pragma: header('PragmaNoCache') },
          content: json(schemaRef('PushedAuthorizationResponse')),
        }),
        400: errorResponse(
          '`invalid_request`: `request` or `request_uri` sent, `redirect_uri` missing or not the registered one, another client\'s `client_id`, a parameter repeated or holding a control character, a PKCE challenge that is not S256 (or none, for a `fapi2` client). ' +
            '`unsupported_response_type`: `response_type` is not `code`. `unauthorized_client`: the client may not use the authorization code grant. `invalid_scope`: a scope the client is not registered with.',
          ['invalid_request', 'unsupported_response_type', 'unauthorized_client', 'invalid_scope'],
        ),
        401: shared('InvalidClient'),
        413: shared('BodyTooLarge'),
        429: errorResponse('The client pushed more than 1,200 requests within the minute: retry after `Retry-After` seconds; nothing was stored.', ['too_many_requests'], {
          'Retry-After': header('RetryAfter'),
        }),
        503: shared('TemporarilyUnavailable'),
      },
    },
  },

  '/tokens': {
    servers: [BASE_URL],
    post: {
      operationId: 'refreshCustomerToken',
      summary: "Refreshes a customer's access token",
      description:
        'A customer refresh token for a new customer access token, authenticated with the client\'s own access token. The previous access token of the session stops working at once; the refresh token stays the same. ' +
        'Idempotent by `Request-Reference-No`: a retry with the same reference and body within 24 hours gets the same answer while its tokens still stand. ' +
        'Every answer, errors included, has `Cache-Control: no-store` and echoes `Request-Reference-No` when the request carried one.',
      tags: ['customer tokens'],
      security: [{ clientAccessToken: [] }],
      parameters: [
        {
          name: 'Request-Reference-No',
          in: 'header',
          required: true,
          description: 'A UUID (version 4) naming this refresh: retries reuse it.',
          schema: { type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$' },
        },
        { name: 'Accept', in: 'header', description: 'Must allow `application/json` (absent: anything goes).', schema: { type: 'string' } },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: schemaRef('CustomerTokensRequest') } } },
      responses: {
        200: response('The new access token.', {
          headers: { 'Cache-Control': header('NoStore'), Pragma: header('PragmaNoCache'), 'Request-Reference-No': header('RequestReferenceNo') },
          content: json(schemaRef('CustomerTokens')),
        }),
        400: errorResponse(
          '`invalid_request`: `Request-Reference-No` missing or not a UUIDv4, a body that is not JSON, no `refreshToken`. `invalid_grant`: the refresh token is unknown, expired, revoked or another client\'s (or, for a retry, its tokens no longer stand).',
          ['invalid_request', 'invalid_grant'],
          { 'Request-Reference-No': header('RequestReferenceNo') },
        ),
        401: errorResponse('The client access token is missing, malformed, expired or revoked, or its client is disabled.', ['invalid_token'], {
          'WWW-Authenticate': header('BearerChallenge'),
          'Request-Reference-No': header('RequestReferenceNo'),
        }),
        403: errorResponse('Refresh is not enabled for this client.', ['unauthorized_client'], { 'Request-Reference-No': header('RequestReferenceNo') }),
        406: errorResponse('`Accept` excludes `application/json`.', ['invalid_request'], { 'Request-Reference-No': header('RequestReferenceNo') }),
        409: errorResponse(
          'This `Request-Reference-No` was used with another body, or its first request may still be running: retry later, or refresh with a new reference.',
          ['invalid_request'],
          { 'Request-Reference-No': header('RequestReferenceNo') },
        ),
        413: errorResponse('The body is larger than 16 KiB.', ['invalid_request'], { 'Request-Reference-No': header('RequestReferenceNo') }),
        415: errorResponse('`Content-Type` is not `application/json`.', ['invalid_request'], { 'Request-Reference-No': header('RequestReferenceNo') }),
        503: errorResponse('The database or Redis failed or did not answer in time: retry after `Retry-After` seconds.', ['temporarily_unavailable'], {
          'Retry-After': header('RetryAfter'),
          'Request-Reference-No': header('RequestReferenceNo'),
        }),
      },
    },
  },

  '/introspect': {
    post: {
      operationId: 'introspect',
      summary: 'Whether a token is active (RFC 7662)',
      description:
        'A consumer sees only its own tokens; a resource server sees every access token of its environment. Anything else, and anything expired or revoked, is `{"active":false}`.',
      tags: ['tokens'],
      security: CLIENT_AUTHENTICATION,
      requestBody: form(schemaRef('TokenParameter')),
      responses: {
        200: response('The token\'s state.', {
          headers: { 'Cache-Control': header('NoStore'), Pragma: header('PragmaNoCache') },
          content: json(schemaRef('Introspection')),
        }),
        ...TOKEN_STATE_RESPONSES,
      },
    },
  },

  '/revoke': {
    post: {
      operationId: 'revoke',
      summary: 'Revokes a token (RFC 7009)',
      description:
        "A refresh token ends its whole session, with the session's access token; a customer access token ends alone; a client access token is refused from then on. Unknown, foreign or already invalid tokens are ignored.",
      tags: ['tokens'],
      security: CLIENT_AUTHENTICATION,
      requestBody: form(schemaRef('TokenParameter')),
      responses: {
        200: response('Done, or nothing to do.', {
          headers: { 'Cache-Control': header('NoStore'), Pragma: header('PragmaNoCache') },
          content: json(schemaRef('Revoked')),
        }),
        ...TOKEN_STATE_RESPONSES,
      },
    },
  },

  '/authorize': {
    get: {
      operationId: 'authorize',
      summary: "Starts a customer's authorization",
      description:
        'Sends the customer\'s browser through the hosted pages (login or registration, the SMS one-time PIN, consent) and back to the client. ' +
        'An unknown or disabled client, or a `redirect_uri` that is not exactly the registered one, gets an error page and is never redirected; ' +
        'any other error goes back to `redirect_uri` with `error`, `error_description`, `state` and `iss`.',
      tags: ['authorization'],
      parameters: [
        query('response_type', 'Must be `code` (not needed with `request_uri`).', { type: 'string', const: 'code' }),
        query('client_id', 'The client ID.', { type: 'string' }, true),
        query(
          'request_uri',
          'RFC 9126 §4: the `request_uri` of a request the client pushed to `/par`; its parameters then replace every other one but `client_id`. Required for `fapi2` clients. One not pushed by this client, expired (60 seconds) or used already gets an error page (`invalid_request_uri`), never a redirect.',
        ),
        query('redirect_uri', 'Exactly the registered redirect URI (not needed with `request_uri`).', { type: 'string' }),
        query('state', 'Echoed unchanged on the redirect back.'),
        query('prompt', '`login`: a new login whatever session there is; `none`: never a page (`login_required` or `consent_required` instead).', {
          type: 'string',
          enum: ['login', 'none'],
        }),
        query('user_id', 'The customer\'s mobile number, E.164 (`+639171234567`): prefilled and fixed, or the registration form when it has no account.'),
        query('code_challenge', 'RFC 7636: the S256 challenge of the client\'s verifier; required for clients registered with `--require-pkce`.'),
        query('code_challenge_method', 'RFC 7636: `S256` (`plain` is refused).', { type: 'string', const: 'S256' }),
        query(
          'acr_values',
          'OpenID Connect Core 3.1.2.1: space-separated `acr` values, any of which the sign-in may meet; unknown values are ignored. `phr` alone: only a passkey sign-in out of its hold completes it, else `unmet_authentication_requirements`; `urn:connect:acr:pin-sms`: any sign-in.',
        ),
        query(
          'max_age',
          'OpenID Connect Core 3.1.2.1: the most seconds since the customer signed in; an older session signs in again (`prompt=none`: `login_required`), `0` as `prompt=login`. A whole number from 0 to 2147483647, else `invalid_request`.',
          { type: 'integer', minimum: 0, maximum: 2147483647 },
        ),
        parameter('UiLocales'),
      ],
      responses: {
        303: seeOther(
          'To a hosted page (`/login`, `/register`, `/consent`, with `?request=`), or back to `redirect_uri`: with `code`, `state`, `userId` (the masked mobile), `profileId` and `iss` when a live session of a customer who approved the client serves, ' +
            'else with `error` (`invalid_request`, `unsupported_response_type`, `unauthorized_client`, `login_required`, `consent_required`, `unmet_authentication_requirements`, …), `error_description`, `state` and `iss`.',
        ),
        400: page('An error page: the client is unknown or disabled, or `redirect_uri` is missing or not the registered one (never a redirect to an address not verified); a `request_uri` that cannot be used (`invalid_request_uri`); or a parameter holds a control character.'),
        429: page('Too many sign-ins were started from this client address within the hour (`CONNECT_JOURNEY_LIMIT_PER_ADDRESS`): a page saying in how many minutes to try again; nothing was written.', {
          'Retry-After': header('RetryAfter'),
        }),
        503: shared('UnavailablePage'),
      },
    },
  },

  '/login': hostedPage({
    name: 'login',
    id: 'Login',
    shows: 'Mobile number and PIN; with a `user_id` of an account the mobile is prefilled and `readonly`. With `acr_values=phr` no PIN form: the page asks for a passkey and offers "I can\'t use a passkey" (`action=no_passkey`).',
    form: schemaRef('LoginForm'),
    handles: 'A right PIN sends the one-time PIN by SMS and goes on to `/login/otp`; 5 wrong PINs in a row lock PIN login for that mobile for 15 minutes.',
    problems: 'a malformed mobile or PIN, a wrong PIN, a lock or a limit: the page says for how long',
  }),
  '/register': hostedPage({
    name: 'registration',
    id: 'Registration',
    shows: 'Mobile number, PIN and the PIN again, for a mobile without an account.',
    form: schemaRef('RegistrationForm'),
    handles: 'An accepted form sends the one-time PIN by SMS and goes on to `/login/otp`; the account exists once the one-time PIN proved the mobile.',
    problems: 'a malformed mobile, a PIN too easy to guess, PINs that differ, a mobile that has an account, a limit',
  }),
  '/login/otp': hostedPage({
    name: 'one-time PIN',
    id: 'OneTimePin',
    shows: 'The 6-digit code sent by SMS: valid 5 minutes, single use, 5 entries.',
    form: schemaRef('OneTimePinForm'),
    handles: 'The right code completes the sign-in and goes back to the client with a code.',
    again:
      'After `action=resend`: the page again, saying a new code was sent (30 seconds after the last one, 3 times per sign-in). With `passkey_capable=1`, a completed sign-in of a customer without a passkey: the offer to add one (its cookies set, "Not now" linking to the client\'s callback).',
    problems: 'a wrong or malformed code, one that expired or whose entries are used up, a new code asked for too soon',
  }),
  '/login/reset': hostedPage({
    name: 'forgot-PIN',
    id: 'PinReset',
    shows: 'The mobile whose PIN to reset (prefilled and `readonly` when the client named an account with `user_id`); linked from the login page.',
    form: schemaRef('PinResetForm'),
    handles:
      'Sends a reset code by SMS when the mobile has an active account, and goes on to `/login/reset/otp` in every case: a mobile without an account gets the same answer and no SMS.',
    problems: 'a malformed mobile, one one-time PINs cannot be sent to, a limit',
  }),
  '/login/reset/otp': hostedPage({
    name: 'reset code',
    id: 'PinResetCode',
    shows: 'The 6-digit reset code sent by SMS: valid 5 minutes, single use, 5 entries.',
    form: schemaRef('OneTimePinForm'),
    handles: 'The right code goes on to `/login/reset/pin`.',
    again: 'After `action=resend`: the page again, saying a new code was sent (30 seconds after the last one, 3 times).',
    problems: 'a wrong or malformed code, one that expired or whose entries are used up, a new code asked for too soon',
  }),
  '/login/reset/pin': hostedPage({
    name: 'new PIN',
    id: 'NewPin',
    shows: 'The new PIN, twice, within 5 minutes of the right reset code.',
    form: schemaRef('NewPinForm'),
    handles:
      'Replaces the PIN, clears a wrong-PIN lock, ends every session and token of the customer, and goes back to `/login` with the mobile prefilled and a notice.',
    problems: 'a PIN too easy to guess, PINs that differ',
  }),
  '/consent': hostedPage({
    name: 'consent',
    id: 'Consent',
    shows:
      'A customer signed in at Connect meets a client they have not approved: the page names the client and the masked mobile, and lists what approving grants (the client\'s scopes, in the operator\'s words or the default wording).',
    form: schemaRef('ConsentForm'),
    handles:
      '`approve` goes back to the client with a code (and approves it for silent sign-in); `cancel` with `error=access_denied`; `switch_account` ends the session and goes to `/login` of the same request.',
  }),
  '/login/passkey/options': passkeyRequest(
    'passkeyOptions',
    'Options of a passkey ceremony: sign-in or enrolment',
    schemaRef('PasskeyOptionsForm'),
    'The options as @simplewebauthn/server makes them (`PublicKeyCredentialRequestOptionsJSON` or `PublicKeyCredentialCreationOptionsJSON`).',
    { type: 'object' },
  ),
  '/login/passkey': passkeyRequest(
    'passkeySignIn',
    'Sign in with a passkey',
    schemaRef('PasskeyCredentialForm'),
    'Signed in: where the browser goes next; the session and known-device cookies are set.',
    { type: 'object', required: ['location'], properties: { location: { type: 'string' } } },
  ),
  '/login/passkey/enrol': passkeyRequest(
    'passkeyEnrol',
    'Add a passkey right after a sign-in',
    schemaRef('PasskeyCredentialForm'),
    'The passkey was added.',
    { type: 'object', required: ['added'], properties: { added: { type: 'boolean', enum: [true] } } },
  ),

  '/customer/profile': {
    servers: [BASE_URL],
    get: {
      operationId: 'customerProfile',
      summary: "The customer's masked profile: an example protected API",
      description: 'Accepts a customer access token only while it is the current access token of a live token session.',
      tags: ['resources'],
      security: [{ customerAccessToken: [] }],
      responses: {
        200: response('The customer of the token.', { headers: { 'Cache-Control': header('NoStore') }, content: json(schemaRef('CustomerProfile')) }),
        400: shared('BadQuery'),
        401: shared('InvalidToken'),
        403: errorResponse('The token is valid but lacks a scope this API needs (RFC 6750 §3.1); the challenge names them.', ['insufficient_scope'], {
          'WWW-Authenticate': header('InsufficientScopeChallenge'),
        }),
        503: shared('TemporarilyUnavailable'),
      },
    },
  },

  '/.well-known/oauth-authorization-server': {
    get: {
      operationId: 'serverMetadata',
      summary: 'Authorization server metadata (RFC 8414)',
      tags: ['discovery'],
      responses: { 200: METADATA_RESPONSE, 400: shared('BadQuery') },
    },
  },
  '/.well-known/oauth-authorization-server/{issuerPath}': {
    servers: [AUTH_ORIGIN],
    parameters: [
      {
        name: 'issuerPath',
        in: 'path',
        required: true,
        description: 'The path of the auth URL, without its leading `/` (`auth` of `https://h.example/auth`): where RFC 8414 §3.1 has clients look when the issuer has a path.',
        schema: { type: 'string' },
      },
    ],
    get: {
      operationId: 'serverMetadataForIssuerPath',
      summary: 'The same metadata, at the path RFC 8414 §3.1 gives an issuer with a path',
      tags: ['discovery'],
      responses: { 200: METADATA_RESPONSE, 400: shared('BadQuery'), 404: shared('NotFound') },
    },
  },
  '/.well-known/jwks.json': {
    get: {
      operationId: 'jwks',
      summary: 'The public keys that verify client access tokens and refresh tokens',
      description: 'A key is published `CONNECT_JWKS_MAX_AGE` seconds before it signs, so a verifier that caches for `max-age` never meets an unknown `kid`.',
      tags: ['discovery'],
      responses: {
        200: response('The keys.', { headers: { 'Cache-Control': header('PublicCache') }, content: json(schemaRef('Jwks')) }),
        400: shared('BadQuery'),
      },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'openApiDocument',
      summary: 'This description',
      description: 'With `servers` set to this server\'s auth and base URLs; in production without the `/sandbox/*` paths.',
      tags: ['discovery'],
      responses: {
        200: response('The description.', {
          headers: { 'Cache-Control': header('PublicCache'), ETag: header('ETag') },
          content: json(schemaRef('OpenApiDocument')),
        }),
        304: response('Not changed since the `ETag` sent as `If-None-Match`.', { headers: { 'Cache-Control': header('PublicCache'), ETag: header('ETag') } }),
        400: shared('BadQuery'),
      },
    },
  },

  '/healthz': {
    get: {
      operationId: 'health',
      summary: 'Whether the process answers',
      description: 'Restart on it; route traffic on `/readyz`.',
      tags: ['operations'],
      responses: {
        200: response('Up.', { headers: { 'Cache-Control': header('NoStore') }, content: json(schemaRef('Healthy')) }),
        400: shared('BadQuery'),
      },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readiness',
      summary: 'Whether this instance should get traffic',
      tags: ['operations'],
      responses: {
        200: response('The database, and Redis when configured, answered within 1 second.', {
          headers: { 'Cache-Control': header('NoStore') },
          content: json(schemaRef('Ready')),
        }),
        400: shared('BadQuery'),
        503: response('Not ready: what failed, within about a second even when a dependency hangs; `shutting_down` from the moment the server starts to shut down.', {
          headers: { 'Cache-Control': header('NoStore') },
          content: json(schemaRef('NotReady')),
        }),
      },
    },
  },

  '/sandbox/messages': {
    get: {
      operationId: 'sandboxMessages',
      summary: 'Sandbox only: the SMS messages the sandbox "sent" to a mobile number',
      tags: ['sandbox'],
      parameters: [query('to', 'The mobile number, E.164 (`+639171234567`).', { type: 'string' }, true)],
      responses: {
        200: response('The messages, newest first.', { headers: { 'Cache-Control': header('NoStore') }, content: json(schemaRef('Outbox')) }),
        400: errorResponse('`to` is missing, repeated or not one mobile number in E.164 format; or a query parameter holds a control character.', ['invalid_request']),
        503: shared('TemporarilyUnavailable'),
      },
    },
  },
  '/sandbox/callback': {
    get: {
      operationId: 'sandboxCallback',
      summary: 'Sandbox only: what a redirect back to a client brought, and the command that exchanges its code',
      description: 'The demo client\'s redirect URI; register it as a sandbox client\'s redirect URI to use it for that client.',
      tags: ['sandbox'],
      parameters: ['code', 'state', 'userId', 'profileId', 'iss', 'error', 'error_description'].map((name) => query(name, 'As the redirect back brought it.')),
      responses: {
        200: page('The parameters received and, for a code, the `curl` command that exchanges it (or why it cannot be).'),
        400: shared('ErrorPage'),
        503: shared('UnavailablePage'),
      },
    },
  },

  '/assets/connect.css': {
    servers: [AUTH_ORIGIN],
    get: {
      operationId: 'stylesheet',
      summary: "The hosted pages' stylesheet",
      tags: ['hosted pages'],
      responses: {
        200: response('The stylesheet.', {
          headers: { 'Cache-Control': header('PublicCache'), ETag: header('ETag') },
          content: { 'text/css': { schema: { type: 'string' } } },
        }),
        304: response('Not changed since the `ETag` sent as `If-None-Match`.', { headers: { 'Cache-Control': header('PublicCache'), ETag: header('ETag') } }),
        400: shared('BadQuery'),
      },
    },
  },

  '/assets/resend-countdown.js': {
    servers: [AUTH_ORIGIN],
    get: {
      operationId: 'resendCountdownScript',
      summary: "The one-time-PIN page's countdown script",
      description: 'Counts down the wait for a new code and enables "Send a new code"; without it the page names the time a new code can be asked for.',
      tags: ['hosted pages'],
      responses: {
        200: response('The script.', {
          headers: { 'Cache-Control': header('PublicCache'), ETag: header('ETag') },
          content: { 'text/javascript': { schema: { type: 'string' } } },
        }),
        304: response('Not changed since the `ETag` sent as `If-None-Match`.', { headers: { 'Cache-Control': header('PublicCache'), ETag: header('ETag') } }),
        400: shared('BadQuery'),
      },
    },
  },

  '/assets/simplewebauthn-browser.js': {
    servers: [AUTH_ORIGIN],
    get: {
      operationId: 'webAuthnBrowserScript',
      summary: "The browser side of WebAuthn: @simplewebauthn/browser's bundle",
      description: 'The passkey pages load it before `/assets/passkeys.js`; served by Connect from the installed package.',
      tags: ['hosted pages'],
      responses: {
        200: response('The script.', {
          headers: { 'Cache-Control': header('PublicCache'), ETag: header('ETag') },
          content: { 'text/javascript': { schema: { type: 'string' } } },
        }),
        304: response('Not changed since the `ETag` sent as `If-None-Match`.', { headers: { 'Cache-Control': header('PublicCache'), ETag: header('ETag') } }),
        400: shared('BadQuery'),
      },
    },
  },

  '/assets/passkeys.js': {
    servers: [AUTH_ORIGIN],
    get: {
      operationId: 'passkeyScript',
      summary: "The passkey pages' script",
      description: 'Sets `passkey_capable`, shows "Sign in with a passkey" and "Create a passkey", and runs them through the passkey requests; without it the PIN and SMS forms work as they do without JavaScript.',
      tags: ['hosted pages'],
      responses: {
        200: response('The script.', {
          headers: { 'Cache-Control': header('PublicCache'), ETag: header('ETag') },
          content: { 'text/javascript': { schema: { type: 'string' } } },
        }),
        304: response('Not changed since the `ETag` sent as `If-None-Match`.', { headers: { 'Cache-Control': header('PublicCache'), ETag: header('ETag') } }),
        400: shared('BadQuery'),
      },
    },
  },
};

/** Paths served only in the sandbox (`/sandbox/*`). */
export function isSandboxPath(path: string): boolean {
  return path.startsWith('/sandbox/');
}
