/**
 * The JSON Schemas (2020-12) of what Connect's endpoints take and answer:
 * the `components.schemas` of its OpenAPI description (`document.ts`).
 *
 * Every object Connect answers with lists exactly what this version sends
 * (`additionalProperties: false`), so that the tests that check real
 * responses against these schemas notice a field added without its
 * description. Later versions may add optional fields: clients should
 * ignore fields they do not know. Request bodies are open: a parameter
 * Connect does not read is ignored.
 */

/** A JSON Schema (2020-12), as the description holds it. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** A reference to one of {@link SCHEMAS}, by name. */
export function schemaRef(name: SchemaName): JsonSchema {
  return ref(name);
}

/** The name of one of {@link SCHEMAS}. */
export type SchemaName = keyof typeof SCHEMAS;

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const string = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });
const epochSeconds = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description: `${description} (UNIX time, seconds)` });

/** The optional form fields of client authentication in the body (`client_secret_post`). */
const CLIENT_SECRET_POST = {
  client_id: string('The client ID, with `client_secret`, instead of HTTP Basic (`client_secret_post`; never both).'),
  client_secret: string('The client secret (`client_secret_post`).'),
  client_assertion_type: string('`urn:ietf:params:oauth:client-assertion-type:jwt-bearer`, with `client_assertion` (`private_key_jwt`, RFC 7523; never with a secret).', {
    enum: ['urn:ietf:params:oauth:client-assertion-type:jwt-bearer'],
  }),
  client_assertion: string('A JWT signed with ES256, PS256 or EdDSA by a key of the client: `iss` = `sub` = the client ID, `aud` the issuer, `exp` at most 300 s after `iat`, a `jti` used once (`private_key_jwt`).'),
} as const;

/** A scope request (RFC 6749 §3.3). */
const SCOPE = string('Space-separated scopes to ask for (RFC 6749 §3.3); absent: those the client is registered with.');

