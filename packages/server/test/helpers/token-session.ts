import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { compactDecrypt, EncryptJWT, SignJWT, type JWTPayload } from 'jose';
import { expect } from 'vitest';
import { basicAuth, form, type TestApp } from './build.js';
import { REFRESH_GRANTS, signedIn, type SignedInOptions } from './builders.js';
import { exchangeCode, LEAK, REDIRECT_URI, type Browser } from './customer-flow.js';
import { expectJson, expectNoStore, expectOAuthError, postToken, type Credentials } from './wire.js';

/**
 * Customer token sessions over HTTP: a client allowed to refresh, a logged-in
 * customer, tokens from the authorization code grant, and the requests of
 * the token lifecycle (refresh at `/token` and `/tokens`, introspection,
 * revocation, the protected profile endpoint).
 */

export type Response = LightMyRequestResponse;

/** Every grant: what a client needs to obtain and refresh customer tokens. */
export { REFRESH_GRANTS };
/** The default grants: customer tokens, but no refresh. */
export const NO_REFRESH_GRANTS = ['client_credentials', 'authorization_code'] as const;

/** A customer's access and refresh token. */
export interface CustomerTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
}

/** An app with a refresh-enabled client and a customer logged in through the hosted pages. */
export interface Lifecycle {
  readonly t: TestApp;
  readonly client: Credentials;
  readonly profileId: string;
  readonly browser: Browser;
  /**
   * The tokens of the login (minted at the clock's start). A client without
   * the `refresh_token` grant gets no refresh token: `refreshToken` is then `undefined`.
   */
  readonly tokens: CustomerTokens;
  /** New tokens (a new token session) for `who`, through the live customer session. */
  newSession(who?: Credentials): Promise<CustomerTokens>;
  /** Registers another client, by default with every grant. */
  addClient(grants?: readonly string[]): Promise<Credentials>;
}

/** Builds an app, registers a client with `grants` and a customer, logs the customer in and exchanges the code ({@link signedIn}, then tokens). */
export async function lifecycle(options: SignedInOptions = {}): Promise<Lifecycle> {
  const { t, client, profileId, browser, loginCode, code } = await signedIn(options);
  const tokens = await redeem(t.app, client, loginCode);
  return {
    t,
    client,
    profileId,
    browser,
    tokens,
    async newSession(who = client) {
      return redeem(t.app, who, await code({}, who));
    },
    addClient: (grants = REFRESH_GRANTS) => t.createClient({ name: 'Other', grants }),
  };
}

/** Exchanges a code; fails the test unless tokens come back. */
export async function redeem(app: FastifyInstance, client: Credentials, code: string): Promise<CustomerTokens> {
  const res = await exchangeCode(app, client, { code, redirect_uri: REDIRECT_URI });
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
  const body = res.json<{ access_token: string; refresh_token: string }>();
  return { accessToken: body.access_token, refreshToken: body.refresh_token };
}

/** `POST /token` with `grant_type=refresh_token`, by HTTP Basic (default) or in the body. */
export function refreshAtToken(
  app: FastifyInstance,
  client: Credentials,
  refreshToken: string | undefined,
  method: 'basic' | 'post' = 'basic',
): Promise<Response> {
  const pairs: Array<[string, string]> = [['grant_type', 'refresh_token']];
  if (refreshToken !== undefined) pairs.push(['refresh_token', refreshToken]);
  if (method === 'post') {
    pairs.push(['client_id', client.id], ['client_secret', client.secret]);
    return postToken(app, { body: form(pairs) });
  }
  return postToken(app, { authorization: basicAuth(client.id, client.secret), body: form(pairs) });
}

/** The successful answer of the refresh grant: exactly these four fields, never cached. */
export function expectRefreshed(res: Response, expiresIn = 3600): { access_token: string; refresh_token: string } {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
  expectJson(res);
  expectNoStore(res);
  const body = res.json<{ access_token: string; refresh_token: string; token_type: string; expires_in: number }>();
  expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
  expect(body.token_type).toBe('Bearer');
  expect(body.expires_in).toBe(expiresIn);
  expect(body.access_token.split('.')).toHaveLength(5);
  return body;
}

