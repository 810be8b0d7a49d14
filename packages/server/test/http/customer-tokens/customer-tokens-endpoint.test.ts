import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { openEmbeddedSqlite } from '../../../src/storage/kysely/embedded-sqlite.js';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { deriveKey, unseal } from '../../../src/core/keys/master-key.js';
import { build, T0, type BuildOptions, type TestApp } from '../../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import {
  accessClaims,
  expectInvalidToken,
  expectMissingToken,
  expectRefreshed,
  expectRevoked,
  expectTokensBody,
  isActive,
  lifecycle,
  NO_REFRESH_GRANTS,
  postTokens,
  refreshAtToken,
  revoke,
  type Lifecycle,
  type Response,
  type TokensBody,
  type TokensRequest,
} from '../../helpers/token-session.js';
import { expectOAuthError, obtainToken } from '../../helpers/wire.js';

/** A lifecycle plus a client access token to call `/tokens` with. */
interface Endpoint extends Lifecycle {
  readonly bearer: string;
  /** `POST /tokens` with the client's bearer token and its customer's refresh token, unless overridden. */
  post(request?: TokensRequest): Promise<Response>;
}

async function endpoint(options: BuildOptions & { grants?: readonly string[]; t?: TestApp } = {}): Promise<Endpoint> {
  const s = await lifecycle(options);
  const bearer = await obtainToken(s.t, s.client);
  return {
    ...s,
    bearer,
    post: (request = {}) => postTokens(s.t.app, { bearer, body: { refreshToken: s.tokens.refreshToken }, ...request }),
  };
}

/** The session's current access token `jti`: it changes exactly when a refresh happened. */
async function currentAccessJti(s: Lifecycle): Promise<string | undefined> {
  const { sid } = await accessClaims(s.t, s.tokens.accessToken);
  return (await s.t.storage.tokenSessions.findTokenSession(sid))?.accessJti;
}

function expectError(res: Response, status: number, error: string, description: string, reference: string | undefined): void {
  expectOAuthError(res, { status, error, description });
  expect(res.headers['request-reference-no']).toBe(reference);
}

describe('POST /tokens', () => {
  it('refreshes: 200 {accessToken, refreshToken, expiresAt}; expiresAt is the new token’s exp; the reference is echoed', async () => {
    const s = await endpoint();
    const before = await accessClaims(s.t, s.tokens.accessToken);
    s.t.clock.advance(30);
    const reference = randomUUID();
    const body = expectTokensBody(await s.post({ reference }), reference);
    expect(body.refreshToken).toBe(s.tokens.refreshToken);
    const after = await accessClaims(s.t, body.accessToken);
    expect(after).toMatchObject({ sub: s.profileId, client_id: s.client.id, sid: before.sid, iat: T0 + 30, exp: T0 + 30 + 3600 });
    expect(body.expiresAt).toBe(after.exp);
    expect(after.jti).not.toBe(before.jti);
    expect(await isActive(s.t.app, s.client, s.tokens.accessToken)).toBe(false);
    expect(await isActive(s.t.app, s.client, body.accessToken)).toBe(true);
  });

  it('expiresAt follows the configured access token lifetime', async () => {
    const s = await endpoint({ accessTokenTtlSeconds: 60, refreshTokenTtlSeconds: 300 });
    expect(expectTokensBody(await s.post()).expiresAt).toBe(T0 + 60);
  });

  it.each([
    ['*/*'],
    ['application/json;q=0.5'],
    ['application/*'],
    ['text/html, application/json;q=0.1'],
    ['APPLICATION/JSON'],
    [null],
    [''],
  ])('Accept %j is fine', async (accept) => {
    const s = await endpoint();
    expectTokensBody(await s.post({ accept }));
  });

  it('Content-Type application/json with a charset is fine', async () => {
    const s = await endpoint();
    expectTokensBody(await s.post({ contentType: 'application/json; charset=utf-8' }));
  });

  it('a refresh token used at /tokens can be used again at /token and at /tokens; each refresh retires the access token before it', async () => {
    const s = await endpoint();
    // Each after the reuse interval of the one before (CONNECT_REFRESH_REUSE_SECONDS, 10): each mints.
    const first = expectTokensBody(await s.post());
    s.t.clock.advance(10);
    const second = expectRefreshed(await refreshAtToken(s.t.app, s.client, s.tokens.refreshToken));
    s.t.clock.advance(10);
    const third = expectTokensBody(await s.post());
    expect(await isActive(s.t.app, s.client, first.accessToken)).toBe(false);
    expect(await isActive(s.t.app, s.client, second.access_token)).toBe(false);
    expect(await isActive(s.t.app, s.client, third.accessToken)).toBe(true);
  });
});

