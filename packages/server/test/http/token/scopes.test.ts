import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { InsufficientScope } from '../../../src/core/errors.js';
import { basicAuth, build, form, type TestApp } from '../../helpers/build.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import {
  addCustomer,
  approveIfAsked,
  authorizeParams,
  authorizeUrl,
  Browser,
  exchangeCode,
  expectClientRedirect,
  expectErrorRedirect,
  logIn,
  REDIRECT_URI,
} from '../../helpers/customer-flow.js';
import { accessClaims, expectIntrospection, expectTokensBody, introspect, postTokens, REFRESH_GRANTS, refreshAtToken } from '../../helpers/token-session.js';
import { expectOAuthError, obtainToken, postToken, type Credentials } from '../../helpers/wire.js';

/**
 * OAuth scopes over HTTP (docs/tokens.md, "Scopes"): a client's registered
 * scopes are what a token request gets without `scope`; `scope` asks for
 * some of them; anything else is `invalid_scope`. The granted scope is in
 * the answer, the tokens and introspection, and travels from `/authorize`
 * through the code to the token session and its refreshes.
 */

const SCOPES = 'payments:read payments:write profile';

/** `POST /token` with `grant_type=client_credentials` and the given extra body (a raw form string), by HTTP Basic. */
function clientCredentials(app: FastifyInstance, client: Credentials, extra = '') {
  return postToken(app, { authorization: basicAuth(client.id, client.secret), body: `grant_type=client_credentials${extra}` });
}

/** The successful token answer's fields. */
function tokenBody(res: { statusCode: number; body: string; json<T>(): T }): Record<string, unknown> {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
  return res.json<Record<string, unknown>>();
}

describe('scopes at POST /token (client_credentials)', () => {
  it('a request without scope gets every registered scope: in the answer, the JWT and introspection', async () => {
    const t = await build();
    const client = await t.createClient({ scopes: SCOPES });
    const body = tokenBody(await clientCredentials(t.app, client));
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(body.scope).toBe(SCOPES);
    const { payload } = await t.verifyAccessToken(body.access_token as string);
    expect(payload.scope).toBe(SCOPES);
    expect(expectIntrospection(await introspect(t.app, client, body.access_token as string))).toMatchObject({ active: true, scope: SCOPES });
  });

  it.each([
    ['one registered scope', '&scope=profile', 'profile'],
    ['several, in the order asked, repeats once', '&scope=profile+payments%3Aread+profile', 'profile payments:read'],
    ['spaces around and between', `&scope=${encodeURIComponent('  profile   payments:read ')}`, 'profile payments:read'],
  ])('%s: exactly those', async (_name, extra, granted) => {
    const t = await build();
    const client = await t.createClient({ scopes: SCOPES });
    const body = tokenBody(await clientCredentials(t.app, client, extra));
    expect(body.scope).toBe(granted);
    expect(decodeJwt(body.access_token as string).scope).toBe(granted);
  });

  it('a client without scopes gets a token without any: no scope in the answer, the JWT or introspection', async () => {
    const t = await build();
    const client = await t.createClient();
    const body = tokenBody(await clientCredentials(t.app, client));
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(decodeJwt(body.access_token as string)).not.toHaveProperty('scope');
    expect(expectIntrospection(await introspect(t.app, client, body.access_token as string))).not.toHaveProperty('scope');
  });

  const HOSTILE_10K = `profile ${'x'.repeat(10_240)}`;
  it.each([
    ['a scope the client is not registered for', '&scope=profile+admin', /not registered/],
    ['a scope differing in case', '&scope=Profile', /not registered/],
    ['any scope, for a client without scopes', '&scope=profile', /not registered/, ''],
    ['only spaces', '&scope=+++', /^scope must be scope tokens/],
    ['a double quote', `&scope=${encodeURIComponent('pro"file')}`, /^scope must be scope tokens/],
    ['a backslash', `&scope=${encodeURIComponent('pro\\file')}`, /^scope must be scope tokens/],
    ['non-ASCII', `&scope=${encodeURIComponent('profil\u00e9')}`, /^scope must be scope tokens/],
    ['a 10 kB scope', `&scope=${HOSTILE_10K}`, /^scope is too long$/],
  ])('%s → 400 invalid_scope, never repeating it', async (_name, extra, description, scopes = SCOPES) => {
    const t = await build();
    const client = await t.createClient({ scopes });
    const res = await clientCredentials(t.app, client, extra);
    const text = expectOAuthError(res, { status: 400, error: 'invalid_scope', description, challenge: 'none' });
    expect(text).not.toMatch(/admin|Profile|xxxx|pro.file/);
  });

  it.each([
    ['a repeated scope', '&scope=profile&scope=profile', /^scope is repeated$/],
    ['a control character in scope', '&scope=pro%00file', /^scope contains a control character$/],
    ['a tab in scope', '&scope=profile%09payments%3Aread', /^scope contains a control character$/],
  ])('%s → 400 invalid_request', async (_name, extra, description) => {
    const t = await build();
    const client = await t.createClient({ scopes: SCOPES });
    expectOAuthError(await clientCredentials(t.app, client, extra), { status: 400, error: 'invalid_request', description });
  });

  it('the client is authenticated before its scope is looked at: a wrong secret is invalid_client', async () => {
    const t = await build();
    const client = await t.createClient({ scopes: SCOPES });
    const res = await clientCredentials(t.app, { ...client, secret: `${client.secret}x` }, '&scope=admin');
    expectOAuthError(res, { status: 401, error: 'invalid_client' });
  });

  it('a scope removed from the client is no longer granted; asking for it is invalid_scope', async () => {
    const t = await build();
    const client = await t.createClient({ scopes: SCOPES });
    await t.storage.clients.updateClient(client.id, { scopes: ['profile'] }, t.clock.nowSeconds());
    t.clock.advance(2); // past the change signal's reach
    expect(tokenBody(await clientCredentials(t.app, client)).scope).toBe('profile');
    expectOAuthError(await clientCredentials(t.app, client, '&scope=payments%3Aread'), { status: 400, error: 'invalid_scope' });
  });
});

