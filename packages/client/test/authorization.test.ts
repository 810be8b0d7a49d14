import { createHash } from 'node:crypto';
import { fixedClock } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccessDenied,
  exchangeCode,
  InvalidGrant,
  isConnectError,
  IssuerMismatch,
  LoginRequired,
  parseCallback,
  startAuthorization,
  StateMismatch,
  UnmetAuthenticationRequirements,
  type ConnectOptions,
} from '../src/index.js';
import { startConnect, type TestConnect } from './support/test-connect.js';
import { BrowserSession } from './support/browser-session.js';

// Linking a customer: the authorization URL, the hosted pages (driven by fetch), the callback, the code exchange.
const REDIRECT_URI = 'http://127.0.0.1:4000/callback';
let connect: TestConnect;
let options: Extract<ConnectOptions, { clientSecret: string }>;
let customer: { mobile: string; pin: string; profileId: string };

beforeAll(async () => {
  connect = await startConnect();
  options = { authUrl: connect.authUrl, clientId: connect.demo.clientId, clientSecret: connect.demo.clientSecret };
  customer = connect.demo.customer;
});

afterAll(async () => {
  await connect?.close();
});

function start(extra: { prompt?: 'login' | 'none'; userId?: string; acrValues?: string[]; maxAge?: number } = {}) {
  return startAuthorization({ authUrl: connect.authUrl, clientId: connect.demo.clientId, redirectUri: REDIRECT_URI, ...extra });
}

