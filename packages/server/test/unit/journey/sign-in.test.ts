import type { ClientAddress } from '../../../src/core/client-address.js';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { TemporarilyUnavailable } from '../../../src/core/errors.js';
import * as pin from '../../../src/core/customers/pin.js';
import { testPinCheckQueue } from '../../helpers/pin-checks.js';
import { showOtp, submitOtp } from '../../../src/core/journey/steps/otp.js';
import { showLogin, submitLogin } from '../../../src/core/journey/steps/login.js';
import { showRegistration, submitRegistration } from '../../../src/core/journey/steps/register.js';
import type { SendLimiter } from '../../../src/core/limits/send-limiter.js';
import { smsDown } from '../otp/otp-fixtures.js';
import {
  ACME,
  ADDRESS,
  expectKind,
  journeySetup,
  MASKED,
  MOBILE,
  OTHER_ADDRESS,
  OTHER_MOBILE,
  PIN,
  REDIRECT,
  T0,
  WRONG_PIN,
  type JourneyOptions,
  type JourneyTest,
  type Started,
} from './fixtures.js';

// The real PIN hashing, watched: how many PINs were compared with a stored hash.
const pinComparisons = vi.fn<(pin: string, stored: string) => void>();
beforeEach(() => {
  pinComparisons.mockClear();
});

/** Hashing that tells {@link pinComparisons} of each comparison. */
const watched =
  <T>(work: (pins: pin.PinHashing) => Promise<T>) =>
  (pins: pin.PinHashing) =>
    work({ hash: pins.hash, verify: (given, stored) => (pinComparisons(given, stored), pins.verify(given, stored)) });

/** The server's PIN-check queue, its comparisons counted in {@link pinComparisons}. */
function watchedQueue(): pin.PinCheckQueue {
  const queue = testPinCheckQueue();
  return {
    run: (work) => queue.run(watched(work)),
    reserve() {
      const place = queue.reserve();
      return { run: (work) => place.run(watched(work)), release: place.release };
    },
    close: queue.close,
  };
}

/** A journey of Acme (with `query` on top) and, unless told otherwise, the customer of {@link MOBILE}. */
async function setup(options: JourneyOptions & { query?: Record<string, string>; customer?: boolean } = {}) {
  const t = await journeySetup({ pinChecks: watchedQueue(), ...options });
  const account = options.customer === false ? undefined : await t.addCustomer();
  const journey = await t.begin(options.query);
  return { ...t, account, journey };
}

const view = (journey: Started, fixedMobile: string | null = null) => ({ requestId: journey.requestId, clientName: ACME.name, redirectUri: REDIRECT, fixedMobile, uiLocale: null, requiresPhr: false });

/** The journey, its challenges, the SMS and the customer's count, as they were before a refused step. */
async function expectNothingHappened(t: JourneyTest, journey: Started, pinAttempts = 0): Promise<void> {
  expect(await journey.record()).toMatchObject({ status: 'pending', profileId: null });
  expect(await t.storage.otpChallenges.findLatestOtpChallenge(journey.idHash)).toBeUndefined();
  expect(t.sms.messages).toEqual([]);
  const customer = await t.storage.customers.findCustomerByMobile(MOBILE);
  if (customer) expect(customer.pinAttempts).toBe(pinAttempts);
}

/** A PIN-check queue that is full: one check runs until `release()`, none may wait. */
function fullQueue() {
  const queue = testPinCheckQueue({ concurrency: 1, queueLimit: 0 });
  let release: () => void = () => {};
  const running = queue.run(() => new Promise<void>((resolve) => (release = resolve)));
  return { queue, release: () => (release(), running) };
}

/** The one `customer.pin_lockout` row: the customer's PIN login locked from {@link ADDRESS} until `lockedUntil`. */
async function expectOneLockout(t: JourneyTest & { account?: { profileId: string } | undefined }, lockedUntil: number, pinChecked: boolean): Promise<void> {
  const lockouts = await t.audits('customer.pin_lockout');
  expect(lockouts).toHaveLength(1);
  expect(lockouts[0]).toMatchObject({
    actor: `ip:${ADDRESS.ip}`,
    subject: t.account?.profileId,
    outcome: 'failure',
    details: { client_id: ACME.id, locked_until: lockedUntil, pin_checked: pinChecked },
  });
}