describe('scopes in discovery', () => {
  it('lists CONNECT_SCOPES_SUPPORTED as scopes_supported', async () => {
    const t = await build({ env: { CONNECT_SCOPES_SUPPORTED: 'payments:read profile' } });
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(res.json<Record<string, unknown>>().scopes_supported).toEqual(['payments:read', 'profile']);
  });

  it('lists none by default: an empty scopes_supported', async () => {
    const t = await build();
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(res.json<Record<string, unknown>>().scopes_supported).toEqual([]);
  });
});

/** A client with scopes and every grant, and a customer. */
async function customerSetup(t?: TestApp, scopes = SCOPES) {
  const app = t ?? (await build());
  const client = await app.createClient({ grants: REFRESH_GRANTS, scopes });
  await addCustomer(app);
  return { t: app, client, browser: new Browser(app.app) };
}

/** Exchanges a code; returns the answer's body. */
async function redeemBody(app: FastifyInstance, client: Credentials, code: string | null) {
  return tokenBody(await exchangeCode(app, client, { code: code ?? '', redirect_uri: REDIRECT_URI }));
}

describe('scopes at GET /authorize, carried to the code and the token session', () => {
  it('without scope: every registered scope, in the code exchange answer, the access JWE, the refresh token and introspection', async () => {
    const { t, client, browser } = await customerSetup();
    const params = await logIn(browser, authorizeParams(client));
    const body = await redeemBody(t.app, client, params.get('code'));
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    expect(body.scope).toBe(SCOPES);
    expect((await accessClaims(t, body.access_token as string)).scope).toBe(SCOPES);
    expect(decodeJwt(body.refresh_token as string).scope).toBe(SCOPES);
    for (const token of [body.access_token, body.refresh_token] as string[]) {
      expect(expectIntrospection(await introspect(t.app, client, token))).toMatchObject({ active: true, scope: SCOPES });
    }
  });

  it('with scope: exactly those, through the login, and kept by every refresh (at /token and POST /tokens)', async () => {
    const { t, client, browser } = await customerSetup();
    const params = await logIn(browser, authorizeParams(client, { scope: 'profile payments:read' }));
    const body = await redeemBody(t.app, client, params.get('code'));
    expect(body.scope).toBe('profile payments:read');
    const refreshToken = body.refresh_token as string;

    t.clock.advance(10);
    const refreshed = tokenBody(await refreshAtToken(t.app, client, refreshToken));
    expect(refreshed.scope).toBe('profile payments:read');
    expect((await accessClaims(t, refreshed.access_token as string)).scope).toBe('profile payments:read');

    t.clock.advance(10);
    const tokens = await postTokens(t.app, { bearer: await obtainToken(t, client), body: { refreshToken } });
    expect({ status: tokens.statusCode }).toEqual({ status: 200 });
    const answer = tokens.json<Record<string, unknown>>();
    expect(Object.keys(answer).sort()).toEqual(['accessToken', 'expiresAt', 'refreshToken', 'scope']);
    expect(answer.scope).toBe('profile payments:read');
    expect((await accessClaims(t, answer.accessToken as string)).scope).toBe('profile payments:read');
  });

  it('a silent sign-in (live session, client approved) and the consent page carry the scope too', async () => {
    const { t, client, browser } = await customerSetup();
    await logIn(browser, authorizeParams(client, { scope: 'profile' }));
    const silent = expectClientRedirect(await browser.get(authorizeUrl(authorizeParams(client, { scope: 'payments:write' }))));
    expect((await redeemBody(t.app, client, silent.get('code'))).scope).toBe('payments:write');

    const other = await t.createClient({ name: 'Other', grants: REFRESH_GRANTS, scopes: 'orders:read orders:write' });
    const consented = await approveIfAsked(browser, await browser.get(authorizeUrl(authorizeParams(other, { scope: 'orders:read' }))));
    expect((await redeemBody(t.app, other, expectClientRedirect(consented).get('code'))).scope).toBe('orders:read');
  });

  it('a client without scopes: no scope anywhere', async () => {
    const { t, client, browser } = await customerSetup(undefined, '');
    const params = await logIn(browser, authorizeParams(client));
    const body = await redeemBody(t.app, client, params.get('code'));
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
    expect(await accessClaims(t, body.access_token as string)).not.toHaveProperty('scope');
    expect(decodeJwt(body.refresh_token as string)).not.toHaveProperty('scope');
  });

  it.each([
    ['a scope the client is not registered for', 'profile admin', /not registered/],
    ['a malformed scope', 'pro"file', /^scope must be scope tokens/],
  ])('%s → a redirect with error=invalid_scope, state and iss', async (_name, scope, description) => {
    const { client, browser } = await customerSetup();
    const res = await browser.get(authorizeUrl(authorizeParams(client, { scope })));
    expect(expectErrorRedirect(res, 'invalid_scope', 'xyz-state')).toMatch(description);
    expect(res.headers.location).not.toMatch(/admin|pro%22file/);
  });

  it.each([
    ['a 10 kB scope', { scope: `profile ${'x'.repeat(10_240)}` }, /^scope is too long$/],
    ['a scope with a control character', { scope: 'pro\u0001file' }, undefined],
  ])('%s → invalid_request (a redirect, or the page for a control character)', async (_name, extra, description) => {
    const { client, browser } = await customerSetup();
    const res = await browser.get(authorizeUrl(authorizeParams(client, extra)));
    if (description) expect(expectErrorRedirect(res, 'invalid_request', 'xyz-state')).toMatch(description);
    else expect(res.statusCode).toBe(400);
  });

  it('a repeated scope → a redirect with error=invalid_request', async () => {
    const { client, browser } = await customerSetup();
    const res = await browser.get(`${authorizeUrl(authorizeParams(client))}&scope=profile&scope=profile`);
    expect(expectErrorRedirect(res, 'invalid_request', 'xyz-state')).toBe('scope is repeated');
  });

  it('an unknown client or redirect URI is an error page whatever the scope: never a redirect', async () => {
    const { client, browser } = await customerSetup();
    const res = await browser.get(authorizeUrl(authorizeParams(client, { redirect_uri: 'https://evil.example/cb', scope: 'admin' })));
    expect({ status: res.statusCode, location: res.headers.location }).toEqual({ status: 400, location: undefined });
  });
});

