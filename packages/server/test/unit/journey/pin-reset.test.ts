import { describe, expect, it } from 'vitest';
import { verifyPin as verifyCustomerPin } from '../../../src/core/customers/pin.js';
import { showReset, submitReset } from '../../../src/core/journey/steps/reset.js';
import { showResetOtp, submitResetOtp } from '../../../src/core/journey/steps/reset-otp.js';
import { knownDeviceOf } from '../../../src/core/journey/known-device.js';
import { showNewPin, submitNewPin, type NewPinForm } from '../../../src/core/journey/steps/new-pin.js';
import { showOtp, submitOtp } from '../../../src/core/journey/steps/otp.js';
import { RESET_PROVES_PHONE_SECONDS } from '../../../src/core/lifetimes.js';
import type { StepResult } from '../../../src/core/journey/outcomes.js';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { showLogin, submitLogin } from '../../../src/core/journey/steps/login.js';
import { smsDown } from '../otp/otp-fixtures.js';
import {
  ACME,
  expectKind,
  journeySetup,
  MASKED,
  MOBILE,
  OTHER_MOBILE,
  otherCode,
  PIN,
  redirectParams,
  T0,
  type JourneyOptions,
  type JourneyTest,
  type Started,
} from './fixtures.js';

/** A PIN the rules let a customer choose, other than {@link PIN}. */
const NEW_PIN = '5930';

const view = (journey: Started, fixedMobile: string | null = null) => ({
  requestId: journey.requestId,
  clientName: ACME.name,
  redirectUri: 'https://acme.example/cb',
  fixedMobile,
  uiLocale: null,
  requiresPhr: false,
});

interface ResetTest extends JourneyTest {
  readonly journey: Started;
  /** `POST /login/reset` with `mobile`. */
  ask(mobile?: string): Promise<StepResult>;
  enter(otp: string): Promise<StepResult>;
  resend(): Promise<StepResult>;
  choose(form: NewPinForm): Promise<StepResult>;
}

/** A journey on its login page; the customer of {@link MOBILE} exists unless `customer: false`. */
async function resetSetup(options: JourneyOptions & { customer?: boolean; query?: Record<string, string> } = {}): Promise<ResetTest> {
  const t = await journeySetup(options);
  if (options.customer !== false) await t.addCustomer();
  const journey = await t.begin(options.query);
  return {
    ...t,
    journey,
    ask: (mobile = MOBILE) => submitReset(journey.context, { mobile }, t.deps),
    enter: (otp) => submitResetOtp(journey.context, { otp }, t.deps),
    resend: () => submitResetOtp(journey.context, { action: 'resend' }, t.deps),
    choose: (form) => submitNewPin(journey.context, form, t.deps),
  };
}

/** A reset asked for {@link MOBILE} at T0: its code. */
async function atResetOtp(options: JourneyOptions = {}): Promise<ResetTest & { code: string }> {
  const t = await resetSetup(options);
  expect(await t.ask()).toEqual({ kind: 'goto', page: 'reset_otp', requestId: t.journey.requestId });
  return { ...t, code: t.sms.lastCode() };
}

/** A reset whose code was right at T0: on the new PIN's page. */
async function atNewPin(options: JourneyOptions = {}): Promise<ResetTest & { code: string }> {
  const t = await atResetOtp(options);
  expect(await t.enter(t.code)).toEqual({ kind: 'goto', page: 'new_pin', requestId: t.journey.requestId });
  return t;
}

const challengeOf = (t: ResetTest) => t.storage.otpChallenges.findLatestOtpChallenge(t.journey.idHash);

