import { describe, expect, it } from 'vitest';
import { s256Challenge } from '../../../src/core/authorize/pkce.js';
import { verifyPin as verifyCustomerPin } from '../../../src/core/customers/pin.js';
import { hashCode } from '../../../src/core/codes/authorization-code.js';
import { showOtp, submitOtp } from '../../../src/core/journey/steps/otp.js';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { submitRegistration } from '../../../src/core/journey/steps/register.js';
import { smsDown } from '../otp/otp-fixtures.js';
import {
  ACME,
  ADDRESS,
  expectKind,
  ISSUER,
  journeySetup,
  MASKED,
  MOBILE,
  OTHER_MOBILE,
  otherCode,
  PIN,
  redirectParams,
  REDIRECT,
  T0,
  type JourneyOptions,
  type JourneyTest,
  type Started,
} from './fixtures.js';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

/** A login journey of the customer of {@link MOBILE} on its one-time-PIN page: the code was sent at T0. */
async function atOtp(options: JourneyOptions & { query?: Record<string, string>; sessionId?: (t: JourneyTest) => Promise<string> } = {}) {
  const t = await journeySetup(options);
  const customer = await t.addCustomer();
  const sessionId = options.sessionId ? await options.sessionId(t) : undefined;
  const journey = await t.begin(options.query, sessionId ? { sessionId } : {});
  const code = await t.toOtp(journey);
  const enter = (otp: string) => submitOtp(journey.context, { otp }, t.deps);
  const resend = () => submitOtp(journey.context, { action: 'resend' }, t.deps);
  const challenge = async () => {
    const latest = await t.storage.otpChallenges.findLatestOtpChallenge(journey.idHash);
    if (!latest) throw new Error('no challenge');
    return latest;
  };
  return { ...t, customer, journey, code, enter, resend, challenge };
}

/** A registration journey for {@link MOBILE} on its one-time-PIN page. */
async function atRegistrationOtp(options: JourneyOptions = {}) {
  const t = await journeySetup(options);
  const journey = await t.begin({ user_id: MOBILE });
  expect(await submitRegistration(journey.context, { pin: PIN, pinConfirmation: PIN }, t.deps)).toMatchObject({ kind: 'goto', page: 'otp' });
  return { ...t, journey, code: t.sms.lastCode(), enter: (otp: string) => submitOtp(journey.context, { otp }, t.deps) };
}

const view = (journey: Started) => ({ requestId: journey.requestId, clientName: ACME.name, redirectUri: REDIRECT, fixedMobile: null, uiLocale: null, requiresPhr: false });

/** Nothing of a completion was written: the challenge is unused, the journey where it was, no approval, no session of the customer. */
async function expectNotCompleted(t: JourneyTest, journey: Started, status: string, profileId: string | undefined, rightCodeEntered = false): Promise<void> {
  const challenge = await t.storage.otpChallenges.findLatestOtpChallenge(journey.idHash);
  // A right code that cannot complete the sign-in leaves the challenge as it was, but for its count.
  expect(challenge?.consumedAt).toBeNull();
  if (rightCodeEntered) expect(challenge?.attempts).toBeGreaterThan(0);
  expect(await journey.record()).toMatchObject({ status, completedAt: null });
  if (profileId) expect(await t.storage.consents.listConsents(profileId)).toEqual([]);
}

describe('showOtp', () => {
  it('shows the masked mobile, when a new code may be sent and how many are left', async () => {
    const t = await atOtp();
    const resendAt = t.clock.nowSeconds() + 30;
    expect(await showOtp(t.journey.context, t.deps)).toEqual({
      kind: 'otp',
      journey: view(t.journey),
      otp: { maskedMobile: MASKED, resendInSeconds: 30, resendAt, mobileCountry: 'PH', resendsLeft: 3 },
    });
    t.clock.advance(10);
    expect(await showOtp(t.journey.context, t.deps)).toMatchObject({ otp: { resendInSeconds: 20, resendAt } });
    t.clock.advance(25);
    expect(await showOtp(t.journey.context, t.deps)).toMatchObject({ otp: { resendInSeconds: 0, resendAt } });
  });

  it('before the PIN is verified: the login page', async () => {
    const t = await journeySetup();
    const journey = await t.begin();
    expect(await showOtp(journey.context, t.deps)).toEqual({ kind: 'goto', page: 'login', requestId: journey.requestId });
    expect(await submitOtp(journey.context, { otp: '123456' }, t.deps)).toEqual({ kind: 'goto', page: 'login', requestId: journey.requestId });
  });
});

