import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUSHED_REQUESTS_PER_CLIENT } from '../../../src/core/lifetimes.js';
import { openApiDocument } from '../../../src/http/openapi/document.js';
import { basicAuth, build, form, TEST_AUTH_URL, TEST_BASE_URL, type TestApp } from '../../helpers/build.js';
import { collectRoutes, openApiChecker, routeKey, type DescribedResponse } from '../../helpers/openapi.js';
import {
  addCustomer,
  authorizeParams,
  authorizeUrl,
  Browser,
  csrfToken,
  expectClientRedirect,
  expectErrorRedirect,
  latestOtp,
  logIn,
  MOBILE,
  nthMobile,
  OTHER_MOBILE,
  PIN,
  requestIdOf,
  wrongOtp,
} from '../../helpers/customer-flow.js';
import { getProfile, introspect, NO_REFRESH_GRANTS, postTokens, redeem, REFRESH_GRANTS, refreshAtToken, revoke } from '../../helpers/token-session.js';
import { obtainToken, postToken } from '../../helpers/wire.js';
import { SoftwareCredential } from '../../helpers/webauthn-authenticator.js';

/**
 * Connect's OpenAPI description (`src/http/openapi/`): a valid OpenAPI 3.1
 * document, describing every route the app registers, and every response
 * these tests make the app give, with its status, content type, body and
 * headers, is one it describes (checked with Ajv against the document's
 * own schemas, through `helpers/openapi.ts`).
 */

const document = openApiDocument();
const openapi = openApiChecker(document as unknown as Record<string, unknown>);

/** A response the description has that no test here can produce, and why. */
const NOT_PRODUCED: Partial<Record<DescribedResponse, string>> = {
  'GET /customer/profile 403': 'no scope is required by the profile API in this version',
};

/** A client's credentials. */
type Credentials = { id: string; secret: string };

