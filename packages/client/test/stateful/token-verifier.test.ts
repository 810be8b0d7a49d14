import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { fixedClock } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Aborted,
  bearerToken,
  createTokenVerifier,
  exchangeCode,
  InvalidClient,
  InvalidToken,
  NetworkError,
  requestClientToken,
  revokeToken,
  startAuthorization,
  parseCallback,
  UnauthorizedClient,
  type ConnectOptions,
  type CustomerTokens,
  type TokenVerifierOptions,
  type VerifiedCustomerToken,
} from '../../src/index.js';
import { BrowserSession } from '../support/browser-session.js';
import { recordingFetch } from '../support/recording-fetch.js';
import { startConnect, type TestConnect } from '../support/test-connect.js';

/*
 * createTokenVerifier against a real Connect server whose clock is the
 * test's: a resource server registered with `clients create
 * --resource-server` checks the tokens of the demo client (a merchant) at
 * /introspect. Access tokens live 5 s, so expiry is decided by advancing
 * the clock, not by waiting.
 */
const REDIRECT_URI = 'http://127.0.0.1:4000/callback';
const clock = fixedClock(Math.floor(Date.now() / 1000));
let connect: TestConnect;
let merchant: Extract<ConnectOptions, { clientSecret: string }>;
let api: { clientId: string; clientSecret: string };
let browser: BrowserSession;

beforeAll(async () => {
  connect = await startConnect({ env: { CONNECT_ACCESS_TOKEN_TTL: '5' }, clock });
  merchant = { authUrl: connect.authUrl, clientId: connect.demo.clientId, clientSecret: connect.demo.clientSecret, clock };
  api = await connect.createResourceServer('Payments API');
  browser = new BrowserSession(connect.authUrl);
});

afterAll(async () => {
  await connect?.close();
});

/** New customer tokens of the demo client (through Connect's live session after the first login). */
async function linkCustomer(): Promise<CustomerTokens> {
  const pending = await startAuthorization({ authUrl: connect.authUrl, clientId: merchant.clientId, redirectUri: REDIRECT_URI });
  const callback = parseCallback(await browser.authorize(pending.url, connect.demo.customer), { state: pending.state, issuer: connect.authUrl });
  return exchangeCode(merchant, { code: callback.code, redirectUri: REDIRECT_URI, codeVerifier: pending.codeVerifier });
}

function verifier(extra: Partial<Extract<TokenVerifierOptions, { clientSecret: string }>> = {}) {
  const recorder = recordingFetch();
  const instance = createTokenVerifier({ authUrl: connect.authUrl, ...api, clock, fetch: recorder.fetch, ...extra });
  return { verifier: instance, introspections: () => recorder.count('/introspect'), recorder };
}