interface ErrorCase {
  readonly name: string;
  readonly status: number;
  readonly error: string;
  readonly description: string;
  readonly request: (s: Endpoint) => TokensRequest | Promise<TokensRequest>;
  /** Whether the session's access token is still the login's afterwards (default: yes). */
  readonly untouched?: boolean;
  /** The request presented no token: its challenge carries no error code (RFC 6750 §3.1). */
  readonly noToken?: boolean;
}

const REQUIRED = 'a client access token is required: Authorization: Bearer <access_token>';
const INVALID_BEARER = 'the access token is invalid or expired';
const BAD_REFERENCE = 'Request-Reference-No must be a UUID (version 4)';
const BAD_FIELD = 'refreshToken is required and must be a string';
const NOT_JSON = 'the body is not valid JSON';
const INVALID_GRANT = 'refresh token is invalid or expired';

const ERRORS: readonly ErrorCase[] = [
  // 401 invalid_token: the bearer token.
  { name: 'no Authorization header', status: 401, error: 'invalid_token', description: REQUIRED, noToken: true, request: () => ({ authorization: null }) },
  { name: 'Authorization: Bearer (no token)', status: 401, error: 'invalid_token', description: REQUIRED, noToken: true, request: () => ({ authorization: 'Bearer' }) },
  { name: 'Authorization: Bearer with two tokens', status: 401, error: 'invalid_token', description: REQUIRED, request: (s) => ({ authorization: `Bearer ${s.bearer} ${s.bearer}` }) },
  { name: 'HTTP Basic client credentials', status: 401, error: 'invalid_token', description: REQUIRED, noToken: true, request: (s) => ({ authorization: `Basic ${Buffer.from(`${s.client.id}:${s.client.secret}`).toString('base64')}` }) },
  { name: 'another scheme (Token)', status: 401, error: 'invalid_token', description: REQUIRED, noToken: true, request: (s) => ({ authorization: `Token ${s.bearer}` }) },
  { name: 'a bearer token under the DPoP scheme (which names a DPoP-bound token)', status: 401, error: 'invalid_token', description: 'this access token is not DPoP-bound: present it as Authorization: Bearer', request: (s) => ({ authorization: `DPoP ${s.bearer}` }) },
  { name: 'a malformed bearer token', status: 401, error: 'invalid_token', description: INVALID_BEARER, request: () => ({ bearer: 'not-a-token' }) },
  { name: 'the bearer token truncated', status: 401, error: 'invalid_token', description: INVALID_BEARER, request: (s) => ({ bearer: s.bearer.slice(0, -2) }) },
  {
    name: 'an expired bearer token',
    status: 401,
    error: 'invalid_token',
    description: INVALID_BEARER,
    request: (s) => {
      s.t.clock.advance(3600);
      return {};
    },
    untouched: false,
  },
  {
    name: 'a revoked bearer token',
    status: 401,
    error: 'invalid_token',
    description: 'the access token has been revoked',
    request: async (s) => {
      expectRevoked(await revoke(s.t.app, s.client, s.bearer));
      return {};
    },
  },
  { name: 'the customer access token as bearer', status: 401, error: 'invalid_token', description: INVALID_BEARER, request: (s) => ({ bearer: s.tokens.accessToken }) },
  { name: 'the refresh token as bearer', status: 401, error: 'invalid_token', description: INVALID_BEARER, request: (s) => ({ bearer: s.tokens.refreshToken }) },
  {
    name: 'a bearer token of a disabled client',
    status: 401,
    error: 'invalid_token',
    description: 'the client of this access token is disabled',
    request: async (s) => {
      await s.t.storage.clients.updateClient(s.client.id, { status: 'disabled' }, s.t.clock.nowSeconds());
      s.t.clock.advance(5); // past the client cache
      return {};
    },
  },
  // 400 invalid_request: Request-Reference-No.
  { name: 'no Request-Reference-No', status: 400, error: 'invalid_request', description: BAD_REFERENCE, request: () => ({ reference: null }) },
  { name: 'an empty Request-Reference-No', status: 400, error: 'invalid_request', description: BAD_REFERENCE, request: () => ({ reference: '' }) },
  { name: 'a version 1 UUID', status: 400, error: 'invalid_request', description: BAD_REFERENCE, request: () => ({ reference: 'c232ab00-9414-11ec-b3c8-9f6bdeced846' }) },
  { name: 'a UUIDv4 without dashes', status: 400, error: 'invalid_request', description: BAD_REFERENCE, request: () => ({ reference: randomUUID().replace(/-/g, '') }) },
  { name: 'a UUIDv4 in braces', status: 400, error: 'invalid_request', description: BAD_REFERENCE, request: () => ({ reference: `{${randomUUID()}}` }) },
  { name: 'a UUIDv4 with a bad variant', status: 400, error: 'invalid_request', description: BAD_REFERENCE, request: () => ({ reference: '3f2504e0-4f89-41d3-c000-00c04fd430c8' }) },
  { name: 'a garbage reference', status: 400, error: 'invalid_request', description: BAD_REFERENCE, request: () => ({ reference: 'ref-0001' }) },
  { name: 'the nil UUID', status: 400, error: 'invalid_request', description: BAD_REFERENCE, request: () => ({ reference: '00000000-0000-0000-0000-000000000000' }) },
  // 400 invalid_request: the body.
  { name: 'malformed JSON', status: 400, error: 'invalid_request', description: NOT_JSON, request: () => ({ body: '{"refreshToken":' }) },
  { name: 'JSON with a trailing comma', status: 400, error: 'invalid_request', description: NOT_JSON, request: (s) => ({ body: `{"refreshToken":"${s.tokens.refreshToken}",}` }) },
  { name: 'an empty body', status: 400, error: 'invalid_request', description: 'the body must be a JSON object with refreshToken', request: () => ({ body: undefined }) },
  { name: 'no refreshToken', status: 400, error: 'invalid_request', description: BAD_FIELD, request: () => ({ body: {} }) },
  { name: 'refresh_token instead of refreshToken', status: 400, error: 'invalid_request', description: BAD_FIELD, request: (s) => ({ body: { refresh_token: s.tokens.refreshToken } }) },
  { name: 'refreshToken a number', status: 400, error: 'invalid_request', description: BAD_FIELD, request: () => ({ body: { refreshToken: 42 } }) },
  { name: 'refreshToken null', status: 400, error: 'invalid_request', description: BAD_FIELD, request: () => ({ body: { refreshToken: null } }) },
  { name: 'refreshToken an array', status: 400, error: 'invalid_request', description: BAD_FIELD, request: (s) => ({ body: { refreshToken: [s.tokens.refreshToken] } }) },
  { name: 'refreshToken empty', status: 400, error: 'invalid_request', description: BAD_FIELD, request: () => ({ body: { refreshToken: '' } }) },
  { name: 'a JSON array body', status: 400, error: 'invalid_request', description: BAD_FIELD, request: (s) => ({ body: [{ refreshToken: s.tokens.refreshToken }] }) },
  { name: 'a JSON string body', status: 400, error: 'invalid_request', description: BAD_FIELD, request: (s) => ({ body: JSON.stringify(s.tokens.refreshToken) }) },
  { name: 'a JSON null body', status: 400, error: 'invalid_request', description: BAD_FIELD, request: () => ({ body: 'null' }) },
  // 415: Content-Type.
  { name: 'Content-Type text/plain', status: 415, error: 'invalid_request', description: 'Content-Type must be application/json', request: () => ({ contentType: 'text/plain' }) },
  {
    name: 'Content-Type form-urlencoded',
    status: 415,
    error: 'invalid_request',
    description: 'Content-Type must be application/json',
    request: (s) => ({ contentType: 'application/x-www-form-urlencoded', body: `refreshToken=${s.tokens.refreshToken}` }),
  },
  { name: 'no Content-Type', status: 415, error: 'invalid_request', description: 'Content-Type must be application/json', request: () => ({ contentType: null }) },
  { name: 'a look-alike Content-Type', status: 415, error: 'invalid_request', description: 'Content-Type must be application/json', request: () => ({ contentType: 'application/jsonx' }) },
  // 406: Accept.
  ...['text/html', 'application/xml', 'application/json;q=0', 'text/*', 'application/json;q=0, */*', '*/*, application/*;q=0'].map(
    (accept): ErrorCase => ({
      name: `Accept ${accept}`,
      status: 406,
      error: 'invalid_request',
      description: 'this endpoint answers application/json; the Accept header excludes it',
      request: () => ({ accept }),
    }),
  ),
  // 400 invalid_grant: the refresh token.
  { name: 'an unknown refresh token', status: 400, error: 'invalid_grant', description: INVALID_GRANT, request: () => ({ body: { refreshToken: 'not-a-token' } }) },
  { name: 'the customer access token as refreshToken', status: 400, error: 'invalid_grant', description: INVALID_GRANT, request: (s) => ({ body: { refreshToken: s.tokens.accessToken } }) },
  { name: 'the client access token as refreshToken', status: 400, error: 'invalid_grant', description: INVALID_GRANT, request: (s) => ({ body: { refreshToken: s.bearer } }) },
  {
    name: 'an expired refresh token',
    status: 400,
    error: 'invalid_grant',
    description: INVALID_GRANT,
    request: async (s) => {
      s.t.clock.advance(604_800);
      return { bearer: await obtainToken(s.t, s.client) };
    },
    untouched: false,
  },
  {
    name: 'a revoked refresh token',
    status: 400,
    error: 'invalid_grant',
    description: 'refresh token has been revoked',
    request: async (s) => {
      expectRevoked(await revoke(s.t.app, s.client, s.tokens.refreshToken));
      return {};
    },
    untouched: false,
  },
  {
    name: 'another client’s refresh token',
    status: 400,
    error: 'invalid_grant',
    description: 'refresh token was issued to another client',
    request: async (s) => ({ bearer: await obtainToken(s.t, await s.addClient()) }),
  },
];