/** `POST /introspect`, client authenticated by HTTP Basic (default) or in the body. */
export function introspect(
  app: FastifyInstance,
  client: Credentials,
  token: string | undefined,
  method: 'basic' | 'post' = 'basic',
  extra: Record<string, string> = {},
): Promise<Response> {
  return tokenStateRequest(app, '/introspect', client, token, method, extra);
}

/** `POST /revoke`, client authenticated by HTTP Basic (default) or in the body. */
export function revoke(
  app: FastifyInstance,
  client: Credentials,
  token: string | undefined,
  method: 'basic' | 'post' = 'basic',
  extra: Record<string, string> = {},
): Promise<Response> {
  return tokenStateRequest(app, '/revoke', client, token, method, extra);
}

function tokenStateRequest(
  app: FastifyInstance,
  url: string,
  client: Credentials,
  token: string | undefined,
  method: 'basic' | 'post',
  extra: Record<string, string>,
): Promise<Response> {
  const params: Record<string, string> = { ...(token === undefined ? {} : { token }), ...extra };
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (method === 'basic') headers.authorization = basicAuth(client.id, client.secret);
  else Object.assign(params, { client_id: client.id, client_secret: client.secret });
  return app.inject({ method: 'POST', url, headers, payload: form(params) });
}

/** The introspection answer: 200, JSON, never cached; returns the body. */
export function expectIntrospection(res: Response): Record<string, unknown> {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
  expectJson(res);
  expectNoStore(res);
  return res.json<Record<string, unknown>>();
}

/** Exactly `{"active":false}` (RFC 7662 §2.2: nothing else about a token the caller may not see). */
export function expectInactive(res: Response): void {
  expectIntrospection(res);
  expect(res.body).toBe('{"active":false}');
}

/** Whether `token` introspects as active for `client`. */
export async function isActive(app: FastifyInstance, client: Credentials, token: string): Promise<boolean> {
  const body = expectIntrospection(await introspect(app, client, token));
  return body.active === true;
}

/** RFC 7009 §2.2: 200, whatever the token was, with the JSON body `{}`. */
export function expectRevoked(res: Response): void {
  expect({ status: res.statusCode, body: res.body }).toEqual({ status: 200, body: '{}' });
  expect(res.headers['content-type']).toMatch(/^application\/json(;|$)/);
  expectNoStore(res);
}

/** `GET /customer/profile` with `Authorization: Bearer <token>` (no header when `undefined`). */
export function getProfile(app: FastifyInstance, token: string | undefined, authorization?: string): Promise<Response> {
  const header = authorization ?? (token === undefined ? undefined : `Bearer ${token}`);
  return app.inject({ method: 'GET', url: '/customer/profile', headers: header === undefined ? {} : { authorization: header } });
}

/**
 * RFC 6750 §3.1: a request that presented no token gets 401 `invalid_token`
 * in the body (CONTRACT.md section 7) and a challenge without an error code.
 */
export function expectMissingToken(res: Response, description?: string | RegExp): string {
  const text = expectOAuthError(res, { status: 401, error: 'invalid_token', ...(description === undefined ? {} : { description }) });
  expect(res.headers['www-authenticate']).toBe('Bearer realm="connect"');
  return text;
}

/** RFC 6750 §3: 401 `invalid_token` with its `WWW-Authenticate: Bearer` challenge. */
export function expectInvalidToken(res: Response, description?: string | RegExp): string {
  const text = expectOAuthError(res, { status: 401, error: 'invalid_token', ...(description === undefined ? {} : { description }) });
  expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"(, error_description="[^"\\]*")?$/);
  return text;
}

