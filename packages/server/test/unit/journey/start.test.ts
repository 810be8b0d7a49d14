import { describe, expect, it } from 'vitest';
import { s256Challenge } from '../../../src/core/authorize/pkce.js';
import { hashCode } from '../../../src/core/codes/authorization-code.js';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { startJourney } from '../../../src/core/journey/start.js';
import { AUTHORIZATION_REQUEST_TTL_SECONDS } from '../../../src/core/lifetimes.js';
import {
  ACME,
  ADDRESS,
  BROWSER,
  DISABLED_CLIENT,
  expectKind,
  ISSUER,
  journeySetup,
  MASKED,
  MOBILE,
  OTHER_CLIENT,
  OTHER_MOBILE,
  redirectParams,
  REDIRECT,
  T0,
  type JourneyTest,
} from './fixtures.js';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

/** A customer with a live session (started at T0) and, unless told otherwise, Acme approved. */
async function signedIn(options: { approved?: boolean } = {}) {
  const t = await journeySetup();
  const customer = await t.addCustomer();
  const sessionId = await t.session(customer.profileId);
  if (options.approved ?? true) await t.approve(customer.profileId);
  return { ...t, customer, sessionId };
}

/** Whether the session still signs in: read straight from the store, without using it. */
async function sessionEnded(t: JourneyTest, sessionId: string): Promise<boolean> {
  const session = await t.storage.customerSessions.findCustomerSession(hashCookieValue(sessionId));
  return session?.endedAt !== null;
}

describe('startJourney: requests that cannot be trusted', () => {
  it.each([
    ['an unknown client', { client_id: 'cid_sandbox_nobody' }],
    ['a missing client_id', { client_id: '' }],
    ['a disabled client', { client_id: DISABLED_CLIENT.id, redirect_uri: DISABLED_CLIENT.redirectUri as string }],
    ['another redirect_uri', { redirect_uri: 'https://evil.example/cb' }],
    ['a redirect_uri that only starts like the registered one', { redirect_uri: `${REDIRECT}/more` }],
    ['a missing redirect_uri', { redirect_uri: '' }],
  ])('%s: an error page, never a redirect, and no journey', async (_name, query) => {
    const t = await journeySetup();
    const result = await t.start(query);
    expect(result.kind).toBe('page_error');
    // The received redirect URI is named only as what the sandbox's page and the log show, never as a place to go.
    const { redirectUris: _shown, ...rest } = result as { redirectUris?: unknown };
    expect(JSON.stringify(rest)).not.toContain('evil.example');
  });

  it('a repeated client_id: an error page', async () => {
    const t = await journeySetup();
    const result = await startJourney({ response_type: 'code', client_id: [ACME.id, ACME.id], redirect_uri: REDIRECT }, { browserId: BROWSER, sessionId: undefined, address: ADDRESS }, t.deps);
    expect(result.kind).toBe('page_error');
  });
});

describe('startJourney: errors sent back to the verified redirect URI', () => {
  it.each([
    ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
    ['no response_type', { response_type: '' }, 'invalid_request'],
    ['an unknown prompt', { prompt: 'consent' }, 'invalid_request'],
    ['a user_id that is not a mobile number', { user_id: '12345' }, 'invalid_request'],
    ['PKCE with the plain method', { code_challenge: s256Challenge(VERIFIER), code_challenge_method: 'plain' }, 'invalid_request'],
    ['a malformed code_challenge', { code_challenge: 'short', code_challenge_method: 'S256' }, 'invalid_request'],
  ])('%s: error with state and iss', async (_name, query, error) => {
    const t = await journeySetup();
    const params = redirectParams(await t.start(query));
    expect(params).toMatchObject({ error, state: 'xyz', iss: ISSUER });
    expect(params.error_description).toBeTruthy();
    expect(params.code).toBeUndefined();
  });

  it('leaves state out when the request had none', async () => {
    const t = await journeySetup();
    const params = redirectParams(await t.start({ response_type: 'token', state: '' }));
    expect(params).toEqual({ error: 'unsupported_response_type', error_description: 'response_type must be code', iss: ISSUER });
  });
});

