import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { fileURLToPath } from 'node:url';
import { fixedClock } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccessDenied,
  ClientCredentialsProvider,
  ConnectError,
  ConsentRequired,
  createPkce,
  CustomerTokenManager,
  discover,
  exchangeCode,
  InvalidClient,
  InvalidGrant,
  InvalidRequest,
  InvalidScope,
  InsufficientScope,
  InsufficientUserAuthentication,
  InvalidToken,
  IssuerMismatch,
  LoginRequired,
  parseCallback,
  ReauthorizationRequired,
  refreshCustomerToken,
  requestClientToken,
  revokeToken,
  ServerError,
  startAuthorization,
  StateMismatch,
  TemporarilyUnavailable,
  UnauthorizedClient,
  UnmetAuthenticationRequirements,
  UnsupportedGrantType,
  UnsupportedResponseType,
  type ConnectOptions,
  type CustomerTokens,
} from '../src/index.js';
import { errorForCode, HINTS, type ConnectErrorCode } from '../src/transport/errors.js';
import { BrowserSession } from './support/browser-session.js';
import { sendJson, startLocalServer } from './support/local-server.js';
import { repeatedPhrase } from './support/repeats.js';
import { startConnect, type TestConnect } from './support/test-connect.js';

/*
 * Every error Connect answers the SDK with (CONTRACT.md sections 4 to 7,
 * and the error_descriptions of packages/server/src), with the class the
 * SDK throws and what its hint must say. Rows are driven against a real
 * sandbox Connect whose clock is the test's; the few a healthy server
 * cannot be made to answer (a database outage, a race) are built from the
 * server's own wording. The last test checks that every error_description
 * of an invalid_grant, invalid_client, unauthorized_client, invalid_token
 * or invalid_scope in the server's source has a row.
 */

const REDIRECT_URI = 'http://127.0.0.1:4000/callback';
const clock = fixedClock(Math.floor(Date.now() / 1000));
let connect: TestConnect;
let shop: Extract<ConnectOptions, { clientSecret: string }>;
let browser: BrowserSession;
let clients: Record<'other' | 'noRefresh' | 'noCode' | 'resourceServer', { clientId: string; clientSecret: string }>;
/** A FAPI 2.0 client (section 13) and the key registered for it. */
let fapi: { clientId: string; key: CryptoKeyPair };
let keysDir: string;

beforeAll(async () => {
  connect = await startConnect({ clock });
  shop = { authUrl: connect.authUrl, ...(await connect.createClient({ redirectUri: REDIRECT_URI, name: 'Shop' })), clock };
  clients = {
    other: await connect.createClient({ redirectUri: REDIRECT_URI, name: 'Other Shop' }),
    noRefresh: await connect.createClient({ redirectUri: REDIRECT_URI, name: 'No Refresh', grants: 'client_credentials,authorization_code' }),
    noCode: await connect.createClient({ redirectUri: REDIRECT_URI, name: 'No Code', grants: 'client_credentials' }),
    resourceServer: await connect.createResourceServer(),
  };
  const key = await generateKeyPair('ES256');
  keysDir = await mkdtemp(join(tmpdir(), 'connect-error-table-'));
  const jwks = join(keysDir, 'jwks.json');
  await writeFile(jwks, JSON.stringify({ keys: [{ ...(await exportJWK(key.publicKey)), kid: 'fapi', alg: 'ES256', use: 'sig' }] }));
  const created = (await connect.cli(['clients', 'create', '--name', 'FAPI Shop', '--redirect-uri', REDIRECT_URI, '--profile', 'fapi2', '--jwks', jwks])) as { clientId: string };
  fapi = { clientId: created.clientId, key };
  browser = new BrowserSession(connect.authUrl);
}, 60_000);

afterAll(async () => {
  await connect?.close();
  if (keysDir) await rm(keysDir, { recursive: true, force: true });
});

/** The error `action` throws; fails when it does not throw. */
async function caught(action: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof action === 'function' ? action() : action);
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