describe('POST /tokens errors: exact status, body and headers; the reference always echoed', () => {
  it.each(ERRORS.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const s = await endpoint();
    const request = await c.request(s);
    const reference = request.reference === undefined ? randomUUID() : request.reference;
    const res = await s.post({ ...request, reference });
    expectError(res, c.status, c.error, c.description, reference ?? undefined);
    if (c.noToken) expectMissingToken(res, c.description);
    else if (c.status === 401) expectInvalidToken(res, c.description);
    else expect(res.headers['www-authenticate']).toBeUndefined();
    if (c.untouched !== false) {
      expect(await currentAccessJti(s)).toBe((await accessClaims(s.t, s.tokens.accessToken)).jti);
    }
  });

  it('a client without the refresh_token grant (which got no refresh token) → 403 unauthorized_client, and nothing is refreshed', async () => {
    const s = await endpoint({ grants: NO_REFRESH_GRANTS });
    expect(s.tokens.refreshToken).toBeUndefined();
    const other = await s.addClient();
    const othersTokens = await s.newSession(other);
    const reference = randomUUID();
    expectError(await s.post({ reference, body: { refreshToken: othersTokens.refreshToken } }), 403, 'unauthorized_client', 'refresh is not enabled for this client', reference);
    expect(await isActive(s.t.app, s.client, s.tokens.accessToken)).toBe(true);
    expect(await isActive(s.t.app, other, othersTokens.accessToken)).toBe(true);
  });

  it('a client whose refresh grant is withdrawn → 403 once the client cache has moved on', async () => {
    const s = await endpoint();
    await s.t.storage.clients.updateClient(s.client.id, { grants: [...NO_REFRESH_GRANTS] }, s.t.clock.nowSeconds());
    s.t.clock.advance(5);
    const reference = randomUUID();
    expectError(await s.post({ reference }), 403, 'unauthorized_client', 'refresh is not enabled for this client', reference);
  });

  it('an expired bearer: valid at exp - 1, refused at exp', async () => {
    const s = await endpoint({ accessTokenTtlSeconds: 60 });
    s.t.clock.set(T0 + 59);
    expectTokensBody(await s.post());
    s.t.clock.set(T0 + 60);
    expectInvalidToken(await s.post(), INVALID_BEARER);
  });

  it('an expired refresh token: works at exp - 1, refused at exp', async () => {
    const s = await endpoint({ accessTokenTtlSeconds: 60, refreshTokenTtlSeconds: 300 });
    s.t.clock.set(T0 + 299);
    expectTokensBody(await s.post({ bearer: await obtainToken(s.t, s.client) }));
    s.t.clock.set(T0 + 300);
    expectOAuthError(await s.post({ bearer: await obtainToken(s.t, s.client) }), { status: 400, error: 'invalid_grant', description: INVALID_GRANT });
  });
});

