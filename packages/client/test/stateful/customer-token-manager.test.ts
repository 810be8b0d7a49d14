import { fixedClock } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Aborted,
  CustomerTokenManager,
  InvalidGrant,
  isConnectError,
  NetworkError,
  ReauthorizationRequired,
  revokeToken,
  type ConnectOptions,
  type CustomerTokenManagerOptions,
} from '../../src/index.js';
import { startConnect, type TestConnect } from '../support/test-connect.js';
import { BrowserSession } from '../support/browser-session.js';
import { recordingFetch, recordingSleep, type Intercept } from '../support/recording-fetch.js';

/*
 * The renewal rules of docs/consumer-guide.md ("When to renew which token")
 * against a real Connect server whose clock is the test's: access
 * tokens live 2 s, refresh tokens 5 s, and the same fixed clock drives the
 * manager, so "expired" is decided by advancing it, not by waiting.
 */
const REDIRECT_URI = 'http://127.0.0.1:4000/callback';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const clock = fixedClock(Math.floor(Date.now() / 1000));
let connect: TestConnect;
let options: Extract<ConnectOptions, { clientSecret: string }>;
let browser: BrowserSession;

beforeAll(async () => {
  connect = await startConnect({ env: { CONNECT_ACCESS_TOKEN_TTL: '2', CONNECT_REFRESH_TOKEN_TTL: '5' }, clock });
  options = { authUrl: connect.authUrl, clientId: connect.demo.clientId, clientSecret: connect.demo.clientSecret, clock };
  // One browser for the file: after the first login, Connect's session answers at once (no more SMS).
  browser = new BrowserSession(connect.authUrl);
});

afterAll(async () => {
  await connect?.close();
});

function manager(extra: Partial<Extract<CustomerTokenManagerOptions, { clientSecret: string }>> & { intercept?: Intercept } = {}) {
  const recorder = recordingFetch(extra.intercept);
  const instance = new CustomerTokenManager({ ...options, redirectUri: REDIRECT_URI, fetch: recorder.fetch, ...extra });
  return { manager: instance, recorder };
}

async function link(target: CustomerTokenManager, key: string) {
  const pending = await target.startAuthorization();
  const callbackUrl = await browser.authorize(pending.url, connect.demo.customer);
  return target.completeAuthorization(key, callbackUrl, pending);
}

/** RFC 7662 introspection, uncached at Connect: whether a token is still current. */
async function isActive(token: string): Promise<boolean> {
  const response = await fetch(`${connect.authUrl}/introspect`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${btoa(`${options.clientId}:${options.clientSecret}`)}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token }).toString(),
  });
  return ((await response.json()) as { active: boolean }).active;
}