/** The SMS body without its one-time code, which could contain the PIN's digits by chance. */
const withoutCode = (body: string | undefined) => (body ?? '').replace(/^\d{6} /, '').replace(/ #\d{6}$/, '');

describe('showLogin and showRegistration', () => {
  it('show the login page; the registration page on request', async () => {
    const { journey, deps } = await setup();
    expect(await showLogin(journey.context, deps)).toEqual({ kind: 'login', journey: view(journey) });
    expect(await showRegistration(journey.context, deps)).toEqual({ kind: 'register', journey: view(journey) });
  });

  it('user_id naming an account: the login page with the mobile fixed; registration leads to login', async () => {
    const { journey, deps } = await setup({ query: { user_id: MOBILE } });
    expect(await showLogin(journey.context, deps)).toEqual({ kind: 'login', journey: view(journey, MOBILE) });
    expect(await showRegistration(journey.context, deps)).toEqual({ kind: 'goto', page: 'login', requestId: journey.requestId });
  });

  it('user_id naming no account: registration, and the login page leads there', async () => {
    const { journey, deps } = await setup({ query: { user_id: OTHER_MOBILE } });
    expect(await showLogin(journey.context, deps)).toEqual({ kind: 'goto', page: 'register', requestId: journey.requestId });
    expect(await showRegistration(journey.context, deps)).toEqual({ kind: 'register', journey: view(journey, OTHER_MOBILE) });
  });
});

describe('submitLogin', () => {
  it('the right PIN: the journey is pin-verified for the customer and a one-time PIN is sent; the PIN never travels', async () => {
    const t = await setup();
    const result = await submitLogin(t.journey.context, { mobile: '+63 917 123 4567', pin: PIN }, t.deps);
    expect(result).toEqual({ kind: 'goto', page: 'otp', requestId: t.journey.requestId });
    expect(t.sms.messages).toHaveLength(1);
    expect(t.sms.messages[0]?.to).toBe(MOBILE);
    expect(t.sms.messages[0]?.body).toContain(ACME.name);
    expect(withoutCode(t.sms.messages[0]?.body)).not.toContain(PIN);
    expect(await t.journey.record()).toMatchObject({ status: 'otp_sent', profileId: t.account?.profileId, completedAt: null });
    expect(await t.storage.otpChallenges.findLatestOtpChallenge(t.journey.idHash)).toMatchObject({
      purpose: 'login',
      mobile: MOBILE,
      profileId: t.account?.profileId,
      pendingPinHash: null,
      attempts: 0,
      resends: 0,
      lastSentAt: T0,
      expiresAt: T0 + 300,
      consumedAt: null,
    });
    expect(pinComparisons).toHaveBeenCalledTimes(1);
    expect(await t.pinPointsOf(ADDRESS)).toBe(0);
  });

  it.each(['1111', '1234', '2580'])('a PIN too easy to choose today (%s), chosen before: logs in all the same', async (weak) => {
    const t = await setup({ customer: false });
    await t.addCustomer(MOBILE, weak);
    expect(await submitLogin(t.journey.context, { mobile: MOBILE, pin: weak }, t.deps)).toEqual({ kind: 'goto', page: 'otp', requestId: t.journey.requestId });
    expect(t.sms.messages.map((message) => message.to)).toEqual([MOBILE]);
  });

  it('a right PIN starts the customer\'s count again', async () => {
    const t = await setup();
    for (let i = 0; i < 4; i++) await submitLogin(t.journey.context, { mobile: MOBILE, pin: WRONG_PIN }, t.deps);
    expect((await t.storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(4);
    await t.toOtp(t.journey);
    expect((await t.storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(0);
  });

  it.each([
    ['a national number', { mobile: '0917 123 4567', pin: PIN }, { code: 'mobile_invalid', field: 'mobile' }, '0917 123 4567'],
    ['a fixed-line number', { mobile: '+63 2 8123 4567', pin: PIN }, { code: 'mobile_invalid', field: 'mobile' }, '+63 2 8123 4567'],
    ['no mobile', { pin: PIN }, { code: 'mobile_invalid', field: 'mobile' }, undefined],
    ['a 3-digit PIN', { mobile: MOBILE, pin: '739' }, { code: 'pin_format', field: 'pin' }, MOBILE],
    ['a 7-digit PIN', { mobile: MOBILE, pin: '7391000' }, { code: 'pin_format', field: 'pin' }, MOBILE],
    ['a PIN of letters', { mobile: MOBILE, pin: 'abcd' }, { code: 'pin_format', field: 'pin' }, MOBILE],
    ['no PIN', { mobile: MOBILE }, { code: 'pin_format', field: 'pin' }, MOBILE],
  ])('%s: %j is refused before anything is counted or hashed', async (_name, form, problem, mobile) => {
    const t = await setup();
    const result = await submitLogin(t.journey.context, form, t.deps);
    expect(result).toEqual({ kind: 'login', journey: view(t.journey), problem, ...(mobile ? { mobile } : {}) });
    expect(pinComparisons).not.toHaveBeenCalled();
    expect(await t.pinPointsOf(ADDRESS)).toBe(0);
    await expectNothingHappened(t, t.journey);
  });

  it('a wrong PIN: credentials_wrong, counted for the customer and the address, nothing sent', async () => {
    const t = await setup();
    const result = await submitLogin(t.journey.context, { mobile: MOBILE, pin: WRONG_PIN }, t.deps);
    expect(result).toEqual({ kind: 'login', journey: view(t.journey), mobile: MOBILE, problem: { code: 'credentials_wrong', field: 'pin' } });
    expect(pinComparisons).toHaveBeenCalledTimes(1);
    expect(await t.pinPointsOf(ADDRESS)).toBe(1);
    await expectNothingHappened(t, t.journey, 1);
  });

  it('a wrong PIN for the mobile user_id names: pin_wrong', async () => {
    const t = await setup({ query: { user_id: MOBILE } });
    expect(await submitLogin(t.journey.context, { pin: WRONG_PIN }, t.deps)).toEqual({
      kind: 'login',
      journey: view(t.journey, MOBILE),
      mobile: MOBILE,
      problem: { code: 'pin_wrong', field: 'pin' },
    });
  });

  it('an unknown mobile costs no hash and gets the same answer as a wrong PIN', async () => {
    const t = await setup();
    const unknown = await submitLogin(t.journey.context, { mobile: OTHER_MOBILE, pin: PIN }, t.deps);
    expect(pinComparisons).not.toHaveBeenCalled();
    expect(await t.pinPointsOf(ADDRESS)).toBe(1);
    const wrong = await submitLogin(t.journey.context, { mobile: MOBILE, pin: WRONG_PIN }, t.deps);
    expect(pinComparisons).toHaveBeenCalledTimes(1);
    expect(await t.pinPointsOf(ADDRESS)).toBe(2);
    expect(unknown).toEqual({ ...wrong, mobile: OTHER_MOBILE });
    expect(await t.storage.customers.findCustomerByMobile(OTHER_MOBILE)).toBeUndefined();
  });

  it('the mobile user_id names wins over a posted one', async () => {
    const t = await setup({ query: { user_id: MOBILE } });
    const other = await t.addCustomer(OTHER_MOBILE, '5555');
    // The other customer's PIN, posted with the other mobile: checked against user_id's account.
    expect(await submitLogin(t.journey.context, { mobile: OTHER_MOBILE, pin: '5555' }, t.deps)).toMatchObject({
      kind: 'login',
      mobile: MOBILE,
      problem: { code: 'pin_wrong' },
    });
    expect((await t.storage.customers.findCustomer(other.profileId))?.pinAttempts).toBe(0);
    expect((await t.storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(1);
    // The right PIN of user_id's account, with the other mobile posted: the code goes to user_id's phone.
    expect(await submitLogin(t.journey.context, { mobile: OTHER_MOBILE, pin: PIN }, t.deps)).toMatchObject({ kind: 'goto', page: 'otp' });
    expect(t.sms.messages.map((message) => message.to)).toEqual([MOBILE]);
    expect(await t.journey.record()).toMatchObject({ profileId: t.account?.profileId });
  });

  it('a customer an operator locked: account_locked, even with the right PIN, and no hash', async () => {
    const t = await setup();
    await t.storage.customers.updateCustomer(t.account?.profileId ?? '', { status: 'locked' }, T0);
    expect(await submitLogin(t.journey.context, { mobile: MOBILE, pin: PIN }, t.deps)).toEqual({
      kind: 'login',
      journey: view(t.journey),
      mobile: MOBILE,
      problem: { code: 'account_locked' },
    });
    expect(pinComparisons).not.toHaveBeenCalled();
    expect(t.sms.messages).toEqual([]);
  });

  it('the 5th wrong PIN locks PIN login for 900 s (audited once); the right PIN is refused until the lock lifts', async () => {
    const t = await setup();
    // Each on a journey of its own: the lock outlasts a journey.
    const login = async (pinValue: string) => submitLogin((await t.begin()).context, { mobile: MOBILE, pin: pinValue }, t.deps);
    for (let i = 0; i < 4; i++) expect(await login(WRONG_PIN)).toMatchObject({ problem: { code: 'credentials_wrong' } });
    t.clock.advance(10);
    expect(await login(WRONG_PIN)).toMatchObject({ kind: 'login', mobile: MOBILE, problem: { code: 'pin_locked', retryAfterSeconds: 900 } });
    await expectOneLockout(t, T0 + 910, true);
    expect(pinComparisons).toHaveBeenCalledTimes(5);

    t.clock.set(T0 + 909);
    expect(await login(PIN)).toMatchObject({ problem: { code: 'pin_locked', retryAfterSeconds: 1 } });
    expect(pinComparisons).toHaveBeenCalledTimes(5);
    expect(await t.audits('customer.pin_lockout')).toHaveLength(1);
    expect(t.sms.messages).toEqual([]);

    t.clock.set(T0 + 910);
    expect(await login(PIN)).toMatchObject({ kind: 'goto', page: 'otp' });
  });

  it('attempts whose PIN cannot be compared (a PIN hash worker ended): 503 and counted; the 5th locks, audited as unchecked', async () => {
    let failing = false;
    const pinChecks = testPinCheckQueue({
      scrypt: (secret, salt, keyLength, options) =>
        failing
          ? Promise.reject(new TemporarilyUnavailable('PIN hashing is not available right now; retry shortly', { detail: 'a PIN hash worker ended (exit code 1)' }))
          : pin.scryptOnThreadPool(secret, salt, keyLength, options),
    });
    const t = await setup({ pinChecks });
    const login = async (pinValue: string) => submitLogin((await t.begin()).context, { mobile: MOBILE, pin: pinValue }, t.deps);
    const attempts = async () => (await t.storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts;
    for (let i = 0; i < 3; i++) expect(await login(WRONG_PIN)).toMatchObject({ problem: { code: 'credentials_wrong' } });

    failing = true;
    // The 4th: no answer, never a free guess.
    await expect(login(PIN)).rejects.toBeInstanceOf(TemporarilyUnavailable);
    expect(await attempts()).toBe(4);
    expect(await t.audits('customer.pin_lockout')).toEqual([]);
    // The 5th locks PIN login as a wrong PIN would, and says so in the audit log.
    await expect(login(PIN)).rejects.toBeInstanceOf(TemporarilyUnavailable);
    // Neither took a point of the address's budget: only the 3 wrong PINs did.
    expect(await t.pinPointsOf(ADDRESS)).toBe(3);
    await expectOneLockout(t, T0 + 900, false);

    failing = false;
    expect(await login(PIN)).toMatchObject({ problem: { code: 'pin_locked', retryAfterSeconds: 900 } });
    expect(await t.audits('customer.pin_lockout')).toHaveLength(1);
    expect(t.sms.messages).toEqual([]);
    t.clock.set(T0 + 900);
    expect(await login(PIN)).toMatchObject({ kind: 'goto', page: 'otp' });
  });

  it('on a journey that is not open for login: its own page, nothing checked', async () => {
    const t = await journeySetup();
    const customer = await t.addCustomer();
    const sessionId = await t.session(customer.profileId);
    const consent = await t.begin({}, { sessionId });
    expect(await submitLogin(consent.context, { mobile: MOBILE, pin: PIN }, t.deps)).toEqual({ kind: 'goto', page: 'consent', requestId: consent.requestId });
    expect(pinComparisons).not.toHaveBeenCalled();
    expect((await consent.record()).status).toBe('consent_required');
  });

  it('on a journey that expired: a dead end, at 900 s and not before', async () => {
    const t = await setup();
    t.clock.set(T0 + 900);
    expect(await submitLogin(t.journey.context, { mobile: MOBILE, pin: PIN }, t.deps)).toEqual({ kind: 'dead_end', reason: 'expired' });
    t.clock.set(T0 + 899);
    expect(await submitLogin(t.journey.context, { mobile: MOBILE, pin: PIN }, t.deps)).toMatchObject({ kind: 'goto', page: 'otp' });
  });

  it('again from the one-time-PIN page (another tab): a new challenge, and only its code counts', async () => {
    const t = await setup();
    await t.toOtp(t.journey);
    const first = await t.storage.otpChallenges.findLatestOtpChallenge(t.journey.idHash);
    t.clock.advance(1);
    const code = await t.toOtp(t.journey);
    const second = await t.storage.otpChallenges.findLatestOtpChallenge(t.journey.idHash);
    expect(second?.id).not.toBe(first?.id);
    expect((await submitOtp(t.journey.context, { otp: code }, t.deps)).kind).toBe('redirect');
  });
});

describe('submitLogin: the per-address budget of failed PIN checks', () => {
  it('refuses before anything is checked, for the window\'s remaining time; other addresses go on', async () => {
    const t = await setup({ budgets: { pinLimitPerAddress: 3 } });
    const login = async (pinValue: string, address = ADDRESS) => submitLogin({ ...(await t.begin()).context, address }, { mobile: MOBILE, pin: pinValue }, t.deps);
    for (let i = 0; i < 3; i++) expect(await login(WRONG_PIN)).toMatchObject({ problem: { code: 'credentials_wrong' } });
    expect(pinComparisons).toHaveBeenCalledTimes(3);

    expect(await login(PIN)).toMatchObject({ kind: 'login', mobile: MOBILE, problem: { code: 'too_many_attempts', retryAfterSeconds: 3600 } });
    expect(pinComparisons).toHaveBeenCalledTimes(3);
    // The customer's own count is not touched by a refused check.
    expect((await t.storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(3);
    expect(t.sms.messages).toEqual([]);

    t.clock.set(T0 + 3599);
    expect(await login(PIN)).toMatchObject({ problem: { code: 'too_many_attempts', retryAfterSeconds: 1 } });
    // In a window's last 10 seconds a refusal keeps the point it was counted, which ends with the window (docs/lifetimes.md).
    expect(await t.pinPointsOf(ADDRESS)).toBe(4);

    expect(await login(PIN, OTHER_ADDRESS)).toMatchObject({ kind: 'goto', page: 'otp' });

    t.clock.set(T0 + 3600);
    expect(await login(PIN)).toMatchObject({ kind: 'goto', page: 'otp' });
  });

  it('counts only failures: a right PIN gives its attempt back', async () => {
    const t = await setup({ budgets: { pinLimitPerAddress: 2 } });
    const login = async (pinValue: string) => submitLogin((await t.begin()).context, { mobile: MOBILE, pin: pinValue }, t.deps);
    expect(await login(WRONG_PIN)).toMatchObject({ problem: { code: 'credentials_wrong' } });
    expect(await t.pinPointsOf(ADDRESS)).toBe(1);
    for (let i = 0; i < 3; i++) expect(await login(PIN)).toMatchObject({ kind: 'goto', page: 'otp' });
    expect(await t.pinPointsOf(ADDRESS)).toBe(1);
    expect(await login(WRONG_PIN)).toMatchObject({ problem: { code: 'credentials_wrong' } });
    expect(await login(PIN)).toMatchObject({ problem: { code: 'too_many_attempts' } });
  });
});

describe('submitRegistration: the per-address budget', () => {
  it('a registration that reaches the database and the hash takes one; a sent code gives it back; refused forms cost nothing', async () => {
    const t = await setup({ customer: false, budgets: { pinLimitPerAddress: 2 } });
    const register = async (mobile: string, pin = PIN, pinConfirmation = PIN) =>
      submitRegistration((await t.begin()).context, { mobile, pin, pinConfirmation }, t.deps);
    // Forms refused before the database: nothing counted.
    expect(await register(MOBILE, '12', '12')).toMatchObject({ problem: { code: 'pin_format' } });
    expect(await register(MOBILE, PIN, '9999')).toMatchObject({ problem: { code: 'pin_mismatch' } });
    expect(await register(MOBILE, '1111', '1111')).toMatchObject({ problem: { code: 'pin_weak_repeated' } });
    expect(await t.pinPointsOf(ADDRESS)).toBe(0);
    // A code sent: the point comes back.
    expect(await register(MOBILE)).toMatchObject({ kind: 'goto', page: 'otp' });
    expect(await t.pinPointsOf(ADDRESS)).toBe(0);
    // A taken mobile costs one, twice; then the address is refused before any lookup or hash.
    await t.addCustomer(OTHER_MOBILE);
    expect(await register(OTHER_MOBILE)).toMatchObject({ problem: { code: 'mobile_taken' } });
    expect(await register(OTHER_MOBILE)).toMatchObject({ problem: { code: 'mobile_taken' } });
    expect(await register(MOBILE)).toMatchObject({ kind: 'register', problem: { code: 'too_many_attempts', retryAfterSeconds: 3600 } });
    expect(await t.pinPointsOf(ADDRESS)).toBe(2);
  });
});

describe('submitLogin and submitRegistration: a full PIN-check queue', () => {
  it('login: 503, and neither the customer\'s attempts nor the address budget is spent', async () => {
    const { queue, release } = fullQueue();
    const t = await setup({ pinChecks: queue, budgets: { pinLimitPerAddress: 1 } });
    const login = (pinValue: string) => submitLogin(t.journey.context, { mobile: MOBILE, pin: pinValue }, t.deps);
    const refused = await login(PIN).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TemporarilyUnavailable);
    expect((refused as TemporarilyUnavailable).status).toBe(503);
    expect(pinComparisons).not.toHaveBeenCalled();
    expect(await t.pinPointsOf(ADDRESS)).toBe(0);
    await expectNothingHappened(t, t.journey, 0);

    await release();
    // The budget of one failed check is whole: this wrong PIN is checked, the next is refused.
    expect(await login(WRONG_PIN)).toMatchObject({ problem: { code: 'credentials_wrong' } });
    expect(await login(PIN)).toMatchObject({ problem: { code: 'too_many_attempts' } });
  });

  it('registration: 503, nothing stored or sent', async () => {
    const { queue, release } = fullQueue();
    const t = await setup({ pinChecks: queue, customer: false });
    await expect(submitRegistration(t.journey.context, { mobile: MOBILE, pin: PIN, pinConfirmation: PIN }, t.deps)).rejects.toBeInstanceOf(TemporarilyUnavailable);
    await expectNothingHappened(t, t.journey);
    await release();
    expect(await submitRegistration(t.journey.context, { mobile: MOBILE, pin: PIN, pinConfirmation: PIN }, t.deps)).toMatchObject({ kind: 'goto', page: 'otp' });
  });
});

describe('submitLogin and submitRegistration: send limits', () => {
  it('per mobile: the second login within 15 minutes is refused, nothing stored or sent, the PIN check does not count', async () => {
    const t = await setup({ budgets: { smsLimitPerMobile: 1 } });
    await t.toOtp(t.journey);
    const second = await t.begin();
    t.clock.advance(60);
    expect(await submitLogin(second.context, { mobile: MOBILE, pin: PIN }, t.deps)).toEqual({
      kind: 'login',
      journey: view(second),
      mobile: MOBILE,
      problem: { code: 'sms_rate_limited', retryAfterSeconds: 840, limit: 'sms_per_mobile' },
    });
    expect(await second.record()).toMatchObject({ status: 'pending', profileId: null });
    expect(await t.storage.otpChallenges.findLatestOtpChallenge(second.idHash)).toBeUndefined();
    expect(t.sms.messages).toHaveLength(1);
    expect(await t.pinPointsOf(ADDRESS)).toBe(0);

    t.clock.set(T0 + 899);
    expect(await submitLogin(second.context, { mobile: MOBILE, pin: PIN }, t.deps)).toMatchObject({ problem: { code: 'sms_rate_limited', retryAfterSeconds: 1 } });
    t.clock.set(T0 + 900);
    const third = await t.begin();
    expect(await submitLogin(third.context, { mobile: MOBILE, pin: PIN }, t.deps)).toMatchObject({ kind: 'goto', page: 'otp' });
  });

  it('per address: a refused send takes nothing from the mobile\'s budget', async () => {
    const t = await setup({ budgets: { smsLimitPerAddress: 1, smsLimitPerMobile: 1 } });
    await t.addCustomer(OTHER_MOBILE);
    await t.toOtp(t.journey, OTHER_MOBILE);
    const second = await t.begin();
    expect(await submitLogin(second.context, { mobile: MOBILE, pin: PIN }, t.deps)).toMatchObject({
      kind: 'login',
      problem: { code: 'sms_rate_limited', retryAfterSeconds: 3600 },
    });
    // From another address, the mobile's one send is still there.
    expect(await submitLogin({ ...second.context, address: OTHER_ADDRESS }, { mobile: MOBILE, pin: PIN }, t.deps)).toMatchObject({ kind: 'goto', page: 'otp' });
  });

  it('asks the limiter for the mobile and the address; a refusal of registration shows the registration page', async () => {
    const calls: Array<[string, ClientAddress]> = [];
    const sends: SendLimiter = {
      take: async (mobile, ip) => {
        calls.push([mobile, ip]);
        return { budget: 'mobile', retryAfterSeconds: 42 };
      },
      giveBack: async () => {},
    };
    const t = await setup({ sends, customer: false });
    expect(await submitRegistration(t.journey.context, { mobile: MOBILE, pin: PIN, pinConfirmation: PIN }, t.deps)).toEqual({
      kind: 'register',
      journey: view(t.journey),
      mobile: MOBILE,
      problem: { code: 'sms_rate_limited', retryAfterSeconds: 42, limit: 'sms_per_mobile' },
    });
    expect(calls).toEqual([[MOBILE, ADDRESS]]);
    await expectNothingHappened(t, t.journey);
  });
});

describe('submitLogin: the SMS gateway fails', () => {
  it('the journey is otp_sent with its challenge retired, the page says sms_unavailable; "send a new code" then works', async () => {
    const t = await setup();
    t.sms.failWith = smsDown();
    expect(await submitLogin(t.journey.context, { mobile: MOBILE, pin: PIN }, t.deps)).toEqual({ kind: 'goto', page: 'otp', requestId: t.journey.requestId });
    expect(await t.journey.record()).toMatchObject({ status: 'otp_sent', profileId: t.account?.profileId });
    const retired = await t.storage.otpChallenges.findLatestOtpChallenge(t.journey.idHash);
    expect(retired?.consumedAt).toBe(T0);
    expect(await showOtp(t.journey.context, t.deps)).toEqual({
      kind: 'otp',
      journey: view(t.journey),
      otp: { maskedMobile: MASKED, resendInSeconds: 30, resendAt: expect.any(Number), mobileCountry: 'PH', resendsLeft: 3 },
      problem: { code: 'sms_unavailable' },
    });
    // The code the gateway never delivered answers nothing.
    const undelivered = t.sms.lastCode();
    expect(await submitOtp(t.journey.context, { otp: undelivered }, t.deps)).toEqual({ kind: 'goto', page: 'otp', requestId: t.journey.requestId });
    expect((await t.journey.record()).status).toBe('otp_sent');

    t.sms.failWith = undefined;
    expect(await submitOtp(t.journey.context, { action: 'resend' }, t.deps)).toEqual({
      kind: 'otp',
      journey: view(t.journey),
      otp: { maskedMobile: MASKED, resendInSeconds: 30, resendAt: expect.any(Number), mobileCountry: 'PH', resendsLeft: 3 },
      notice: 'code_sent',
    });
    expect(await t.journey.record()).toMatchObject({ status: 'otp_sent' });
    expect(t.sms.messages).toHaveLength(2);
    expect((await submitOtp(t.journey.context, { otp: t.sms.lastCode() }, t.deps)).kind).toBe('redirect');
  });

  it('a failure that is not the gateway\'s is not swallowed', async () => {
    const t = await setup();
    t.sms.failWith = new TypeError('a bug');
    await expect(submitLogin(t.journey.context, { mobile: MOBILE, pin: PIN }, t.deps)).rejects.toThrow(TypeError);
  });
});

describe('submitRegistration', () => {
  it('stores nothing but the challenge, with the chosen PIN only hashed; the PIN never travels', async () => {
    const t = await setup({ customer: false, query: { user_id: MOBILE } });
    expect(await submitRegistration(t.journey.context, { pin: PIN, pinConfirmation: PIN }, t.deps)).toEqual({
      kind: 'goto',
      page: 'otp',
      requestId: t.journey.requestId,
    });
    expect(await t.storage.customers.findCustomerByMobile(MOBILE)).toBeUndefined();
    expect(await t.journey.record()).toMatchObject({ status: 'otp_sent', profileId: null });
    const challenge = await t.storage.otpChallenges.findLatestOtpChallenge(t.journey.idHash);
    expect(challenge).toMatchObject({ purpose: 'register', mobile: MOBILE, profileId: null });
    expect(challenge?.pendingPinHash).toMatch(/^scrypt\$/);
    expect(challenge?.pendingPinHash).not.toContain(PIN);
    expect(await pin.verifyPin(PIN, challenge?.pendingPinHash ?? '')).toBe(true);
    expect(t.sms.messages.map((message) => message.to)).toEqual([MOBILE]);
    expect(withoutCode(t.sms.messages[0]?.body)).not.toContain(PIN);
  });

  it('the mobile user_id names wins over a posted one', async () => {
    const t = await setup({ customer: false, query: { user_id: MOBILE } });
    await submitRegistration(t.journey.context, { mobile: OTHER_MOBILE, pin: PIN, pinConfirmation: PIN }, t.deps);
    expect((await t.storage.otpChallenges.findLatestOtpChallenge(t.journey.idHash))?.mobile).toBe(MOBILE);
    expect(t.sms.messages.map((message) => message.to)).toEqual([MOBILE]);
  });

  it.each([
    ['not a mobile number', { mobile: '12345', pin: PIN, pinConfirmation: PIN }, { code: 'mobile_invalid', field: 'mobile' }, '12345'],
    ['no mobile', { pin: PIN, pinConfirmation: PIN }, { code: 'mobile_invalid', field: 'mobile' }, undefined],
    ['a mobile that has an account', { mobile: OTHER_MOBILE, pin: PIN, pinConfirmation: PIN }, { code: 'mobile_taken', field: 'mobile' }, OTHER_MOBILE],
    ['a 7-digit PIN', { mobile: MOBILE, pin: '1234567', pinConfirmation: '1234567' }, { code: 'pin_format', field: 'pin' }, MOBILE],
    ['no PIN', { mobile: MOBILE, pinConfirmation: PIN }, { code: 'pin_format', field: 'pin' }, MOBILE],
    ['PINs that differ', { mobile: MOBILE, pin: PIN, pinConfirmation: WRONG_PIN }, { code: 'pin_mismatch', field: 'pin_confirmation' }, MOBILE],
    ['no confirmation', { mobile: MOBILE, pin: PIN }, { code: 'pin_mismatch', field: 'pin_confirmation' }, MOBILE],
    ['a PIN of one digit repeated', { mobile: MOBILE, pin: '000000', pinConfirmation: '000000' }, { code: 'pin_weak_repeated', field: 'pin' }, MOBILE],
    ['a PIN of a pair repeated', { mobile: MOBILE, pin: '1212', pinConfirmation: '1212' }, { code: 'pin_weak_repeated', field: 'pin' }, MOBILE],
    ['a PIN of digits going up', { mobile: MOBILE, pin: '123456', pinConfirmation: '123456' }, { code: 'pin_weak_sequence', field: 'pin' }, MOBILE],
    ['a PIN of digits going down, round 0', { mobile: MOBILE, pin: '2109', pinConfirmation: '2109' }, { code: 'pin_weak_sequence', field: 'pin' }, MOBILE],
    ['a common PIN', { mobile: MOBILE, pin: '147258', pinConfirmation: '147258' }, { code: 'pin_weak_common', field: 'pin' }, MOBILE],
    ['a weak PIN and a different confirmation: the weak PIN first', { mobile: MOBILE, pin: '2580', pinConfirmation: '2581' }, { code: 'pin_weak_common', field: 'pin' }, MOBILE],
  ])('%s: refused, nothing stored or sent', async (_name, form, problem, mobile) => {
    const t = await setup({ customer: false });
    await t.addCustomer(OTHER_MOBILE);
    expect(await submitRegistration(t.journey.context, form, t.deps)).toEqual({ kind: 'register', journey: view(t.journey), problem, ...(mobile ? { mobile } : {}) });
    await expectNothingHappened(t, t.journey);
  });

  it('user_id naming an account: mobile_taken', async () => {
    const t = await setup({ query: { user_id: MOBILE } });
    expect(await submitRegistration(t.journey.context, { pin: PIN, pinConfirmation: PIN }, t.deps)).toMatchObject({
      kind: 'register',
      mobile: MOBILE,
      problem: { code: 'mobile_taken', field: 'mobile' },
    });
    expect(t.sms.messages).toEqual([]);
  });
});