/** What a replay whose tokens no longer stand gets. */
const REPLAY_REFUSED = 'the tokens of the first answer to this Request-Reference-No are no longer valid; refresh with a new Request-Reference-No';

describe('POST /tokens idempotent retries (Request-Reference-No)', () => {
  it('the same reference and body within 24 h: the same response, without refreshing again', async () => {
    const s = await endpoint();
    const reference = randomUUID();
    const first = expectTokensBody(await s.post({ reference }), reference);
    const jti = await currentAccessJti(s);
    expect(jti).toBe((await accessClaims(s.t, first.accessToken)).jti);
    expect(expectTokensBody(await s.post({ reference }), reference)).toEqual(first);
    // No second refresh: the first response's access token is still the session's.
    expect(await isActive(s.t.app, s.client, first.accessToken)).toBe(true);

    for (const advance of [0, 1, 3600, 86_399 - 3601]) {
      s.t.clock.advance(advance);
      const again = await s.post({ reference, bearer: await obtainToken(s.t, s.client) });
      expect(expectTokensBody(again, reference)).toEqual(first);
    }
    expect(s.t.clock.nowSeconds()).toBe(T0 + 86_399);
    expect(await currentAccessJti(s)).toBe(jti);
  });

  it('the reference is a UUID: upper and lower case name the same request', async () => {
    const s = await endpoint();
    const reference = randomUUID();
    const first = expectTokensBody(await s.post({ reference }));
    const again = await s.post({ reference: reference.toUpperCase() });
    expect(expectTokensBody(again, reference.toUpperCase())).toEqual(first);
  });

  it('a replay after a later refresh replaced its access token → invalid_grant, never the replaced token', async () => {
    const s = await endpoint();
    const reference = randomUUID();
    const first = expectTokensBody(await s.post({ reference }));
    // Past the reuse interval: a plainly later token (within the same second, a retry is told 409 for a
    // minute; docs/consumer-guide.md, "Refreshing a customer's access token").
    s.t.clock.advance(10);
    const second = expectTokensBody(await s.post());
    expect(second.accessToken).not.toBe(first.accessToken);
    const replay = await s.post({ reference });
    expectError(replay, 400, 'invalid_grant', REPLAY_REFUSED, reference);
    expect(replay.body).not.toContain(first.accessToken);
    expect(await currentAccessJti(s)).toBe((await accessClaims(s.t, second.accessToken)).jti);
  });

  it('a replay after its token session was revoked → invalid_grant; and so is every later one', async () => {
    const s = await endpoint();
    const reference = randomUUID();
    const first = expectTokensBody(await s.post({ reference }));
    expect(expectTokensBody(await s.post({ reference }))).toEqual(first);
    expectRevoked(await revoke(s.t.app, s.client, s.tokens.refreshToken));
    for (let i = 0; i < 2; i++) {
      const replay = await s.post({ reference });
      expectError(replay, 400, 'invalid_grant', REPLAY_REFUSED, reference);
      expect(replay.body).not.toContain(first.accessToken);
      expect(replay.body).not.toContain(s.tokens.refreshToken);
    }
  });

  it('a replay whose access token merely expired still answers: its refresh token works', async () => {
    const s = await endpoint();
    const reference = randomUUID();
    const first = expectTokensBody(await s.post({ reference }));
    s.t.clock.set(first.expiresAt + 1);
    expect(expectTokensBody(await s.post({ reference, bearer: await obtainToken(s.t, s.client) }))).toEqual(first);
  });

  it('the same reference with another body → 409, and nothing is refreshed', async () => {
    const s = await endpoint();
    const other = await s.newSession();
    const reference = randomUUID();
    const first = expectTokensBody(await s.post({ reference }));
    const res = await s.post({ reference, body: { refreshToken: other.refreshToken } });
    expectError(res, 409, 'invalid_request', 'this Request-Reference-No was already used for a different request', reference);
    expect(await isActive(s.t.app, s.client, other.accessToken)).toBe(true);
    // The same JSON spelled differently is another body too.
    const spaced = await s.post({ reference, body: `{ "refreshToken": "${s.tokens.refreshToken}" }` });
    expectError(spaced, 409, 'invalid_request', 'this Request-Reference-No was already used for a different request', reference);
    expect(expectTokensBody(await s.post({ reference }))).toEqual(first);
  });

  it('the same reference from another client is a request of its own', async () => {
    const s = await endpoint();
    const otherClient = await s.addClient();
    const otherTokens = await s.newSession(otherClient);
    const reference = randomUUID();
    const mine = expectTokensBody(await s.post({ reference }));
    const theirs = expectTokensBody(
      await postTokens(s.t.app, { bearer: await obtainToken(s.t, otherClient), reference, body: { refreshToken: otherTokens.refreshToken } }),
      reference,
    );
    expect(theirs.accessToken).not.toBe(mine.accessToken);
    expect((await accessClaims(s.t, theirs.accessToken)).client_id).toBe(otherClient.id);
    expect(await isActive(s.t.app, otherClient, otherTokens.accessToken)).toBe(false);
    expect(await isActive(s.t.app, otherClient, theirs.accessToken)).toBe(true);
    expect(expectTokensBody(await s.post({ reference }))).toEqual(mine);
  });

  it('after 24 h the reference runs again: at 86,399 s a replay, at 86,400 s a new refresh', async () => {
    const s = await endpoint();
    const reference = randomUUID();
    const first = expectTokensBody(await s.post({ reference }));
    s.t.clock.set(T0 + 86_399);
    expect(expectTokensBody(await s.post({ reference, bearer: await obtainToken(s.t, s.client) }))).toEqual(first);
    s.t.clock.set(T0 + 86_400);
    const later = expectTokensBody(await s.post({ reference, bearer: await obtainToken(s.t, s.client) }));
    expect(later.accessToken).not.toBe(first.accessToken);
    expect(later.expiresAt).toBe(T0 + 86_400 + 3600);
    expect(await currentAccessJti(s)).toBe((await accessClaims(s.t, later.accessToken)).jti);
    // And that run is remembered in turn.
    expect(expectTokensBody(await s.post({ reference, bearer: await obtainToken(s.t, s.client) }))).toEqual(later);
  });

  it('a failed request (invalid_grant) can be retried with the same reference', async () => {
    const s = await endpoint();
    const reference = randomUUID();
    const bad = { body: { refreshToken: 'not-a-token' }, reference };
    expectError(await s.post(bad), 400, 'invalid_grant', INVALID_GRANT, reference);
    // Failures are not remembered: the same failing request fails the same way, not as a conflict.
    expectError(await s.post(bad), 400, 'invalid_grant', INVALID_GRANT, reference);
    const body = expectTokensBody(await s.post({ reference }), reference);
    expect(await currentAccessJti(s)).toBe((await accessClaims(s.t, body.accessToken)).jti);
  });

  it('a request refused before it ran (bad body) leaves the reference free', async () => {
    const s = await endpoint();
    const reference = randomUUID();
    expectError(await s.post({ reference, body: {} }), 400, 'invalid_request', BAD_FIELD, reference);
    expectTokensBody(await s.post({ reference }), reference);
  });

  it('5 simultaneous requests with one reference: one refresh; the others replay it or get 409, never another token', async () => {
    const s = await endpoint();
    const replace = vi.spyOn(s.t.storage.tokenSessions, 'replaceAccessToken');
    const reference = randomUUID();
    const responses = await Promise.all(Array.from({ length: 5 }, () => s.post({ reference })));
    expectOneRefresh(responses, reference);
    expect(replace).toHaveBeenCalledTimes(1);
    const [winner] = responses.filter((res) => res.statusCode === 200) as [Response];
    expect(await currentAccessJti(s)).toBe((await accessClaims(s.t, winner.json<TokensBody>().accessToken)).jti);
    // Once it has finished, every retry gets that response.
    expect(expectTokensBody(await s.post({ reference }))).toEqual(winner.json());
    expect(replace).toHaveBeenCalledTimes(1);
  });

  it('the stored response is sealed: the database holds neither token in clear', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-idempotency-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'connect.db');
    const s = await endpoint({ database: { engine: 'sqlite', path } });
    const reference = randomUUID();
    const body = expectTokensBody(await s.post({ reference }));

    const db = openEmbeddedSqlite(path, { readonly: true });
    const rows = db.prepare('select * from idempotent_requests').all() as Array<Record<string, unknown>>;
    db.close();
    await expectSealed(rows, s, reference, body);
  });
});