export const SCHEMAS = {
  ErrorDescription: string(
    'For people, not programs: printable ASCII without `"` or `\\` (RFC 6749 §5.2), never repeating what the request sent.',
    { pattern: '^[\\x20-\\x21\\x23-\\x5b\\x5d-\\x7e]*$' },
  ),

  ClientCredentialsRequest: {
    type: 'object',
    description: 'RFC 6749 §4.4.2: a client access token for the client itself.',
    required: ['grant_type'],
    properties: { grant_type: { type: 'string', const: 'client_credentials' }, scope: SCOPE, ...CLIENT_SECRET_POST },
  },
  AuthorizationCodeRequest: {
    type: 'object',
    description: 'RFC 6749 §4.1.3: exchanges the code of a customer authorization (once) for customer tokens.',
    required: ['grant_type', 'code', 'redirect_uri'],
    properties: {
      grant_type: { type: 'string', const: 'authorization_code' },
      code: string('The code the redirect back brought.'),
      redirect_uri: string('Exactly the `redirect_uri` of the authorization request.'),
      code_verifier: string(
        'RFC 7636: required when the authorization request carried a `code_challenge`, refused when it did not; 43 to 128 characters.',
        { pattern: '^[A-Za-z0-9._~-]{43,128}$' },
      ),
      ...CLIENT_SECRET_POST,
    },
  },
  RefreshTokenRequest: {
    type: 'object',
    description:
      'RFC 6749 §6: a new customer access token; the previous one of the session stops working. The refresh token stays the same.',
    required: ['grant_type', 'refresh_token'],
    properties: { grant_type: { type: 'string', const: 'refresh_token' }, refresh_token: string('The customer refresh token.'), scope: SCOPE, ...CLIENT_SECRET_POST },
  },
  TokenResponse: {
    type: 'object',
    description: 'RFC 6749 §5.1.',
    required: ['access_token', 'token_type', 'expires_in'],
    additionalProperties: false,
    properties: {
      access_token: string(
        'A client access token (a JWT, RFC 9068) for `client_credentials`; a customer access token (a JWE, opaque) for the other grants.',
        { minLength: 1 },
      ),
      token_type: { type: 'string', enum: ['Bearer', 'DPoP'], description: '`DPoP` when the request carried a DPoP proof (RFC 9449 §5): the tokens are bound to its key.' },
      expires_in: { type: 'integer', minimum: 1, description: 'Seconds until the access token expires.' },
      refresh_token: string(
        'Customer grants only, and only to a client with the `refresh_token` grant: a JWT (`typ: rt+jwt`); the refresh grant echoes it unchanged.',
        { minLength: 1 },
      ),
      scope: string('The granted scopes, space-separated (RFC 6749 §3.3).'),
    },
  },
  TokenRequest: {
    type: 'object',
    description: 'A form (`application/x-www-form-urlencoded`) whose `grant_type` picks one of the grants.',
    oneOf: [ref('ClientCredentialsRequest'), ref('AuthorizationCodeRequest'), ref('RefreshTokenRequest')],
  },

  PushedAuthorizationRequest: {
    type: 'object',
    description:
      'RFC 9126 §2.1: the parameters of `GET /authorize` as a form, with client authentication as at `/token`. Checked as `/authorize` checks them (`redirect_uri` exactly the registered one); every parameter is kept, unknown ones too, and applies at `/authorize`. `request` and `request_uri` are refused.',
    required: ['response_type', 'redirect_uri'],
    properties: {
      response_type: { type: 'string', const: 'code' },
      redirect_uri: string('Exactly the registered redirect URI.'),
      state: string('Echoed unchanged on the redirect back.'),
      scope: SCOPE,
      code_challenge: string('RFC 7636: the S256 challenge; required for `fapi2` clients and clients registered with `--require-pkce`.'),
      code_challenge_method: { type: 'string', const: 'S256' },
      ...CLIENT_SECRET_POST,
    },
  },
  PushedAuthorizationResponse: {
    type: 'object',
    description: 'RFC 9126 §2.2: the `request_uri` that stands for the pushed parameters at `/authorize`, once, for 60 seconds.',
    required: ['request_uri', 'expires_in'],
    additionalProperties: false,
    properties: {
      request_uri: string('`urn:ietf:params:oauth:request_uri:` and 256 random bits, base64url.', { pattern: '^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$' }),
      expires_in: { type: 'integer', const: 60, description: 'Seconds the `request_uri` can be used.' },
    },
  },

  TokenParameter: {
    type: 'object',
    description: 'A form (`application/x-www-form-urlencoded`) naming a token, with client authentication as at `/token`.',
    required: ['token'],
    properties: {
      token: string('Any token Connect issued: a client or customer access token, or a refresh token.'),
      token_type_hint: string('RFC 7009 §2.1: `access_token` or `refresh_token`; only the first guess, every kind is tried.'),
      ...CLIENT_SECRET_POST,
    },
  },
  InactiveToken: {
    type: 'object',
    description: 'Anything that is not an active token the caller may see (RFC 7662 §2.2): nothing else is said about it.',
    required: ['active'],
    additionalProperties: false,
    properties: { active: { type: 'boolean', const: false } },
  },
  ActiveToken: {
    type: 'object',
    description: 'An active token (RFC 7662 §2.2).',
    required: ['active', 'client_id', 'sub', 'iss', 'aud', 'iat', 'exp', 'jti'],
    additionalProperties: false,
    properties: {
      active: { type: 'boolean', const: true },
      token_type: { type: 'string', enum: ['Bearer', 'DPoP'], description: 'Access tokens only: a refresh token has no access token type (RFC 6749 §7.1). `DPoP` for a DPoP-bound token.' },
      cnf: {
        type: 'object',
        required: ['jkt'],
        additionalProperties: false,
        properties: { jkt: string('RFC 9449 §6.2: the SHA-256 JWK thumbprint of the key the token is bound to; the resource server checks the request\'s DPoP proof against it.') },
      },
      client_id: string('The client the token was issued to.'),
      sub: string("The client ID (a client access token) or the customer's `profileId` (customer tokens)."),
      iss: string('The auth URL.'),
      aud: string('The base URL for access tokens, the auth URL for refresh tokens.'),
      iat: epochSeconds('Issued at'),
      exp: epochSeconds('Expires at'),
      jti: string('The token ID.'),
      sid: string("Customer tokens: the customer's token session."),
      scope: string('The granted scopes, space-separated (RFC 6749 §3.3).'),
      acr: string('Customer tokens: the authentication context class of the sign-in (`urn:connect:acr:pin-sms`); absent when unknown.'),
      amr: {
        type: 'array',
        items: { type: 'string' },
        description: 'Customer tokens: the RFC 8176 methods of the sign-in (`["pin","sms","mfa"]`); absent when unknown.',
      },
      auth_time: epochSeconds('Customer tokens: when the customer completed the sign-in; unchanged by refreshes. Absent when unknown'),
    },
  },
  Introspection: {
    type: 'object',
    description: 'RFC 7662 §2.2.',
    oneOf: [ref('InactiveToken'), ref('ActiveToken')],
  },
  Revoked: {
    type: 'object',
    description: 'RFC 7009 §2.2: `{}`, whether or not the token was valid.',
    additionalProperties: false,
  },

  CustomerTokensRequest: {
    type: 'object',
    required: ['refreshToken'],
    properties: { refreshToken: string('The customer refresh token.', { minLength: 1 }) },
  },
  CustomerTokens: {
    type: 'object',
    required: ['accessToken', 'refreshToken', 'expiresAt'],
    additionalProperties: false,
    properties: {
      accessToken: string('The new customer access token (a JWE, opaque); the previous one of the session stops working.', { minLength: 1 }),
      refreshToken: string('The refresh token, unchanged.', { minLength: 1 }),
      expiresAt: epochSeconds("The new access token's expiry"),
    },
  },

  CustomerProfile: {
    type: 'object',
    required: ['profileId', 'userId', 'clientId', 'tokenExpiresAt'],
    additionalProperties: false,
    properties: {
      profileId: string("The customer's ID: 12 digits.", { pattern: '^[0-9]{12}$' }),
      userId: { type: ['string', 'null'], description: 'The masked mobile: country code and last four digits visible (`+63******4567`).' },
      clientId: string('The client the token was issued to.'),
      tokenExpiresAt: epochSeconds("The access token's expiry"),
    },
  },

  ServerMetadata: {
    type: 'object',
    description: 'RFC 8414 §2: what this server supports.',
    required: [
      'issuer',
      'authorization_endpoint',
      'token_endpoint',
      'pushed_authorization_request_endpoint',
      'require_pushed_authorization_requests',
      'jwks_uri',
      'grant_types_supported',
      'token_endpoint_auth_methods_supported',
      'introspection_endpoint',
      'introspection_endpoint_auth_methods_supported',
      'revocation_endpoint',
      'revocation_endpoint_auth_methods_supported',
      'response_types_supported',
      'response_modes_supported',
      'code_challenge_methods_supported',
      'prompt_values_supported',
      'authorization_response_iss_parameter_supported',
    ],
    additionalProperties: false,
    properties: {
      issuer: string('The auth URL: the `iss` of every token and of every redirect back.', { format: 'uri' }),
      authorization_endpoint: { type: 'string', format: 'uri' },
      token_endpoint: { type: 'string', format: 'uri' },
      pushed_authorization_request_endpoint: string('RFC 9126 §5: where clients push authorization requests (`POST /par`).', { format: 'uri' }),
      require_pushed_authorization_requests: {
        type: 'boolean',
        const: false,
        description: 'RFC 9126 §5: `false` server-wide; a client of the `fapi2` profile must push its requests all the same.',
      },
      jwks_uri: { type: 'string', format: 'uri' },
      grant_types_supported: {
        type: 'array',
        items: { type: 'string', enum: ['client_credentials', 'authorization_code', 'refresh_token'] },
        minItems: 1,
        uniqueItems: true,
      },
      token_endpoint_auth_methods_supported: ref('ClientAuthMethods'),
      token_endpoint_auth_signing_alg_values_supported: ref('ClientAssertionAlgorithms'),
      introspection_endpoint: { type: 'string', format: 'uri' },
      introspection_endpoint_auth_methods_supported: ref('ClientAuthMethods'),
      introspection_endpoint_auth_signing_alg_values_supported: ref('ClientAssertionAlgorithms'),
      revocation_endpoint: { type: 'string', format: 'uri' },
      revocation_endpoint_auth_methods_supported: ref('ClientAuthMethods'),
      revocation_endpoint_auth_signing_alg_values_supported: ref('ClientAssertionAlgorithms'),
      response_types_supported: { type: 'array', items: { type: 'string', const: 'code' } },
      response_modes_supported: { type: 'array', items: { type: 'string', const: 'query' } },
      code_challenge_methods_supported: { type: 'array', items: { type: 'string', const: 'S256' } },
      prompt_values_supported: { type: 'array', items: { type: 'string', enum: ['login', 'none'] } },
      authorization_response_iss_parameter_supported: { type: 'boolean', const: true, description: 'RFC 9207: every redirect back carries `iss`.' },
      scopes_supported: { type: 'array', items: { type: 'string' }, description: 'The scopes clients may be registered with.' },
      acr_values_supported: { type: 'array', items: { type: 'string' }, description: 'The `acr` values customer tokens carry and `/authorize` accepts in `acr_values`: `phr` (a passkey sign-in out of its hold) and `urn:connect:acr:pin-sms` (PIN + SMS one-time PIN).' },
      dpop_signing_alg_values_supported: { type: 'array', items: { type: 'string', enum: ['ES256', 'PS256', 'EdDSA'] }, description: 'RFC 9449 §5.1: the algorithms a DPoP proof may use.' },
    },
  },
  ClientAssertionAlgorithms: {
    type: 'array',
    description: 'The algorithms a `private_key_jwt` client assertion may be signed with.',
    items: { type: 'string', enum: ['ES256', 'PS256', 'EdDSA'] },
    uniqueItems: true,
  },
  ClientAuthMethods: {
    type: 'array',
    items: { type: 'string', enum: ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] },
    uniqueItems: true,
  },
  Jwks: {
    type: 'object',
    description: 'RFC 7517 §5: the public keys that sign client access tokens and refresh tokens.',
    required: ['keys'],
    additionalProperties: false,
    properties: { keys: { type: 'array', items: ref('Jwk'), minItems: 1 } },
  },
  Jwk: {
    type: 'object',
    description: 'An ES256 public key (RFC 7518 §6.2); `kid` is its RFC 7638 thumbprint.',
    required: ['kty', 'crv', 'x', 'y', 'kid', 'alg', 'use'],
    additionalProperties: false,
    properties: {
      kty: { type: 'string', const: 'EC' },
      crv: { type: 'string', const: 'P-256' },
      x: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
      y: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
      kid: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
      alg: { type: 'string', const: 'ES256' },
      use: { type: 'string', const: 'sig' },
    },
  },

  Healthy: {
    type: 'object',
    required: ['status'],
    additionalProperties: false,
    properties: { status: { type: 'string', const: 'ok' } },
  },
  Ready: {
    type: 'object',
    required: ['status'],
    additionalProperties: false,
    properties: { status: { type: 'string', const: 'ready' } },
  },
  NotReady: {
    type: 'object',
    required: ['status', 'failed', 'error_description'],
    additionalProperties: false,
    properties: {
      status: { type: 'string', const: 'unavailable' },
      failed: {
        type: 'array',
        description: 'What failed: the database or Redis did not answer within 1 second, or the server is shutting down.',
        items: { type: 'string', enum: ['database', 'redis', 'shutting_down'] },
        minItems: 1,
        uniqueItems: true,
      },
      error_description: ref('ErrorDescription'),
    },
  },

  Outbox: {
    type: 'object',
    required: ['messages'],
    additionalProperties: false,
    properties: {
      messages: {
        type: 'array',
        description: 'Newest first, at most 50.',
        maxItems: 50,
        items: {
          type: 'object',
          required: ['to', 'body', 'sentAt'],
          additionalProperties: false,
          properties: {
            to: string('The mobile number, E.164.', { pattern: '^\\+[1-9][0-9]{6,14}$' }),
            body: string('The text, with the 6-digit one-time PIN in it.'),
            sentAt: string('When it was sent.', { format: 'date-time' }),
          },
        },
      },
    },
  },

  OpenApiDocument: {
    type: 'object',
    description: 'This description (OpenAPI 3.1).',
    required: ['openapi', 'info', 'servers', 'paths', 'components'],
    properties: {
      openapi: { type: 'string', pattern: '^3\\.1\\.[0-9]+$' },
      info: { type: 'object' },
      servers: { type: 'array', items: { type: 'object' } },
      paths: { type: 'object' },
      components: { type: 'object' },
    },
  },

  LoginForm: {
    type: 'object',
    required: ['csrf_token'],
    properties: {
      csrf_token: string("The form's hidden CSRF token, bound to this browser's cookie."),
      mobile: string(
        'The mobile number: in international format, or as dialled in the country of `CONNECT_DEFAULT_COUNTRY` (`0917 123 4567`); ignored when the client named it with `user_id`.',
      ),
      pin: string("The customer's PIN: 4 to 6 digits."),
      passkey_capable: string('`1` when the page\'s script found a platform authenticator with user verification: a completed PIN + SMS sign-in then offers a passkey (docs/journey.md, "Passkeys").'),
      action: {
        type: 'string',
        enum: ['login', 'no_passkey', 'cancel'],
        description:
          '`cancel`: back to the client with `error=access_denied`; `no_passkey` ("I can\'t use a passkey", on a request with `acr_values=phr`, where any post ends so): back with `error=unmet_authentication_requirements`.',
      },
    },
  },
  RegistrationForm: {
    type: 'object',
    required: ['csrf_token'],
    properties: {
      csrf_token: string("The form's hidden CSRF token."),
      mobile: string(
        'The mobile number: in international format, or as dialled in the country of `CONNECT_DEFAULT_COUNTRY` (`0917 123 4567`); ignored when the client named it with `user_id`.',
      ),
      pin: string('The new PIN: 4 to 6 digits, not one too easy to guess.'),
      pin_confirmation: string('The new PIN again.'),
      action: {
        type: 'string',
        enum: ['register', 'no_passkey', 'cancel'],
        description:
          '`cancel`: back to the client with `error=access_denied`; `no_passkey` ("I can\'t use a passkey", on a request with `acr_values=phr`, where any post ends so): back with `error=unmet_authentication_requirements`.',
      },
    },
  },
  OneTimePinForm: {
    type: 'object',
    required: ['csrf_token'],
    properties: {
      csrf_token: string("The form's hidden CSRF token."),
      otp: string('The 6-digit one-time PIN the SMS brought.'),
      passkey_capable: string('`1` when the page\'s script found a platform authenticator with user verification: a completed PIN + SMS sign-in then offers a passkey (docs/journey.md, "Passkeys").'),
      action: {
        type: 'string',
        enum: ['verify', 'resend', 'cancel'],
        description: '`resend`: send a new code; `cancel`: back to the client with `error=access_denied`.',
      },
    },
  },
  PinResetForm: {
    type: 'object',
    required: ['csrf_token'],
    properties: {
      csrf_token: string("The form's hidden CSRF token."),
      mobile: string(
        'The mobile number: in international format, or as dialled in the country of `CONNECT_DEFAULT_COUNTRY` (`0917 123 4567`); ignored when the client named it with `user_id`.',
      ),
      action: { type: 'string', enum: ['send', 'cancel'], description: '`cancel`: back to the client with `error=access_denied`.' },
    },
  },
  NewPinForm: {
    type: 'object',
    required: ['csrf_token'],
    properties: {
      csrf_token: string("The form's hidden CSRF token."),
      pin: string('The new PIN: 4 to 6 digits, not one too easy to guess.'),
      pin_confirmation: string('The new PIN again.'),
      action: { type: 'string', enum: ['change', 'cancel'], description: '`cancel`: back to the client with `error=access_denied`.' },
    },
  },
  PasskeyOptionsForm: {
    type: 'object',
    required: ['csrf_token', 'purpose'],
    properties: {
      csrf_token: string("The page's CSRF token."),
      purpose: { type: 'string', enum: ['sign_in', 'enrol'], description: '`enrol`: only right after this browser\'s sign-in in this journey.' },
    },
  },
  PasskeyCredentialForm: {
    type: 'object',
    required: ['csrf_token', 'credential'],
    properties: {
      csrf_token: string("The page's CSRF token."),
      credential: string('The JSON of `startAuthentication()` (sign-in) or `startRegistration()` (enrolment) of @simplewebauthn/browser.'),
    },
  },
  ConsentForm: {
    type: 'object',
    required: ['csrf_token', 'action'],
    properties: {
      csrf_token: string("The form's hidden CSRF token."),
      action: {
        type: 'string',
        enum: ['approve', 'cancel', 'switch_account'],
        description:
          '`approve`: back to the client with a code; `cancel`: with `error=access_denied`; `switch_account` ("Not you?", not offered when the client gave `user_id`): the session ends and the same request\'s login page follows.',
      },
    },
  },
} as const satisfies Record<string, JsonSchema>;