describe('the OpenAPI description', () => {
  it('is a valid OpenAPI 3.1 document, of the server package version', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(document.info.version).toBe(pkg.version);
  });

  it('the validator refuses a broken document (the check itself works)', async () => {
    // A response without its (required) description.
    const broken = structuredClone(document) as unknown as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    const responses = broken.paths['/healthz']?.get?.responses ?? {};
    responses['200'] = { content: {} };
    const result = await new Validator().validate(broken as unknown as Record<string, unknown>);
    expect(result.valid).toBe(false);
  });

  it('every schema compiles as strict JSON Schema 2020-12, and every response carries X-Request-Id', () => {
    const pointers = openapi.schemaPointers();
    expect(pointers.length).toBeGreaterThan(50);
    for (const pointer of pointers) expect(() => openapi.compile(pointer), pointer).not.toThrow();
    expect(() => openApiChecker({ ...document, components: { schemas: { Bad: { type: 'object', propertys: {} } } } }).compile('/components/schemas/Bad')).toThrow(
      /unknown keyword/,
    );
    const responses = [
      ...Object.values(document.components.responses),
      ...Object.values(document.paths).flatMap((item) =>
        Object.values(item).flatMap((operation) => ('responses' in operation ? Object.values(operation.responses) : [])),
      ),
    ];
    for (const response of responses) {
      if ('$ref' in response) continue;
      expect(response.headers?.['X-Request-Id'], response.description).toEqual({ $ref: '#/components/headers/RequestId' });
    }
  });

  it('the response checker finds a status, a body, a content type and a header that do not match (the check itself works)', async () => {
    const t = await build();
    const changed = structuredClone(document) as unknown as {
      components: { schemas: Record<string, { properties: Record<string, { const?: string }> }> };
      paths: Record<string, { get: { responses: Record<string, { headers: Record<string, unknown>; content?: unknown }> } }>;
    };
    const healthy = changed.components.schemas.Healthy?.properties.status;
    if (healthy) healthy.const = 'fine';
    const ready = changed.paths['/readyz']?.get.responses['200'];
    if (ready) ready.headers['X-Missing'] = { description: 'Not sent.', required: true, schema: { type: 'string' } };
    const jwks = changed.paths['/.well-known/jwks.json']?.get.responses['200'];
    if (jwks) jwks.content = { 'text/plain': { schema: { type: 'string' } } };
    delete changed.paths['/openapi.json']?.get.responses['200'];
    delete changed.paths['/sandbox/messages'];
    const checker = openApiChecker(changed as unknown as Record<string, unknown>);
    const problems = async (url: string) => checker.problems(await t.app.inject({ method: 'GET', url }));

    expect(await problems('/healthz')).toEqual([expect.stringMatching(/^GET \/healthz 200: the body does not match its schema: \/status must be equal to constant/)]);
    expect(await problems('/readyz')).toEqual(['GET /readyz 200: the required header X-Missing is missing']);
    expect(await problems('/.well-known/jwks.json')).toEqual([expect.stringMatching(/Content-Type application\/json; charset=utf-8 is not one of text\/plain/)]);
    expect(await problems('/openapi.json')).toEqual([expect.stringMatching(/^GET \/openapi.json 200: the status is not described/)]);
    expect(await problems('/sandbox/messages?to=%2B639171234567')).toEqual(['GET /sandbox/messages: no such path is described']);
    expect(await problems('/healthz?x=%01')).toEqual([]);
    const wrongHeader = openApiChecker({ ...document, components: { ...document.components, headers: { ...document.components.headers, NoStore: { description: 'x', required: true, schema: { type: 'string', const: 'private' } } } } });
    expect(wrongHeader.problems(await t.app.inject({ method: 'GET', url: '/readyz' }))).toEqual([expect.stringMatching(/header Cache-Control: "no-store" does not match its schema/)]);
  });

  it.each(['sandbox', 'production'] as const)('describes every route the %s app registers, and only those', async (environment) => {
    const { made: t, routes } = await collectRoutes(() => build({ environment }));
    const registered = new Set(routes.filter((route) => route.method !== 'HEAD').map((route) => routeKey(route.method, route.url)));
    // Every GET route answers HEAD too (Fastify's own), so HEAD is not described.
    for (const route of routes.filter((r) => r.method === 'HEAD')) expect(registered).toContain(routeKey('GET', route.url));

    const res = await openapi.checked(t.app).inject({ method: 'GET', url: '/openapi.json' });
    const served = res.json<{ paths: Record<string, Record<string, unknown>> }>();
    const described = new Set(
      Object.entries(served.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((key) => ['get', 'put', 'post', 'delete', 'options', 'patch'].includes(key))
          .map((method) => routeKey(method, path)),
      ),
    );
    expect([...described].sort()).toEqual([...registered].sort());
    expect([...registered].some((key) => key.startsWith('GET /sandbox/'))).toBe(environment === 'sandbox');
  });

  it('GET /openapi.json serves it with this server\'s URLs, as JSON, cacheable and revalidated by its ETag', async () => {
    const t = await build({ env: { CONNECT_AUTH_URL: `${TEST_AUTH_URL}/auth` } });
    const app = openapi.checked(t.app);
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
    const served = res.json<typeof document>();
    expect(served.servers).toEqual([{ url: `${TEST_AUTH_URL}/auth`, description: document.servers[0]?.description }]);
    expect(served.paths['/tokens']?.servers?.map((s) => s.url)).toEqual([TEST_BASE_URL]);
    expect(served.paths['/login']?.servers?.map((s) => s.url)).toEqual([TEST_AUTH_URL]);
    expect(JSON.stringify(served)).not.toMatch(/\{(authUrl|baseUrl|authOrigin)\}/);
    expect({ ...served, servers: document.servers, paths: {} }).toEqual({ ...structuredClone(document), paths: {} });

    const again = await app.inject({ method: 'GET', url: '/openapi.json', headers: { 'if-none-match': String(res.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });
});

describe('real responses match the description', () => {
  let t: TestApp;
  let app: FastifyInstance;
  /** A client with every grant, and the tokens of a customer logged in through it. */
  let client: Credentials;
  let browser: Browser;
  let tokens: { accessToken: string; refreshToken: string };

  beforeAll(async () => {
    t = await build({ closedByCaller: true });
    app = openapi.checked(t.app);
    client = await t.createClient({ grants: REFRESH_GRANTS });
    await addCustomer(t);
    browser = new Browser(app);
    const params = await logIn(browser, authorizeParams(client));
    tokens = await redeem(app, client, params.get('code') ?? '');
  });
  afterAll(() => t.close());

  /** The test app, its responses checked. */
  const checkedT = (): TestApp => ({ ...t, app });

  it('POST /token: each grant, each way to authenticate, and each error', async () => {
    const basic = basicAuth(client.id, client.secret);
    const cc = form({ grant_type: 'client_credentials' });
    expect((await postToken(app, { authorization: basic, body: cc })).statusCode).toBe(200);
    expect((await postToken(app, { body: form({ grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret }) })).statusCode).toBe(200);
    const refreshed = await refreshAtToken(app, client, tokens.refreshToken, 'post');
    expect(refreshed.json()).toHaveProperty('refresh_token', tokens.refreshToken);
    tokens = { ...tokens, accessToken: refreshed.json<{ access_token: string }>().access_token };

    const errors: Array<[string, Parameters<typeof postToken>[1], number, string]> = [
      ['no grant_type', { authorization: basic, body: '' }, 400, 'invalid_request'],
      ['not a form', { authorization: basic, body: '{}', contentType: 'application/json' }, 400, 'invalid_request'],
      ['an unknown grant', { authorization: basic, body: form({ grant_type: 'password' }) }, 400, 'unsupported_grant_type'],
      ['an unknown code', { authorization: basic, body: form({ grant_type: 'authorization_code', code: 'x'.repeat(43), redirect_uri: 'https://acme.example/callback' }) }, 400, 'invalid_grant'],
      ['a wrong secret', { authorization: basicAuth(client.id, 'wrong'), body: cc }, 401, 'invalid_client'],
      ['no credentials', { body: cc }, 401, 'invalid_client'],
      ['a body over 16 KiB', { authorization: basic, body: `grant_type=client_credentials&pad=${'a'.repeat(17 * 1024)}` }, 413, 'invalid_request'],
    ];
    for (const [name, request, status, error] of errors) {
      const res = await postToken(app, request);
      expect({ name, status: res.statusCode, error: res.json<{ error: string }>().error }).toEqual({ name, status, error });
    }
    const ccOnly = await t.createClient({ name: 'Machine', grants: ['client_credentials'] });
    const refused = await refreshAtToken(app, ccOnly, tokens.refreshToken);
    expect([refused.statusCode, refused.json<{ error: string }>().error]).toEqual([400, 'unauthorized_client']);

    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      const res = await app.inject({ method, url: '/token' });
      expect(res.statusCode).toBe(405);
      expect((await app.inject({ method, url: '/token?x=%01' })).statusCode).toBe(400);
    }
  });

  it('POST /par: a pushed request, used at /authorize, and each error', async () => {
    const basic = basicAuth(client.id, client.secret);
    const par = (body: string, authorization: string | undefined = basic) =>
      app.inject({ method: 'POST', url: '/par', headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) }, payload: body });
    const pushed = await par(form({ response_type: 'code', redirect_uri: 'https://acme.example/callback', state: 's' }));
    expect(pushed.statusCode).toBe(201);
    const requestUri = pushed.json<{ request_uri: string }>().request_uri;
    expect((await new Browser(app).get(authorizeUrl({ client_id: client.id, request_uri: requestUri }))).statusCode).toBe(303);
    expect((await new Browser(app).get(authorizeUrl({ client_id: client.id, request_uri: requestUri }))).statusCode).toBe(400);

    const errors: Array<[string, string, string | undefined, number, string]> = [
      ['request_uri sent', form({ response_type: 'code', redirect_uri: 'https://acme.example/callback', request_uri: 'x' }), basic, 400, 'invalid_request'],
      ['response_type=token', form({ response_type: 'token', redirect_uri: 'https://acme.example/callback' }), basic, 400, 'unsupported_response_type'],
      ['a wrong secret', form({ response_type: 'code' }), basicAuth(client.id, 'wrong'), 401, 'invalid_client'],
      ['a body over 16 KiB', `response_type=code&pad=${'a'.repeat(17 * 1024)}`, basic, 413, 'invalid_request'],
    ];
    for (const [name, body, authorization, status, error] of errors) {
      const res = await par(body, authorization);
      expect({ name, status: res.statusCode, error: res.json<{ error: string }>().error }).toEqual({ name, status, error });
    }
    // Past the client's budget of pushed requests (spent straight through the limit, as 1,200 requests would).
    const busy = await t.createClient({ name: 'Busy' });
    for (let i = 0; i < PUSHED_REQUESTS_PER_CLIENT; i++) await t.services.pushes.pushes.take(busy.id);
    const limited = await par(form({ response_type: 'code', redirect_uri: 'https://acme.example/callback' }), basicAuth(busy.id, busy.secret));
    expect([limited.statusCode, limited.json<{ error: string }>().error]).toEqual([429, 'too_many_requests']);
  });

  it('POST /tokens: success, an idempotent retry, and each error', async () => {
    const bearer = await obtainToken(checkedT(), client);
    const reference = randomUUID();
    const first = await postTokens(app, { bearer, reference, body: { refreshToken: tokens.refreshToken } });
    expect(first.statusCode).toBe(200);
    const retry = await postTokens(app, { bearer, reference, body: { refreshToken: tokens.refreshToken } });
    expect([retry.statusCode, retry.body]).toEqual([200, first.body]);
    tokens = { ...tokens, accessToken: first.json<{ accessToken: string }>().accessToken };

    const noRefresh = await t.createClient({ name: 'No refresh', grants: NO_REFRESH_GRANTS });
    const cases: Array<[string, Parameters<typeof postTokens>[1], number]> = [
      ['the same reference, another body', { bearer, reference, body: { refreshToken: `${tokens.refreshToken}x` } }, 409],
      ['no bearer token', { body: { refreshToken: tokens.refreshToken } }, 401],
      ['Accept without JSON', { bearer, accept: 'text/html', body: { refreshToken: tokens.refreshToken } }, 406],
      ['not JSON', { bearer, contentType: 'text/plain', body: 'refreshToken' }, 415],
      ['no reference', { bearer, reference: null, body: { refreshToken: tokens.refreshToken } }, 400],
      ['an unknown refresh token', { bearer, body: { refreshToken: 'not-a-token' } }, 400],
      ['a body over 16 KiB', { bearer, body: { refreshToken: tokens.refreshToken, pad: 'a'.repeat(17 * 1024) } }, 413],
      ['refresh not enabled', { bearer: await obtainToken(checkedT(), noRefresh), body: { refreshToken: tokens.refreshToken } }, 403],
    ];
    for (const [name, request, status] of cases) {
      expect({ name, status: (await postTokens(app, request)).statusCode }).toEqual({ name, status });
    }
  });

  it('POST /introspect and POST /revoke: active and inactive tokens, and each error', async () => {
    const clientToken = await obtainToken(checkedT(), client);
    for (const token of [clientToken, tokens.accessToken, tokens.refreshToken]) {
      expect((await introspect(app, client, token)).json()).toHaveProperty('active', true);
    }
    expect((await introspect(app, client, 'not-a-token', 'post')).json()).toEqual({ active: false });
    for (const call of [introspect, revoke]) {
      expect((await call(app, client, undefined)).statusCode).toBe(400);
      expect((await call(app, { id: client.id, secret: 'wrong' }, clientToken)).statusCode).toBe(401);
      expect((await call(app, client, 'a'.repeat(17 * 1024))).statusCode).toBe(413);
    }
    expect((await revoke(app, client, clientToken)).statusCode).toBe(200);
    expect((await introspect(app, client, clientToken)).json()).toEqual({ active: false });
  });

  it('GET /customer/profile: a customer token, and a refused one', async () => {
    expect((await getProfile(app, tokens.accessToken)).statusCode).toBe(200);
    expect((await getProfile(app, undefined)).statusCode).toBe(401);
    expect((await getProfile(app, 'not-a-token')).statusCode).toBe(401);
  });

  it('GET /authorize: to a page, back to the client with an error, and the error page', async () => {
    const other = new Browser(app);
    expect((await other.get(authorizeUrl(authorizeParams(client)))).statusCode).toBe(303);
    const refused = await other.get(authorizeUrl(authorizeParams(client, { response_type: 'token' })));
    expectErrorRedirect(refused, 'unsupported_response_type', 'xyz-state');
    expect((await other.get(authorizeUrl(authorizeParams({ id: 'cid_sandbox_unknown' })))).statusCode).toBe(400);
  });

  it('GET /authorize past the journey budget of the address: the 429 page with Retry-After', async () => {
    const limited = await build({ env: { CONNECT_JOURNEY_LIMIT_PER_ADDRESS: '1' } });
    const checkedApp = openapi.checked(limited.app);
    const shop = await limited.createClient();
    expect((await new Browser(checkedApp).get(authorizeUrl(authorizeParams(shop)))).statusCode).toBe(303);
    const refused = await new Browser(checkedApp).get(authorizeUrl(authorizeParams(shop)));
    expect([refused.statusCode, refused.headers['retry-after']]).toEqual([429, '3600']);
  });

  it('the hosted pages: each page, each form outcome', async () => {
    const someone = new Browser(app);
    // A journey at the login page: the other pages send the browser there.
    const atLogin = await someone.get(authorizeUrl(authorizeParams(client)));
    const loginId = requestIdOf(String(atLogin.headers.location));
    for (const path of ['/login/otp', '/consent']) {
      expect((await someone.get(`${path}?request=${loginId}`)).statusCode).toBe(303);
    }
    expect((await someone.get(`/register?request=${loginId}`)).statusCode).toBe(200);
    const loginPage = await someone.get(`/login?request=${loginId}`);
    expect(loginPage.statusCode).toBe(200);
    const csrf = csrfToken(loginPage.body);
    // Every form: refused without its CSRF token, too large, or of a journey that does not exist.
    for (const path of ['/login', '/register', '/login/otp', '/consent']) {
      expect((await someone.post(`${path}?request=${loginId}`, { action: 'cancel' })).statusCode).toBe(403);
      expect((await someone.post(`${path}?request=${loginId}`, `csrf_token=${csrf}&pad=${'a'.repeat(17 * 1024)}`)).statusCode).toBe(413);
      expect((await someone.post(`${path}?request=${'x'.repeat(43)}`, { csrf_token: csrf, action: 'cancel' })).statusCode).toBe(400);
      expect((await someone.get(`${path}?request=${'x'.repeat(43)}`)).statusCode).toBe(400);
    }
    expect((await someone.post(`/login?request=${loginId}`, { csrf_token: csrf, mobile: MOBILE, pin: '000000', action: 'login' })).statusCode).toBe(400);
    expect((await someone.post(`/login?request=${loginId}`, { csrf_token: csrf, mobile: MOBILE, pin: PIN, action: 'login' })).statusCode).toBe(303);
    expect((await someone.get(`/login/otp?request=${loginId}`)).statusCode).toBe(200);
    const code = await latestOtp(app, MOBILE);
    expect((await someone.post(`/login/otp?request=${loginId}`, { csrf_token: csrf, otp: wrongOtp(code), action: 'verify' })).statusCode).toBe(400);
    t.clock.advance(31);
    expect((await someone.post(`/login/otp?request=${loginId}`, { csrf_token: csrf, action: 'resend' })).statusCode).toBe(200);
    const back = await someone.post(`/login/otp?request=${loginId}`, { csrf_token: csrf, otp: await latestOtp(app, MOBILE), action: 'verify' });
    expect(expectClientRedirect(back).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // Registration: a mobile without an account.
    const newcomer = new Browser(app);
    const toRegister = await newcomer.get(authorizeUrl(authorizeParams(client, { user_id: OTHER_MOBILE })));
    const registerId = requestIdOf(String(toRegister.headers.location));
    expect((await newcomer.get(`/login?request=${registerId}`)).statusCode).toBe(303);
    const registerPage = await newcomer.get(`/register?request=${registerId}`);
    expect(registerPage.statusCode).toBe(200);
    const token = csrfToken(registerPage.body);
    const fields = { csrf_token: token, mobile: OTHER_MOBILE, pin: PIN, action: 'register' };
    expect((await newcomer.post(`/register?request=${registerId}`, { ...fields, pin_confirmation: '000000' })).statusCode).toBe(400);
    expect((await newcomer.post(`/register?request=${registerId}`, { ...fields, pin_confirmation: PIN })).statusCode).toBe(303);

    // Consent: the signed-in customer meets a client they have not approved.
    const shop = await t.createClient({ name: 'Shop' });
    // With the mobile of an account, the registration page sends the browser to the login page.
    const returning = new Browser(app);
    const known = await returning.get(authorizeUrl(authorizeParams(shop, { user_id: MOBILE })));
    expect((await returning.get(`/register?request=${requestIdOf(String(known.headers.location))}`)).statusCode).toBe(303);
    const toConsent = await browser.get(authorizeUrl(authorizeParams(shop)));
    const consentId = requestIdOf(String(toConsent.headers.location));
    const consentPage = await browser.get(`/consent?request=${consentId}`);
    expect(consentPage.statusCode).toBe(200);
    const consentCsrf = csrfToken(consentPage.body);
    expect((await browser.get(`/login?request=${consentId}`)).statusCode).toBe(303);
    expect((await browser.post(`/consent?request=${consentId}`, { csrf_token: consentCsrf, action: 'maybe' })).statusCode).toBe(303);
    const approved = await browser.post(`/consent?request=${consentId}`, { csrf_token: consentCsrf, action: 'approve' });
    expect(expectClientRedirect(approved).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('the passkey requests: each answer and each error', async () => {
    const limited = await build({ env: { CONNECT_PIN_LIMIT_PER_ADDRESS: '1' } });
    const checked = openapi.checked(limited.app);
    const shop = await limited.createClient();
    const customer = await addCustomer(limited);
    const someone = new Browser(checked);
    const start = await someone.get(authorizeUrl(authorizeParams(shop)));
    const id = requestIdOf(String(start.headers.location));
    const csrf = csrfToken((await someone.get(`/login?request=${id}`)).body);
    const post = (path: string, fields: Record<string, string>) => someone.post(`${path}?request=${id}`, { csrf_token: csrf, ...fields });
    const credential = new SoftwareCredential();
    const scope = { origin: TEST_AUTH_URL, rpId: new URL(TEST_AUTH_URL).hostname };
    // Sign-in options (200), a bad purpose (400), no CSRF token (403), too large (413).
    expect((await post('/login/passkey/options', { purpose: 'sign_in' })).statusCode).toBe(200);
    expect((await post('/login/passkey/options', { purpose: 'other' })).statusCode).toBe(400);
    for (const path of ['/login/passkey/options', '/login/passkey', '/login/passkey/enrol']) {
      expect((await someone.post(`${path}?request=${id}`, { purpose: 'sign_in' })).statusCode).toBe(403);
      expect((await someone.post(`${path}?request=${id}`, `csrf_token=${csrf}&pad=${'a'.repeat(17 * 1024)}`)).statusCode).toBe(413);
    }
    // Enrolment of a journey not signed in: 409.
    expect((await post('/login/passkey/options', { purpose: 'enrol' })).statusCode).toBe(409);
    expect((await post('/login/passkey/enrol', { credential: '{}' })).statusCode).toBe(409);
    // A refused answer (400), then the address is limited (429).
    expect((await post('/login/passkey', { credential: 'not json' })).statusCode).toBe(400);
    expect((await post('/login/passkey', { credential: 'not json' })).statusCode).toBe(429);

    // A PIN + SMS sign-in with the offer (200), then options and the enrolment: 200, and again: 400.
    const other = new Browser(checked, { remoteAddress: '203.0.113.9' });
    const started = await other.get(authorizeUrl(authorizeParams(shop)));
    const otherId = requestIdOf(String(started.headers.location));
    const loginPage = await other.get(`/login?request=${otherId}`);
    const otherCsrf = csrfToken(loginPage.body);
    await other.post(`/login?request=${otherId}`, { csrf_token: otherCsrf, mobile: customer.mobile, pin: PIN, action: 'login' });
    const offer = await other.post(`/login/otp?request=${otherId}`, { csrf_token: otherCsrf, otp: await latestOtp(checked, customer.mobile), action: 'verify', passkey_capable: '1' });
    expect(offer.statusCode).toBe(200);
    const otherPost = (path: string, fields: Record<string, string>) => other.post(`${path}?request=${otherId}`, { csrf_token: otherCsrf, ...fields });
    const options = await otherPost('/login/passkey/options', { purpose: 'enrol' });
    expect(options.statusCode).toBe(200);
    const registration = JSON.stringify(credential.register(options.json(), scope));
    expect((await otherPost('/login/passkey/enrol', { credential: registration })).statusCode).toBe(200);
    expect((await otherPost('/login/passkey/enrol', { credential: registration })).statusCode).toBe(400);
    // A passkey sign-in (200) in a third browser; its journey then ended (409); a locked customer (403).
    const third = new Browser(checked, { remoteAddress: '203.0.113.10' });
    const thirdStart = await third.get(authorizeUrl(authorizeParams(shop)));
    const thirdId = requestIdOf(String(thirdStart.headers.location));
    const thirdCsrf = csrfToken((await third.get(`/login?request=${thirdId}`)).body);
    const thirdPost = (path: string, fields: Record<string, string>) => third.post(`${path}?request=${thirdId}`, { csrf_token: thirdCsrf, ...fields });
    const signInOptions = await thirdPost('/login/passkey/options', { purpose: 'sign_in' });
    expect((await thirdPost('/login/passkey', { credential: JSON.stringify(credential.assert(signInOptions.json(), scope)) })).statusCode).toBe(200);
    expect((await thirdPost('/login/passkey', { credential: '{}' })).statusCode).toBe(409);
    const fourth = new Browser(checked, { remoteAddress: '203.0.113.11' });
    const fourthStart = await fourth.get(authorizeUrl(authorizeParams(shop)));
    const fourthId = requestIdOf(String(fourthStart.headers.location));
    const fourthCsrf = csrfToken((await fourth.get(`/login?request=${fourthId}`)).body);
    const fourthOptions = await fourth.post(`/login/passkey/options?request=${fourthId}`, { csrf_token: fourthCsrf, purpose: 'sign_in' });
    await limited.storage.customers.lockCustomer(customer.profileId, limited.clock.nowSeconds());
    const locked = await fourth.post(`/login/passkey?request=${fourthId}`, { csrf_token: fourthCsrf, credential: JSON.stringify(credential.assert(fourthOptions.json(), scope)) });
    expect(locked.statusCode).toBe(403);
  });

  it('the forgot-PIN pages: each page, each form outcome', async () => {
    // A customer of their own: a reset ends every session and token of the customer.
    const mobile = nthMobile(7);
    await addCustomer(t, mobile);
    const someone = new Browser(app);
    const started = await someone.get(authorizeUrl(authorizeParams(client, { user_id: mobile })));
    const id = requestIdOf(String(started.headers.location));
    // Before a reset code was sent, its later pages send the browser to the journey's page.
    for (const path of ['/login/reset/otp', '/login/reset/pin']) {
      expect((await someone.get(`${path}?request=${id}`)).statusCode).toBe(303);
    }
    const resetPage = await someone.get(`/login/reset?request=${id}`);
    expect(resetPage.statusCode).toBe(200);
    const csrf = csrfToken(resetPage.body);
    for (const path of ['/login/reset', '/login/reset/otp', '/login/reset/pin']) {
      expect((await someone.post(`${path}?request=${id}`, { action: 'cancel' })).statusCode).toBe(403);
      expect((await someone.post(`${path}?request=${id}`, `csrf_token=${csrf}&pad=${'a'.repeat(17 * 1024)}`)).statusCode).toBe(413);
      expect((await someone.post(`${path}?request=${'x'.repeat(43)}`, { csrf_token: csrf, action: 'cancel' })).statusCode).toBe(400);
      expect((await someone.get(`${path}?request=${'x'.repeat(43)}`)).statusCode).toBe(400);
    }
    // A journey for a mobile without an account is at the registration: no reset there.
    const newcomer = new Browser(app);
    const toRegister = requestIdOf(String((await newcomer.get(authorizeUrl(authorizeParams(client, { user_id: nthMobile(8) })))).headers.location));
    expect((await newcomer.get(`/login/reset?request=${toRegister}`)).statusCode).toBe(303);
    // A mobile typed in (no user_id) that is not one.
    const typing = new Browser(app);
    const typed = requestIdOf(String((await typing.get(authorizeUrl(authorizeParams(client)))).headers.location));
    const typingCsrf = csrfToken((await typing.get(`/login/reset?request=${typed}`)).body);
    expect((await typing.post(`/login/reset?request=${typed}`, { csrf_token: typingCsrf, mobile: '12', action: 'send' })).statusCode).toBe(400);

    expect((await someone.post(`/login/reset?request=${id}`, { csrf_token: csrf, mobile, action: 'send' })).statusCode).toBe(303);
    expect((await someone.get(`/login/reset/otp?request=${id}`)).statusCode).toBe(200);
    // The reset code's SMS leaves once the page has been answered.
    await t.services.afterAnswer.idle();
    const code = await latestOtp(app, mobile);
    expect((await someone.post(`/login/reset/otp?request=${id}`, { csrf_token: csrf, otp: wrongOtp(code), action: 'verify' })).statusCode).toBe(400);
    t.clock.advance(31);
    expect((await someone.post(`/login/reset/otp?request=${id}`, { csrf_token: csrf, action: 'resend' })).statusCode).toBe(200);
    await t.services.afterAnswer.idle();
    const verified = await someone.post(`/login/reset/otp?request=${id}`, { csrf_token: csrf, otp: await latestOtp(app, mobile), action: 'verify' });
    expect(verified.statusCode).toBe(303);
    expect((await someone.get(`/login/reset/pin?request=${id}`)).statusCode).toBe(200);
    expect((await someone.post(`/login/reset/pin?request=${id}`, { csrf_token: csrf, pin: '591746', pin_confirmation: '591747', action: 'change' })).statusCode).toBe(400);
    const changed = await someone.post(`/login/reset/pin?request=${id}`, { csrf_token: csrf, pin: '591746', pin_confirmation: '591746', action: 'change' });
    expect(changed.statusCode).toBe(303);
    expect(String(changed.headers.location)).toContain('/login?');
  });

  it('discovery, keys, health, the sandbox, the stylesheet and this description', async () => {
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/jwks.json', '/healthz', '/readyz', '/openapi.json', '/assets/connect.css', '/assets/resend-countdown.js', '/assets/simplewebauthn-browser.js', '/assets/passkeys.js']) {
      expect((await app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    }
    expect((await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server/auth' })).statusCode).toBe(404);
    for (const url of ['/assets/connect.css', '/assets/resend-countdown.js', '/assets/simplewebauthn-browser.js', '/assets/passkeys.js', '/openapi.json']) {
      const etag = String((await app.inject({ method: 'GET', url })).headers.etag);
      expect((await app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } })).statusCode).toBe(304);
    }
    expect((await app.inject({ method: 'GET', url: `/sandbox/messages?to=${encodeURIComponent(MOBILE)}` })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/sandbox/messages?to=12345' })).statusCode).toBe(400);
    expect((await app.inject({ method: 'GET', url: '/sandbox/callback?error=access_denied&state=s' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: `/sandbox/callback?code=${'x'.repeat(43)}&state=s` })).statusCode).toBe(200);
  });

  it('every GET refuses a control character in the query with a described 400', async () => {
    const paths = Object.entries(document.paths).filter(([path, item]) => item.get && !path.includes('{'));
    expect(paths.length).toBeGreaterThan(10);
    for (const [path] of [...paths, ['/.well-known/oauth-authorization-server/auth']]) {
      expect((await app.inject({ method: 'GET', url: `${path}?x=%01` })).statusCode, path).toBe(400);
    }
  });
});

describe('real responses match the description: an auth URL with a path', () => {
  it('serves the metadata at both places', async () => {
    const t = await build({ env: { CONNECT_AUTH_URL: `${TEST_AUTH_URL}/auth` } });
    const app = openapi.checked(t.app);
    for (const url of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server/auth']) {
      expect((await app.inject({ method: 'GET', url })).json()).toHaveProperty('issuer', `${TEST_AUTH_URL}/auth`);
    }
    expect((await app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server/other' })).statusCode).toBe(404);
  });
});

describe('real responses match the description: the database is gone', () => {
  it('every endpoint that needs it answers its described 503', async () => {
    const t = await build();
    const app = openapi.checked(t.app);
    const client = await t.createClient({ grants: REFRESH_GRANTS });
    await addCustomer(t);
    const browser = new Browser(app);
    const params = await logIn(browser, authorizeParams(client));
    const tokens = await redeem(app, client, params.get('code') ?? '');
    const bearer = await obtainToken(t, client);
    const journey = await browser.get(authorizeUrl(authorizeParams(client, { prompt: 'login' })));
    const requestId = requestIdOf(String(journey.headers.location));
    const csrf = csrfToken((await browser.get(`/login?request=${requestId}`)).body);

    await t.storage.close();
    const unavailable = [
      await postToken(app, { authorization: basicAuth(client.id, client.secret), body: form({ grant_type: 'refresh_token', refresh_token: tokens.refreshToken }) }),
      await postTokens(app, { bearer, body: { refreshToken: tokens.refreshToken } }),
      await introspect(app, client, tokens.refreshToken),
      await revoke(app, client, tokens.refreshToken),
      await getProfile(app, tokens.accessToken),
      await app.inject({ method: 'GET', url: `/sandbox/messages?to=${encodeURIComponent(MOBILE)}` }),
      await app.inject({ method: 'GET', url: `/sandbox/callback?code=${'x'.repeat(43)}` }),
      await app.inject({ method: 'GET', url: '/readyz' }),
      await browser.get(authorizeUrl(authorizeParams(client))),
      await app.inject({
        method: 'POST',
        url: '/par',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(client.id, client.secret) },
        payload: form({ response_type: 'code', redirect_uri: 'https://acme.example/callback' }),
      }),
    ];
    for (const path of ['/login', '/register', '/login/otp', '/consent', '/login/reset', '/login/reset/otp', '/login/reset/pin']) {
      unavailable.push(await browser.get(`${path}?request=${requestId}`));
      unavailable.push(await browser.post(`${path}?request=${requestId}`, { csrf_token: csrf, action: 'cancel' }));
    }
    for (const path of ['/login/passkey/options', '/login/passkey', '/login/passkey/enrol']) {
      unavailable.push(await browser.post(`${path}?request=${requestId}`, { csrf_token: csrf, purpose: 'sign_in', credential: '{}' }));
    }
    expect(unavailable.map((res) => `${res.raw.req.method} ${res.raw.req.url?.split('?')[0]} ${res.statusCode}`)).toEqual(
      unavailable.map((res) => `${res.raw.req.method} ${res.raw.req.url?.split('?')[0]} 503`),
    );
  });
});

describe('coverage', () => {
  it('every response the description has was produced by a test above (or is listed, with why not)', () => {
    const missing = openapi.described().filter((response) => !openapi.seen.has(response) && NOT_PRODUCED[response] === undefined);
    expect(missing).toEqual([]);
    for (const response of Object.keys(NOT_PRODUCED)) expect(openapi.seen.has(response as DescribedResponse), response).toBe(false);
  });
});