/** Of simultaneous responses to one reference, one is the refresh and the others replay it or are 409s. */
function expectOneRefresh(responses: readonly Response[], reference: string): void {
  const ok = responses.filter((res) => res.statusCode === 200);
  expect(ok.length).toBeGreaterThanOrEqual(1);
  expect(new Set(ok.map((res) => expectTokensBody(res, reference).accessToken)).size).toBe(1);
  for (const res of responses.filter((r) => r.statusCode !== 200)) {
    expectError(res, 409, 'invalid_request', 'a request with this Request-Reference-No is still being processed', reference);
  }
}

/** The one stored row of `reference`: no token in clear, and it opens to the response under the idempotency key. */
async function expectSealed(rows: ReadonlyArray<Record<string, unknown>>, s: Endpoint, reference: string, body: TokensBody): Promise<void> {
  expect(rows).toHaveLength(1);
  const [row] = rows as [Record<string, unknown>];
  expect(row).toMatchObject({ client_id: s.client.id, reference });
  const stored = JSON.stringify(row);
  for (const secret of [body.accessToken, body.refreshToken, ...body.accessToken.split('.'), ...body.refreshToken.split('.').slice(1)]) {
    if (secret.length > 0) expect(stored).not.toContain(secret);
  }
  expect(stored).not.toContain('accessToken');
  const sealed = String(row.sealed_response);
  expect(sealed.split('.')).toHaveLength(5);
  const key = deriveKey(s.t.masterKey, 'idempotency');
  // The answer, with what a replay re-checks: its token session and access token.
  const claims = await accessClaims(s.t, body.accessToken);
  expect(JSON.parse(await unseal(key, `tokens:${s.client.id}:${reference}`, sealed))).toEqual({ ...body, sid: claims.sid, accessJti: claims.jti });
  // Bound to its client and reference: it does not open as another record.
  await expect(unseal(key, `tokens:${s.client.id}:${randomUUID()}`, sealed)).rejects.toThrow();
}

