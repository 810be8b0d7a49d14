import { fixedClock } from '@connect-auth/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  Aborted,
  ClientCredentialsProvider,
  InvalidClient,
  InvalidResponse,
  isConnectError,
  NetworkError,
  TemporarilyUnavailable,
  Timeout,
  type ClientCredentialsProviderOptions,
} from '../../src/index.js';
import { startConnect, type TestConnect } from '../support/test-connect.js';
import { forward, sendJson, startLocalServer, type LocalServer } from '../support/local-server.js';
import { recordingFetch, recordingSleep } from '../support/recording-fetch.js';

// The provider against real Connect servers: one with the default lifetime, one with 120 s.
let connect: TestConnect;
let shortLived: TestConnect;
const locals: LocalServer[] = [];

beforeAll(async () => {
  [connect, shortLived] = await Promise.all([startConnect(), startConnect({ env: { CONNECT_ACCESS_TOKEN_TTL: '120' } })]);
});

afterEach(async () => {
  await Promise.all(locals.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  await Promise.all([connect?.close(), shortLived?.close()]);
});

function options(target: TestConnect, extra: Partial<Extract<ClientCredentialsProviderOptions, { clientSecret: string }>> = {}): ClientCredentialsProviderOptions {
  return { authUrl: target.authUrl, clientId: target.demo.clientId, clientSecret: target.demo.clientSecret, ...extra };
}

async function local(handler: Parameters<typeof startLocalServer>[0]): Promise<LocalServer> {
  const server = await startLocalServer(handler);
  locals.push(server);
  return server;
}

describe('ClientCredentialsProvider: cache and renewal', () => {
  it('reuses the token while it is valid', async () => {
    const recorder = recordingFetch();
    const provider = new ClientCredentialsProvider(options(connect, { fetch: recorder.fetch }));
    const first = await provider.getToken();
    const second = await provider.getToken();
    expect(second).toBe(first);
    expect(recorder.count('/token', 'client_credentials')).toBe(1);
  });

  it('renews the token renewBeforeSeconds before it expires, by the injected clock', async () => {
    const clock = fixedClock(Math.floor(Date.now() / 1000));
    const recorder = recordingFetch();
    const provider = new ClientCredentialsProvider(options(shortLived, { fetch: recorder.fetch, clock, renewBeforeSeconds: 30 }));
    const first = await provider.getToken();
    expect(first.expiresIn).toBe(120);
    expect(first.expiresAt).toBe(clock.nowSeconds() + 120);

    clock.advance(89); // 31 s left: still used
    expect(await provider.getToken()).toBe(first);
    expect(recorder.count('/token')).toBe(1);

    clock.advance(1); // 30 s left: renewed
    const second = await provider.getToken();
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(second.expiresAt).toBe(clock.nowSeconds() + 120);
    expect(recorder.count('/token')).toBe(2);
  });

  it('renews a token that lives shorter than twice the margin at half its lifetime', async () => {
    const clock = fixedClock(Math.floor(Date.now() / 1000));
    const recorder = recordingFetch();
    // Default margin 60 s, token of 120 s: renewed after 60 s, not at once.
    const provider = new ClientCredentialsProvider(options(shortLived, { fetch: recorder.fetch, clock }));
    const first = await provider.getToken();
    clock.advance(59);
    expect(await provider.getToken()).toBe(first);
    clock.advance(1);
    expect((await provider.getToken()).accessToken).not.toBe(first.accessToken);
    expect(recorder.count('/token')).toBe(2);
  });

  it('asks Connect once for 100 concurrent callers', async () => {
    const recorder = recordingFetch();
    const provider = new ClientCredentialsProvider(options(connect, { fetch: recorder.fetch }));
    const tokens = await Promise.all(Array.from({ length: 100 }, () => provider.getToken()));
    expect(new Set(tokens.map((t) => t.accessToken)).size).toBe(1);
    expect(recorder.count('/token', 'client_credentials')).toBe(1);
    // And the next wave after invalidate() asks once more.
    provider.invalidate();
    await Promise.all(Array.from({ length: 100 }, () => provider.getToken()));
    expect(recorder.count('/token', 'client_credentials')).toBe(2);
  });
});

describe('ClientCredentialsProvider: errors and retries', () => {
  it('throws invalid_client at once, typed, without retrying and without the secret', async () => {
    const recorder = recordingFetch();
    const { sleep, delays } = recordingSleep();
    const secret = 'csk_sandbox_not_the_secret';
    const provider = new ClientCredentialsProvider(options(connect, { clientSecret: secret, fetch: recorder.fetch, retry: { sleep } }));
    const error = await provider.getToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidClient);
    if (!isConnectError(error)) throw error;
    switch (error.error) {
      case 'invalid_client':
        expect(error.status).toBe(401);
        break;
      default:
        throw new Error(`unexpected ${error.error}`);
    }
    expect(error.message).not.toContain(secret);
    expect(recorder.count('/token')).toBe(1);
    expect(delays).toEqual([]);
  });

  it('retries a 503 after its Retry-After (seconds), then gets the token from Connect behind the proxy', async () => {
    const proxy = await local(async (request, response, n) => {
      if (n === 1) return sendJson(response, 503, { error: 'temporarily_unavailable', error_description: 'try again' }, { 'retry-after': '2' });
      await forward(connect.authUrl, request, response);
    });
    const { sleep, delays } = recordingSleep();
    const provider = new ClientCredentialsProvider(options(connect, { authUrl: proxy.url, retry: { sleep } }));
    const token = await provider.getToken();
    expect(token.accessToken.split('.')).toHaveLength(3);
    expect(delays).toEqual([2000]);
    expect(proxy.requests.map((r) => r.path)).toEqual(['/token', '/token']);
  });

  it('honours Retry-After as an HTTP date on a 429, measured with the injected clock', async () => {
    const clock = fixedClock(Math.floor(Date.now() / 1000));
    const proxy = await local(async (request, response, n) => {
      if (n === 1) {
        response.writeHead(429, { 'retry-after': new Date((clock.nowSeconds() + 3) * 1000).toUTCString(), 'content-type': 'text/plain' }).end('slow down');
        return;
      }
      await forward(connect.authUrl, request, response);
    });
    const { sleep, delays } = recordingSleep();
    const provider = new ClientCredentialsProvider(options(connect, { authUrl: proxy.url, clock, retry: { sleep } }));
    await provider.getToken();
    expect(delays).toEqual([3000]);
  });

  it('backs off exponentially after network failures and a gateway HTML page', async () => {
    let calls = 0;
    const proxy = await local(async (request, response) => {
      calls++;
      if (calls === 1) {
        response.writeHead(502, { 'content-type': 'text/html' }).end('<html><body><h1>502 Bad Gateway</h1></body></html>');
        return;
      }
      await forward(connect.authUrl, request, response);
    });
    const recorder = recordingFetch((_request, n) => (n <= 2 ? 'fail' : 'forward'));
    const { sleep, delays } = recordingSleep();
    const provider = new ClientCredentialsProvider(
      options(connect, { authUrl: proxy.url, fetch: recorder.fetch, retry: { sleep, attempts: 4, baseDelayMs: 100, jitter: false } }),
    );
    const token = await provider.getToken();
    expect(token.tokenType).toBe('Bearer');
    // Two network failures (before the proxy), one 502 page, then the token.
    expect(delays).toEqual([100, 200, 400]);
    expect(recorder.requests).toHaveLength(4);
  });

  it('gives up after the configured attempts with the last error', async () => {
    const proxy = await local((_request, response) => sendJson(response, 503, { error: 'temporarily_unavailable', error_description: 'maintenance' }));
    const { sleep, delays } = recordingSleep();
    const provider = new ClientCredentialsProvider(options(connect, { authUrl: proxy.url, retry: { sleep, attempts: 3, jitter: false } }));
    const error = await provider.getToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemporarilyUnavailable);
    expect(error).toMatchObject({ error: 'temporarily_unavailable', status: 503, description: 'maintenance' });
    expect(delays).toEqual([200, 400]);
    expect(proxy.requests).toHaveLength(3);
  });

  it('does not wait for a Retry-After longer than maxDelayMs: it throws with retryAfter set', async () => {
    const proxy = await local((_request, response) => sendJson(response, 503, { error: 'temporarily_unavailable' }, { 'retry-after': '120' }));
    const { sleep, delays } = recordingSleep();
    const provider = new ClientCredentialsProvider(options(connect, { authUrl: proxy.url, retry: { sleep, maxDelayMs: 5000 } }));
    const error = await provider.getToken().catch((e: unknown) => e);
    expect(error).toMatchObject({ error: 'temporarily_unavailable', retryAfter: 120 });
    expect(delays).toEqual([]);
    expect(proxy.requests).toHaveLength(1);
  });

  it('reports a refused connection as network_error once the attempts are used', async () => {
    const closed = await startLocalServer(() => {});
    const url = closed.url;
    await closed.close();
    const { sleep, delays } = recordingSleep();
    const provider = new ClientCredentialsProvider(options(connect, { authUrl: url, retry: { sleep, attempts: 2 } }));
    const error = await provider.getToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toMatch(/^could not reach Connect \(ECONNREFUSED\) \(POST http:\/\/127\.0\.0\.1:\d+\/token\)\. Connect could not be reached: /);
    expect(delays).toHaveLength(1);
  });

  it('times out each attempt after timeoutMs when nothing answers, and retries', async () => {
    const silent = await local(() => {
      /* never answers */
    });
    const { sleep, delays } = recordingSleep();
    const provider = new ClientCredentialsProvider(options(connect, { authUrl: silent.url, timeoutMs: 150, retry: { sleep, attempts: 2 } }));
    const started = Date.now();
    const error = await provider.getToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Timeout);
    expect((error as Error).message).toContain('no answer within 150 ms');
    expect(Date.now() - started).toBeLessThan(3000);
    expect(silent.requests).toHaveLength(2);
    expect(delays).toHaveLength(1);
  });

  it('lets one caller abort its wait while the shared request goes on for the others', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const proxy = await local(async (request, response) => {
      await gate;
      await forward(connect.authUrl, request, response);
    });
    const provider = new ClientCredentialsProvider(options(connect, { authUrl: proxy.url }));
    const controller = new AbortController();
    const impatient = provider.getToken({ signal: controller.signal });
    const patient = provider.getToken();
    controller.abort(new Error('the user went away'));
    const error = await impatient.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Aborted);
    expect((error as Aborted).cause).toEqual(new Error('the user went away'));
    release();
    expect((await patient).accessToken.split('.')).toHaveLength(3);
    expect(proxy.requests).toHaveLength(1);
  });

  it('raises invalid_response for a 200 that is not a token', async () => {
    const fake = await local((_request, response) => sendJson(response, 200, { token: 'nope' }));
    const provider = new ClientCredentialsProvider(options(connect, { authUrl: fake.url }));
    const error = await provider.getToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidResponse);
    expect((error as Error).message).toContain('did not answer with a bearer token');
    expect(fake.requests).toHaveLength(1);
  });
});