/** A new code for the shop, the customer signed in at Connect (a login the first time). */
async function newCode(pkce = true) {
  const pending = await startAuthorization({ authUrl: connect.authUrl, clientId: shop.clientId, redirectUri: REDIRECT_URI, pkce });
  const callback = parseCallback(await browser.authorize(pending.url, connect.demo.customer), { state: pending.state, issuer: connect.authUrl });
  return { code: callback.code, pending };
}

async function linkedTokens(): Promise<CustomerTokens> {
  const { code, pending } = await newCode();
  return exchangeCode(shop, { code, redirectUri: REDIRECT_URI, codeVerifier: pending.codeVerifier });
}

/** The callback's error when `client` starts an authorization with these parameters. */
async function callbackError(
  client: { clientId: string },
  session: BrowserSession,
  extra: { prompt?: 'none'; scope?: string[]; acrValues?: string[] } = {},
  choice: 'login' | 'cancel' | 'no_passkey' = 'login',
) {
  const pending = await startAuthorization({ authUrl: connect.authUrl, clientId: client.clientId, redirectUri: REDIRECT_URI, ...extra });
  const callback = await session.authorize(pending.url, connect.demo.customer, choice);
  return caught(() => parseCallback(callback, { state: pending.state, issuer: connect.authUrl }));
}

interface Row {
  /** Where Connect answers it. */
  readonly at: string;
  readonly ErrorClass: Function;
  /** Connect's error_description, exactly (or the SDK's own description). */
  readonly description: string | RegExp;
  /** What the hint must say. */
  readonly hint: RegExp;
  /** What it must not say. */
  readonly notHint?: RegExp;
  /** Makes the error happen. */
  readonly cause: () => Promise<unknown>;
}

const STILL_VALID = /^The code is still valid and unused: exchange it again/;
const REAUTHORIZE = /send the customer through the authorization again/;

/** Connect's answers to the code exchange, `POST /token` (section 4). */
const exchangeRows: Record<string, Row> = {
  'a redirect_uri other than the authorization request\'s; the same code then works with the right one': {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'redirect_uri does not match the authorization request',
    hint: /still valid.*redirect_uri set to .*the redirect URI registered for this client/,
    notHint: /no longer|expired|send the customer/i,
    async cause() {
      const { code, pending } = await newCode();
      const error = await caught(exchangeCode(shop, { code, redirectUri: 'http://127.0.0.1:4000/elsewhere', codeVerifier: pending.codeVerifier }));
      await expect(exchangeCode(shop, { code, redirectUri: REDIRECT_URI, codeVerifier: pending.codeVerifier })).resolves.toMatchObject({ accessToken: expect.any(String) });
      return error;
    },
  },
  'a code_verifier that does not match the code_challenge; the same code then works with the right one': {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'code_verifier does not match the code_challenge',
    hint: /still valid.*the code_verifier that matches the code_challenge/,
    notHint: /no longer|expired|send the customer/i,
    async cause() {
      const { code, pending } = await newCode();
      const error = await caught(exchangeCode(shop, { code, redirectUri: REDIRECT_URI, codeVerifier: (await createPkce()).codeVerifier }));
      await expect(exchangeCode(shop, { code, redirectUri: REDIRECT_URI, codeVerifier: pending.codeVerifier })).resolves.toMatchObject({ accessToken: expect.any(String) });
      return error;
    },
  },
  'no code_verifier for a code with a code_challenge; the same code then works with it': {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'code_verifier is required: the authorization request had a code_challenge',
    hint: /still valid.*with the code_verifier kept with this authorization/,
    notHint: /no longer|expired|send the customer/i,
    async cause() {
      const { code, pending } = await newCode();
      const error = await caught(exchangeCode(shop, { code, redirectUri: REDIRECT_URI }));
      await expect(exchangeCode(shop, { code, redirectUri: REDIRECT_URI, codeVerifier: pending.codeVerifier })).resolves.toMatchObject({ accessToken: expect.any(String) });
      return error;
    },
  },
  'a code_verifier for a code without a code_challenge; the same code then works without it': {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'code_verifier given, but the authorization request had no code_challenge',
    hint: /still valid.*without a code_verifier/,
    notHint: /no longer|expired|send the customer/i,
    async cause() {
      const { code } = await newCode(false);
      const error = await caught(exchangeCode(shop, { code, redirectUri: REDIRECT_URI, codeVerifier: (await createPkce()).codeVerifier }));
      await expect(exchangeCode(shop, { code, redirectUri: REDIRECT_URI })).resolves.toMatchObject({ accessToken: expect.any(String) });
      return error;
    },
  },
  'a code_verifier of the wrong length': {
    at: 'POST /token',
    ErrorClass: InvalidRequest,
    description: 'code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~',
    hint: /names the parameter at fault/,
    async cause() {
      const { code } = await newCode();
      return caught(exchangeCode(shop, { code, redirectUri: REDIRECT_URI, codeVerifier: 'short' }));
    },
  },
  'a code exchanged a second time': {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'authorization code was already used; the tokens issued for it are revoked',
    hint: /Exchange each code once.*send the customer through the authorization again/,
    async cause() {
      const { code, pending } = await newCode();
      const grant = { code, redirectUri: REDIRECT_URI, codeVerifier: pending.codeVerifier };
      await exchangeCode(shop, grant);
      return caught(exchangeCode(shop, grant));
    },
  },
  'a code Connect never issued': {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'authorization code is invalid',
    hint: /Pass the callback's code unchanged/,
    cause: () => caught(exchangeCode(shop, { code: 'not-a-code-connect-issued', redirectUri: REDIRECT_URI })),
  },
  "another client's code": {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'authorization code is invalid',
    hint: /with the credentials of the client that started the authorization/,
    async cause() {
      const { code, pending } = await newCode();
      return caught(exchangeCode({ ...shop, ...clients.other }, { code, redirectUri: REDIRECT_URI, codeVerifier: pending.codeVerifier }));
    },
  },
  'a code past its 300 seconds': {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'authorization code has expired or was ended',
    hint: /exchange the new code as soon as the callback arrives/,
    async cause() {
      const { code, pending } = await newCode();
      clock.advance(301);
      return caught(exchangeCode(shop, { code, redirectUri: REDIRECT_URI, codeVerifier: pending.codeVerifier }));
    },
  },
};