describe('showReset and submitReset', () => {
  it('the reset page from the login page, and back; the journey is kept', async () => {
    const t = await resetSetup();
    expect(await showReset(t.journey.context, t.deps)).toEqual({ kind: 'reset', journey: view(t.journey) });
    expect(await t.ask()).toMatchObject({ kind: 'goto', page: 'reset_otp' });
    // The login page stays open (the customer remembered the PIN).
    expect(await showLogin(t.journey.context, t.deps)).toEqual({ kind: 'login', journey: view(t.journey) });
  });

  it('a registered mobile: a reset challenge of the customer is stored with the move, and its code texted as a reset code', async () => {
    const t = await resetSetup();
    const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
    expect(await t.ask('+63 917 123 4567')).toEqual({ kind: 'goto', page: 'reset_otp', requestId: t.journey.requestId });
    expect(await t.journey.record()).toMatchObject({ status: 'reset_otp_sent', profileId: null });
    expect(await challengeOf(t)).toMatchObject({ purpose: 'reset', mobile: MOBILE, profileId: customer?.profileId, attempts: 0, expiresAt: T0 + 300, consumedAt: null });
    expect(t.sms.messages).toHaveLength(1);
    expect(t.sms.messages[0]?.to).toBe(MOBILE);
    expect(t.sms.messages[0]?.body).toMatch(/^\d{6} is your Connect code to reset your PIN\. It expires in 5 minutes\./);
    expect(await showResetOtp(t.journey.context, t.deps)).toEqual({
      kind: 'reset_otp',
      journey: view(t.journey),
      otp: { maskedMobile: MASKED, resendInSeconds: 30, resendAt: expect.any(Number), mobileCountry: 'PH', resendsLeft: 3 },
    });
  });

  it.each([
    ['has no account', async (_t: ResetTest) => {}],
    ['is locked by an operator', async (t: ResetTest) => void (await t.addCustomer())],
  ])('a mobile that %s: the same answers, no SMS, and a challenge nothing can answer', async (_what, arrange) => {
    const registered = await resetSetup();
    const other = await resetSetup({ customer: false });
    await arrange(other);
    const locked = await other.storage.customers.findCustomerByMobile(MOBILE);
    if (locked) await other.storage.customers.lockCustomer(locked.profileId, T0);

    const answers = async (t: ResetTest) => ({
      asked: await t.ask(),
      shown: await showResetOtp(t.journey.context, t.deps),
      wrong: await t.enter('000000'),
      record: await t.journey.record(),
    });
    const a = await answers(registered);
    const b = await answers(other);
    const sameIds = (value: unknown, t: ResetTest) => JSON.parse(JSON.stringify(value).replaceAll(t.journey.requestId, 'ID').replaceAll(t.journey.idHash, 'HASH'));
    expect(sameIds(b, other)).toEqual(sameIds(a, registered));
    expect(other.sms.messages).toEqual([]);
    expect(await challengeOf(other)).toMatchObject({ purpose: 'reset', mobile: MOBILE, profileId: null, attempts: 1 });
  });

  it('a customer whose PIN login is locked by wrong PINs gets the code: the reset is the way out', async () => {
    const t = await resetSetup();
    const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
    await t.storage.customers.updateCustomer(customer?.profileId ?? '', { pinAttempts: 5, lockedUntil: T0 + 900 }, T0);
    await t.ask();
    expect(t.sms.messages).toHaveLength(1);
  });

  it('refuses what is not a mobile, or one codes cannot go to, on the form; nothing taken or stored', async () => {
    const t = await resetSetup({ budgets: { smsLimitPerMobile: 1 } });
    expect(await t.ask('0917 123')).toEqual({ kind: 'reset', journey: view(t.journey), mobile: '0917 123', problem: { code: 'mobile_invalid', field: 'mobile' } });
    const philippinesOnly = { ...t.deps, smsCountries: ['PH'] };
    expect(await submitReset(t.journey.context, { mobile: '+6591234567' }, philippinesOnly)).toMatchObject({ kind: 'reset', problem: { code: 'mobile_country' } });
    expect(await challengeOf(t)).toBeUndefined();
    expect((await t.journey.record()).status).toBe('pending');
    // The budget is still whole.
    expect(await t.ask()).toMatchObject({ kind: 'goto', page: 'reset_otp' });
  });

  it('with user_id naming an account: that mobile, fixed, whatever is posted', async () => {
    const t = await resetSetup({ query: { user_id: MOBILE } });
    expect(await showReset(t.journey.context, t.deps)).toEqual({ kind: 'reset', journey: view(t.journey, MOBILE) });
    await t.ask(OTHER_MOBILE);
    expect(t.sms.messages.map((m) => m.to)).toEqual([MOBILE]);
  });

  it('with user_id naming no account: the registration page, nothing stored', async () => {
    const t = await resetSetup({ customer: false, query: { user_id: OTHER_MOBILE } });
    expect(await showReset(t.journey.context, t.deps)).toEqual({ kind: 'goto', page: 'register', requestId: t.journey.requestId });
    expect(await t.ask(OTHER_MOBILE)).toEqual({ kind: 'goto', page: 'register', requestId: t.journey.requestId });
    expect(await challengeOf(t)).toBeUndefined();
  });

  it('the per-mobile budget counts resets of every mobile alike: the same refusal, registered or not', async () => {
    const registered = await resetSetup({ budgets: { smsLimitPerMobile: 2 } });
    const unregistered = await resetSetup({ customer: false, budgets: { smsLimitPerMobile: 2 } });
    for (const t of [registered, unregistered]) {
      await t.ask();
      await t.ask();
      expect(await t.ask()).toEqual({ kind: 'reset', journey: view(t.journey), mobile: MOBILE, problem: { code: 'sms_rate_limited', retryAfterSeconds: 900, limit: 'sms_per_mobile' } });
    }
    expect(registered.sms.messages).toHaveLength(2);
    expect(unregistered.sms.messages).toHaveLength(0);
  });

  it('the per-address budget too', async () => {
    const t = await resetSetup({ budgets: { smsLimitPerAddress: 1 } });
    await t.ask();
    expect(await t.ask(OTHER_MOBILE)).toMatchObject({ kind: 'reset', problem: { code: 'sms_rate_limited', retryAfterSeconds: 3600 } });
  });

  it('cancel: access_denied, from the reset page and from the code page', async () => {
    const t = await resetSetup();
    expect(redirectParams(await submitReset(t.journey.context, { action: 'cancel', mobile: MOBILE }, t.deps))).toMatchObject({ error: 'access_denied', state: 'xyz' });
    expect(t.sms.messages).toEqual([]);
    const u = await atResetOtp();
    expect(redirectParams(await submitResetOtp(u.journey.context, { action: 'cancel', otp: u.code }, u.deps))).toMatchObject({ error: 'access_denied' });
    expect((await u.journey.record()).status).toBe('cancelled');
  });
});