describe('startJourney without a session', () => {
  it('stores a pending journey bound to this browser for 15 minutes and goes to the login page', async () => {
    const t = await journeySetup();
    const challenge = s256Challenge(VERIFIER);
    const result = expectKind(await t.start({ user_id: '+63 917 123 4567', code_challenge: challenge, code_challenge_method: 'S256' }), 'goto');
    expect(result).toEqual({ kind: 'goto', page: 'login', requestId: result.requestId, endSession: false });
    expect(result.requestId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(AUTHORIZATION_REQUEST_TTL_SECONDS).toBe(900);
    expect(await t.storage.authorizationRequests.findAuthorizationRequest(result.requestId)).toBeUndefined();
    expect(await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(result.requestId))).toEqual({
      idHash: hashCookieValue(result.requestId),
      clientId: ACME.id,
      redirectUri: REDIRECT,
      state: 'xyz',
      codeChallenge: challenge,
      loginHint: MOBILE,
      browserHash: hashCookieValue(BROWSER),
      createdAt: T0,
      expiresAt: T0 + 900,
      completedAt: null,
      endedBy: null,
      status: 'pending',
      profileId: null,
      uiLocale: null,
      scopes: [],
      acrValues: [],
      maxAge: null,
    });
  });

  it.each([
    ['fil', 'fil'],
    ['fil-PH', 'fil'],
    ['tl', 'fil'],
    ['TL-ph', 'fil'],
    ['en', 'en'],
    ['en-US', 'en'],
    ['ja de fil-PH en', 'fil'],
    ['de en-GB fil', 'en'],
    ['  fil  ', 'fil'],
    ['ja', null],
    ['x-klingon', null],
    ['', null],
  ] as const)('ui_locales=%j: the journey keeps %j for its pages; an unknown language is no error', async (uiLocales, expected) => {
    const t = await journeySetup();
    const result = expectKind(await t.start({ ui_locales: uiLocales }), 'goto');
    expect(result.page).toBe('login');
    expect(await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(result.requestId))).toMatchObject({ uiLocale: expected });
  });

  it('gives every journey a new ID', async () => {
    const t = await journeySetup();
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await t.begin()).requestId);
    expect(ids.size).toBe(5);
  });

  it('prompt=none: login_required with state and iss, and no journey', async () => {
    const t = await journeySetup();
    expect(redirectParams(await t.start({ prompt: 'none' }))).toEqual({
      error: 'login_required',
      error_description: 'the customer must log in',
      state: 'xyz',
      iss: ISSUER,
    });
  });

  it.each([[''], ['not-a-session'], ['x'.repeat(101)]])('a session cookie %j that is no session: the login page', async (sessionId) => {
    const t = await journeySetup();
    expect(await t.start({}, { sessionId })).toMatchObject({ kind: 'goto', page: 'login', endSession: false });
  });
});

describe('startJourney with a live session', () => {
  it('and Acme approved: straight back with a code for that customer, bound to the request', async () => {
    const t = await signedIn();
    t.clock.advance(60);
    const challenge = s256Challenge(VERIFIER);
    const params = redirectParams(await t.start({ code_challenge: challenge, code_challenge_method: 'S256' }, { sessionId: t.sessionId }));
    expect(Object.keys(params)).toEqual(['code', 'state', 'userId', 'profileId', 'iss']);
    expect(params).toMatchObject({ state: 'xyz', userId: MASKED, profileId: t.customer.profileId, iss: ISSUER });
    expect(await t.storage.codes.findAuthorizationCode(hashCode(params.code ?? ''))).toEqual({
      codeHash: hashCode(params.code ?? ''),
      clientId: ACME.id,
      redirectUri: REDIRECT,
      profileId: t.customer.profileId,
      codeChallenge: challenge,
      createdAt: T0 + 60,
      expiresAt: T0 + 360,
      consumedAt: null,
      scopes: [],
      // The session's sign-in at T0, not this silent one a minute later.
      authentication: { acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], authTime: T0 },
    });
    // Using the session counts as activity.
    expect((await t.storage.customerSessions.findCustomerSession(hashCookieValue(t.sessionId)))?.lastSeenAt).toBe(T0 + 60);
  });

  it('and Acme approved, user_id naming the session\'s customer: a code', async () => {
    const t = await signedIn();
    expect(redirectParams(await t.start({ user_id: MOBILE }, { sessionId: t.sessionId })).profileId).toBe(t.customer.profileId);
  });

  it('and Acme approved, prompt=none: a code', async () => {
    const t = await signedIn();
    expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId: t.sessionId })).code).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('without an approval of Acme: a consent_required journey of that customer, on the consent page', async () => {
    const t = await signedIn({ approved: false });
    await t.approve(t.customer.profileId, OTHER_CLIENT.id);
    const result = expectKind(await t.start({}, { sessionId: t.sessionId }), 'goto');
    expect(result).toEqual({ kind: 'goto', page: 'consent', requestId: result.requestId, endSession: false });
    expect(await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(result.requestId))).toMatchObject({
      status: 'consent_required',
      profileId: t.customer.profileId,
      browserHash: hashCookieValue(BROWSER),
      completedAt: null,
      endedBy: null,
    });
    expect(await sessionEnded(t, t.sessionId)).toBe(false);
  });

  it('without an approval of Acme, prompt=none: consent_required with state and iss', async () => {
    const t = await signedIn({ approved: false });
    expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId: t.sessionId }))).toEqual({
      error: 'consent_required',
      error_description: 'the customer has not approved this client',
      state: 'xyz',
      iss: ISSUER,
    });
  });

  it('of another customer than user_id names: not used, the login page; the session is left alone', async () => {
    const t = await signedIn();
    const result = expectKind(await t.start({ user_id: OTHER_MOBILE }, { sessionId: t.sessionId }), 'goto');
    expect(result).toMatchObject({ page: 'login', endSession: false });
    expect(await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(result.requestId))).toMatchObject({
      status: 'pending',
      profileId: null,
      loginHint: OTHER_MOBILE,
    });
    expect(await sessionEnded(t, t.sessionId)).toBe(false);
  });

  it('of a client not approved: the consent journey keeps the language ui_locales chose', async () => {
    const t = await signedIn({ approved: false });
    const result = expectKind(await t.start({ ui_locales: 'fil-PH' }, { sessionId: t.sessionId }), 'goto');
    expect(result.page).toBe('consent');
    expect(await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(result.requestId))).toMatchObject({
      status: 'consent_required',
      uiLocale: 'fil',
    });
  });

  it('of another customer than user_id names, prompt=none: login_required', async () => {
    const t = await signedIn();
    expect(redirectParams(await t.start({ user_id: OTHER_MOBILE, prompt: 'none' }, { sessionId: t.sessionId })).error).toBe('login_required');
  });

  it('prompt=login: the session ends, the cookie is to be cleared, the customer logs in, even with Acme approved', async () => {
    const t = await signedIn();
    t.clock.advance(5);
    const result = expectKind(await t.start({ prompt: 'login' }, { sessionId: t.sessionId }), 'goto');
    expect(result).toMatchObject({ page: 'login', endSession: true });
    expect((await t.storage.customerSessions.findCustomerSession(hashCookieValue(t.sessionId)))?.endedAt).toBe(T0 + 5);
    expect(await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(result.requestId))).toMatchObject({ status: 'pending', profileId: null });
    // And it stays ended.
    expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId: t.sessionId })).error).toBe('login_required');
  });

  it('prompt=login without a session: the login page, endSession set all the same', async () => {
    const t = await journeySetup();
    expect(await t.start({ prompt: 'login' })).toMatchObject({ kind: 'goto', page: 'login', endSession: true });
  });
});

