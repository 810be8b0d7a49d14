import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomerTokenManager, revokeToken, type ConnectOptions } from '../src/index.js';
import { startConnect, type TestConnect } from './support/test-connect.js';
import { BrowserSession } from './support/browser-session.js';
import { recordingFetch } from './support/recording-fetch.js';
import { sendJson, startLocalServer, type LocalServer } from './support/local-server.js';

// CustomerTokenManager.fetch: an API call with the customer's token, renewed once after a 401.
const REDIRECT_URI = 'http://127.0.0.1:4000/callback';
let connect: TestConnect;
let options: Extract<ConnectOptions, { clientSecret: string }>;
let browser: BrowserSession;
let refuses: LocalServer;

beforeAll(async () => {
  connect = await startConnect();
  options = { authUrl: connect.authUrl, clientId: connect.demo.clientId, clientSecret: connect.demo.clientSecret };
  browser = new BrowserSession(connect.authUrl);
  // An API that refuses every token.
  refuses = await startLocalServer((_request, response) => sendJson(response, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer error="invalid_token"' }));
});

afterAll(async () => {
  await refuses?.close();
  await connect?.close();
});

async function linked(key: string) {
  const recorder = recordingFetch();
  const manager = new CustomerTokenManager({ ...options, redirectUri: REDIRECT_URI, fetch: recorder.fetch });
  const pending = await manager.startAuthorization();
  const { tokens } = await manager.completeAuthorization(key, await browser.authorize(pending.url, connect.demo.customer), pending);
  return { manager, recorder, tokens };
}

describe('CustomerTokenManager.fetch', () => {
  it('sends the bearer token and returns the answer, with no refresh while the token is accepted', async () => {
    const { manager, recorder, tokens } = await linked('alice');
    const response = await manager.fetch('alice', `${connect.baseUrl}/customer/profile`, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ profileId: connect.demo.customer.profileId });
    const [call] = recorder.requests.filter((r) => r.path === '/customer/profile');
    expect(call?.headers.get('authorization')).toBe(`Bearer ${tokens.accessToken}`);
    expect(call?.headers.get('accept')).toBe('application/json');
    expect(recorder.count('/token', 'refresh_token')).toBe(0);
  });

  it('after a 401, refreshes once for all concurrent callers and retries each request once', async () => {
    const { manager, recorder, tokens } = await linked('bob');
    // Still within its lifetime for the manager, but Connect no longer accepts it.
    await revokeToken(options, tokens.accessToken);
    const answers = await Promise.all(Array.from({ length: 5 }, () => manager.fetch('bob', `${connect.baseUrl}/customer/profile`)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(recorder.count('/token', 'refresh_token')).toBe(1);
    const calls = recorder.requests.filter((r) => r.path === '/customer/profile');
    expect(calls).toHaveLength(10);
    const renewed = (await manager.store.get('bob'))?.accessToken;
    expect(renewed).not.toBe(tokens.accessToken);
    expect(calls.filter((c) => c.headers.get('authorization') === `Bearer ${renewed}`)).toHaveLength(5);
  });

  it('returns a second 401 as it is, after one refresh and one retry', async () => {
    const { manager, recorder, tokens } = await linked('carol');
    const response = await manager.fetch('carol', `${refuses.url}/api`, { method: 'POST', body: JSON.stringify({ amount: 1 }) });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'invalid_token' });
    expect(recorder.count('/token', 'refresh_token')).toBe(1);
    const calls = recorder.requests.filter((r) => r.path === '/api');
    expect(calls.map((c) => c.body)).toEqual(['{"amount":1}', '{"amount":1}']);
    expect(calls[0]?.headers.get('authorization')).toBe(`Bearer ${tokens.accessToken}`);
    expect(calls[1]?.headers.get('authorization')).toBe(`Bearer ${(await manager.store.get('carol'))?.accessToken}`);
  });

  it('never sends a stream body twice: renews the token and returns the 401', async () => {
    const { manager, recorder, tokens } = await linked('dave');
    const before = refuses.requests.length;
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('chunk'));
        controller.close();
      },
    });
    const response = await manager.fetch('dave', `${refuses.url}/upload`, { method: 'POST', body, duplex: 'half' } as RequestInit);
    expect(response.status).toBe(401);
    expect(refuses.requests.slice(before).map((r) => r.body)).toEqual(['chunk']);
    expect(recorder.count('/token', 'refresh_token')).toBe(1);
    expect((await manager.store.get('dave'))?.accessToken).not.toBe(tokens.accessToken);
  });
});