describe('the code delivered after the answer', () => {
  it('with later(): the gateway is called only once the step has answered, and its failure changes no answer', async () => {
    const works: Array<() => Promise<void>> = [];
    const t = await resetSetup();
    const deps = { ...t.deps, later: (work: () => Promise<void>) => void works.push(work) };
    expect(await submitReset(t.journey.context, { mobile: MOBILE }, deps)).toMatchObject({ kind: 'goto', page: 'reset_otp' });
    expect(t.sms.messages).toEqual([]);
    t.sms.failWith = smsDown();
    await works.shift()?.();
    expect(t.sms.messages).toHaveLength(1);
    // Audited as any failed send; the challenge stays, as one whose SMS never arrived.
    expect(await t.audits('sms.send_failed')).toHaveLength(1);
    expect(await challengeOf(t)).toMatchObject({ consumedAt: null });
    expect(await showResetOtp(t.journey.context, deps)).toMatchObject({ kind: 'reset_otp' });
    expect(await showResetOtp(t.journey.context, deps)).not.toHaveProperty('problem');
  });

  it('for a mobile without an account there is nothing to do later', async () => {
    const works: Array<() => Promise<void>> = [];
    const t = await resetSetup({ customer: false });
    await submitReset(t.journey.context, { mobile: MOBILE }, { ...t.deps, later: (work) => void works.push(work) });
    expect(works).toEqual([]);
  });
});

