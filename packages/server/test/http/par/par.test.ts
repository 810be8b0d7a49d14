import { createHash } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { hashCode } from '../../../src/core/codes/authorization-code.js';
import { PUSHED_REQUESTS_PER_CLIENT } from '../../../src/core/lifetimes.js';
import { basicAuth, build, form, TEST_AUTH_URL, type TestApp } from '../../helpers/build.js';
import {
  addCustomer,
  authorizeParams,
  authorizeUrl,
  Browser,
  enterOtp,
  exchangeCode,
  expectClientRedirect,
  expectErrorRedirect,
  expectPage,
  expectSeeOther,
  logIn,
  MOBILE,
  pageText,
  PIN,
  pkcePair,
  REDIRECT_URI,
  startLogin,
  submitCredentials,
} from '../../helpers/customer-flow.js';
import { assertionFields, fapiTokenRequest, keyClient, type KeyedClient } from '../../helpers/client-keys.js';
import { dpopKey } from '../../helpers/dpop.js';
import { usePostgresInstances } from '../../helpers/instances.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import { expectNoStore, expectOAuthError, FORM, postToken, type Credentials } from '../../helpers/wire.js';

/**
 * Pushed authorization requests (RFC 9126; docs/journey.md, "Pushed
 * authorization requests") and the FAPI 2.0 rules of a `fapi2` client's
 * authorization request (docs/journey.md, "FAPI 2.0 clients"), on both engines.
 */

const REQUEST_URI = /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/;
const INVALID_REQUEST_URI = 'This sign-in link has expired or was already used (invalid_request_uri). Go back to Acme and start again.';

/** `POST /par` through `inject()`, the client authenticated by HTTP Basic unless `authorization` says otherwise. */
function postPar(app: FastifyInstance, client: Credentials | undefined, params: Record<string, string>, authorization?: string, dpop?: string): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { 'content-type': FORM, ...(dpop === undefined ? {} : { dpop }) };
  const auth = authorization ?? (client ? basicAuth(client.id, client.secret) : undefined);
  if (auth !== undefined) headers.authorization = auth;
  return app.inject({ method: 'POST', url: '/par', headers, payload: form(params) });
}

/** The usual pushed parameters of `client` (no `client_id`: HTTP Basic names the client). */
function pushedParams(extra: Record<string, string> = {}): Record<string, string> {
  return { response_type: 'code', redirect_uri: REDIRECT_URI, state: 'pushed-state', ...extra };
}

/** Expects the 201 of a pushed request; returns its `request_uri`. */
function expectPushed(res: LightMyRequestResponse): string {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 201 });
  expectNoStore(res);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = res.json<{ request_uri: string; expires_in: number }>();
  expect(Object.keys(body).sort()).toEqual(['expires_in', 'request_uri']);
  expect(body.request_uri).toMatch(REQUEST_URI);
  expect(body.expires_in).toBe(60);
  return body.request_uri;
}

/** Pushes `params` for `client` and returns the `request_uri`. */
async function push(app: FastifyInstance, client: Credentials, params: Record<string, string> = pushedParams()): Promise<string> {
  return expectPushed(await postPar(app, client, params));
}

/** `/authorize` with the pushed request only. */
function authorizeWith(client: Credentials, requestUri: string, extra: Record<string, string> = {}): string {
  return authorizeUrl({ client_id: client.id, request_uri: requestUri, ...extra });
}

/** The error page of an unusable `request_uri`: never a redirect. */
function expectInvalidRequestUri(res: LightMyRequestResponse): void {
  expectPage(res, 400);
  expect(pageText(res.body)).toContain(INVALID_REQUEST_URI);
}

/** Makes `client` a `fapi2` client through the store (before any request reads it): a key of its own, no secret. */
function makeFapi2(t: TestApp, client: Credentials): Promise<KeyedClient> {
  return keyClient(t, client.id, 'fapi2');
}

