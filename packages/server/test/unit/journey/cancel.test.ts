import { describe, expect, it } from 'vitest';
import { cancelJourney } from '../../../src/core/journey/cancel.js';
import { submitConsent } from '../../../src/core/journey/steps/consent.js';
import { submitOtp } from '../../../src/core/journey/steps/otp.js';
import { isOpen, openJourney } from '../../../src/core/journey/open.js';
import type { StepResult } from '../../../src/core/journey/outcomes.js';
import type { JourneyState } from '../../../src/core/journey/states.js';
import { submitLogin } from '../../../src/core/journey/steps/login.js';
import { submitRegistration } from '../../../src/core/journey/steps/register.js';
import { smsDown } from '../otp/otp-fixtures.js';
import { ISSUER, journeySetup, MOBILE, redirectParams, T0, type JourneyTest, type Started } from './fixtures.js';

const CANCEL = { action: 'cancel' };

/** Each open state, reached for real, and the page its cancel button posts to. */
const OPEN_STATES: ReadonlyArray<{
  state: JourneyState;
  reach(t: JourneyTest): Promise<Started>;
  cancel(t: JourneyTest, journey: Started): Promise<StepResult>;
}> = [
  {
    state: 'pending',
    reach: (t) => t.begin(),
    cancel: (t, journey) => submitLogin(journey.context, CANCEL, t.deps),
  },
  {
    state: 'pending',
    reach: (t) => t.begin({ user_id: '+639179876543' }),
    cancel: (t, journey) => submitRegistration(journey.context, CANCEL, t.deps),
  },
  {
    state: 'otp_sent', // its code never delivered
    async reach(t) {
      await t.addCustomer();
      const journey = await t.begin();
      t.sms.failWith = smsDown();
      await submitLogin(journey.context, { mobile: MOBILE, pin: '7391' }, t.deps);
      return journey;
    },
    cancel: (t, journey) => submitOtp(journey.context, CANCEL, t.deps),
  },
  {
    state: 'otp_sent',
    async reach(t) {
      await t.addCustomer();
      const journey = await t.begin();
      await t.toOtp(journey);
      return journey;
    },
    cancel: (t, journey) => submitOtp(journey.context, CANCEL, t.deps),
  },
  {
    state: 'consent_required',
    async reach(t) {
      const customer = await t.addCustomer();
      return t.begin({}, { sessionId: await t.session(customer.profileId) });
    },
    cancel: (t, journey) => submitConsent(journey.context, CANCEL, t.deps),
  },
];

describe('cancelling a journey', () => {
  it.each(OPEN_STATES)('from $state: access_denied back to the client with state and iss; the journey ends cancelled', async ({ state, reach, cancel }) => {
    const t = await journeySetup();
    const journey = await reach(t);
    expect((await journey.record()).status).toBe(state);
    t.clock.advance(7);
    expect(redirectParams(await cancel(t, journey))).toEqual({
      error: 'access_denied',
      error_description: 'the customer cancelled',
      state: 'xyz',
      iss: ISSUER,
    });
    expect(await journey.record()).toMatchObject({ status: 'cancelled', completedAt: T0 + 7 });
    // Over for every page, cancel included.
    expect(await cancel(t, journey)).toEqual({ kind: 'dead_end', reason: 'finished' });
    expect(await submitLogin(journey.context, { mobile: MOBILE, pin: '7391' }, t.deps)).toEqual({ kind: 'dead_end', reason: 'finished' });
  });

  it('leaves state out when the request had none', async () => {
    const t = await journeySetup();
    const journey = await t.begin({ state: '' });
    expect(redirectParams(await submitLogin(journey.context, CANCEL, t.deps))).toEqual({
      error: 'access_denied',
      error_description: 'the customer cancelled',
      iss: ISSUER,
    });
  });

  it('does not cancel a journey whose code was issued meanwhile in another tab', async () => {
    const t = await journeySetup();
    await t.addCustomer();
    const journey = await t.begin();
    const code = await t.toOtp(journey);
    const opened = await openJourney(journey.context, t.deps);
    if (!isOpen(opened)) throw new Error('not open');
    expect((await submitOtp(journey.context, { otp: code }, t.deps)).kind).toBe('redirect');
    expect(await cancelJourney(opened, t.deps)).toEqual({ kind: 'dead_end', reason: 'finished' });
    expect((await journey.record()).status).toBe('code_issued');
  });

  it('does not cancel a journey that expired since its page was opened', async () => {
    const t = await journeySetup();
    const journey = await t.begin();
    t.clock.set(T0 + 899);
    const opened = await openJourney(journey.context, t.deps);
    if (!isOpen(opened)) throw new Error('not open');
    t.clock.set(T0 + 900);
    expect(await cancelJourney(opened, t.deps)).toEqual({ kind: 'dead_end', reason: 'expired' });
    expect(await journey.record()).toMatchObject({ status: 'pending', completedAt: null });
  });

  it('of a journey past its expiry: a dead end, no redirect (899 s still cancels)', async () => {
    const t = await journeySetup();
    const late = await t.begin();
    const inTime = await t.begin();
    t.clock.set(T0 + 899);
    expect((await submitLogin(inTime.context, CANCEL, t.deps)).kind).toBe('redirect');
    t.clock.set(T0 + 900);
    expect(await submitLogin(late.context, CANCEL, t.deps)).toEqual({ kind: 'dead_end', reason: 'expired' });
    expect((await late.record()).status).toBe('pending');
  });

  it('from another browser: a dead end, the journey goes on', async () => {
    const t = await journeySetup();
    const journey = await t.begin();
    expect(await submitLogin({ ...journey.context, browserId: 'another-browser' }, CANCEL, t.deps)).toEqual({ kind: 'dead_end', reason: 'expired' });
    expect((await journey.record()).status).toBe('pending');
  });
});