describe('submitOtp: the right code', () => {
  it('completes the login in one go: code issued, new session, the browser\'s previous one ended, Acme approved', async () => {
    const challenge = s256Challenge(VERIFIER);
    const t = await atOtp({
      query: { user_id: MOBILE, code_challenge: challenge, code_challenge_method: 'S256' },
      // The browser still holds the session of another customer.
      sessionId: async (setup) => setup.session((await setup.addCustomer(OTHER_MOBILE)).profileId),
    });
    const previous = t.journey.context.sessionId ?? '';
    t.clock.advance(20);
    const now = T0 + 20;
    const result = expectKind(await t.enter(t.code), 'redirect');

    const params = redirectParams(result);
    expect(Object.keys(params)).toEqual(['code', 'state', 'userId', 'profileId', 'iss']);
    expect(params).toMatchObject({ state: 'xyz', userId: MASKED, profileId: t.customer.profileId, iss: ISSUER });
    expect(await t.storage.codes.findAuthorizationCode(hashCode(params.code ?? ''))).toEqual({
      codeHash: hashCode(params.code ?? ''),
      clientId: ACME.id,
      redirectUri: REDIRECT,
      profileId: t.customer.profileId,
      codeChallenge: challenge,
      createdAt: now,
      expiresAt: now + 300,
      consumedAt: null,
      scopes: [],
      // PIN + SMS, completed now.
      authentication: { acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], authTime: now },
    });
    expect(await t.journey.record()).toMatchObject({ status: 'code_issued', completedAt: now, profileId: t.customer.profileId });
    expect((await t.challenge()).consumedAt).toBe(now);

    expect(result.session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(result.session).not.toBe(previous);
    expect(await t.storage.customerSessions.findCustomerSession(hashCookieValue(result.session ?? ''))).toEqual({
      idHash: hashCookieValue(result.session ?? ''),
      profileId: t.customer.profileId,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + 43_200,
      endedAt: null,
      authentication: { acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], authTime: now },
    });
    expect((await t.storage.customerSessions.findCustomerSession(hashCookieValue(previous)))?.endedAt).toBe(now);
    expect(await t.storage.consents.findConsent(t.customer.profileId, ACME.id)).toEqual({ profileId: t.customer.profileId, clientId: ACME.id, approvedAt: now });

    // The journey is over; the new session signs in to Acme silently.
    expect(await t.enter(t.code)).toEqual({ kind: 'dead_end', reason: 'finished' });
    expect(redirectParams(await t.start({ prompt: 'none' }, { sessionId: result.session })).profileId).toBe(t.customer.profileId);
  });

  it('is accepted with spaces around it, 299 s after it was sent', async () => {
    const t = await atOtp();
    t.clock.set(T0 + 299);
    expect((await t.enter(` ${t.code} `)).kind).toBe('redirect');
  });

  it('of a registration: creates the account with the chosen PIN, approved for Acme', async () => {
    const t = await atRegistrationOtp();
    t.clock.advance(5);
    const params = redirectParams(await t.enter(t.code));
    const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
    expect(customer).toMatchObject({ status: 'active', pinAttempts: 0, lockedUntil: null, createdAt: T0 + 5, name: null });
    expect(customer?.profileId).toMatch(/^[1-9]\d{11}$/);
    expect(params.profileId).toBe(customer?.profileId);
    expect(params.userId).toBe(MASKED);
    expect(await verifyCustomerPin(PIN, customer?.pinHash ?? '')).toBe(true);
    expect(await t.storage.consents.findConsent(customer?.profileId ?? '', ACME.id)).toBeDefined();
    expect(await t.journey.record()).toMatchObject({ status: 'code_issued' });
  });

  it('is accepted once of two submitted at once', async () => {
    const t = await atOtp();
    const results = await Promise.all([t.enter(t.code), t.enter(t.code)]);
    expect(results.filter((result) => result.kind === 'redirect')).toHaveLength(1);
    expect(results.filter((result) => result.kind !== 'redirect')).toEqual([{ kind: 'dead_end', reason: 'finished' }]);
  });

  it('after the journey was cancelled in another tab: a dead end, nothing signed in', async () => {
    const t = await atOtp();
    expect((await submitOtp(t.journey.context, { action: 'cancel' }, t.deps)).kind).toBe('redirect');
    expect(await t.enter(t.code)).toEqual({ kind: 'dead_end', reason: 'finished' });
    await expect(t.journey.record()).resolves.toMatchObject({ status: 'cancelled' });
    expect((await t.challenge()).consumedAt).toBeNull();
    expect(await t.storage.consents.listConsents(t.customer.profileId)).toEqual([]);
  });

  it('while another tab cancels the journey after its page was opened: nothing signed in, only the entry counted', async () => {
    let cancelMeanwhile: (() => Promise<unknown>) | undefined;
    const t = await atOtp({
      // The other tab's cancel lands after this submit opened the journey, just before its entry is made.
      wrapDb: (db) => ({
        ...db,
        signIns: {
          ...db.signIns,
          async enterOtp(entry) {
            const cancel = cancelMeanwhile;
            cancelMeanwhile = undefined;
            await cancel?.();
            return db.signIns.enterOtp(entry);
          },
        },
      }),
      query: { user_id: MOBILE },
      sessionId: async (setup) => setup.session((await setup.addCustomer(OTHER_MOBILE)).profileId),
    });
    cancelMeanwhile = () => submitOtp(t.journey.context, { action: 'cancel' }, t.deps);
    const previous = t.journey.context.sessionId ?? '';
    expect(await t.enter(t.code)).toEqual({ kind: 'dead_end', reason: 'finished' });
    expect(await t.journey.record()).toMatchObject({ status: 'cancelled' });
    // Only the entry counted; no approval, the previous session untouched.
    expect(await t.challenge()).toMatchObject({ consumedAt: null, attempts: 1 });
    expect(await t.storage.consents.listConsents(t.customer.profileId)).toEqual([]);
    expect((await t.storage.customerSessions.findCustomerSession(hashCookieValue(previous)))?.endedAt).toBeNull();
  });

  it('of a registration whose mobile was registered meanwhile: the registration page, nothing written', async () => {
    const t = await atRegistrationOtp();
    const other = await t.addCustomer(MOBILE, '5555');
    expect(await t.enter(t.code)).toEqual({
      kind: 'register',
      journey: { ...view(t.journey), fixedMobile: MOBILE },
      mobile: MOBILE,
      problem: { code: 'mobile_taken', field: 'mobile' },
    });
    await expectNotCompleted(t, t.journey, 'otp_sent', other.profileId, true);
    expect((await t.storage.customers.listCustomers()).map((customer) => customer.profileId)).toEqual([other.profileId]);
  });

  it('of a customer locked meanwhile: a dead end, nothing written', async () => {
    const t = await atOtp();
    await t.storage.customers.updateCustomer(t.customer.profileId, { status: 'locked' }, T0);
    expect(await t.enter(t.code)).toEqual({ kind: 'dead_end', reason: 'account_unavailable', clientName: 'Acme Shop' });
    await expectNotCompleted(t, t.journey, 'otp_sent', t.customer.profileId, true);
  });
});