/** `POST /par` of a `fapi2` client, authenticated by a new client assertion. */
async function pushFapi2(t: TestApp, client: KeyedClient, params: Record<string, string>): Promise<LightMyRequestResponse> {
  return postPar(t.app, undefined, { ...params, ...(await assertionFields(t, client)) });
}

/** The code exchange of a `fapi2` client: a new client assertion and a DPoP proof (with Connect's nonce). */
async function exchangeFapi2(t: TestApp, client: KeyedClient, params: Record<string, string>): Promise<LightMyRequestResponse> {
  return fapiTokenRequest(t, t.app, client, await dpopKey(), { grant_type: 'authorization_code', ...params });
}

function defineTests(engine: string, make: () => Promise<TestApp>): void {
  describe(`POST /par (${engine})`, () => {
    it('stores the pushed request: 201, a request_uri of 256 random bits, expires_in 60, no-store; stored only as a hash', async () => {
      const t = await make();
      const client = await t.createClient();
      const requestUri = await push(t.app, client, pushedParams({ dpop_jkt: 'x'.repeat(43), unknown_thing: 'kept' }));
      const other = await push(t.app, client);
      expect(other).not.toBe(requestUri);
      // The request_uri itself is nowhere in the database: only its SHA-256 is.
      const id = requestUri.split(':').pop() as string;
      expect(await t.storage.pushedRequests.consumePushedRequest(id, client.id, t.clock.nowSeconds())).toBeUndefined();
      const record = await t.storage.pushedRequests.consumePushedRequest(createHash('sha256').update(id).digest('base64url'), client.id, t.clock.nowSeconds());
      // Every parameter pushed is kept, those /authorize does not read too; the credentials are not.
      expect(record?.parameters).toEqual({ ...pushedParams({ dpop_jkt: 'x'.repeat(43), unknown_thing: 'kept' }), client_id: client.id });
    });

    it('client_secret_post works as at /token, and its secret is not stored with the request', async () => {
      const t = await make();
      const client = await t.createClient();
      const requestUri = expectPushed(await postPar(t.app, undefined, { ...pushedParams(), client_id: client.id, client_secret: client.secret }));
      const id = requestUri.split(':').pop() as string;
      const record = await t.storage.pushedRequests.consumePushedRequest(createHash('sha256').update(id).digest('base64url'), client.id, t.clock.nowSeconds());
      expect(record?.parameters).toEqual({ ...pushedParams(), client_id: client.id });
    });

    it.each([
      ['no authentication', (_c: Credentials) => ({ params: pushedParams(), authorization: undefined })],
      ['a wrong secret', (c: Credentials) => ({ params: pushedParams(), authorization: basicAuth(c.id, `${c.secret}x`) })],
      ['an unknown client', (c: Credentials) => ({ params: pushedParams(), authorization: basicAuth('cid_sandbox_nobody', c.secret) })],
      ['client_id without a secret', (c: Credentials) => ({ params: { ...pushedParams(), client_id: c.id }, authorization: undefined })],
    ])('%s → 401 invalid_client with WWW-Authenticate, nothing stored', async (_name, request) => {
      const t = await make();
      const client = await t.createClient();
      const { params, authorization } = request(client);
      const res = await t.app.inject({ method: 'POST', url: '/par', headers: { 'content-type': FORM, ...(authorization ? { authorization } : {}) }, payload: form(params) });
      expectOAuthError(res, { status: 401, error: 'invalid_client' });
      expect(await t.storage.pushedRequests.deleteExpiredPushedRequests(t.clock.nowSeconds() + 3600, 100)).toBe(0);
    });

    it.each([
      ['request', { request: 'eyJhbGciOiJub25lIn0.e30.' }, 'invalid_request', 'request objects are not supported: push the authorization parameters themselves'],
      ['request_uri', { request_uri: 'urn:ietf:params:oauth:request_uri:abc' }, 'invalid_request', 'request_uri cannot be pushed'],
      ['a redirect_uri not registered', { redirect_uri: 'https://acme.example/other' }, 'invalid_request', 'redirect_uri is not the one registered for this client'],
      ['no redirect_uri', { redirect_uri: '' }, 'invalid_request', 'redirect_uri is required'],
      ['response_type=token', { response_type: 'token' }, 'unsupported_response_type', 'response_type must be code'],
      ['no response_type', { response_type: '' }, 'invalid_request', 'response_type is required'],
      ['a scope the client does not have', { scope: 'payments' }, 'invalid_scope', undefined],
      ['code_challenge_method=plain', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request', 'code_challenge_method must be S256'],
    ] as const)('%s → 400 %s, nothing stored', async (_name, extra, error, description) => {
      const t = await make();
      const client = await t.createClient();
      const params = Object.fromEntries(Object.entries(pushedParams(extra)).filter(([, v]) => v !== ''));
      const res = await postPar(t.app, client, params);
      expectOAuthError(res, { status: 400, error, ...(description ? { description } : {}) });
      expect(await t.storage.pushedRequests.deleteExpiredPushedRequests(t.clock.nowSeconds() + 3600, 100)).toBe(0);
    });

    it('the client_id in the body must be the authenticated client', async () => {
      const t = await make();
      const client = await t.createClient();
      const other = await t.createClient({ name: 'Other' });
      expectOAuthError(await postPar(t.app, client, { ...pushedParams(), client_id: other.id }), { status: 400, error: 'invalid_request' });
    });

    it("a client without the authorization_code grant → unauthorized_client; a resource server → unauthorized_client", async () => {
      const t = await make();
      const client = await t.createClient({ grants: ['client_credentials'] });
      expectOAuthError(await postPar(t.app, client, pushedParams()), { status: 400, error: 'unauthorized_client' });
      const rs = await t.createResourceServer();
      expectOAuthError(await postPar(t.app, rs, pushedParams()), { status: 400, error: 'unauthorized_client' });
    });

    it(`each client may push ${PUSHED_REQUESTS_PER_CLIENT} requests a minute: past it 429 with Retry-After and nothing stored; another client is not affected`, async () => {
      const t = await make();
      const client = await t.createClient();
      const other = await t.createClient({ name: 'Other' });
      for (let i = 0; i < PUSHED_REQUESTS_PER_CLIENT - 1; i++) expect(await t.services.pushes.pushes.take(client.id)).toBeUndefined();
      await push(t.app, client);
      const refused = await postPar(t.app, client, pushedParams());
      expectOAuthError(refused, { status: 429, error: 'too_many_requests' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(await t.storage.pushedRequests.deleteExpiredPushedRequests(t.clock.nowSeconds() + 3600, 100)).toBe(1);
      await push(t.app, other);
    });
  });

  describe(`GET /authorize with a request_uri (${engine})`, () => {
    it('the whole journey through a pushed request: login, code, redemption with the pushed PKCE verifier', async () => {
      const t = await make();
      const client = await t.createClient({ grants: ['authorization_code', 'refresh_token'] });
      await addCustomer(t);
      const { verifier, challenge } = pkcePair();
      const requestUri = await push(t.app, client, pushedParams({ code_challenge: challenge, code_challenge_method: 'S256' }));
      const result = await logIn(new Browser(t.app), { client_id: client.id, request_uri: requestUri });
      expect(result.get('state')).toBe('pushed-state');
      const code = result.get('code') as string;
      const res = await exchangeCode(t.app, client, { code, redirect_uri: REDIRECT_URI, code_verifier: verifier });
      expect(res.statusCode).toBe(200);
      expect(res.json<{ refresh_token: string }>().refresh_token).toBeDefined();
      // A standard client's code lives CONNECT_CODE_TTL (300 s by default).
      const record = await t.storage.codes.findAuthorizationCode(hashCode(code));
      expect((record?.expiresAt ?? 0) - (record?.createdAt ?? 0)).toBe(300);
    });

    it('a DPoP proof sent with the push binds the code to its key (RFC 9449 §10.1); a proof of another key, or none, cannot redeem it', async () => {
      const t = await make();
      const client = await t.createClient({ grants: ['authorization_code', 'refresh_token'] });
      await addCustomer(t);
      const key = await dpopKey();
      const { verifier, challenge } = pkcePair();
      const proof = await key.proof({ htm: 'POST', htu: `${TEST_AUTH_URL}/par`, iat: t.clock.nowSeconds() });
      const requestUri = expectPushed(await postPar(t.app, client, pushedParams({ code_challenge: challenge, code_challenge_method: 'S256' }), undefined, proof));
      const code = (await logIn(new Browser(t.app), { client_id: client.id, request_uri: requestUri })).get('code') as string;
      const exchange = (dpop?: string) =>
        postToken(t.app, {
          authorization: basicAuth(client.id, client.secret),
          body: form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier }),
          ...(dpop === undefined ? {} : { headers: { dpop } }),
        });
      const tokenProof = async (of = key) => of.proof({ htm: 'POST', htu: `${TEST_AUTH_URL}/token`, iat: t.clock.nowSeconds() });
      expectOAuthError(await exchange(), { status: 400, error: 'invalid_grant' });
      expectOAuthError(await exchange(await tokenProof(await dpopKey())), { status: 400, error: 'invalid_grant' });
      const bound = await exchange(await tokenProof());
      expect({ status: bound.statusCode, type: bound.json<{ token_type?: string }>().token_type }).toEqual({ status: 200, type: 'DPoP' });
    });

    it('a push whose DPoP proof is bad, or of another key than its dpop_jkt, is refused: 400 invalid_dpop_proof, nothing stored', async () => {
      const t = await make();
      const client = await t.createClient();
      const key = await dpopKey();
      const forToken = await key.proof({ htm: 'POST', htu: `${TEST_AUTH_URL}/token`, iat: t.clock.nowSeconds() });
      expectOAuthError(await postPar(t.app, client, pushedParams(), undefined, forToken), { status: 400, error: 'invalid_dpop_proof' });
      const proof = await key.proof({ htm: 'POST', htu: `${TEST_AUTH_URL}/par`, iat: t.clock.nowSeconds() });
      expectOAuthError(await postPar(t.app, client, pushedParams({ dpop_jkt: (await dpopKey()).jkt }), undefined, proof), {
        status: 400,
        error: 'invalid_dpop_proof',
        description: "dpop_jkt is not the thumbprint of the DPoP proof's key",
      });
      expect(await t.storage.pushedRequests.deleteExpiredPushedRequests(t.clock.nowSeconds() + 3600, 100)).toBe(0);
    });

    it('the other query parameters are ignored: the pushed ones alone count', async () => {
      const t = await make();
      const client = await t.createClient();
      await addCustomer(t);
      const requestUri = await push(t.app, client);
      // prompt=none would answer login_required at once; the other redirect_uri, response_type and scope would be refused; the state echoed.
      const ignored = { redirect_uri: 'https://evil.example/cb', state: 'query-state', prompt: 'none', response_type: 'token', scope: 'nothing' };
      const browser = new Browser(t.app);
      const res = await browser.get(authorizeWith(client, requestUri, ignored));
      expectSeeOther(res, /^\/login\?request=/);
      const otpPage = await submitCredentials(browser, await browser.follow(res), MOBILE, PIN);
      const back = expectClientRedirect(await enterOtp(browser, otpPage, MOBILE));
      expect(back.get('state')).toBe('pushed-state');
      expect(back.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it('is used once: the second visit gets the invalid_request_uri page, never a redirect', async () => {
      const t = await make();
      const client = await t.createClient();
      const requestUri = await push(t.app, client);
      const browser = new Browser(t.app);
      expectSeeOther(await browser.get(authorizeWith(client, requestUri)), /^\/login\?request=/);
      expectInvalidRequestUri(await browser.get(authorizeWith(client, requestUri)));
      expectInvalidRequestUri(await new Browser(t.app).get(authorizeWith(client, requestUri)));
    });

    it('expires 60 seconds after the push: usable at 59, not at 60', async () => {
      const t = await make();
      const client = await t.createClient();
      const early = await push(t.app, client);
      const late = await push(t.app, client);
      t.clock.advance(59);
      expectSeeOther(await new Browser(t.app).get(authorizeWith(client, early)), /^\/login\?request=/);
      t.clock.advance(1);
      expectInvalidRequestUri(await new Browser(t.app).get(authorizeWith(client, late)));
      t.clock.advance(1);
      expectInvalidRequestUri(await new Browser(t.app).get(authorizeWith(client, late)));
    });

    it("another client's request_uri → the error page (naming the visiting client), and it stays usable by its own client", async () => {
      const t = await make();
      const client = await t.createClient();
      const other = await t.createClient({ name: 'Other' });
      const requestUri = await push(t.app, client);
      const res = await new Browser(t.app).get(authorizeWith(other, requestUri));
      expectPage(res, 400);
      expect(pageText(res.body)).toContain('This sign-in link has expired or was already used (invalid_request_uri). Go back to Other and start again.');
      expectSeeOther(await new Browser(t.app).get(authorizeWith(client, requestUri)), /^\/login\?request=/);
    });

    it.each([
      ['an unknown request_uri', (uri: string) => `${uri.slice(0, -1)}${uri.endsWith('A') ? 'B' : 'A'}`],
      ['a request_uri of another form', () => 'https://acme.example/request.jwt'],
      ['a request_uri without its prefix', (uri: string) => uri.split(':').pop() as string],
    ])('%s → the invalid_request_uri page', async (_name, mangle) => {
      const t = await make();
      const client = await t.createClient();
      const requestUri = await push(t.app, client);
      expectInvalidRequestUri(await new Browser(t.app).get(authorizeWith(client, mangle(requestUri))));
    });

    it('without client_id, or with an unknown one → the error page of an untrusted request', async () => {
      const t = await make();
      const client = await t.createClient();
      const requestUri = await push(t.app, client);
      const missing = await new Browser(t.app).get(authorizeUrl({ request_uri: requestUri }));
      expectPage(missing, 400);
      expect(pageText(missing.body)).toContain('The request does not name the application (client_id is missing).');
      const unknown = await new Browser(t.app).get(authorizeUrl({ client_id: 'cid_sandbox_nobody', request_uri: requestUri }));
      expectPage(unknown, 400);
      expect(pageText(unknown.body)).toContain('The application that sent you here is not known.');
      // Neither used it up.
      expectSeeOther(await new Browser(t.app).get(authorizeWith(client, requestUri)), /^\/login\?request=/);
    });

    it('10 visits at once with one request_uri start exactly one journey', async () => {
      const t = await make();
      const client = await t.createClient();
      const requestUri = await push(t.app, client);
      const responses = await Promise.all(Array.from({ length: 10 }, () => new Browser(t.app).get(authorizeWith(client, requestUri))));
      const started = responses.filter((res) => res.statusCode === 303);
      expect(started).toHaveLength(1);
      expectSeeOther(started[0] as LightMyRequestResponse, /^\/login\?request=/);
      for (const res of responses.filter((r) => r.statusCode !== 303)) expectInvalidRequestUri(res);
    });
  });

  describe(`a fapi2 client (${engine})`, () => {
    it('/authorize without a request_uri → redirect with invalid_request (pushed requests required)', async () => {
      const t = await make();
      const client = await t.createClient();
      await makeFapi2(t, client);
      const { challenge } = pkcePair();
      const res = await new Browser(t.app).get(authorizeUrl(authorizeParams(client, { code_challenge: challenge, code_challenge_method: 'S256' })));
      const description = expectErrorRedirect(res, 'invalid_request', 'xyz-state');
      expect(description).toBe('this client must push its authorization requests to /par and send only client_id and request_uri here');
    });

    it.each([
      ['no PKCE', {}, 'invalid_request', 'this client must use PKCE: code_challenge with code_challenge_method=S256'],
      ['PKCE plain', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request', 'code_challenge_method must be S256'],
      ['PKCE without a method', { code_challenge: 'a'.repeat(43) }, 'invalid_request', 'code_challenge_method must be S256'],
      ['response_type=token', { response_type: 'token' }, 'unsupported_response_type', 'response_type must be code'],
    ])('POST /par with %s → 400 %s', async (_name, extra, error, description) => {
      const t = await make();
      const client = await t.createClient();
      const keyed = await makeFapi2(t, client);
      expectOAuthError(await pushFapi2(t, keyed, pushedParams(extra)), { status: 400, error, description });
    });

    it('the journey through PAR ends with a 303 back; its codes are redeemable 60 seconds (not at 60), a silent sign-in too', async () => {
      const t = await make();
      const client = await t.createClient({ grants: ['authorization_code', 'refresh_token'] });
      const keyed = await makeFapi2(t, client);
      await addCustomer(t);
      const browser = new Browser(t.app);
      const first = pkcePair();
      const requestUri = expectPushed(await pushFapi2(t, keyed, pushedParams({ code_challenge: first.challenge, code_challenge_method: 'S256' })));
      // logIn expects the OTP form's POST to answer 303 See Other back to the client (expectClientRedirect).
      const code = (await logIn(browser, { client_id: client.id, request_uri: requestUri })).get('code') as string;
      const record = await t.storage.codes.findAuthorizationCode(hashCode(code));
      expect((record?.expiresAt ?? 0) - (record?.createdAt ?? 0)).toBe(60);
      t.clock.advance(60);
      expectOAuthError(await exchangeFapi2(t, keyed, { code, redirect_uri: REDIRECT_URI, code_verifier: first.verifier }), { status: 400, error: 'invalid_grant' });

      // The live session: a silent sign-in, straight back with a code (303), valid 60 seconds too.
      const second = pkcePair();
      const again = expectPushed(await pushFapi2(t, keyed, pushedParams({ code_challenge: second.challenge, code_challenge_method: 'S256' })));
      const res = await browser.get(authorizeWith(client, again));
      const silent = expectClientRedirect(res).get('code') as string;
      t.clock.advance(59);
      const redeemed = await exchangeFapi2(t, keyed, { code: silent, redirect_uri: REDIRECT_URI, code_verifier: second.verifier });
      expect(redeemed.statusCode).toBe(200);
    });
  });
}

describe('SQLite', () => {
  defineTests('SQLite', () => build());
});

noticePostgresSkipped('pushed authorization requests on PostgreSQL');

describe.skipIf(!postgresAdminUrl)('PostgreSQL', () => {
  const { open } = usePostgresStorage();
  defineTests('PostgreSQL', () => build({ storage: open() }));
});

describe.skipIf(!postgresAdminUrl)('two instances on one PostgreSQL', () => {
  const instances = usePostgresInstances();

  it('a request_uri pushed on one instance is usable once, on the other', async () => {
    const { apps, t } = await instances.two();
    const [a, b] = apps as [FastifyInstance, FastifyInstance];
    const client = await t.createClient();
    await addCustomer(t);
    const requestUri = await push(a, client);
    const { requestId } = await startLogin(new Browser(b), { client_id: client.id, request_uri: requestUri });
    expect(requestId).toBeDefined();
    expectInvalidRequestUri(await new Browser(a).get(authorizeWith(client, requestUri)));
    expectInvalidRequestUri(await new Browser(b).get(authorizeWith(client, requestUri)));
  });

  it('10 visits at once, spread over both instances, start exactly one journey', async () => {
    const { apps, t } = await instances.two();
    const client = await t.createClient();
    const requestUri = await push(apps[0] as FastifyInstance, client);
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => new Browser(apps[i % 2] as FastifyInstance).get(authorizeWith(client, requestUri))));
    expect(responses.filter((res) => res.statusCode === 303)).toHaveLength(1);
    for (const res of responses.filter((r) => r.statusCode !== 303)) expectInvalidRequestUri(res);
  });
});
