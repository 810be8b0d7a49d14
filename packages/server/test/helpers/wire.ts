import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload, type ProtectedHeaderParameters } from 'jose';
import { expect } from 'vitest';
import { basicAuth, form, TEST_AUTH_URL, TEST_BASE_URL, type TestApp } from './build.js';

/** The only content type the token endpoint parses (RFC 6749 §3.2). */
export const FORM = 'application/x-www-form-urlencoded';

/** What a token request in a test can carry. */
export interface TokenRequestOptions {
  /** The `Authorization` header, sent as given. */
  readonly authorization?: string;
  /** The raw body; a string or raw bytes. */
  readonly body?: string | Buffer;
  /** The `Content-Type`; `null` sends none. Defaults to the form type. */
  readonly contentType?: string | null;
  readonly headers?: Record<string, string>;
}

/** `POST /token` through `inject()`. */
export function postToken(app: FastifyInstance, options: TokenRequestOptions = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  const contentType = options.contentType === undefined ? FORM : options.contentType;
  if (contentType !== null) headers['content-type'] = contentType;
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  return app.inject({
    method: 'POST',
    url: '/token',
    headers,
    ...(options.body === undefined ? {} : { payload: options.body }),
  });
}

/** RFC 6749 §5.1: token endpoint responses are never cached. */
export function expectNoStore(res: LightMyRequestResponse): void {
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers.pragma).toBe('no-cache');
}

/** A JSON response, by its `Content-Type`. */
export function expectJson(res: LightMyRequestResponse): void {
  expect(res.headers['content-type']).toMatch(/^application\/json(;|$)/);
}

/** The challenge of every 401 `invalid_client` (RFC 6749 §5.2, RFC 9110 §15.5.2). */
export const BASIC_CHALLENGE = 'Basic realm="connect"';

/** RFC 6749 §5.2: `error_description` is %x20-21 / %x23-5B / %x5D-7E (never empty here). */
export const ERROR_DESCRIPTION = /^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/;

/** What an OAuth error response must look like. */
export interface ExpectedOAuthError {
  readonly status: number;
  readonly error: string;
  /** The exact `error_description`, or a pattern it must match. */
  readonly description?: string | RegExp;
  /**
   * `basic`: the challenge `WWW-Authenticate: Basic realm="connect"`;
   * `none`: no `WWW-Authenticate` at all; absent: not checked, except that
   * every `invalid_client` must carry the Basic challenge.
   */
  readonly challenge?: 'basic' | 'none';
}

/**
 * Checks an RFC 6749 §5.2 error response exactly: status, a JSON body with
 * only `error` and `error_description`, the no-store headers, and the
 * `WWW-Authenticate` challenge. Returns the description.
 */
export function expectOAuthError(res: LightMyRequestResponse, expected: ExpectedOAuthError): string {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: expected.status });
  expectJson(res);
  expectNoStore(res);
  const body = res.json<Record<string, unknown>>();
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  expect(body.error).toBe(expected.error);
  expect(typeof body.error_description).toBe('string');
  const description = body.error_description as string;
  if (typeof expected.description === 'string') expect(description).toBe(expected.description);
  else if (expected.description) expect(description).toMatch(expected.description);
  // RFC 6749 §5.2 allows only these characters in error_description (no " or \, ASCII only).
  expect(description).toMatch(ERROR_DESCRIPTION);
  if (expected.challenge === 'basic' || expected.error === 'invalid_client') {
    expect(res.headers['www-authenticate']).toBe(BASIC_CHALLENGE);
  } else if (expected.challenge === 'none') {
    expect(res.headers['www-authenticate']).toBeUndefined();
  }
  return description;
}

/** Client credentials as `createClient()` returns them. */
export interface Credentials {
  readonly id: string;
  readonly secret: string;
}

/** Gets a client-credentials access token over HTTP Basic; fails the test unless it is a 200. */
export async function obtainToken(t: TestApp, client: Credentials): Promise<string> {
  const res = await postToken(t.app, {
    authorization: basicAuth(client.id, client.secret),
    body: form({ grant_type: 'client_credentials' }),
  });
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
  return res.json<{ access_token: string }>().access_token;
}

/** The JWKS document as `GET /.well-known/jwks.json` serves it. */
export async function fetchJwks(app: FastifyInstance): Promise<JSONWebKeySet> {
  const res = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
  expect(res.statusCode).toBe(200);
  return res.json<JSONWebKeySet>();
}

/**
 * Verifies a client access token the way a resource server would: against
 * the JWKS fetched over HTTP from `app`, at `atSeconds` (default: the app's clock).
 */
export async function verifyWithPublishedKeys(
  t: Pick<TestApp, 'app' | 'clock'>,
  token: string,
  atSeconds: number = t.clock.nowSeconds(),
): Promise<{ payload: JWTPayload; protectedHeader: ProtectedHeaderParameters }> {
  const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(await fetchJwks(t.app)), {
    issuer: TEST_AUTH_URL,
    audience: TEST_BASE_URL,
    typ: 'at+jwt',
    algorithms: ['ES256'],
    currentDate: new Date(atSeconds * 1000),
  });
  return { payload, protectedHeader };
}