describe('submitOtp: wrong, malformed and expired codes', () => {
  it('counts wrong codes down; the 5th ends the challenge (audited once) and then even the right code fails', async () => {
    const t = await atOtp();
    const wrong = otherCode(t.code);
    for (const attemptsLeft of [4, 3, 2, 1]) {
      expect(await t.enter(wrong)).toEqual({
        kind: 'otp',
        journey: view(t.journey),
        otp: { maskedMobile: MASKED, resendInSeconds: 30, resendAt: expect.any(Number), mobileCountry: 'PH', resendsLeft: 3 },
        problem: { code: 'otp_wrong', field: 'otp', attemptsLeft },
      });
    }
    expect(await t.enter(wrong)).toMatchObject({ kind: 'otp', problem: { code: 'otp_exhausted', field: 'otp' } });
    expect(await t.enter(t.code)).toMatchObject({ kind: 'otp', problem: { code: 'otp_exhausted', field: 'otp' } });
    const audits = await t.audits('otp.exhausted');
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ actor: `ip:${ADDRESS.ip}`, subject: t.customer.profileId, outcome: 'failure', details: { client_id: ACME.id, purpose: 'login' } });
    await expectNotCompleted(t, t.journey, 'otp_sent', t.customer.profileId);
  });

  it('the right code after 4 wrong ones still completes', async () => {
    const t = await atOtp();
    for (let i = 0; i < 4; i++) await t.enter(otherCode(t.code));
    expect((await t.enter(t.code)).kind).toBe('redirect');
  });

  it('a registration\'s exhausted challenge is audited under the masked mobile', async () => {
    const t = await atRegistrationOtp();
    for (let i = 0; i < 5; i++) await t.enter(otherCode(t.code));
    expect(await t.audits('otp.exhausted')).toMatchObject([{ subject: MASKED, details: { purpose: 'register' } }]);
  });

  it.each([['12345'], ['1234567'], ['abcdef'], [''], ['12 345'], ['１２３４５６']])('%j is malformed and does not spend an entry', async (otp) => {
    const t = await atOtp();
    for (let i = 0; i < 6; i++) expect(await t.enter(otp)).toMatchObject({ kind: 'otp', problem: { code: 'otp_format', field: 'otp' } });
    expect((await t.challenge()).attempts).toBe(0);
    expect((await t.enter(t.code)).kind).toBe('redirect');
  });

  it('no code posted is malformed', async () => {
    const t = await atOtp();
    expect(await submitOtp(t.journey.context, {}, t.deps)).toMatchObject({ kind: 'otp', problem: { code: 'otp_format' } });
  });

  it.each([300, 301, 899])('the right code %i s after it was sent has expired', async (after) => {
    const t = await atOtp();
    t.clock.set(T0 + after);
    expect(await t.enter(t.code)).toMatchObject({ kind: 'otp', problem: { code: 'otp_expired', field: 'otp' } });
    await expectNotCompleted(t, t.journey, 'otp_sent', t.customer.profileId);
  });
});