describe('submitResetOtp', () => {
  it.each([
    [299, 'verified: the new PIN page'],
    [300, 'expired'],
    [301, 'expired'],
  ] as const)('the right code %i s after it was sent: %s', async (after, _outcome) => {
    const t = await atResetOtp();
    t.clock.advance(after);
    const result = await t.enter(t.code);
    if (after < 300) {
      expect(result).toEqual({ kind: 'goto', page: 'new_pin', requestId: t.journey.requestId });
      const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
      expect(await t.journey.record()).toMatchObject({ status: 'reset_verified', profileId: customer?.profileId });
    } else {
      expect(result).toMatchObject({ kind: 'reset_otp', problem: { code: 'otp_expired', field: 'otp' } });
      expect(await t.journey.record()).toMatchObject({ status: 'reset_otp_sent', profileId: null });
    }
  });

  it('single use: the right code again finds the new PIN page, and counts nothing', async () => {
    const t = await atNewPin();
    expect(await submitResetOtp(t.journey.context, { otp: t.code }, t.deps)).toEqual({ kind: 'goto', page: 'new_pin', requestId: t.journey.requestId });
    expect(await challengeOf(t)).toMatchObject({ attempts: 1 });
  });

  it('5 wrong entries end the challenge (audited once); the right code then fails too', async () => {
    const t = await atResetOtp();
    for (const left of [4, 3, 2, 1]) expect(await t.enter(otherCode(t.code))).toMatchObject({ kind: 'reset_otp', problem: { code: 'otp_wrong', attemptsLeft: left } });
    expect(await t.enter(otherCode(t.code))).toMatchObject({ problem: { code: 'otp_exhausted' } });
    expect(await t.enter(t.code)).toMatchObject({ problem: { code: 'otp_exhausted' } });
    const events = await t.audits('otp.exhausted');
    expect(events).toHaveLength(1);
    expect(events[0]?.details).toMatchObject({ purpose: 'reset' });
    expect((await t.journey.record()).status).toBe('reset_otp_sent');
  });

  it('a malformed code spends no try', async () => {
    const t = await atResetOtp();
    expect(await t.enter('12345')).toMatchObject({ problem: { code: 'otp_format', field: 'otp' } });
    expect(await challengeOf(t)).toMatchObject({ attempts: 0 });
  });

  it('a customer locked by an operator after the code was sent: the right code counts as a wrong one', async () => {
    const t = await atResetOtp();
    const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
    await t.storage.customers.lockCustomer(customer?.profileId ?? '', T0);
    expect(await t.enter(t.code)).toMatchObject({ problem: { code: 'otp_wrong', attemptsLeft: 4 } });
  });

  it('a reset code never signs in: the one-time-PIN page of a login sends it back to the reset', async () => {
    const t = await atResetOtp();
    expect(await showOtp(t.journey.context, t.deps)).toEqual({ kind: 'goto', page: 'reset_otp', requestId: t.journey.requestId });
    expect(await submitOtp(t.journey.context, { otp: t.code }, t.deps)).toEqual({ kind: 'goto', page: 'reset_otp', requestId: t.journey.requestId });
    expect(await challengeOf(t)).toMatchObject({ attempts: 0, consumedAt: null });
  });

  it('"send a new code": not within 30 s; then a new code, the old one no longer right; the same for a mobile without an account, unsent', async () => {
    const t = await atResetOtp();
    const u = await resetSetup({ customer: false });
    await u.ask();
    for (const s of [t, u]) {
      expect(await s.resend()).toMatchObject({ kind: 'reset_otp', problem: { code: 'sms_too_soon', retryAfterSeconds: 30 } });
      s.clock.advance(30);
      expect(await s.resend()).toEqual({ kind: 'reset_otp', journey: view(s.journey), otp: { maskedMobile: MASKED, resendInSeconds: 30, resendAt: expect.any(Number), mobileCountry: 'PH', resendsLeft: 2 }, notice: 'code_sent' });
    }
    expect(t.sms.messages).toHaveLength(2);
    expect(u.sms.messages).toHaveLength(0);
    const fresh = t.sms.lastCode();
    if (fresh !== t.code) expect(await t.enter(t.code)).toMatchObject({ problem: { code: 'otp_wrong' } });
    expect(await t.enter(fresh)).toMatchObject({ kind: 'goto', page: 'new_pin' });
  });

  it('"send a new code" after the challenge ended: a new challenge with its own tries', async () => {
    const t = await atResetOtp();
    for (let i = 0; i < 5; i++) await t.enter(otherCode(t.code));
    expect(await t.resend()).toMatchObject({ kind: 'reset_otp', notice: 'code_sent' });
    expect(await challengeOf(t)).toMatchObject({ purpose: 'reset', attempts: 0 });
    expect(await t.enter(t.sms.lastCode())).toMatchObject({ kind: 'goto', page: 'new_pin' });
  });

  it('10 entries of the right code at once: one verifies, the others find the new PIN page', async () => {
    const t = await atResetOtp();
    const results = await Promise.all(Array.from({ length: 10 }, () => t.enter(t.code)));
    expect(results).toEqual(Array.from({ length: 10 }, () => ({ kind: 'goto', page: 'new_pin', requestId: t.journey.requestId })));
    expect(await challengeOf(t)).toMatchObject({ attempts: 1, consumedAt: T0 });
  });

  it('50 wrong entries at once: 5 are counted, the rest find the challenge used up or the address out of wrong entries', async () => {
    const t = await atResetOtp();
    const results = await Promise.all(Array.from({ length: 50 }, () => t.enter(otherCode(t.code))));
    const codes = results.map((r) => (r.kind === 'reset_otp' ? r.problem?.code : r.kind));
    expect(codes.filter((c) => c === 'otp_wrong')).toHaveLength(4);
    expect(codes.filter((c) => c === 'otp_exhausted').length).toBeGreaterThanOrEqual(1);
    // The address's 10 wrong entries are taken before an entry is compared: past them, none is.
    expect(codes.filter((c) => c !== 'otp_wrong' && c !== 'otp_exhausted').every((c) => c === 'too_many_attempts')).toBe(true);
    expect(await challengeOf(t)).toMatchObject({ attempts: 5, consumedAt: null });
  });
});