describe('scopes at a refresh', () => {
  async function session() {
    const s = await customerSetup();
    const params = await logIn(s.browser, authorizeParams(s.client));
    const body = await redeemBody(s.t.app, s.client, params.get('code'));
    return { ...s, refreshToken: body.refresh_token as string };
  }

  function refreshWithScope(app: FastifyInstance, client: Credentials, refreshToken: string, scope: string) {
    return postToken(app, { authorization: basicAuth(client.id, client.secret), body: form({ grant_type: 'refresh_token', refresh_token: refreshToken, scope }) });
  }

  it('scope narrows the new access token (RFC 6749 §6); the session keeps its scope for the next refresh', async () => {
    const { t, client, refreshToken } = await session();
    t.clock.advance(5);
    const narrowed = tokenBody(await refreshWithScope(t.app, client, refreshToken, 'profile'));
    expect(narrowed.scope).toBe('profile');
    expect((await accessClaims(t, narrowed.access_token as string)).scope).toBe('profile');
    expect(narrowed.refresh_token).toBe(refreshToken);
    t.clock.advance(5);
    expect(tokenBody(await refreshAtToken(t.app, client, refreshToken)).scope).toBe(SCOPES);
  });

  it('a scope beyond the session → 400 invalid_scope, and the session\'s access token stays the current one', async () => {
    const { t, client, browser } = await customerSetup();
    const params = await logIn(browser, authorizeParams(client, { scope: 'profile' }));
    const body = await redeemBody(t.app, client, params.get('code'));
    t.clock.advance(5);
    // Registered for the client, but not granted to this session.
    const res = await refreshWithScope(t.app, client, body.refresh_token as string, 'payments:read');
    expectOAuthError(res, { status: 400, error: 'invalid_scope', description: /^scope asks for a scope the authorization did not grant; a refresh may only narrow the scope$/ });
    expect(expectIntrospection(await introspect(t.app, client, body.access_token as string))).toMatchObject({ active: true, scope: 'profile' });
  });

  it('a scope the operator removed from the client leaves the session at its next refresh, and the code exchange', async () => {
    const { t, client, browser } = await customerSetup();
    const params = await logIn(browser, authorizeParams(client));
    // Removed between the authorization and the exchange, and so for the refresh too.
    await t.storage.clients.updateClient(client.id, { scopes: ['profile', 'payments:read'] }, t.clock.nowSeconds());
    t.clock.advance(2);
    const body = await redeemBody(t.app, client, params.get('code'));
    expect(body.scope).toBe('payments:read profile');
    await t.storage.clients.updateClient(client.id, { scopes: ['profile'] }, t.clock.nowSeconds());
    t.clock.advance(2);
    expect(tokenBody(await refreshAtToken(t.app, client, body.refresh_token as string)).scope).toBe('profile');
    await t.storage.clients.updateClient(client.id, { scopes: [] }, t.clock.nowSeconds());
    t.clock.advance(2);
    const bare = tokenBody(await refreshAtToken(t.app, client, body.refresh_token as string));
    expect(bare).not.toHaveProperty('scope');
    expect(await accessClaims(t, bare.access_token as string)).not.toHaveProperty('scope');
  });

  it('POST /tokens replays an answer with its scope', async () => {
    const { t, client, refreshToken } = await session();
    const bearer = await obtainToken(t, client);
    const reference = randomUUID();
    const first = await postTokens(t.app, { bearer, body: { refreshToken }, reference });
    const again = await postTokens(t.app, { bearer, body: { refreshToken }, reference });
    expect(again.json()).toEqual(first.json());
    expect(first.json<{ scope: string }>().scope).toBe(SCOPES);
  });

  it('POST /tokens without a scope keeps its documented fields', async () => {
    const { t, client, browser } = await customerSetup(undefined, '');
    const params = await logIn(browser, authorizeParams(client));
    const body = await redeemBody(t.app, client, params.get('code'));
    expectTokensBody(await postTokens(t.app, { bearer: await obtainToken(t, client), body: { refreshToken: body.refresh_token } }));
  });
});

