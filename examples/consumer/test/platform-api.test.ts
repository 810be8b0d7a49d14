import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomerTokenManager, exchangeCode, parseCallback, requestClientToken, revokeToken, startAuthorization, type CustomerTokens } from '@connect-auth/client';
import { fixedClock, startServer, type RunningServer } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSession } from '../../../packages/client/test/support/browser-session.js';
import { startPlatformApi } from '../src/platform-api.js';
import { ACR_PIN_SMS } from '@connect-auth/server';

/*
 * The example platform API against a real Connect: it holds only the
 * seeded demo resource server's ID and secret (no master key, no database)
 * and checks each customer token at /introspect. Connect, the API's cache
 * and the test share one clock.
 */

const REDIRECT_URI = 'http://127.0.0.1:4000/callback';
const clock = fixedClock(Math.floor(Date.now() / 1000));

describe('the example platform API', () => {
  let dataDir: string | undefined;
  let connect: RunningServer | undefined;
  let api: Awaited<ReturnType<typeof startPlatformApi>> | undefined;
  let tokens: CustomerTokens;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'connect-platform-api-'));
    connect = await startServer({ env: { PORT: '0', CONNECT_DATA_DIR: dataDir, CONNECT_LOG_LEVEL: 'silent' }, seedDemo: true, demoRedirectUri: REDIRECT_URI, print: () => {}, clock });
    const demo = connect.demo;
    if (!demo) throw new Error('the demo data was not seeded');
    api = await startPlatformApi({ connect: { authUrl: connect.urls.authUrl, ...demo.resourceServer }, port: 0, clock });
    tokens = await linkDemoCustomer();
  }, 30_000);

  afterAll(async () => {
    await api?.close();
    await connect?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  function merchant() {
    const demo = connect?.demo;
    if (!connect || !demo) throw new Error('set-up failed');
    return { authUrl: connect.urls.authUrl, clientId: demo.clientId, clientSecret: demo.clientSecret, clock };
  }

  async function linkDemoCustomer(): Promise<CustomerTokens> {
    const options = merchant();
    const pending = await startAuthorization({ authUrl: options.authUrl, clientId: options.clientId, redirectUri: REDIRECT_URI });
    const callbackUrl = await new BrowserSession(options.authUrl).authorize(pending.url, connect?.demo?.customer ?? { mobile: '', pin: '' });
    const callback = parseCallback(callbackUrl, { state: pending.state, issuer: options.authUrl });
    return exchangeCode(options, { code: callback.code, redirectUri: REDIRECT_URI, codeVerifier: pending.codeVerifier });
  }

  function profile(authorization?: string, base = api?.url) {
    return fetch(`${base}/customer/profile`, { headers: authorization === undefined ? {} : { authorization }, signal: AbortSignal.timeout(10_000) });
  }

  it("answers for a merchant's customer access token: who it stands for, checked by introspection", async () => {
    const response = await profile(`Bearer ${tokens.accessToken}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({
      profileId: connect?.demo?.customer.profileId,
      clientId: connect?.demo?.clientId,
      tokenExpiresAt: expect.any(Number),
      checkedBy: 'introspection',
    });
  });

  it.each([
    ['no Authorization header', undefined],
    ['another scheme', `Basic ${btoa('a:b')}`],
  ])('refuses %s: 401 with challenges without an error code (RFC 6750 §3.1, RFC 9449 §7.1)', async (_name, authorization) => {
    const response = await profile(authorization);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="platform-api", DPoP algs="ES256 PS256 EdDSA"');
    expect(await response.json()).toMatchObject({ error: 'invalid_token' });
  });

  it.each([
    ['a malformed token', 'Bearer not-a-token'],
  ])('refuses %s: 401 invalid_token with its challenge', async (_name, authorization) => {
    const response = await profile(authorization);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(await response.json()).toMatchObject({ error: 'invalid_token' });
  });

  it("refuses a client access token: it serves customers' data only", async () => {
    const { accessToken } = await requestClientToken(merchant());
    const response = await profile(`Bearer ${accessToken}`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'invalid_token', error_description: 'a customer access token is required' });
  });

  it('refuses a revoked token from the next second on', async () => {
    const linked = await linkDemoCustomer();
    expect((await profile(`Bearer ${linked.accessToken}`)).status).toBe(200);
    await revokeToken(merchant(), linked.refreshToken as string);
    clock.advance(1);
    expect((await profile(`Bearer ${linked.accessToken}`)).status).toBe(401);
  });

  it('with required scopes, refuses a valid token lacking one: 403 insufficient_scope naming them', async () => {
    const demo = connect?.demo;
    if (!connect || !demo) throw new Error('set-up failed');
    const strict = await startPlatformApi({ connect: { authUrl: connect.urls.authUrl, ...demo.resourceServer }, port: 0, clock, requiredScopes: ['profile'] });
    try {
      // The demo client is registered without scopes, so its tokens carry none.
      const response = await profile(`Bearer ${tokens.accessToken}`, strict.url);
      expect(response.status).toBe(403);
      expect(response.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="profile"');
      expect(await response.json()).toEqual({ error: 'insufficient_scope', error_description: 'the access token lacks a scope this API needs', scope: 'profile' });
      // An invalid token is still 401 first.
      expect((await profile('Bearer not-a-token', strict.url)).status).toBe(401);
    } finally {
      await strict.close();
    }
  });

  function payout(authorization: string, base = api?.url) {
    return fetch(`${base}/payouts`, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: '{"amount":100}', signal: AbortSignal.timeout(10_000) });
  }

  it('POST /payouts requires phr within 300 s: a PIN + SMS sign-in gets 401 with the step-up challenge (RFC 9470)', async () => {
    const response = await payout(`Bearer ${tokens.accessToken}`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_user_authentication", error_description="this request needs a stronger sign-in than the access token stands for", acr_values="phr", max_age="300"',
    );
    expect(await response.json()).toEqual({ error: 'insufficient_user_authentication', error_description: 'this request needs a stronger sign-in than the access token stands for' });
    // An invalid token is invalid first; the profile still answers the same token.
    expect((await payout('Bearer not-a-token')).headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect((await profile(`Bearer ${tokens.accessToken}`)).status).toBe(200);
  });

  it('POST /payouts with max_age 300 on the injected clock: accepted 299 and 300 s after the sign-in, challenged at 301', async () => {
    const demo = connect?.demo;
    if (!connect || !demo) throw new Error('set-up failed');
    const strict = await startPlatformApi({ connect: { authUrl: connect.urls.authUrl, ...demo.resourceServer }, port: 0, clock, payoutSignIn: { acr: [ACR_PIN_SMS], maxAge: 300 } });
    try {
      const signedIn = clock.nowSeconds();
      const linked = await linkDemoCustomer(); // a new sign-in at `signedIn` (the clock stands still)
      for (const [age, status] of [[299, 200], [300, 200], [301, 401]] as const) {
        clock.set(signedIn + age);
        const response = await payout(`Bearer ${linked.accessToken}`, strict.url);
        expect(response.status, `${age} s after the sign-in`).toBe(status);
        if (status === 200) expect(await response.json()).toMatchObject({ payout: 'accepted', acr: ACR_PIN_SMS, authTime: signedIn });
        else {
          expect(response.headers.get('www-authenticate')).toBe(
            `Bearer error="insufficient_user_authentication", error_description="this request needs a more recent sign-in than the access token stands for", acr_values="${ACR_PIN_SMS}", max_age="300"`,
          );
        }
      }
    } finally {
      await strict.close();
    }
  });

  it('answers 503, not 401, when it cannot reach Connect', async () => {
    const cut = await startPlatformApi({ connect: { authUrl: 'http://127.0.0.1:9', clientId: 'cid_sandbox_x', clientSecret: 'csk_sandbox_x' }, port: 0, clock, onError: () => {} });
    try {
      const response = await profile(`Bearer ${tokens.accessToken}`, cut.url);
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ error: 'temporarily_unavailable' });
    } finally {
      await cut.close();
    }
  }, 20_000);
  it("takes a DPoP-bound token with its proof, and refuses it without one (docs/resource-servers.md, the SDK's verifier and DPoP)", async () => {
    // A standard client may bind its tokens too: the demo client with dpop on.
    const customers = new CustomerTokenManager({ ...merchant(), dpop: true, redirectUri: REDIRECT_URI });
    const pending = await customers.startAuthorization();
    const callback = await new BrowserSession(merchant().authUrl).authorize(pending.url, connect?.demo?.customer ?? { mobile: '', pin: '' });
    const { tokens: bound } = await customers.completeAuthorization('alice', callback, pending);
    expect(bound.tokenType).toBe('DPoP');
    const answer = await customers.fetch('alice', `${api?.url}/customer/profile`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ profileId: connect?.demo?.customer.profileId, checkedBy: 'introspection' });

    const asBearer = await profile(`Bearer ${bound.accessToken}`);
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    const withoutProof = await profile(`DPoP ${bound.accessToken}`);
    expect(withoutProof.status).toBe(401);
    expect(withoutProof.headers.get('www-authenticate')).toMatch(/^DPoP algs="ES256 PS256 EdDSA", error="invalid_token", error_description="a DPoP request needs exactly one/);
  });
});