/** A DPoP-bound client access token of the demo client (RFC 9449 §5). */
async function boundClientToken(): Promise<string> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const proof = await new SignJWT({ jti: randomUUID(), htm: 'POST', htu: `${connect.authUrl}/token`, iat: clock.nowSeconds() })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(publicKey) })
    .sign(privateKey);
  const res = await fetch(`${connect.authUrl}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${merchant.clientId}:${merchant.clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      dpop: proof,
    },
    body: 'grant_type=client_credentials',
  });
  const body = (await res.json()) as { access_token: string; token_type: string };
  expect(body.token_type).toBe('DPoP');
  return body.access_token;
}

describe('createTokenVerifier', () => {
  it('refuses a DPoP-bound token: no bearer credential, and the verifier checks no proofs', async () => {
    const { verifier: v } = verifier();
    await expect(v.verify(await boundClientToken())).rejects.toThrow(InvalidToken);
    await expect(v.verify(await boundClientToken())).rejects.toThrow('this access token is DPoP-bound');
  });

  it("verifies a merchant's customer access token with a resource server's credentials", async () => {
    const tokens = await linkCustomer();
    const { verifier: v, recorder } = verifier();
    const token = await v.verify(tokens.accessToken, { kind: 'customer' });
    expect(token).toEqual({
      kind: 'customer',
      profileId: connect.demo.customer.profileId,
      clientId: connect.demo.clientId,
      sessionId: expect.any(String),
      issuer: connect.authUrl,
      audience: connect.baseUrl,
      tokenId: expect.any(String),
      issuedAt: clock.nowSeconds(),
      expiresAt: clock.nowSeconds() + 5,
      scopes: [],
      jkt: undefined,
      // The customer's sign-in (PIN + SMS), from the browser's first login: the same for every token since.
      authentication: { acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], authTime: expect.any(Number) },
      claims: expect.objectContaining({ active: true, token_type: 'Bearer', sub: connect.demo.customer.profileId }),
    } satisfies VerifiedCustomerToken);
    expect(token.kind === 'customer' && token.authentication !== null && token.authentication.authTime <= clock.nowSeconds()).toBe(true);
    // RFC 7662 §2.1 with client_secret_basic: the resource server's own credentials, nothing else.
    const [request] = recorder.requests;
    expect(request?.headers.get('authorization')).toBe(`Basic ${btoa(`${api.clientId}:${api.clientSecret}`)}`);
    expect(Object.fromEntries(new URLSearchParams(request?.body))).toEqual({ token: tokens.accessToken, token_type_hint: 'access_token' });
  });

  it('tells the kinds apart: a client access token is a client token, a refresh token none', async () => {
    const tokens = await linkCustomer();
    const clientToken = await requestClientToken(merchant);
    const { verifier: v } = verifier();
    expect(await v.verify(clientToken.accessToken)).toMatchObject({ kind: 'client', clientId: merchant.clientId, audience: connect.baseUrl });
    expect(await v.verify(clientToken.accessToken, { kind: 'client' })).toMatchObject({ kind: 'client' });
    // The hint is the API's: it refuses the token, its caller gets a new one.
    const refused = (description: string) => ({ error: 'invalid_token', description, hint: expect.stringMatching(/^Answer 401 with WWW-Authenticate: Bearer error="invalid_token"/) });
    await expect(v.verify(clientToken.accessToken, { kind: 'customer' })).rejects.toMatchObject(refused('a customer access token is required'));
    await expect(v.verify(tokens.accessToken, { kind: 'client' })).rejects.toMatchObject(refused('a client access token is required'));
    await expect(v.verify(tokens.refreshToken)).rejects.toBeInstanceOf(InvalidToken);
  });

  it('refuses a missing or malformed token without asking Connect', async () => {
    const { verifier: v, introspections } = verifier();
    for (const token of [undefined, '', 'garbage', 'a.b', 'a.b.c.d', 'a.b.c.d.e.f', 'a b.c.d', `${'a'.repeat(4094)}.b.c`]) {
      const error = await v.verify(token).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidToken);
      expect(error).toMatchObject({ error: 'invalid_token' });
    }
    expect(introspections()).toBe(0);
  });

  it('refuses an unknown well-formed token after asking Connect, and keeps no negative answer', async () => {
    const { verifier: v, introspections } = verifier();
    const unknown = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
    await expect(v.verify(unknown)).rejects.toThrow(/not active/);
    await expect(v.verify(unknown)).rejects.toThrow(/not active/);
    expect(introspections()).toBe(2);
  });

  it('reuses an active answer within the second, shares concurrent checks, and asks again a second later', async () => {
    const tokens = await linkCustomer();
    const { verifier: v, introspections } = verifier();
    const results = await Promise.all(Array.from({ length: 50 }, () => v.verify(tokens.accessToken)));
    expect(new Set(results.map((r) => r.tokenId)).size).toBe(1);
    expect(introspections()).toBe(1);
    await v.verify(tokens.accessToken);
    expect(introspections()).toBe(1);
    clock.advance(1);
    await v.verify(tokens.accessToken);
    expect(introspections()).toBe(2);
    v.clear();
    await v.verify(tokens.accessToken);
    expect(introspections()).toBe(3);
  });

  it('a revocation reaches it within its cache time: the next second with the default, at once with cacheSeconds 0', async () => {
    const tokens = await linkCustomer();
    const { verifier: cached } = verifier();
    const { verifier: uncached, introspections } = verifier({ cacheSeconds: 0 });
    await cached.verify(tokens.accessToken);
    await uncached.verify(tokens.accessToken);
    expect(tokens.refreshToken).toBeDefined();
    await revokeToken(merchant, tokens.refreshToken as string);
    // Within the second the default cache still holds the answer (docs/resource-servers.md, "Cost and freshness").
    await expect(cached.verify(tokens.accessToken)).resolves.toMatchObject({ kind: 'customer' });
    await expect(uncached.verify(tokens.accessToken)).rejects.toBeInstanceOf(InvalidToken);
    expect(introspections()).toBe(2);
    clock.advance(1);
    await expect(cached.verify(tokens.accessToken)).rejects.toBeInstanceOf(InvalidToken);
  });

  it('never reuses an answer past the token’s expiry, however long the cache', async () => {
    const tokens = await linkCustomer();
    const { verifier: v, introspections } = verifier({ cacheSeconds: 60 });
    clock.advance(3);
    await v.verify(tokens.accessToken);
    clock.advance(1);
    await v.verify(tokens.accessToken);
    expect(introspections()).toBe(1);
    clock.advance(1); // at exp: asked again, and Connect says expired
    await expect(v.verify(tokens.accessToken)).rejects.toBeInstanceOf(InvalidToken);
    expect(introspections()).toBe(2);
  });

  it('holds at most maxCachedTokens answers, the oldest going first', async () => {
    const [a, b] = [await linkCustomer(), await linkCustomer()];
    const { verifier: v, introspections } = verifier({ maxCachedTokens: 1 });
    await v.verify(a.accessToken);
    await v.verify(b.accessToken);
    await v.verify(b.accessToken);
    expect(introspections()).toBe(2);
    await v.verify(a.accessToken);
    expect(introspections()).toBe(3);
  });

  it("a merchant's own credentials see only its own tokens, as at /introspect", async () => {
    const tokens = await linkCustomer();
    const other = await connect.createClient({ redirectUri: REDIRECT_URI, name: 'Other Shop' });
    const asOther = createTokenVerifier({ authUrl: connect.authUrl, ...other, clock });
    await expect(asOther.verify(tokens.accessToken)).rejects.toBeInstanceOf(InvalidToken);
  });

  it('a failed check is not invalid_token: wrong credentials, Connect unreachable, the caller aborting', async () => {
    const tokens = await linkCustomer();
    const wrong = createTokenVerifier({ authUrl: connect.authUrl, clientId: api.clientId, clientSecret: 'csk_sandbox_wrong', clock });
    const refused = await wrong.verify(tokens.accessToken).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidClient);
    expect(String(refused)).not.toContain('csk_sandbox_wrong');
    expect(String(refused)).not.toContain(tokens.accessToken);

    const down = createTokenVerifier({ authUrl: 'http://127.0.0.1:9', ...api, clock, retry: { attempts: 1 } });
    await expect(down.verify(tokens.accessToken)).rejects.toBeInstanceOf(NetworkError);

    const { verifier: v } = verifier();
    await expect(v.verify(tokens.accessToken, { signal: AbortSignal.abort(new Error('gone')) })).rejects.toBeInstanceOf(Aborted);
  });

  it("the resource server's credentials obtain no token", async () => {
    const error = await requestClientToken({ authUrl: connect.authUrl, ...api }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedClient);
    expect(error).toMatchObject({ status: 400, description: 'a resource server obtains no tokens: it checks them at /introspect' });
  });

  it('refuses options that cannot work', () => {
    expect(() => createTokenVerifier({ authUrl: connect.authUrl, ...api, cacheSeconds: -1 })).toThrow(TypeError);
    expect(() => createTokenVerifier({ authUrl: connect.authUrl, ...api, cacheSeconds: 61 })).toThrow(/cacheSeconds/);
    expect(() => createTokenVerifier({ authUrl: connect.authUrl, ...api, cacheSeconds: 0.5 })).toThrow(/cacheSeconds/);
    expect(() => createTokenVerifier({ authUrl: connect.authUrl, ...api, maxCachedTokens: 0 })).toThrow(/maxCachedTokens/);
    expect(() => createTokenVerifier({ authUrl: connect.authUrl, clientId: api.clientId, clientSecret: '' })).toThrow(/clientSecret/);
  });
});

describe('bearerToken', () => {
  it.each([
    ['Bearer abc.def.ghi', 'abc.def.ghi'],
    ['bearer abc.def.ghi', 'abc.def.ghi'],
    ['Bearer   abc.def.ghi  ', 'abc.def.ghi'],
    ['Bearer abc==', 'abc=='],
    ['Basic YTpi', undefined],
    ['Bearer', undefined],
    ['Bearer a b', undefined],
    ['', undefined],
    [null, undefined],
    [undefined, undefined],
  ])('%j → %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});