/** Client authentication and grants at `POST /token` (section 4). */
const clientRows: Record<string, Row> = {
  'a wrong secret': {
    at: 'POST /token',
    ErrorClass: InvalidClient,
    description: 'client authentication failed',
    hint: /^Check the client ID and secret/,
    cause: () => caught(requestClientToken({ ...shop, clientSecret: 'csk_sandbox_not-the-secret' })),
  },
  "production credentials at the sandbox": {
    at: 'POST /token',
    ErrorClass: InvalidClient,
    description: 'these are production credentials; this server is the sandbox environment',
    hint: /Use this environment's client ID and secret/,
    cause: () => caught(requestClientToken({ ...shop, clientId: 'cid_production_0123456789abcdef', clientSecret: 'csk_production_0123456789abcdef' })),
  },
  'a disabled client': {
    at: 'POST /token',
    ErrorClass: InvalidClient,
    description: 'client is disabled',
    hint: /enable the client again/,
    async cause() {
      const disabled = await connect.createClient({ redirectUri: REDIRECT_URI, name: 'Disabled' });
      await connect.cli(['clients', 'disable', disabled.clientId]);
      return caught(requestClientToken({ ...shop, ...disabled }));
    },
  },
  'a client without the client_credentials grant': {
    at: 'POST /token',
    ErrorClass: UnauthorizedClient,
    description: 'this client is not allowed the client_credentials grant',
    hint: /add that grant to the client/,
    async cause() {
      const codeOnly = await connect.createClient({ redirectUri: REDIRECT_URI, name: 'Code Only', grants: 'authorization_code' });
      return caught(requestClientToken({ ...shop, ...codeOnly }));
    },
  },
  'a resource server asking for a token': {
    at: 'POST /token',
    ErrorClass: UnauthorizedClient,
    description: 'a resource server obtains no tokens: it checks them at /introspect',
    hint: /createTokenVerifier/,
    cause: () => caught(requestClientToken({ ...shop, ...clients.resourceServer })),
  },
  'a scope the client is not registered for': {
    at: 'POST /token',
    ErrorClass: InvalidScope,
    description: 'scope asks for a scope this client is not registered for; ask the operator to register it, or leave scope out',
    hint: /clients show ID/,
    cause: () => caught(requestClientToken(shop, { scope: 'payments:read' })),
  },
};