describe('submitOtp: wrong entries per mobile, over all its codes', () => {
  it('after 10 wrong entries within the hour, no entry is checked, even the right code of a new challenge; an hour on it is', async () => {
    const t = await atOtp();
    // Two challenges used up: 10 wrong entries.
    for (let round = 0; round < 2; round++) {
      if (round > 0) {
        t.clock.advance(30);
        expect(await t.resend()).toMatchObject({ kind: 'otp', notice: 'code_sent' });
      }
      const code = t.sms.lastCode();
      for (let i = 0; i < 5; i++) await t.enter(otherCode(code));
      expect((await t.challenge()).attempts).toBe(5);
    }
    t.clock.advance(30);
    expect(await t.resend()).toMatchObject({ kind: 'otp', notice: 'code_sent' });
    const fresh = await t.challenge();
    const refused = await t.enter(t.sms.lastCode());
    expect(refused).toMatchObject({ kind: 'otp', problem: { code: 'otp_too_many', field: 'otp' } });
    expect((refused as { problem: { retryAfterSeconds: number } }).problem.retryAfterSeconds).toBeGreaterThan(3500);
    // Nothing was checked: the new challenge's entries are untouched.
    expect((await t.challenge()).attempts).toBe(0);
    expect((await t.challenge()).id).toBe(fresh.id);

    // An hour on (that journey has long expired), a new sign-in's code is checked again.
    t.clock.set(T0 + 60 + 3600);
    const again = await t.begin();
    const code = await t.toOtp(again);
    expect((await submitOtp(again.context, { otp: code }, t.deps)).kind).toBe('redirect');
  });

  it('right and malformed entries do not count', async () => {
    const t = await atOtp();
    for (let i = 0; i < 12; i++) await t.enter('12');
    for (let i = 0; i < 4; i++) await t.enter(otherCode(t.code));
    expect((await t.enter(t.code)).kind).toBe('redirect');
  });
});