describe('showNewPin and submitNewPin', () => {
  it('shows whose PIN it is; the code pages lead there', async () => {
    const t = await atNewPin();
    expect(await showNewPin(t.journey.context, t.deps)).toEqual({ kind: 'new_pin', journey: view(t.journey), maskedMobile: MASKED });
    expect(await showResetOtp(t.journey.context, t.deps)).toEqual({ kind: 'goto', page: 'new_pin', requestId: t.journey.requestId });
  });

  it('before the code was right: the page the journey is on', async () => {
    const t = await atResetOtp();
    expect(await showNewPin(t.journey.context, t.deps)).toEqual({ kind: 'goto', page: 'reset_otp', requestId: t.journey.requestId });
    expect(await t.choose({ pin: NEW_PIN, pinConfirmation: NEW_PIN })).toEqual({ kind: 'goto', page: 'reset_otp', requestId: t.journey.requestId });
    const u = await resetSetup();
    expect(await u.choose({ pin: NEW_PIN, pinConfirmation: NEW_PIN })).toEqual({ kind: 'goto', page: 'login', requestId: u.journey.requestId });
  });

  it.each([
    [{ pin: '12', pinConfirmation: '12' }, { code: 'pin_format', field: 'pin' }],
    [{ pin: '1111', pinConfirmation: '1111' }, { code: 'pin_weak_repeated', field: 'pin' }],
    [{ pin: '9876', pinConfirmation: '9876' }, { code: 'pin_weak_sequence', field: 'pin' }],
    [{ pin: '2580', pinConfirmation: '2580' }, { code: 'pin_weak_common', field: 'pin' }],
    [{ pin: NEW_PIN, pinConfirmation: '5931' }, { code: 'pin_mismatch', field: 'pin_confirmation' }],
  ])('refuses %o with the registration rules: %o, and changes nothing', async (form, problem) => {
    const t = await atNewPin();
    const before = await t.storage.customers.findCustomerByMobile(MOBILE);
    expect(await t.choose(form)).toEqual({ kind: 'new_pin', journey: view(t.journey), maskedMobile: MASKED, problem });
    expect(await t.storage.customers.findCustomerByMobile(MOBILE)).toEqual(before);
    expect((await t.journey.record()).status).toBe('reset_verified');
  });

  it('sets the PIN: counters cleared, every session, code and token session of the customer ended, audited; back to login', async () => {
    const t = await atNewPin();
    const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
    const profileId = customer?.profileId ?? '';
    await t.storage.customers.updateCustomer(profileId, { pinAttempts: 5, lockedUntil: T0 + 900 }, T0);
    const sessionId = await t.session(profileId);
    await t.session(profileId);
    await t.storage.codes.insertAuthorizationCode({ codeHash: 'code-1', clientId: ACME.id, redirectUri: 'https://acme.example/cb', profileId, codeChallenge: null, createdAt: T0, expiresAt: T0 + 300, consumedAt: null, scopes: [], authentication: null });
    await t.storage.tokenSessions.insertTokenSession({
      sid: 'sid-1', clientId: ACME.id, profileId, codeHash: null, refreshJti: 'r', accessJti: 'a', createdAt: T0, refreshExpiresAt: T0 + 604_800, accessExpiresAt: T0 + 3600, revokedAt: null, authentication: null,
    });
    t.clock.advance(10);

    const context = { ...t.journey.context, sessionId, correlationId: 'req-1' };
    const done = await submitNewPin(context, { pin: NEW_PIN, pinConfirmation: NEW_PIN }, t.deps);
    expect(done).toEqual({
      kind: 'goto',
      page: 'login',
      requestId: t.journey.requestId,
      endSession: true,
      knownDevice: expect.any(String),
    });
    // The browser is now a known device of the customer (docs/journey.md, "A stranger cannot lock the owner out").
    // At the customer's new credential version (docs/journey.md, "After a PIN reset").
    const knownDevice = done.kind === 'goto' ? done.knownDevice : undefined;
    const after = await t.storage.customers.findCustomer(profileId);
    expect(after).toMatchObject({ status: 'active', pinAttempts: 0, lockedUntil: null, credentialVersion: (customer?.credentialVersion ?? 0) + 1, updatedAt: T0 + 10 });
    expect(knownDeviceOf(knownDevice, { profileId, credentialVersion: after?.credentialVersion ?? -1 }, T0 + 10, t.deps.knownDeviceKey)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(knownDeviceOf(knownDevice, { profileId, credentialVersion: customer?.credentialVersion ?? -1 }, T0 + 10, t.deps.knownDeviceKey)).toBeUndefined();
    expect(knownDeviceOf(knownDevice, { profileId: 'another-profile', credentialVersion: after?.credentialVersion ?? -1 }, T0 + 10, t.deps.knownDeviceKey)).toBeUndefined();
    expect(await verifyCustomerPin(NEW_PIN, after?.pinHash ?? '')).toBe(true);
    expect(await verifyCustomerPin(PIN, after?.pinHash ?? '')).toBe(false);
    expect((await t.storage.customerSessions.findCustomerSession(hashCookieValue(sessionId)))?.endedAt).toBe(T0 + 10);
    expect((await t.storage.codes.findAuthorizationCode('code-1'))?.expiresAt).toBe(0);
    expect((await t.storage.tokenSessions.findTokenSession('sid-1'))?.revokedAt).toBe(T0 + 10);
    // Approvals stay: the customer is the same, only the PIN changed.
    const events = await t.audits('customer.pin_reset');
    expect(events).toEqual([
      expect.objectContaining({
        actor: 'ip:203.0.113.7',
        subject: profileId,
        outcome: 'success',
        at: T0 + 10,
        requestId: 'req-1',
        details: { client_id: ACME.id, journeys_ended: 0, sessions_ended: 2, codes_ended: 1, token_sessions_revoked: 1 },
      }),
    ]);
    expect(JSON.stringify(events)).not.toContain(NEW_PIN);

    expect(await t.journey.record()).toMatchObject({ status: 'pending', profileId: null });
    // The login page says so, with the mobile prefilled; a replay changes nothing.
    expect(await showLogin(t.journey.context, t.deps)).toEqual({ kind: 'login', journey: view(t.journey), mobile: MOBILE, notice: 'pin_changed' });
    expect(await t.choose({ pin: '6041', pinConfirmation: '6041' })).toEqual({ kind: 'goto', page: 'login', requestId: t.journey.requestId });
    expect(await t.audits('customer.pin_reset')).toHaveLength(1);
    // The new PIN logs in, with no second SMS: the reset's code proved the phone (docs/journey.md, "After a PIN reset").
    const sent = t.sms.messages.length;
    expectKind(await submitLogin(t.journey.context, { mobile: MOBILE, pin: NEW_PIN }, t.deps), 'redirect');
    expect(t.sms.messages).toHaveLength(sent);
  });

  it('accepts the old PIN as the new one: checking it would let the page test guesses of the old PIN', async () => {
    const t = await atNewPin();
    expect(await t.choose({ pin: PIN, pinConfirmation: PIN })).toMatchObject({ kind: 'goto', page: 'login' });
    expect(await t.audits('customer.pin_reset')).toHaveLength(1);
  });

  it.each([
    [299, true],
    [300, false],
    [301, false],
  ] as const)('the new PIN %i s after the right code: accepted %s', async (after, accepted) => {
    const t = await atNewPin();
    t.clock.advance(after);
    if (accepted) {
      expect(await showNewPin(t.journey.context, t.deps)).toMatchObject({ kind: 'new_pin' });
      expect(await t.choose({ pin: NEW_PIN, pinConfirmation: NEW_PIN })).toMatchObject({ kind: 'goto', page: 'login' });
      return;
    }
    const tooLate = { kind: 'reset', journey: view(t.journey), mobile: MOBILE, problem: { code: 'reset_expired' } };
    expect(await showNewPin(t.journey.context, t.deps)).toEqual(tooLate);
    expect(await t.choose({ pin: NEW_PIN, pinConfirmation: NEW_PIN })).toEqual(tooLate);
    expect(await t.audits('customer.pin_reset')).toEqual([]);
    // A new code starts again from the reset page.
    expect(await t.ask()).toMatchObject({ kind: 'goto', page: 'reset_otp' });
  });

  it('a customer locked by an operator meanwhile: a dead end, the PIN unchanged', async () => {
    const t = await atNewPin();
    const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
    await t.storage.customers.lockCustomer(customer?.profileId ?? '', T0);
    expect(await t.choose({ pin: NEW_PIN, pinConfirmation: NEW_PIN })).toEqual({ kind: 'dead_end', reason: 'account_unavailable', clientName: 'Acme Shop' });
    expect((await t.storage.customers.findCustomer(customer?.profileId ?? ''))?.pinHash).toBe(customer?.pinHash);
    expect((await t.journey.record()).status).toBe('reset_verified');
  });

  it('10 new PINs at once: the PIN is set once, the others find the login page', async () => {
    const t = await atNewPin();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => t.choose({ pin: `59${30 + i}`, pinConfirmation: `59${30 + i}` })));
    expect(results.filter((r) => 'endSession' in r && r.endSession)).toHaveLength(1);
    expect(results.every((r) => r.kind === 'goto' && r.page === 'login')).toBe(true);
    expect(await t.audits('customer.pin_reset')).toHaveLength(1);
  });

  it('cancel: access_denied', async () => {
    const t = await atNewPin();
    expect(redirectParams(await t.choose({ action: 'cancel', pin: NEW_PIN, pinConfirmation: NEW_PIN }))).toMatchObject({ error: 'access_denied' });
    expect(await t.audits('customer.pin_reset')).toEqual([]);
  });

  for (const [after, sendsCode] of [
    [RESET_PROVES_PHONE_SECONDS - 1, false],
    [RESET_PROVES_PHONE_SECONDS, true],
    [RESET_PROVES_PHONE_SECONDS + 1, true],
  ] as const) {
    it(`the whole reset, then a login with the new PIN ${after} s after the reset's code: ${sendsCode ? 'a one-time PIN first' : 'no second SMS'}`, async () => {
      const t = await atNewPin();
      const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
      t.clock.advance(10);
      await t.choose({ pin: NEW_PIN, pinConfirmation: NEW_PIN });
      t.clock.advance(after - 10);
      const sent = t.sms.messages.length;
      if (sendsCode) {
        const code = await t.toOtp(t.journey, MOBILE, NEW_PIN);
        const done = expectKind(await submitOtp(t.journey.context, { otp: code }, t.deps), 'redirect');
        expect(redirectParams(done)).toMatchObject({ state: 'xyz', userId: MASKED });
        expect(t.sms.messages).toHaveLength(sent + 1);
        return;
      }
      const done = expectKind(await submitLogin(t.journey.context, { mobile: MOBILE, pin: NEW_PIN }, t.deps), 'redirect');
      expect(redirectParams(done)).toMatchObject({ state: 'xyz', userId: MASKED, profileId: customer?.profileId });
      expect(done.session).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const now = await t.storage.customers.findCustomer(customer?.profileId ?? '');
      expect(knownDeviceOf(done.knownDevice, { profileId: now?.profileId ?? '', credentialVersion: now?.credentialVersion ?? -1 }, t.clock.nowSeconds(), t.deps.knownDeviceKey)).toBeDefined();
      expect(t.sms.messages).toHaveLength(sent);
      expect(await t.journey.record()).toMatchObject({ status: 'code_issued', profileId: customer?.profileId });
      // The PIN's count was lifted, and the journey is over: a replay finds it finished.
      expect(await t.storage.customers.findCustomer(customer?.profileId ?? '')).toMatchObject({ pinAttempts: 0 });
      expect(await submitLogin(t.journey.context, { mobile: MOBILE, pin: NEW_PIN }, t.deps)).toMatchObject({ kind: 'dead_end', reason: 'finished' });
    });
  }

  it("after a reset, another customer's login in the same journey gets its own one-time PIN; a wrong PIN signs nobody in", async () => {
    const t = await atNewPin();
    await t.addCustomer(OTHER_MOBILE);
    await t.choose({ pin: NEW_PIN, pinConfirmation: NEW_PIN });
    expect(await submitLogin(t.journey.context, { mobile: MOBILE, pin: PIN }, t.deps)).toMatchObject({ kind: 'login', problem: { code: 'credentials_wrong' } });
    expect(await t.toOtp(t.journey, OTHER_MOBILE, PIN)).toMatch(/^\d{6}$/);
  });
});