describe('startAuthorization', () => {
  it('builds the /authorize URL with a random state and PKCE S256', async () => {
    const pending = await start({ prompt: 'login', userId: '+639171234567' });
    const url = new URL(pending.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${connect.authUrl}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: connect.demo.clientId,
      redirect_uri: REDIRECT_URI,
      state: pending.state,
      prompt: 'login',
      user_id: '+639171234567',
      code_challenge: createHash('sha256').update(pending.codeVerifier ?? '').digest('base64url'),
      code_challenge_method: 'S256',
    });
    expect(pending.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(pending.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(pending.redirectUri).toBe(REDIRECT_URI);
    const other = await start();
    expect(other.state).not.toBe(pending.state);
    expect(other.codeVerifier).not.toBe(pending.codeVerifier);
    expect(new URL(other.url).searchParams.has('prompt')).toBe(false);
  });

  it('sends acrValues as acr_values (space-separated, each once) and maxAge as max_age', async () => {
    const params = new URL((await start({ acrValues: ['phr', 'urn:connect:acr:pin-sms', 'phr'], maxAge: 300 })).url).searchParams;
    expect(params.get('acr_values')).toBe('phr urn:connect:acr:pin-sms');
    expect(params.get('max_age')).toBe('300');
    expect(new URL((await start({ maxAge: 0 })).url).searchParams.get('max_age')).toBe('0');
    const plain = new URL((await start()).url).searchParams;
    expect(plain.has('acr_values') || plain.has('max_age')).toBe(false);
  });

  it('leaves PKCE out when asked to', async () => {
    const pending = await startAuthorization({ ...options, redirectUri: REDIRECT_URI, pkce: false, state: 'my-own-state' });
    expect(pending.codeVerifier).toBeUndefined();
    expect(pending.state).toBe('my-own-state');
    expect(new URL(pending.url).searchParams.has('code_challenge')).toBe(false);
  });
});

describe('the whole link, against Connect', () => {
  const browser = () => new BrowserSession(connect.authUrl);

  it('logs the customer in, parses the callback and exchanges the code for customer tokens', async () => {
    const clock = fixedClock(1_900_000_000);
    const pending = await start();
    const callbackUrl = await browser().authorize(pending.url, customer);
    expect(callbackUrl.startsWith(`${REDIRECT_URI}?`)).toBe(true);

    const callback = parseCallback(callbackUrl, { state: pending.state, issuer: connect.authUrl });
    expect(callback.userId).toBe('+63******4567');
    expect(callback.profileId).toBe(customer.profileId);
    expect(callback.issuer).toBe(connect.authUrl);

    const tokens = await exchangeCode({ ...options, clock }, { ...pending, code: callback.code });
    expect(tokens.accessToken.split('.')).toHaveLength(5); // a JWE
    expect(tokens.refreshToken?.split('.')).toHaveLength(3); // a JWS
    expect(tokens).toMatchObject({ issuedAt: 1_900_000_000, expiresAt: 1_900_000_000 + 3600, refreshExpiresAt: 1_900_000_000 + 604_800 });

    const profile = await fetch(`${connect.baseUrl}/customer/profile`, { headers: { authorization: `Bearer ${tokens.accessToken}` } });
    expect(await profile.json()).toMatchObject({ profileId: customer.profileId, userId: '+63******4567', clientId: connect.demo.clientId });
  });

  it('refuses a second exchange of the same code with invalid_grant, and a wrong verifier', async () => {
    const session = browser();
    const pending = await start();
    const callback = parseCallback(await session.authorize(pending.url, customer), { state: pending.state, issuer: connect.authUrl });
    await exchangeCode(options, { ...pending, code: callback.code });
    const again = await exchangeCode(options, { ...pending, code: callback.code }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(InvalidGrant);
    expect(again).toMatchObject({ error: 'invalid_grant', status: 400 });

    // Same browser, live session: straight back with a new code.
    const next = await start();
    const nextCallback = parseCallback(await session.authorize(next.url, customer), { state: next.state, issuer: connect.authUrl });
    const wrong = await exchangeCode(options, { ...next, code: nextCallback.code, codeVerifier: pending.codeVerifier }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(InvalidGrant);

    // A callback answering another authorization is refused before any exchange.
    const third = await start();
    const foreign = await session.authorize(third.url, customer);
    expect(() => parseCallback(foreign, { state: next.state, issuer: connect.authUrl })).toThrow(StateMismatch);
    // And a callback claiming another issuer.
    const forged = new URL(foreign);
    forged.searchParams.set('iss', 'https://evil.example');
    expect(() => parseCallback(forged, { state: third.state, issuer: connect.authUrl })).toThrow(IssuerMismatch);
    // And one without iss: Connect always sends it, so it did not come from Connect.
    expect(new URL(foreign).searchParams.get('iss')).toBe(connect.authUrl);
    forged.searchParams.delete('iss');
    expect(() => parseCallback(forged, { state: third.state, issuer: connect.authUrl })).toThrow(IssuerMismatch);
  });

  it('turns prompt=none without a session into LoginRequired', async () => {
    const pending = await start({ prompt: 'none' });
    const callbackUrl = await browser().authorize(pending.url, customer);
    let caught: unknown;
    try {
      parseCallback(callbackUrl, { state: pending.state, issuer: connect.authUrl });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(LoginRequired);
    if (!isConnectError(caught)) throw new Error('not a ConnectError');
    expect(caught.error).toBe('login_required');
    expect(caught.description.length).toBeGreaterThan(0);
  });

  it('acrValues phr: Connect offers no PIN form, and "I can\'t use a passkey" comes back as UnmetAuthenticationRequirements', async () => {
    const pending = await start({ acrValues: ['phr'] });
    const callbackUrl = await browser().authorize(pending.url, customer, 'no_passkey');
    expect(() => parseCallback(callbackUrl, { state: pending.state, issuer: connect.authUrl })).toThrow(UnmetAuthenticationRequirements);
  });

  it('maxAge older than the session at Connect asks for a new sign-in; prompt=none then gives LoginRequired', async () => {
    const session = browser();
    const first = await start();
    parseCallback(await session.authorize(first.url, customer), { state: first.state, issuer: connect.authUrl });
    // max_age=0: no session is recent enough.
    const pending = await start({ maxAge: 0, prompt: 'none' });
    const callbackUrl = await session.authorize(pending.url, customer);
    expect(() => parseCallback(callbackUrl, { state: pending.state, issuer: connect.authUrl })).toThrow(LoginRequired);
  });

  it('turns a cancelled login into AccessDenied', async () => {
    const pending = await start();
    const callbackUrl = await browser().authorize(pending.url, customer, 'cancel');
    expect(() => parseCallback(callbackUrl, { state: pending.state, issuer: connect.authUrl })).toThrow(AccessDenied);
  });
});