describe('submitOtp: send a new code', () => {
  it('not before 30 s, with the seconds left', async () => {
    const t = await atOtp();
    expect(await t.resend()).toMatchObject({ kind: 'otp', problem: { code: 'sms_too_soon', retryAfterSeconds: 30 } });
    t.clock.set(T0 + 29);
    expect(await t.resend()).toMatchObject({ kind: 'otp', problem: { code: 'sms_too_soon', retryAfterSeconds: 1 } });
    expect(t.sms.messages).toHaveLength(1);
  });

  it('at 30 s: a new code replaces the old one, valid 300 s from its own send', async () => {
    const t = await atOtp();
    t.clock.set(T0 + 30);
    expect(await t.resend()).toEqual({ kind: 'otp', journey: view(t.journey), otp: { maskedMobile: MASKED, resendInSeconds: 30, resendAt: expect.any(Number), mobileCountry: 'PH', resendsLeft: 2 }, notice: 'code_sent' });
    expect(t.sms.messages.map((message) => message.to)).toEqual([MOBILE, MOBILE]);
    const fresh = t.sms.lastCode();
    if (fresh !== t.code) expect(await t.enter(t.code)).toMatchObject({ problem: { code: 'otp_wrong' } });
    t.clock.set(T0 + 330);
    expect(await t.enter(fresh)).toMatchObject({ problem: { code: 'otp_expired' } });
    t.clock.set(T0 + 329);
    expect((await t.enter(fresh)).kind).toBe('redirect');
  });

  it('3 times, 30 s apart; then no more', async () => {
    const t = await atOtp();
    for (const [at, resendsLeft] of [
      [30, 2],
      [60, 1],
      [90, 0],
    ] as const) {
      t.clock.set(T0 + at);
      expect(await t.resend(), `at ${at}`).toMatchObject({ notice: 'code_sent', otp: { resendsLeft } });
    }
    t.clock.set(T0 + 120);
    expect(await t.resend()).toMatchObject({ kind: 'otp', otp: { resendsLeft: 0 }, problem: { code: 'sms_no_more_resends' } });
    expect(t.sms.messages).toHaveLength(4);
    expect((await t.enter(t.sms.lastCode())).kind).toBe('redirect');
  });

  it('wrong entries keep counting across a new code', async () => {
    const t = await atOtp();
    for (let i = 0; i < 4; i++) await t.enter(otherCode(t.code));
    t.clock.set(T0 + 30);
    await t.resend();
    expect(await t.enter(otherCode(t.sms.lastCode()))).toMatchObject({ problem: { code: 'otp_exhausted' } });
  });

  it('an ended challenge (used up) is replaced at once by a new one', async () => {
    const t = await atOtp();
    for (let i = 0; i < 5; i++) await t.enter(otherCode(t.code));
    const ended = await t.challenge();
    t.clock.advance(1);
    expect(await t.resend()).toMatchObject({ kind: 'otp', notice: 'code_sent', otp: { resendsLeft: 3, resendInSeconds: 30 } });
    const replacement = await t.challenge();
    expect(replacement.id).not.toBe(ended.id);
    expect(replacement).toMatchObject({ purpose: 'login', mobile: MOBILE, profileId: t.customer.profileId, attempts: 0, resends: 0, consumedAt: null });
    expect((await t.enter(t.sms.lastCode())).kind).toBe('redirect');
  });

  it('an expired challenge is replaced by a new one', async () => {
    const t = await atOtp();
    t.clock.set(T0 + 300);
    expect(await t.resend()).toMatchObject({ notice: 'code_sent' });
    t.clock.set(T0 + 599);
    expect((await t.enter(t.sms.lastCode())).kind).toBe('redirect');
  });

  it('within the send limits: a refused new code keeps the current one', async () => {
    const t = await atOtp({ budgets: { smsLimitPerMobile: 1 } });
    t.clock.set(T0 + 30);
    expect(await t.resend()).toMatchObject({ kind: 'otp', problem: { code: 'sms_rate_limited', retryAfterSeconds: 870 } });
    expect(t.sms.messages).toHaveLength(1);
    expect((await t.enter(t.code)).kind).toBe('redirect');
  });

  it('within the send limits: an ended challenge is not replaced past them', async () => {
    const t = await atOtp({ budgets: { smsLimitPerMobile: 1 } });
    for (let i = 0; i < 5; i++) await t.enter(otherCode(t.code));
    expect(await t.resend()).toMatchObject({ kind: 'otp', problem: { code: 'sms_rate_limited' } });
    expect(t.sms.messages).toHaveLength(1);
  });

  it('the gateway fails: sms_unavailable', async () => {
    const t = await atOtp();
    t.sms.failWith = smsDown();
    t.clock.set(T0 + 30);
    expect(await t.resend()).toMatchObject({ kind: 'otp', problem: { code: 'sms_unavailable' } });
  });
});
