import { fixedClock } from '@connect-auth/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  Aborted,
  AccessDenied,
  ClientCredentialsProvider,
  CustomerTokenManager,
  exchangeCode,
  InvalidCallback,
  IssuerMismatch,
  InvalidResponse,
  parseCallback,
  refreshCustomerToken,
  requestClientToken,
  StateMismatch,
  Timeout,
  type ConnectOptions,
  type CustomerTokens,
} from '../src/index.js';
import { HINTS } from '../src/transport/errors.js';
import { startConnect, type TestConnect } from './support/test-connect.js';
import { BrowserSession } from './support/browser-session.js';
import { sendJson, startLocalServer, type LocalServer } from './support/local-server.js';
import { recordingSleep } from './support/recording-fetch.js';

// Whatever comes back, the SDK answers with a typed error and a clear message: never a hang or an unhandled rejection.
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
let connect: TestConnect;
const locals: LocalServer[] = [];
const EXPECTED = { state: 'expected-state', issuer: 'http://connect.example' };
const SOME_TOKENS: CustomerTokens = { accessToken: 'a.b.c.d.e', refreshToken: 'x.y.z', expiresAt: 0, issuedAt: 0 };

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  connect = await startConnect();
});

afterEach(async () => {
  await Promise.all(locals.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  await connect?.close();
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

async function local(handler: Parameters<typeof startLocalServer>[0]): Promise<LocalServer> {
  const server = await startLocalServer(handler);
  locals.push(server);
  return server;
}

function at(url: string, extra: Partial<Extract<ConnectOptions, { clientSecret: string }>> = {}): ConnectOptions {
  return { authUrl: url, clientId: 'cid_sandbox_x', clientSecret: 'csk_sandbox_secret_never_shown', retry: { attempts: 1 }, ...extra };
}

describe('malformed callbacks', () => {
  it.each([
    ['not a URL', 'not a url', InvalidCallback, 'the callback URL is malformed'],
    ['a broken host', 'http://[oops/callback?code=x', InvalidCallback, 'the callback URL is malformed'],
    ['an empty string', '', InvalidCallback, 'the callback URL is malformed'],
    ['no parameters', 'http://127.0.0.1:4000/callback', StateMismatch, 'the callback carries no state'],
    ['another state', 'http://127.0.0.1:4000/callback?code=c&state=other', StateMismatch, 'the callback state is not the one of this authorization'],
    ['a repeated state', 'http://127.0.0.1:4000/callback?code=c&state=expected-state&state=expected-state', InvalidCallback, 'the callback repeats the parameter state'],
    ['no iss', 'http://127.0.0.1:4000/callback?code=c&state=expected-state&userId=u&profileId=1', IssuerMismatch, 'the callback carries no iss, but Connect (http://connect.example) always sends one'],
    ['an empty iss', 'http://127.0.0.1:4000/callback?code=c&state=expected-state&userId=u&profileId=1&iss=', IssuerMismatch, 'the callback comes from issuer "", not "http://connect.example"'],
    ['another iss', 'http://127.0.0.1:4000/callback?code=c&state=expected-state&userId=u&profileId=1&iss=https%3A%2F%2Fevil.example', IssuerMismatch, 'the callback comes from issuer "https://evil.example", not "http://connect.example"'],
    ['an iss that differs by a slash', 'http://127.0.0.1:4000/callback?code=c&state=expected-state&userId=u&profileId=1&iss=http%3A%2F%2Fconnect.example%2F', IssuerMismatch, 'the callback comes from issuer "http://connect.example/", not "http://connect.example"'],
    ['an iss in other case', 'http://127.0.0.1:4000/callback?code=c&state=expected-state&userId=u&profileId=1&iss=HTTP%3A%2F%2Fconnect.example', IssuerMismatch, 'the callback comes from issuer "HTTP://connect.example", not "http://connect.example"'],
    ['an error without iss', '/callback?state=expected-state&error=access_denied', IssuerMismatch, 'the callback carries no iss'],
    ['no code', 'http://127.0.0.1:4000/callback?state=expected-state&iss=http%3A%2F%2Fconnect.example', InvalidCallback, 'the callback has neither a code nor an error'],
    ['no profileId', 'http://127.0.0.1:4000/callback?state=expected-state&code=c&userId=u&iss=http%3A%2F%2Fconnect.example', InvalidCallback, 'the callback lacks userId or profileId'],
    ['an unknown error', '/callback?state=expected-state&error=oops&error_description=bad&iss=http%3A%2F%2Fconnect.example', InvalidCallback, 'the callback carries an unknown error "oops": bad'],
  ])('refuses %s', (_what, url, type, message) => {
    expect(() => parseCallback(url, EXPECTED)).toThrow(type);
    expect(() => parseCallback(url, EXPECTED)).toThrow(message);
  });

  it('maps an error parameter with the right state to its typed error, description included', () => {
    const url = '/callback?error=access_denied&error_description=The+customer+cancelled&state=expected-state&iss=http%3A%2F%2Fconnect.example';
    expect(() => parseCallback(url, EXPECTED)).toThrow(AccessDenied);
    expect(() => parseCallback(url, EXPECTED)).toThrow('The customer cancelled');
  });

  it('accepts a request path with its query, as node:http gives it', () => {
    const callback = parseCallback('/callback?code=abc&state=expected-state&userId=%2B63******4567&profileId=123&iss=http%3A%2F%2Fconnect.example', EXPECTED);
    expect(callback).toEqual({ code: 'abc', state: 'expected-state', userId: '+63******4567', profileId: '123', issuer: 'http://connect.example' });
    // A configured issuer with a trailing slash is the same configuration.
    expect(parseCallback('/callback?code=abc&state=expected-state&userId=u&profileId=1&iss=http%3A%2F%2Fconnect.example', { ...EXPECTED, issuer: 'http://connect.example/' }).issuer).toBe('http://connect.example');
  });
});

describe('answers that are not Connect answers', () => {
  const html = '<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>';

  it.each([
    ['an HTML page', 200, 'text/html', html, 'expected a JSON object, got an HTML page (text/html)'],
    ['garbage', 200, 'application/json', '{"access_token": tru', 'expected a JSON object, got a body that is not a JSON object (application/json)'],
    ['a JSON array', 200, 'application/json', '[]', 'expected a JSON object, got a body that is not a JSON object (application/json)'],
    ['an empty body', 200, 'application/json', '', 'expected a JSON object, got an empty body (application/json)'],
    ['an HTML error page', 500, 'text/html', html, 'expected a JSON error, got an HTML page (text/html)'],
    ['an unknown error code', 400, 'application/json', '{"error":"weird_thing"}', 'unknown error code "weird_thing"'],
  ])('raises invalid_response for %s at /token', async (_what, status, type, body, message) => {
    const fake = await local((_request, response) => void response.writeHead(status, { 'content-type': type }).end(body));
    const error = await requestClientToken(at(fake.url)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidResponse);
    expect(error).toMatchObject({ error: 'invalid_response', status, description: message });
    expect((error as Error).message).toBe(`${message} (POST ${fake.url}/token, HTTP ${status}). ${HINTS.invalid_response}`);
    expect((error as Error).message).not.toContain('csk_sandbox_secret_never_shown');
  });

  it('raises invalid_response for HTML at the code exchange, at /token refresh and at /tokens', async () => {
    const fake = await local((_request, response) => void response.writeHead(200, { 'content-type': 'text/html' }).end(html));
    const options = at(fake.url);
    await expect(exchangeCode(options, { code: 'c', redirectUri: 'http://127.0.0.1:4000/callback' })).rejects.toBeInstanceOf(InvalidResponse);
    await expect(refreshCustomerToken(options, SOME_TOKENS)).rejects.toBeInstanceOf(InvalidResponse);
    // /tokens: a fake client token, then HTML.
    const tokens = await local((request, response) => {
      if (request.url === '/token') return sendJson(response, 200, { access_token: 'h.p.s', token_type: 'Bearer', expires_in: 60 });
      response.writeHead(200, { 'content-type': 'text/html' }).end(html);
    });
    const error = await refreshCustomerToken(at(tokens.url), SOME_TOKENS, { via: 'tokens' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidResponse);
    expect((error as Error).message).toBe(`expected a JSON object, got an HTML page (text/html) (POST ${tokens.url}/tokens, HTTP 200). ${HINTS.invalid_response}`);
  });

  it('retries a gateway HTML page (5xx) and then reports it', async () => {
    const fake = await local((_request, response) => void response.writeHead(502, { 'content-type': 'text/html' }).end(html));
    const { sleep, delays } = recordingSleep();
    const provider = new ClientCredentialsProvider(at(fake.url, { retry: { attempts: 3, sleep } }));
    await expect(provider.getToken()).rejects.toMatchObject({ error: 'invalid_response', status: 502 });
    expect(delays).toHaveLength(2);
  });
});

describe('timeouts and cancellation', () => {
  it('times out against a server that never answers, at every endpoint', async () => {
    const silent = await local(() => {});
    const options = at(silent.url, { timeoutMs: 100 });
    const started = Date.now();
    await expect(requestClientToken(options)).rejects.toBeInstanceOf(Timeout);
    await expect(exchangeCode(options, { code: 'c', redirectUri: 'http://127.0.0.1:4000/callback' })).rejects.toBeInstanceOf(Timeout);
    await expect(refreshCustomerToken(options, SOME_TOKENS)).rejects.toThrow(`no answer within 100 ms (POST ${silent.url}/token)`);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('times out when the headers come but the body stalls', async () => {
    const stalling = await local((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"access_token":');
    });
    await expect(requestClientToken(at(stalling.url, { timeoutMs: 150 }))).rejects.toBeInstanceOf(Timeout);
  });

  it('stops at once when the caller aborts, with the reason as cause', async () => {
    const silent = await local(() => {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('shutting down')), 50);
    const started = Date.now();
    const error = await requestClientToken(at(silent.url), { signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Aborted);
    expect(error).toMatchObject({ error: 'aborted', message: `the caller aborted the request (POST ${silent.url}/token). ${HINTS.aborted}` });
    expect((error as Error).cause).toEqual(new Error('shutting down'));
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('sends nothing when the signal has already fired', async () => {
    const fake = await local((_request, response) => sendJson(response, 500, {}));
    await expect(requestClientToken(at(fake.url), { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(Aborted);
    expect(fake.requests).toHaveLength(0);
  });

  it('aborts a backoff wait between retries', async () => {
    const busy = await local((_request, response) => sendJson(response, 503, { error: 'temporarily_unavailable' }));
    const provider = new ClientCredentialsProvider(at(busy.url, { retry: { attempts: 5, baseDelayMs: 10_000, jitter: false } }));
    const controller = new AbortController();
    const pending = provider.getToken({ signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(pending).rejects.toBeInstanceOf(Aborted);
  });
});

describe('clock skew: expiry counts from receipt on the consumer clock', () => {
  const REDIRECT_URI = 'http://127.0.0.1:4000/callback';

  it.each([
    ['two hours ahead of Connect', 7200],
    ['two hours behind Connect', -7200],
  ])('keeps tokens usable when the consumer clock is %s', async (_what, skew) => {
    const clock = fixedClock(Math.floor(Date.now() / 1000) + skew);
    const options = { authUrl: connect.authUrl, baseUrl: connect.baseUrl, clientId: connect.demo.clientId, clientSecret: connect.demo.clientSecret, clock };

    const provider = new ClientCredentialsProvider(options);
    const client = await provider.getToken();
    expect(client.expiresAt).toBe(clock.nowSeconds() + 3600);
    expect(await provider.getToken()).toBe(client); // no renewal loop, no stale reuse

    const manager = new CustomerTokenManager({ ...options, redirectUri: REDIRECT_URI, refreshVia: 'tokens', clientCredentials: provider });
    const pending = await manager.startAuthorization();
    const callbackUrl = await new BrowserSession(connect.authUrl).authorize(pending.url, connect.demo.customer);
    const { tokens } = await manager.completeAuthorization('skewed', callbackUrl, pending);
    expect(tokens).toMatchObject({ expiresAt: clock.nowSeconds() + 3600, refreshExpiresAt: clock.nowSeconds() + 604_800 });
    expect(await manager.getAccessToken('skewed')).toBe(tokens.accessToken);

    // /tokens answers an absolute expiresAt on Connect's clock: it is read back onto ours.
    const refreshed = await manager.refresh('skewed');
    expect(Math.abs(refreshed.expiresAt - (clock.nowSeconds() + 3600))).toBeLessThanOrEqual(1);
    expect(await manager.getAccessToken('skewed')).toBe(refreshed.accessToken);
  });
});
