import { describe, expect, it } from 'vitest';
import { s256Challenge } from '../../../src/core/authorize/pkce.js';
import { hashCode } from '../../../src/core/codes/authorization-code.js';
import { showConsent, submitConsent } from '../../../src/core/journey/steps/consent.js';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { showLogin } from '../../../src/core/journey/steps/login.js';
import {
  ACME,
  ISSUER,
  journeySetup,
  MASKED,
  MOBILE,
  OTHER_MOBILE,
  redirectParams,
  REDIRECT,
  T0,
  type JourneyOptions,
  type JourneyTest,
  type Started,
} from './fixtures.js';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

/** A customer signed in at T0 who has not approved Acme, on Acme's consent page. */
async function atConsent(query: Record<string, string> = {}, options: JourneyOptions = {}) {
  const t = await journeySetup(options);
  const customer = await t.addCustomer();
  const sessionId = await t.session(customer.profileId);
  const journey = await t.begin(query, { sessionId });
  expect(await journey.record()).toMatchObject({ status: 'consent_required', profileId: customer.profileId });
  const pressApprove = (context: Partial<Started['context']> = {}) => submitConsent({ ...journey.context, ...context }, { action: 'approve' }, t.deps);
  return { ...t, customer, sessionId, journey, pressApprove };
}

/** The journey went back to the login page, approving nothing and issuing nothing. */
async function expectBackToLogin(t: JourneyTest & { journey: Started }, result: unknown, profileId: string): Promise<void> {
  expect(result).toEqual({ kind: 'goto', page: 'login', requestId: t.journey.requestId });
  expect(await t.journey.record()).toMatchObject({ status: 'pending', profileId: null, completedAt: null });
  expect(await t.storage.consents.listConsents(profileId)).toEqual([]);
  expect(await showLogin(t.journey.context, t.deps)).toMatchObject({ kind: 'login' });
}

describe('showConsent', () => {
  it('names the client and the customer\'s masked mobile', async () => {
    const t = await atConsent();
    expect(await showConsent(t.journey.context, t.deps)).toEqual({
      kind: 'consent',
      journey: { requestId: t.journey.requestId, clientName: ACME.name, redirectUri: REDIRECT, fixedMobile: null, uiLocale: null, requiresPhr: false },
      maskedMobile: MASKED,
      scopes: [],
      otherAccount: true,
    });
  });

  it('lists every scope of the client, with the descriptions it has; no other account when user_id named the customer', async () => {
    const t = await atConsent();
    const withScopes = { ...ACME, scopes: ['payments:read', 'profile'], scopeDescriptions: { profile: 'Your name' } };
    expect(await showConsent(t.journey.context, { ...t.deps, findClient: async () => withScopes })).toMatchObject({
      scopes: [{ scope: 'payments:read' }, { scope: 'profile', description: 'Your name' }],
      otherAccount: true,
    });
    const hinted = await atConsent({ user_id: MOBILE });
    expect(await showConsent(hinted.journey.context, hinted.deps)).toMatchObject({ otherAccount: false });
  });

  it('on a journey that is not asking for consent: that journey\'s page', async () => {
    const t = await journeySetup();
    const journey = await t.begin();
    expect(await showConsent(journey.context, t.deps)).toEqual({ kind: 'goto', page: 'login', requestId: journey.requestId });
  });
});