/** What a `POST /tokens` request in a test carries. */
export interface TokensRequest {
  /** The client access token; sent as `Authorization: Bearer …`. */
  readonly bearer?: string;
  /** Replaces the `Authorization` header entirely (`null`: none). */
  readonly authorization?: string | null;
  /** The JSON body as an object, or a raw string or bytes. */
  readonly body?: unknown;
  /** `Request-Reference-No`; default a fresh UUIDv4, `null` for none. */
  readonly reference?: string | null;
  /** `Content-Type`; default `application/json`, `null` for none. */
  readonly contentType?: string | null;
  /** `Accept`; default `application/json`, `null` for none. */
  readonly accept?: string | null;
  /** More headers (a `DPoP` proof). */
  readonly headers?: Record<string, string>;
}

/** `POST /tokens` through `inject()`, with the headers docs/consumer-guide.md names unless told otherwise. */
export function postTokens(app: FastifyInstance, request: TokensRequest): Promise<Response> {
  const headers: Record<string, string> = { ...request.headers };
  const authorization = request.authorization === undefined ? (request.bearer === undefined ? null : `Bearer ${request.bearer}`) : request.authorization;
  if (authorization !== null) headers.authorization = authorization;
  const reference = request.reference === undefined ? randomUUID() : request.reference;
  if (reference !== null) headers['request-reference-no'] = reference;
  const contentType = request.contentType === undefined ? 'application/json' : request.contentType;
  if (contentType !== null) headers['content-type'] = contentType;
  const accept = request.accept === undefined ? 'application/json' : request.accept;
  if (accept !== null) headers.accept = accept;
  const body = request.body;
  const payload = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return app.inject({ method: 'POST', url: '/tokens', headers, ...(payload === undefined ? {} : { payload }) });
}

/** The body of a successful `POST /tokens`. */
export interface TokensBody {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly expiresAt: number;
}

/** 200 with exactly `{accessToken, refreshToken, expiresAt}`, JSON, never cached, the reference echoed. */
export function expectTokensBody(res: Response, reference?: string): TokensBody {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
  expectJson(res);
  expectNoStore(res);
  if (reference !== undefined) expect(res.headers['request-reference-no']).toBe(reference);
  const body = res.json<TokensBody>();
  expect(Object.keys(body).sort()).toEqual(['accessToken', 'expiresAt', 'refreshToken']);
  expect(body.accessToken.split('.')).toHaveLength(5);
  expect(Number.isInteger(body.expiresAt)).toBe(true);
  return body;
}

/** The plaintext claims of a customer access token, decrypted with the app's current key (no claim checks). */
export async function accessClaims(t: TestApp, accessToken: string): Promise<JWTPayload & { sid: string; client_id: string }> {
  const { plaintext } = await compactDecrypt(accessToken, t.keyRing.encryptionKey().key);
  return JSON.parse(new TextDecoder().decode(plaintext)) as JWTPayload & { sid: string; client_id: string };
}

/** Nothing internal in a response: never a 5xx, no stack frames, paths or error class names. */
export function expectNoLeak(res: Response): void {
  expect(res.statusCode).toBeLessThan(500);
  expect(res.body).not.toMatch(LEAK);
  expect(String(res.headers['www-authenticate'] ?? '')).not.toMatch(LEAK);
}

/**
 * A JWT signed with the app's own active key: what only someone holding the
 * server's private key could make. Tests use it to show that the claim and
 * header checks hold even when the signature is good.
 */
export async function signWithServerKey(t: TestApp, header: { typ: string; alg?: string; kid?: string }, claims: JWTPayload): Promise<string> {
  const { key, kid, alg } = t.keyRing.signingKey();
  return new SignJWT(claims).setProtectedHeader({ alg, kid, ...header }).sign(key);
}

/** A JWE encrypted with the app's own active key (see {@link signWithServerKey}). */
export async function encryptWithServerKey(t: TestApp, header: { typ?: string; kid?: string }, claims: JWTPayload): Promise<string> {
  const { key, kid } = t.keyRing.encryptionKey();
  return new EncryptJWT(claims).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid, ...header }).encrypt(key);
}