describe('startJourney: sessions that no longer sign in', () => {
  it.each([
    [1799, true],
    [1800, false],
    [1801, false],
  ])('left unused for %i s (idle limit 1800 s): used = %s', async (after, used) => {
    const t = await signedIn();
    t.clock.set(T0 + after);
    const params = redirectParams(await t.start({ prompt: 'none' }, { sessionId: t.sessionId }));
    expect(params.error === undefined).toBe(used);
    if (!used) expect(params.error).toBe('login_required');
  });

  it('idleness counts from the last use', async () => {
    const t = await signedIn();
    t.clock.set(T0 + 1799);
    expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId: t.sessionId })).code).toBeDefined();
    t.clock.set(T0 + 1799 + 1799);
    expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId: t.sessionId })).code).toBeDefined();
    t.clock.set(T0 + 1799 + 1799 + 1800);
    expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId: t.sessionId })).error).toBe('login_required');
  });

  it('ends sessionSeconds after login, even when used all along', async () => {
    const t = await journeySetup({ lifetimes: { sessionSeconds: 7200 } });
    const customer = await t.addCustomer();
    await t.approve(customer.profileId);
    const sessionId = await t.session(customer.profileId);
    for (const at of [1000, 2000, 3000, 4000, 5000, 6000, 7199]) {
      t.clock.set(T0 + at);
      expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId })).code, `at ${at}`).toBeDefined();
    }
    t.clock.set(T0 + 7200);
    expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId })).error).toBe('login_required');
  });

  it('an ended session: login_required, or the login page', async () => {
    const t = await signedIn();
    await t.storage.customerSessions.endCustomerSession(hashCookieValue(t.sessionId), T0);
    t.clock.advance(1);
    expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId: t.sessionId })).error).toBe('login_required');
    expect(await t.start({}, { sessionId: t.sessionId })).toMatchObject({ kind: 'goto', page: 'login' });
  });

  it('a customer an operator locked: not signed in', async () => {
    const t = await signedIn();
    await t.storage.customers.updateCustomer(t.customer.profileId, { status: 'locked' }, T0);
    expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId: t.sessionId })).error).toBe('login_required');
    expect(await t.start({}, { sessionId: t.sessionId })).toMatchObject({ kind: 'goto', page: 'login' });
  });

  it('a customer whose PIN login wrong PINs locked: still signed in (the lock refuses PIN checks only)', async () => {
    const t = await signedIn();
    await t.storage.customers.updateCustomer(t.customer.profileId, { pinAttempts: 5, lockedUntil: T0 + 900 }, T0);
    t.clock.set(T0 + 1);
    expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId: t.sessionId })).code).toBeDefined();
    expect(await t.storage.customers.findCustomer(t.customer.profileId)).toMatchObject({ pinAttempts: 5, lockedUntil: T0 + 900 });
  });
});