describe('submitConsent: approve', () => {
  it('with the customer\'s live session: a code, the approval stored, the journey over', async () => {
    const challenge = s256Challenge(VERIFIER);
    const t = await atConsent({ code_challenge: challenge, code_challenge_method: 'S256' });
    t.clock.advance(30);
    const params = redirectParams(await t.pressApprove());
    expect(params).toMatchObject({ state: 'xyz', userId: MASKED, profileId: t.customer.profileId, iss: ISSUER });
    expect(await t.storage.codes.findAuthorizationCode(hashCode(params.code ?? ''))).toMatchObject({
      clientId: ACME.id,
      profileId: t.customer.profileId,
      redirectUri: REDIRECT,
      codeChallenge: challenge,
      expiresAt: T0 + 330,
    });
    expect(await t.storage.consents.findConsent(t.customer.profileId, ACME.id)).toEqual({ profileId: t.customer.profileId, clientId: ACME.id, approvedAt: T0 + 30 });
    expect(await t.journey.record()).toMatchObject({ status: 'code_issued', completedAt: T0 + 30 });
    expect((await t.storage.customerSessions.findCustomerSession(hashCookieValue(t.sessionId)))?.lastSeenAt).toBe(T0 + 30);
    // From now on the session signs in to Acme silently.
    expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId: t.sessionId })).code).toBeDefined();
    expect(await t.pressApprove()).toEqual({ kind: 'dead_end', reason: 'finished' });
  });

  it('a session that ended meanwhile: the journey goes back to pending and the customer logs in', async () => {
    const t = await atConsent();
    await t.storage.customerSessions.endCustomerSession(hashCookieValue(t.sessionId), T0 + 1);
    t.clock.advance(2);
    await expectBackToLogin(t, await t.pressApprove(), t.customer.profileId);
  });

  it.each([
    [599, true],
    [600, false],
    [601, false],
  ])('a session idle for %i s (limit 600 s): approved = %s', async (idle, approved) => {
    const t = await atConsent({}, { lifetimes: { sessionIdleSeconds: 600 } });
    t.clock.set(T0 + idle);
    const result = await t.pressApprove();
    if (approved) expect(redirectParams(result).code).toBeDefined();
    else await expectBackToLogin(t, result, t.customer.profileId);
  });

  it('another customer\'s session: not approved, to the login page', async () => {
    const t = await atConsent();
    const other = await t.addCustomer(OTHER_MOBILE);
    const otherSession = await t.session(other.profileId);
    await expectBackToLogin(t, await t.pressApprove({ sessionId: otherSession }), t.customer.profileId);
    expect(await t.storage.consents.listConsents(other.profileId)).toEqual([]);
  });

  it('no session cookie: to the login page', async () => {
    const t = await atConsent();
    await expectBackToLogin(t, await t.pressApprove({ sessionId: undefined }), t.customer.profileId);
  });

  it('a customer locked meanwhile: to the login page', async () => {
    const t = await atConsent();
    await t.storage.customers.updateCustomer(t.customer.profileId, { status: 'locked' }, T0);
    await expectBackToLogin(t, await t.pressApprove(), t.customer.profileId);
  });

  it('twice at once: one code, one approval', async () => {
    const t = await atConsent();
    const results = await Promise.all([t.pressApprove(), t.pressApprove()]);
    expect(results.filter((result) => result.kind === 'redirect')).toHaveLength(1);
    expect(results.filter((result) => result.kind !== 'redirect')).toEqual([{ kind: 'dead_end', reason: 'finished' }]);
    expect(await t.storage.consents.listConsents(t.customer.profileId)).toHaveLength(1);
  });

  it('on a journey past its expiry: a dead end (899 s still approves)', async () => {
    const t = await atConsent();
    t.clock.set(T0 + 900);
    expect(await t.pressApprove()).toEqual({ kind: 'dead_end', reason: 'expired' });
    const again = await atConsent();
    again.clock.set(T0 + 899);
    // Idle for 899 s: the session is still live.
    expect((await again.pressApprove()).kind).toBe('redirect');
  });

  it('on a journey that is not asking for consent: that journey\'s own page, nothing approved', async () => {
    const t = await journeySetup();
    const customer = await t.addCustomer();
    const login = await t.begin();
    const sessionId = await t.session(customer.profileId);
    expect(await submitConsent({ ...login.context, sessionId }, { action: 'approve' }, t.deps)).toEqual({ kind: 'goto', page: 'login', requestId: login.requestId });
    await t.toOtp(login);
    expect(await submitConsent({ ...login.context, sessionId }, { action: 'approve' }, t.deps)).toEqual({ kind: 'goto', page: 'otp', requestId: login.requestId });
    expect(await t.storage.consents.listConsents(customer.profileId)).toEqual([]);
    expect((await login.record()).status).toBe('otp_sent');
  });

  it.each([[{}], [{ action: 'yes' }]])('without a known action (%j): the consent page again', async (form) => {
    const t = await atConsent();
    expect(await submitConsent(t.journey.context, form, t.deps)).toEqual({ kind: 'goto', page: 'consent', requestId: t.journey.requestId });
    expect((await t.journey.record()).status).toBe('consent_required');
  });
});

describe('submitConsent: cancel', () => {
  it('access_denied back to Acme with state and iss; nothing approved', async () => {
    const t = await atConsent();
    t.clock.advance(3);
    expect(redirectParams(await submitConsent(t.journey.context, { action: 'cancel' }, t.deps))).toEqual({
      error: 'access_denied',
      error_description: 'the customer cancelled',
      state: 'xyz',
      iss: ISSUER,
    });
    expect(await t.journey.record()).toMatchObject({ status: 'cancelled', completedAt: T0 + 3 });
    expect(await t.storage.consents.listConsents(t.customer.profileId)).toEqual([]);
    expect(await t.pressApprove()).toEqual({ kind: 'dead_end', reason: 'finished' });
    // The session itself goes on.
    expect(await t.start({ user_id: MOBILE }, { sessionId: t.sessionId })).toMatchObject({ kind: 'goto', page: 'consent' });
  });
});
