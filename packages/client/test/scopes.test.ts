import { fixedClock } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClientCredentialsProvider,
  createTokenVerifier,
  CustomerTokenManager,
  discover,
  exchangeCode,
  InsufficientScope,
  InvalidScope,
  InvalidToken,
  isConnectError,
  parseCallback,
  refreshCustomerToken,
  requestClientToken,
  startAuthorization,
  type ConnectOptions,
  type CustomerTokens,
  type ScopeInput,
} from '../src/index.js';
import { BrowserSession } from './support/browser-session.js';
import { recordingFetch } from './support/recording-fetch.js';
import { startConnect, type TestConnect } from './support/test-connect.js';

/*
 * Scopes through the SDK against a real Connect (docs/tokens.md, "Scopes"):
 * a client registered with `--scopes`, asking for some or all of them, the
 * scope granted in the token results, and a resource server requiring one.
 */
const REDIRECT_URI = 'http://127.0.0.1:4000/callback';
const SCOPES = 'payments:read payments:write profile';
const clock = fixedClock(Math.floor(Date.now() / 1000));
let connect: TestConnect;
let shop: ConnectOptions;
let api: { clientId: string; clientSecret: string };
let browser: BrowserSession;

beforeAll(async () => {
  connect = await startConnect({ env: { CONNECT_SCOPES_SUPPORTED: 'payments:read payments:write profile' }, clock });
  const created = await connect.createClient({ redirectUri: REDIRECT_URI, name: 'Scoped Shop', scopes: SCOPES });
  shop = { authUrl: connect.authUrl, clientId: created.clientId, clientSecret: created.clientSecret, clock };
  api = await connect.createResourceServer('Payments API');
  browser = new BrowserSession(connect.authUrl);
});

afterAll(async () => {
  await connect?.close();
});

/** Links the demo customer to the scoped shop, asking for `scope` (default: none named). */
async function link(scope?: ScopeInput): Promise<CustomerTokens> {
  const pending = await startAuthorization({ authUrl: connect.authUrl, clientId: shop.clientId, redirectUri: REDIRECT_URI, ...(scope === undefined ? {} : { scope }) });
  const callback = parseCallback(await browser.authorize(pending.url, connect.demo.customer), { state: pending.state, issuer: connect.authUrl });
  return exchangeCode(shop, { code: callback.code, redirectUri: REDIRECT_URI, codeVerifier: pending.codeVerifier });
}