/** Connect's answers to a refresh: `POST /token` (section 4) and `POST /tokens` (section 7). */
const refreshRows: Record<string, Row> = {
  'a revoked refresh token at /token': {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'refresh token has been revoked',
    hint: /session at Connect was ended \(revoked/,
    notHint: /expired|lifetime/,
    async cause() {
      const tokens = await linkedTokens();
      await revokeToken(shop, tokens.refreshToken ?? '');
      return caught(refreshCustomerToken(shop, tokens));
    },
  },
  'a revoked refresh token at /tokens': {
    at: 'POST /tokens',
    ErrorClass: InvalidGrant,
    description: 'refresh token has been revoked',
    hint: /session at Connect was ended \(revoked/,
    notHint: /expired|lifetime/,
    async cause() {
      const tokens = await linkedTokens();
      await revokeToken(shop, tokens.refreshToken ?? '');
      return caught(refreshCustomerToken(shop, tokens, { via: 'tokens' }));
    },
  },
  'a revoked refresh token, met by CustomerTokenManager': {
    at: 'POST /token',
    ErrorClass: ReauthorizationRequired,
    description: 'Connect refused the refresh token: refresh token has been revoked; the customer must authorize again',
    hint: /^Send the customer's browser to err\.authorization\.url/,
    notHint: /expired/,
    async cause() {
      const customers = new CustomerTokenManager({ ...shop, redirectUri: REDIRECT_URI });
      const pending = await customers.startAuthorization();
      await customers.completeAuthorization('alice', await browser.authorize(pending.url, connect.demo.customer), pending);
      await revokeToken(shop, (await customers.store.get('alice'))?.refreshToken ?? '');
      return caught(customers.refresh('alice'));
    },
  },
  'a refresh token altered on its way': {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'refresh token is invalid or expired',
    hint: /did not accept the token's signature or expiry/,
    async cause() {
      const tokens = await linkedTokens();
      const refreshToken = tokens.refreshToken ?? '';
      const altered = `${refreshToken.slice(0, -4)}${refreshToken.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
      return caught(refreshCustomerToken(shop, { ...tokens, refreshToken: altered }));
    },
  },
  "another client's refresh token": {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'refresh token was issued to another client',
    hint: /client the customer linked through/,
    async cause() {
      const tokens = await linkedTokens();
      return caught(refreshCustomerToken({ ...shop, ...clients.other }, tokens));
    },
  },
  'a refresh at /tokens by a client without the refresh_token grant': {
    at: 'POST /tokens',
    ErrorClass: UnauthorizedClient,
    description: 'refresh is not enabled for this client',
    hint: /add the refresh_token grant/,
    async cause() {
      const tokens = await linkedTokens();
      return caught(refreshCustomerToken({ ...shop, ...clients.noRefresh }, tokens, { via: 'tokens' }));
    },
  },
  'a revoked client access token at /tokens (sent again after a renewal that gives it back)': {
    at: 'POST /tokens',
    ErrorClass: InvalidToken,
    description: 'the access token has been revoked',
    hint: /A revoked token stays refused/,
    notHint: /expired/,
    async cause() {
      const tokens = await linkedTokens();
      const { accessToken } = await requestClientToken(shop);
      await revokeToken(shop, accessToken);
      // A provider that keeps handing out the revoked token.
      class Revoked extends ClientCredentialsProvider {
        override async getToken() {
          return { accessToken, tokenType: 'Bearer' as const, expiresIn: 3600, expiresAt: clock.nowSeconds() + 3600, scope: undefined };
        }
      }
      return caught(refreshCustomerToken(shop, tokens, { via: 'tokens', clientCredentials: new Revoked(shop) }));
    },
  },
  'a refresh token past its lifetime (7 days)': {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'refresh token is invalid or expired',
    hint: /past its lifetime/,
    async cause() {
      const tokens = await linkedTokens();
      clock.advance(7 * 24 * 3600 + 1);
      return caught(refreshCustomerToken(shop, tokens));
    },
  },
};

/** What the redirect back to the client carries (section 6). */
const callbackRows: Record<string, Row> = {
  'the customer cancels': {
    at: 'GET /authorize',
    ErrorClass: AccessDenied,
    description: 'the customer cancelled',
    hint: /cancelled on the hosted pages/,
    cause: () => callbackError(shop, new BrowserSession(connect.authUrl), {}, 'cancel'),
  },
  'prompt=none without a session': {
    at: 'GET /authorize',
    ErrorClass: LoginRequired,
    description: 'the customer must log in',
    hint: /without prompt=none/,
    cause: () => callbackError(shop, new BrowserSession(connect.authUrl), { prompt: 'none' }),
  },
  'prompt=none for a client the customer has not approved': {
    at: 'GET /authorize',
    ErrorClass: ConsentRequired,
    description: 'the customer has not approved this client',
    hint: /consent page/,
    async cause() {
      await newCode(); // signed in at Connect through the shop
      return callbackError(clients.other, browser, { prompt: 'none' });
    },
  },
  'acr_values=phr and the customer cannot use a passkey': {
    at: 'GET /authorize',
    ErrorClass: UnmetAuthenticationRequirements,
    description: 'the customer cannot sign in as acr_values requires',
    hint: /could not use a passkey/,
    cause: () => callbackError(shop, new BrowserSession(connect.authUrl), { acrValues: ['phr'] }, 'no_passkey'),
  },
  'a client without the authorization_code grant': {
    at: 'GET /authorize',
    ErrorClass: UnauthorizedClient,
    description: 'this client is not allowed the authorization_code grant',
    hint: /add that grant to the client/,
    cause: () => callbackError(clients.noCode, browser),
  },
  'a scope the client is not registered for': {
    at: 'GET /authorize',
    ErrorClass: InvalidScope,
    description: 'scope asks for a scope this client is not registered for; ask the operator to register it, or leave scope out',
    hint: /clients show ID/,
    cause: () => callbackError(shop, browser, { scope: ['payments:read'] }),
  },
};

/** Answers a healthy server cannot be made to give here: built from Connect's own words. */
const wordedRows: Record<string, Row> = {
  'a refresh token whose stored session expired before its signature did': worded('invalid_grant', 'refresh token has expired', InvalidGrant, /not renewed past its lifetime/),
  'a refresh token that is not its session\'s current one': worded('invalid_grant', 'refresh token is invalid', InvalidGrant, /not the current refresh token/),
  'a code whose redirect URI the operator replaced since': worded(
    'invalid_grant',
    'the redirect_uri of this code is no longer registered for the client',
    InvalidGrant,
    /replaced this client's redirect URI.*send the customer through the authorization again/,
  ),
  'a code ended while it was exchanged': worded('invalid_grant', 'the authorization code was ended: the customer or the client can no longer sign in with it', InvalidGrant, /locked or the client disabled during the exchange/),
  'a retried /tokens whose first answer no longer stands': worded('invalid_grant', 'the tokens of the first answer to this Request-Reference-No are no longer valid; refresh with a new Request-Reference-No', InvalidGrant, /new reference/),
  'a refresh asking for more scope than the authorization granted': worded('invalid_scope', 'scope asks for a scope the authorization did not grant; a refresh may only narrow the scope', InvalidScope, /new authorization/),
  'a scope parameter over its length limit': worded('invalid_scope', 'scope is too long', InvalidScope, /^Request only what the client was granted/),
  'a malformed scope (the SDK refuses it before sending)': worded(
    'invalid_scope',
    'scope must be scope tokens separated by spaces: printable ASCII other than double quote and backslash',
    InvalidScope,
    /^Request only what the client was granted/,
  ),
  'a bearer token whose client was disabled': worded('invalid_token', 'the client of this access token is disabled', InvalidToken, /whether the client was disabled/),
  'a bearer token ended when its client was disabled': worded('invalid_token', 'the access token was ended when its client was disabled', InvalidToken, /whether the client was disabled/),
  'a bearer token past its expiry': worded('invalid_token', 'the access token is invalid or expired', InvalidToken, /^Get a new access token/),
  'a customer access token replaced by a refresh': worded('invalid_token', 'the access token has been replaced or revoked', InvalidToken, /^Get a new access token/),
  'no bearer token at /tokens': worded('invalid_token', 'a client access token is required: Authorization: Bearer <access_token>', InvalidToken, /^Get a new access token/),
  'no bearer token at an API': worded('invalid_token', 'an access token is required: Authorization: Bearer <access_token>', InvalidToken, /^Get a new access token/),
  'the customer of a token was deleted': worded('invalid_token', 'the customer of this token no longer exists', InvalidToken, /authorize the customer again/),
  'no client authentication': worded('invalid_client', 'client authentication is required: HTTP Basic or client_id and client_secret', InvalidClient, /^Check the client ID and secret/),
  'client_id without client_secret': worded('invalid_client', 'client_secret is required', InvalidClient, /^Check the client ID and secret/),
  'a malformed Basic header': worded('invalid_client', 'malformed HTTP Basic credentials', InvalidClient, /^Check the client ID and secret/),
  'a grant type Connect does not offer': worded('unsupported_grant_type', 'grant_type is not supported; supported: client_credentials, authorization_code, refresh_token', UnsupportedGrantType, /grant_types_supported/),
  'a response type other than code': worded('unsupported_response_type', 'response_type must be code', UnsupportedResponseType, /startAuthorization/),
  'a token without a scope the API requires': worded('insufficient_scope', 'the access token lacks a scope this request needs', InsufficientScope, /ask the operator what the client must be granted/),
  'an API refusing a sign-in too weak for the request (RFC 9470)': worded(
    'insufficient_user_authentication',
    'this request needs a stronger sign-in than the access token stands for',
    InsufficientUserAuthentication,
    /authorization again with err\.acrValues as acr_values and err\.maxAge as max_age/,
  ),
  'an API refusing a sign-in too old for the request (RFC 9470)': worded(
    'insufficient_user_authentication',
    'this request needs a more recent sign-in than the access token stands for',
    InsufficientUserAuthentication,
    /^A refresh keeps the sign-in as it was/,
  ),
  'a Request-Reference-No that is no UUIDv4': worded('invalid_request', 'Request-Reference-No must be a UUID (version 4)', InvalidRequest, /names the parameter at fault/),
  'a Request-Reference-No still being answered': worded('invalid_request', 'a request with this Request-Reference-No is still being processed', InvalidRequest, /^Send the same request again in a moment/),
  'a Request-Reference-No reused for another request': worded('invalid_request', 'this Request-Reference-No was already used for a different request', InvalidRequest, /new reference/),
  'a database outage': worded('temporarily_unavailable', 'the service is temporarily unavailable; retry shortly', TemporarilyUnavailable, /retryAfter/),
  'an unexpected failure': worded('server_error', 'the server could not complete the request', ServerError, /tell the operator/),
};

function worded(code: ConnectErrorCode, description: string, ErrorClass: Function, hint: RegExp): Row {
  return { at: 'Connect (its wording)', ErrorClass, description, hint, cause: async () => errorForCode(code, description, { status: 400 }) };
}

/** FAPI 2.0 (section 13): private_key_jwt, pushed requests and DPoP-bound tokens. */
const fapiRows: Record<string, Row> = {
  'a client secret for a FAPI 2.0 client': {
    at: 'POST /token',
    ErrorClass: InvalidClient,
    description: 'this client authenticates only with private_key_jwt',
    hint: /configure privateKey/,
    cause: () => caught(requestClientToken({ authUrl: connect.authUrl, clientId: fapi.clientId, clientSecret: 'csk_sandbox_not-a-secret', clock })),
  },
  'an assertion signed by a key the client did not register': {
    at: 'POST /token',
    ErrorClass: InvalidClient,
    description: 'client_assertion is not signed by a key registered for this client',
    hint: /registered JWKS/,
    async cause() {
      const other = await generateKeyPair('ES256');
      return caught(requestClientToken({ authUrl: connect.authUrl, clientId: fapi.clientId, privateKey: other.privateKey, keyId: 'fapi', clock }));
    },
  },
  'an assertion dated by a clock an hour behind': {
    at: 'POST /token',
    ErrorClass: InvalidClient,
    description: 'client_assertion has expired',
    hint: /system clock/,
    cause: () => caught(requestClientToken({ authUrl: connect.authUrl, clientId: fapi.clientId, privateKey: fapi.key.privateKey, keyId: 'fapi', clock: fixedClock(clock.nowSeconds() - 3600) })),
  },
  'a code bound to a DPoP key, exchanged without a proof': {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'the authorization request bound this code to a DPoP key (dpop_jkt): send a DPoP proof of that key',
    hint: STILL_VALID,
    async cause() {
      const pending = await startAuthorization({ ...shop, dpop: true, redirectUri: REDIRECT_URI });
      const callback = parseCallback(await browser.authorize(pending.url, connect.demo.customer), { state: pending.state, issuer: connect.authUrl });
      return caught(exchangeCode(shop, { code: callback.code, redirectUri: REDIRECT_URI, codeVerifier: pending.codeVerifier }));
    },
  },
  'a bound refresh token sent with another DPoP key': {
    at: 'POST /token',
    ErrorClass: InvalidGrant,
    description: 'this refresh token is bound to another DPoP key',
    hint: /dpop: \{ key \}/,
    async cause() {
      const bound = { ...shop, dpop: true };
      const pending = await startAuthorization({ ...bound, redirectUri: REDIRECT_URI });
      const callback = parseCallback(await browser.authorize(pending.url, connect.demo.customer), { state: pending.state, issuer: connect.authUrl });
      const tokens = await exchangeCode(bound, { code: callback.code, redirectUri: REDIRECT_URI, codeVerifier: pending.codeVerifier });
      // Another key, as after a restart with dpop: true.
      return caught(refreshCustomerToken({ ...shop, dpop: { key: await generateKeyPair('ES256') } }, tokens));
    },
  },
  'a DPoP-bound client token presented as a bearer token at /tokens': {
    at: 'POST /tokens',
    ErrorClass: InvalidToken,
    description: 'this access token is DPoP-bound: present it as Authorization: DPoP with a DPoP proof',
    hint: /^Get a new access token/,
    async cause() {
      const tokens = await linkedTokens();
      // Options without dpop present the provider's bound token as Bearer.
      return caught(refreshCustomerToken(shop, tokens, { via: 'tokens', clientCredentials: new ClientCredentialsProvider({ ...shop, dpop: true }) }));
    },
  },
  'a resource server pushing an authorization request': {
    at: 'POST /par',
    ErrorClass: UnauthorizedClient,
    description: 'a resource server has no authorization requests to push',
    hint: /checks tokens/,
    cause: () => caught(startAuthorization({ authUrl: connect.authUrl, ...clients.resourceServer, redirectUri: REDIRECT_URI, pushedAuthorization: true, clock })),
  },
  'an unbound token presented as DPoP': worded('invalid_token', 'this access token is not DPoP-bound: present it as Authorization: Bearer', InvalidToken, /^Get a new access token/),
  'a client without a redirect URI pushing': worded('unauthorized_client', 'this client has no redirect URI: customers do not sign in to it', UnauthorizedClient, /ask the operator/),
};

/** Errors the SDK raises itself about an answer (sections 4 and 6). */
const sdkRows: Record<string, Row> = {
  'a callback without iss': {
    at: 'parseCallback',
    ErrorClass: IssuerMismatch,
    description: /^the callback carries no iss, but Connect \(.*\) always sends one$/,
    hint: /did not come from the Connect configured as authUrl/,
    cause: async () => caught(() => parseCallback(`${REDIRECT_URI}?code=c&state=s&userId=u&profileId=1`, { state: 's', issuer: connect.authUrl })),
  },
  'a callback of another state': {
    at: 'parseCallback',
    ErrorClass: StateMismatch,
    description: 'the callback state is not the one of this authorization',
    hint: /forged, stale, or from another tab/,
    cause: async () => caught(() => parseCallback(`${REDIRECT_URI}?code=c&state=other`, { state: 's', issuer: connect.authUrl })),
  },
  'discovery metadata naming another issuer': {
    at: 'discover',
    ErrorClass: IssuerMismatch,
    description: /^the metadata names issuer "https:\/\/elsewhere\.example", not "http:\/\/127\.0\.0\.1:\d+"$/,
    hint: /^Pass discover the issuer this Connect publishes/,
    notHint: /start the authorization again/,
    async cause() {
      const server = await startLocalServer((_request, response) => sendJson(response, 200, { issuer: 'https://elsewhere.example' }));
      try {
        return await caught(discover(server.url));
      } finally {
        await server.close();
      }
    },
  },
  'a refresh of tokens without a refresh token': {
    at: 'refreshCustomerToken',
    ErrorClass: InvalidGrant,
    description: 'these tokens have no refresh token: the client has no refresh_token grant',
    hint: /add the refresh_token grant/,
    cause: async () => caught(refreshCustomerToken(shop, { accessToken: 'a', issuedAt: 0, expiresAt: 1 })),
  },
};

const tables = { 'the code exchange': exchangeRows, 'client authentication and grants': clientRows, 'FAPI 2.0': fapiRows, 'the refresh': refreshRows, 'the callback': callbackRows, "Connect's other answers": wordedRows, "the SDK's own checks": sdkRows };

describe.each(Object.entries(tables))('errors of %s', (_table, rows) => {
  it.each(Object.entries(rows))('%s', async (_name, row) => {
    const error = await row.cause();
    expect(error).toBeInstanceOf(row.ErrorClass);
    const connectError = error as ConnectError;
    if (typeof row.description === 'string') expect(connectError.description).toBe(row.description);
    else expect(connectError.description).toMatch(row.description);
    expect(connectError.hint).toMatch(row.hint);
    if (row.notHint) expect(connectError.hint).not.toMatch(row.notHint);
    expect(connectError.message.endsWith(`. ${connectError.hint}`)).toBe(true);
    expect(repeatedPhrase(connectError.message), connectError.message).toBeUndefined();
  }, 60_000);
});

describe('no error says a thing twice', () => {
  it.each(Object.entries(HINTS))('the general hint of %s repeats no phrase of its own', (_code, hint) => {
    expect(repeatedPhrase(hint)).toBeUndefined();
  });
});

describe("the table covers Connect's error_descriptions", () => {
  it('has a row for every description of these codes in packages/server/src', async () => {
    const described = [...Object.values(tables).flatMap((rows) => Object.values(rows).map((row) => row.description))].filter((d): d is string => typeof d === 'string');
    const missing = (await serverDescriptions()).filter((pattern) => !described.some((d) => pattern.test(d)));
    expect(missing.map(String)).toEqual([]);
  });
});

/** Each description the server gives InvalidGrant, InvalidClient, UnauthorizedClient, InvalidToken or InvalidScope, as a pattern. */
async function serverDescriptions(): Promise<RegExp[]> {
  const root = join(dirname(fileURLToPath(import.meta.url)), '../../server/src');
  const files = (await readdir(root, { recursive: true })).filter((file) => file.endsWith('.ts'));
  const patterns: RegExp[] = [];
  for (const file of files) {
    const text = await readFile(join(root, file), 'utf8');
    const constants = new Map([...text.matchAll(/const ([A-Z_]+) = '([^']*)'/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
    for (const match of text.matchAll(/new (?:InvalidGrant|InvalidClient|UnauthorizedClient|InvalidToken|InvalidScope)\(\s*(?:'([^']*)'|`([^`]*)`|([A-Z_]+)\b)/g)) {
      const [, quoted, template, constant] = match;
      const literal = quoted ?? (constant ? constants.get(constant) : undefined);
      if (literal !== undefined) patterns.push(new RegExp(`^${escape(literal)}$`));
      else if (template !== undefined) patterns.push(new RegExp(`^${template.split(/\$\{[^}]*\}/).map(escape).join('.+')}$`));
    }
  }
  return patterns;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