describe('the in-process resource-server check with required scopes', () => {
  it('accepts a token with every required scope; refuses one lacking any with InsufficientScope (403) naming them', async () => {
    const { t, client, browser } = await customerSetup();
    const params = await logIn(browser, authorizeParams(client, { scope: 'profile payments:read' }));
    const body = await redeemBody(t.app, client, params.get('code'));
    const check = t.services.customerAccess;
    const token = body.access_token as string;
    expect(await check.verify(token)).toMatchObject({ scopes: ['profile', 'payments:read'] });
    expect(await check.verify(token, { scopes: ['payments:read'] })).toMatchObject({ clientId: client.id });
    const refused = await check.verify(token, { scopes: ['payments:read', 'payments:write'] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InsufficientScope);
    expect(refused).toMatchObject({ error: 'insufficient_scope', status: 403, scope: 'payments:read payments:write' });
  });
});

noticePostgresSkipped('scopes on PostgreSQL');

describe.skipIf(!postgresAdminUrl)('scopes on PostgreSQL', () => {
  const { open } = usePostgresStorage();

  it('the scope of /authorize reaches the code through the one-statement sign-in, then the tokens and their refresh', async () => {
    const { t, client, browser } = await customerSetup(await build({ storage: open() }));
    const params = await logIn(browser, authorizeParams(client, { scope: 'payments:write profile' }));
    const body = await redeemBody(t.app, client, params.get('code'));
    expect(body.scope).toBe('payments:write profile');
    expect((await accessClaims(t, body.access_token as string)).scope).toBe('payments:write profile');
    t.clock.advance(5);
    expect(tokenBody(await refreshAtToken(t.app, client, body.refresh_token as string)).scope).toBe('payments:write profile');
    expect(tokenBody(await clientCredentials(t.app, client, '&scope=profile')).scope).toBe('profile');
  });
});