describe('CustomerTokenManager: docs/consumer-guide.md, "When to renew which token"', () => {
  it('links a customer and uses a valid access token as it is', async () => {
    const { manager: m, recorder } = manager();
    const linked = await link(m, 'alice');
    expect(linked.userId).toBe('+63******4567');
    expect(linked.profileId).toBe(connect.demo.customer.profileId);
    expect(linked.tokens).toMatchObject({ expiresAt: clock.nowSeconds() + 2, refreshExpiresAt: clock.nowSeconds() + 5 });
    expect(await m.store.get('alice')).toEqual(linked.tokens);

    expect(await m.getAccessToken('alice')).toBe(linked.tokens.accessToken);
    expect(await m.getAccessToken('alice')).toBe(linked.tokens.accessToken);
    expect(recorder.count('/token', 'refresh_token')).toBe(0);
  });

  it('refreshes an expired access token at /token; the old one stops, the refresh token stays', async () => {
    const { manager: m, recorder } = manager();
    const { tokens: before } = await link(m, 'bob');
    clock.advance(3);
    const after = await m.getTokens('bob');
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).toBe(before.refreshToken);
    expect(after.expiresAt).toBe(clock.nowSeconds() + 2);
    expect(after.refreshExpiresAt).toBe(before.refreshExpiresAt);
    expect(await m.store.get('bob')).toEqual(after);
    expect(recorder.count('/token', 'refresh_token')).toBe(1);
    expect(await isActive(before.accessToken)).toBe(false);
    expect(await isActive(after.accessToken)).toBe(true);
  });

  it('refreshes at {base_url}/tokens with a client bearer token, JSON and a UUIDv4 reference', async () => {
    const { manager: m, recorder } = manager({ refreshVia: 'tokens', baseUrl: connect.baseUrl });
    const { tokens: before } = await link(m, 'carol');
    clock.advance(3);
    const after = await m.getTokens('carol');
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.expiresAt).toBe(clock.nowSeconds() + 2);
    expect(await isActive(after.accessToken)).toBe(true);

    const [request] = recorder.requests.filter((r) => r.path === '/tokens');
    expect(recorder.count('/tokens')).toBe(1);
    expect(recorder.count('/token', 'client_credentials')).toBe(1);
    expect(recorder.count('/token', 'refresh_token')).toBe(0);
    expect(request?.headers.get('accept')).toBe('application/json');
    expect(request?.headers.get('content-type')).toBe('application/json');
    expect(request?.headers.get('request-reference-no')).toMatch(UUID_V4);
    expect(request?.headers.get('authorization')).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    expect(JSON.parse(request?.body ?? '')).toEqual({ refreshToken: before.refreshToken });
  });

  it('asks for a new authorization when both tokens have expired, with a ready URL, without calling Connect', async () => {
    const { manager: m, recorder } = manager({ authorizationParams: () => ({ prompt: 'login', userId: connect.demo.customer.mobile }) });
    await link(m, 'dave');
    const sent = recorder.requests.length;
    clock.advance(6);
    const error = await m.getAccessToken('dave').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReauthorizationRequired);
    if (!isConnectError(error) || error.error !== 'reauthorization_required') throw error;
    expect(error.reason).toBe('refresh_expired');
    expect(error.customerKey).toBe('dave');
    expect(error.message).toBe(`the refresh token has expired; the customer must authorize again. ${error.hint}`);
    expect(error.hint).toContain('err.authorization.url');
    const url = new URL(error.authorization.url);
    expect(url.searchParams.get('state')).toBe(error.authorization.state);
    expect(url.searchParams.get('prompt')).toBe('login');
    expect(url.searchParams.get('user_id')).toBe(connect.demo.customer.mobile);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(error.authorization.codeVerifier).toMatch(/^[\w-]{43}$/);
    expect(recorder.requests.length).toBe(sent);
    expect(await m.store.get('dave')).toBeUndefined();

    const again = await m.getAccessToken('dave').catch((e: unknown) => e);
    expect(again).toMatchObject({ error: 'reauthorization_required', reason: 'no_tokens' });
  });

  it('links again through the URL a ReauthorizationRequired carries', async () => {
    const { manager: m } = manager();
    const error = await m.getAccessToken('erin').catch((e: unknown) => e);
    if (!(error instanceof ReauthorizationRequired)) throw error;
    expect(error.reason).toBe('no_tokens');
    const callbackUrl = await browser.authorize(error.authorization.url, connect.demo.customer);
    const linked = await m.completeAuthorization('erin', callbackUrl, error.authorization);
    expect(await m.getAccessToken('erin')).toBe(linked.tokens.accessToken);
  });

  it('asks for a new authorization when Connect refuses the refresh token (revoked)', async () => {
    const { manager: m } = manager();
    const { tokens } = await link(m, 'frank');
    await revokeToken(options, tokens.refreshToken as string);
    clock.advance(3);
    const error = await m.getTokens('frank').catch((e: unknown) => e);
    expect(error).toMatchObject({ error: 'reauthorization_required', reason: 'refresh_rejected' });
    expect((error as Error).cause).toBeInstanceOf(InvalidGrant);
    expect(await m.store.get('frank')).toBeUndefined();
  });

  it('shares one refresh among concurrent callers of one customer, one per customer', async () => {
    const { manager: m, recorder } = manager();
    await link(m, 'gina');
    await link(m, 'hugo');
    clock.advance(3);
    const [gina, hugo] = await Promise.all([
      Promise.all(Array.from({ length: 50 }, () => m.getAccessToken('gina'))),
      Promise.all(Array.from({ length: 50 }, () => m.getAccessToken('hugo'))),
    ]);
    expect(new Set(gina).size).toBe(1);
    expect(new Set(hugo).size).toBe(1);
    expect(gina[0]).not.toBe(hugo[0]);
    expect(recorder.count('/token', 'refresh_token')).toBe(2);
  });

  it('refreshes on demand even when the access token is still valid', async () => {
    const { manager: m, recorder } = manager();
    const { tokens } = await link(m, 'ivan');
    const fresh = await m.refresh('ivan');
    expect(fresh.accessToken).not.toBe(tokens.accessToken);
    expect(await m.getAccessToken('ivan')).toBe(fresh.accessToken);
    expect(recorder.count('/token', 'refresh_token')).toBe(1);
  });

  it('keeps using a still-valid token when an early refresh fails, and reports the failure once it has expired', async () => {
    const { sleep } = recordingSleep();
    const failRefresh: Intercept = (request) => (new URLSearchParams(request.body).get('grant_type') === 'refresh_token' ? 'fail' : 'forward');
    const { manager: m, recorder } = manager({ renewBeforeSeconds: 1, intercept: failRefresh, retry: { sleep, attempts: 2 } });
    const { tokens } = await link(m, 'jane');
    clock.advance(1); // within the 1 s margin, not yet expired
    expect(await m.getAccessToken('jane')).toBe(tokens.accessToken);
    clock.advance(1); // expired
    const error = await m.getAccessToken('jane').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(await m.store.get('jane')).toEqual(tokens);
    expect(recorder.count('/token', 'refresh_token')).toBe(4);
  });

  it('retries /tokens with the same Request-Reference-No after a lost answer, and gets the same answer', async () => {
    const { sleep, delays } = recordingSleep();
    let lost = false;
    const loseFirstAnswer: Intercept = (request) => {
      if (request.path !== '/tokens' || lost) return 'forward';
      lost = true;
      return 'fail-after-forwarding';
    };
    const { manager: m, recorder } = manager({ refreshVia: 'tokens', intercept: loseFirstAnswer, retry: { sleep } });
    await link(m, 'kate');
    clock.advance(3);
    const after = await m.getTokens('kate');
    const attempts = recorder.requests.filter((r) => r.path === '/tokens');
    expect(attempts).toHaveLength(2);
    expect(attempts[1]?.headers.get('request-reference-no')).toBe(attempts[0]?.headers.get('request-reference-no'));
    // The answer that was lost is the one given again: Connect refreshed once.
    expect(recorder.lostAnswers).toEqual([expect.objectContaining({ accessToken: after.accessToken })]);
    expect(await isActive(after.accessToken)).toBe(true);
    expect(delays).toHaveLength(1);
  });

  it("lets one caller abort its wait while the customer's refresh completes for the others", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const holdRefresh: Intercept = async (request) => {
      if (new URLSearchParams(request.body).get('grant_type') === 'refresh_token') await gate;
      return 'forward' as const;
    };
    const { manager: m, recorder } = manager({ intercept: holdRefresh });
    await link(m, 'liam');
    clock.advance(3);
    const controller = new AbortController();
    const impatient = m.getAccessToken('liam', { signal: controller.signal });
    const patient = m.getAccessToken('liam');
    controller.abort();
    await expect(impatient).rejects.toBeInstanceOf(Aborted);
    release();
    expect(await patient).toEqual(expect.any(String));
    expect(recorder.count('/token', 'refresh_token')).toBe(1);
  });
});

describe('CustomerTokenManager with a client without the refresh_token grant', () => {
  it('links the customer with an access token only, uses it while it lasts, then asks for a new authorization', async () => {
    const created = await connect.createClient({ redirectUri: REDIRECT_URI, grants: 'client_credentials,authorization_code' });
    const recorder = recordingFetch();
    const m = new CustomerTokenManager({ ...options, clientId: created.clientId, clientSecret: created.clientSecret, redirectUri: REDIRECT_URI, fetch: recorder.fetch });
    // A browser of its own: logging in through this client approves it (the shared one would meet the consent page).
    const pending = await m.startAuthorization();
    const linked = await m.completeAuthorization('nora', await new BrowserSession(connect.authUrl).authorize(pending.url, connect.demo.customer), pending);
    expect(linked.tokens.refreshToken).toBeUndefined();
    expect(linked.tokens.accessToken.split('.')).toHaveLength(5);
    expect(await m.getTokens('nora')).toEqual(linked.tokens);
    clock.advance(3);
    const error = await m.getTokens('nora').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReauthorizationRequired);
    expect(error).toMatchObject({ reason: 'no_refresh_token' });
    expect(recorder.count('/token', 'refresh_token')).toBe(0);
  });
});