describe('scopes in client-credentials requests', () => {
  it('without scope: every scope of the client, in ClientToken.scope', async () => {
    expect((await requestClientToken(shop)).scope).toBe(SCOPES);
  });

  it.each<[string, ScopeInput, string]>([
    ['a string', 'profile payments:read', 'profile payments:read'],
    ['a list', ['profile', 'payments:read', 'profile'], 'profile payments:read'],
  ])('asks for the scopes of %s, sent once each as one space-separated scope', async (_name, scope, sent) => {
    const recorder = recordingFetch();
    const token = await requestClientToken({ ...shop, fetch: recorder.fetch }, { scope });
    expect(token.scope).toBe(sent);
    expect(new URLSearchParams(recorder.requests[0]?.body).get('scope')).toBe(sent);
  });

  it('a client without scopes: no scope in the result', async () => {
    const token = await requestClientToken({ authUrl: connect.authUrl, clientId: connect.demo.clientId, clientSecret: connect.demo.clientSecret, clock });
    expect(token).not.toHaveProperty('scope');
  });

  it('a scope the client is not registered for: InvalidScope, never retried', async () => {
    const recorder = recordingFetch();
    const error = await requestClientToken({ ...shop, fetch: recorder.fetch }, { scope: 'admin' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidScope);
    expect(isConnectError(error) && error.error).toBe('invalid_scope');
    expect(error).toMatchObject({ status: 400 });
    expect((error as Error).message).not.toContain('admin');
    expect(recorder.count('/token')).toBe(1);
  });

  it.each<[string, ScopeInput]>([
    ['an empty string', ''],
    ['an empty list', []],
    ['a double quote', 'pay"ments'],
    ['a space inside a list item', ['payments read']],
    ['non-ASCII', 'caf\u00e9'],
  ])('refuses %s as scope with a TypeError, before any request', async (_name, scope) => {
    const recorder = recordingFetch();
    await expect(requestClientToken({ ...shop, fetch: recorder.fetch }, { scope })).rejects.toBeInstanceOf(TypeError);
    expect(() => new ClientCredentialsProvider({ ...shop, scope })).toThrow(TypeError);
    expect(recorder.requests).toHaveLength(0);
  });

  it('ClientCredentialsProvider asks for its scope with every token it gets', async () => {
    const recorder = recordingFetch();
    const provider = new ClientCredentialsProvider({ ...shop, fetch: recorder.fetch, scope: ['payments:read'] });
    const token = await provider.getToken();
    expect(token.scope).toBe('payments:read');
    provider.invalidate();
    await provider.getToken();
    expect(recorder.requests.map((r) => new URLSearchParams(r.body).get('scope'))).toEqual(['payments:read', 'payments:read']);
  });
});

describe('scopes in the customer authorization', () => {
  it('puts scope in the authorization URL only when given', async () => {
    const without = new URL((await startAuthorization({ authUrl: connect.authUrl, clientId: shop.clientId, redirectUri: REDIRECT_URI })).url);
    expect(without.searchParams.has('scope')).toBe(false);
    const withScope = new URL((await startAuthorization({ authUrl: connect.authUrl, clientId: shop.clientId, redirectUri: REDIRECT_URI, scope: ['profile', 'payments:read'] })).url);
    expect(withScope.searchParams.get('scope')).toBe('profile payments:read');
    await expect(startAuthorization({ authUrl: connect.authUrl, clientId: shop.clientId, redirectUri: REDIRECT_URI, scope: 'a\\b' })).rejects.toBeInstanceOf(TypeError);
  });

  it('the scope granted comes back with the tokens and stays through refreshes at /token and /tokens', async () => {
    const tokens = await link('profile payments:read');
    expect(tokens.scope).toBe('profile payments:read');
    clock.advance(5);
    const refreshed = await refreshCustomerToken(shop, tokens);
    expect(refreshed.scope).toBe('profile payments:read');
    clock.advance(5);
    const viaTokens = await refreshCustomerToken(shop, refreshed, { via: 'tokens' });
    expect(viaTokens.scope).toBe('profile payments:read');
  });

  it('without scope: every scope of the client', async () => {
    expect((await link()).scope).toBe(SCOPES);
  });

  it('a scope the client is not registered for comes back to the callback as InvalidScope', async () => {
    const pending = await startAuthorization({ authUrl: connect.authUrl, clientId: shop.clientId, redirectUri: REDIRECT_URI, scope: 'admin' });
    const callback = await browser.authorize(pending.url, connect.demo.customer);
    expect(() => parseCallback(callback, { state: pending.state, issuer: connect.authUrl })).toThrow(InvalidScope);
  });

  it("CustomerTokenManager asks for the scope of its authorization params", async () => {
    const manager = new CustomerTokenManager({ ...shop, redirectUri: REDIRECT_URI });
    const pending = await manager.startAuthorization({ scope: 'profile' });
    expect(new URL(pending.url).searchParams.get('scope')).toBe('profile');
  });
});

describe('scopes at a resource server (createTokenVerifier)', () => {
  it('says the scopes of a token, and refuses one lacking a required scope with InsufficientScope naming them', async () => {
    const tokens = await link('profile');
    const verifier = createTokenVerifier({ authUrl: connect.authUrl, ...api, clock });
    expect((await verifier.verify(tokens.accessToken)).scopes).toEqual(['profile']);
    expect(await verifier.verify(tokens.accessToken, { kind: 'customer', scopes: ['profile'] })).toMatchObject({ kind: 'customer', scopes: ['profile'] });
    const error = await verifier.verify(tokens.accessToken, { scopes: 'profile payments:write' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InsufficientScope);
    expect(error).toMatchObject({ error: 'insufficient_scope', scope: 'profile payments:write', description: 'the access token lacks a scope this API needs' });

    const clientToken = await requestClientToken(shop, { scope: 'payments:read' });
    expect(await verifier.verify(clientToken.accessToken, { kind: 'client', scopes: ['payments:read'] })).toMatchObject({ scopes: ['payments:read'] });
    await expect(verifier.verify(clientToken.accessToken, { scopes: ['profile'] })).rejects.toBeInstanceOf(InsufficientScope);
  });

  it('an invalid token is InvalidToken whatever scope is required; a malformed requirement a TypeError, before any request', async () => {
    const recorder = recordingFetch();
    const verifier = createTokenVerifier({ authUrl: connect.authUrl, ...api, clock, fetch: recorder.fetch });
    await expect(verifier.verify('garbage', { scopes: ['profile'] })).rejects.toBeInstanceOf(InvalidToken);
    await expect(verifier.verify('a.b.c', { scopes: ['pro"file'] })).rejects.toBeInstanceOf(TypeError);
    expect(recorder.requests).toHaveLength(0);
  });
});

describe('scopes in discovery', () => {
  it('reads scopes_supported', async () => {
    expect((await discover(connect.authUrl)).scopesSupported).toEqual(['payments:read', 'payments:write', 'profile']);
  });
});