noticePostgresSkipped('POST /tokens on PostgreSQL');

describe.skipIf(!postgresAdminUrl)('POST /tokens on PostgreSQL', () => {
  const { open, databaseUrl } = usePostgresStorage();

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('refreshes, replays a retry, refuses another body with 409, and runs again after 24 h', async () => {
    const s = await endpoint({ storage: open() });
    const reference = randomUUID();
    const first = expectTokensBody(await s.post({ reference }), reference);
    expect(expectTokensBody(await s.post({ reference }))).toEqual(first);
    expectError(await s.post({ reference, body: { refreshToken: `${s.tokens.refreshToken}x` } }), 409, 'invalid_request', 'this Request-Reference-No was already used for a different request', reference);
    expect(await currentAccessJti(s)).toBe((await accessClaims(s.t, first.accessToken)).jti);

    s.t.clock.set(T0 + 86_400);
    const later = expectTokensBody(await s.post({ reference, bearer: await obtainToken(s.t, s.client) }));
    expect(later.accessToken).not.toBe(first.accessToken);
  });

  it('a replay after its token session was revoked, or its access token replaced → invalid_grant', async () => {
    const s = await endpoint({ storage: open() });
    const revoked = randomUUID();
    const first = expectTokensBody(await s.post({ reference: revoked }));
    const other = await s.newSession();
    const replaced = randomUUID();
    const second = expectTokensBody(await s.post({ reference: replaced, body: { refreshToken: other.refreshToken } }));
    // Past the reuse interval: the next refresh replaces the token.
    s.t.clock.advance(10);
    expectTokensBody(await s.post({ body: { refreshToken: other.refreshToken } }));
    expectRevoked(await revoke(s.t.app, s.client, s.tokens.refreshToken));

    expectError(await s.post({ reference: revoked }), 400, 'invalid_grant', REPLAY_REFUSED, revoked);
    const replay = await s.post({ reference: replaced, body: { refreshToken: other.refreshToken } });
    expectError(replay, 400, 'invalid_grant', REPLAY_REFUSED, replaced);
    expect(replay.body).not.toContain(second.accessToken);
    expect(first.accessToken).not.toBe(second.accessToken);
  });

  it('a failed request can be retried with the same reference', async () => {
    const s = await endpoint({ storage: open() });
    const reference = randomUUID();
    expectError(await s.post({ reference, body: { refreshToken: 'nope' } }), 400, 'invalid_grant', INVALID_GRANT, reference);
    expectTokensBody(await s.post({ reference }), reference);
  });

  it('5 simultaneous requests with one reference on one instance: one refresh', async () => {
    const s = await endpoint({ storage: open() });
    const replace = vi.spyOn(s.t.storage.tokenSessions, 'replaceAccessToken');
    const reference = randomUUID();
    const responses = await Promise.all(Array.from({ length: 5 }, () => s.post({ reference })));
    expectOneRefresh(responses, reference);
    expect(replace).toHaveBeenCalledTimes(1);
  });

  it('6 simultaneous requests with one reference over two instances sharing the database: one refresh', async () => {
    const masterKey = randomBytes(32);
    const a = await build({ storage: open(), masterKey });
    const b = await build({ storage: open(), masterKey, clock: a.clock });
    const s = await endpoint({ t: a });
    const replaceA = vi.spyOn(a.storage.tokenSessions, 'replaceAccessToken');
    const replaceB = vi.spyOn(b.storage.tokenSessions, 'replaceAccessToken');
    const reference = randomUUID();
    const apps: FastifyInstance[] = [a.app, b.app];
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        postTokens(apps[i % 2] as FastifyInstance, { bearer: s.bearer, reference, body: { refreshToken: s.tokens.refreshToken } }),
      ),
    );
    expectOneRefresh(responses, reference);
    expect(replaceA.mock.calls.length + replaceB.mock.calls.length).toBe(1);
    const [winner] = responses.filter((res) => res.statusCode === 200) as [Response];
    expect(await currentAccessJti(s)).toBe((await accessClaims(s.t, winner.json<TokensBody>().accessToken)).jti);
    // The other instance replays it.
    expect(expectTokensBody(await postTokens(b.app, { bearer: s.bearer, reference, body: { refreshToken: s.tokens.refreshToken } }))).toEqual(
      winner.json(),
    );
  });

  it('10 simultaneous refreshes with their own references over two instances: every one gets the one access token, and a replay of each gives it again', async () => {
    const masterKey = randomBytes(32);
    const a = await build({ storage: open(), masterKey });
    const b = await build({ storage: open(), masterKey, clock: a.clock });
    const s = await endpoint({ t: a });
    const apps: FastifyInstance[] = [a.app, b.app];
    const references = Array.from({ length: 10 }, () => randomUUID());
    const post = (i: number) =>
      postTokens(apps[i % 2] as FastifyInstance, { bearer: s.bearer, reference: references[i] as string, body: { refreshToken: s.tokens.refreshToken } });
    const answers = (await Promise.all(references.map((_, i) => post(i)))).map((res, i) => expectTokensBody(res, references[i]));
    expect(new Set(answers.map((answer) => answer.accessToken)).size).toBe(1);
    expect(new Set(answers.map((answer) => answer.expiresAt)).size).toBe(1);
    for (const app of apps) {
      for (const answer of answers) expect(await isActive(app, s.client, answer.accessToken)).toBe(true);
      expect(await isActive(app, s.client, s.tokens.accessToken)).toBe(false);
    }
    // Each stored answer holds the token it gave: a retry gets it again.
    for (const [i, answer] of answers.entries()) expect(expectTokensBody(await post(i), references[i])).toEqual(answer);
  });

  it('the stored response is sealed', async () => {
    const s = await endpoint({ storage: open() });
    const reference = randomUUID();
    const body = expectTokensBody(await s.post({ reference }));
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    try {
      const { rows } = await client.query<Record<string, unknown>>('select * from idempotent_requests');
      await expectSealed(rows, s, reference, body);
    } finally {
      await client.end();
    }
  });
});
