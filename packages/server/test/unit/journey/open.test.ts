import { describe, expect, it } from 'vitest';
import { firstPage, isOpen, openJourney, pageForState, type OpenJourney } from '../../../src/core/journey/open.js';
import type { JourneyState } from '../../../src/core/journey/states.js';
import { TRANSITIONS } from '../../../src/core/journey/states.js';
import { ACME, BROWSER, journeySetup, MOBILE, OTHER_MOBILE, REDIRECT, T0, type JourneyTest, type Started } from './fixtures.js';

async function open(t: JourneyTest, journey: Started, context: Partial<Started['context']> = {}, deps = t.deps) {
  return openJourney({ ...journey.context, ...context }, deps);
}

async function opened(t: JourneyTest, journey: Started): Promise<OpenJourney> {
  const result = await open(t, journey);
  if (!isOpen(result)) throw new Error(JSON.stringify(result));
  return result;
}

describe('openJourney', () => {
  it('opens the journey of the browser that started it, with its client and what its pages show', async () => {
    const t = await journeySetup();
    const journey = await t.begin({ user_id: MOBILE });
    const result = await opened(t, journey);
    expect(result.requestId).toBe(journey.requestId);
    expect(result.record).toEqual(await journey.record());
    expect(result.client).toEqual(ACME);
    expect(result.view).toEqual({ requestId: journey.requestId, clientName: ACME.name, redirectUri: REDIRECT, fixedMobile: MOBILE, uiLocale: null, requiresPhr: false });
  });

  it('from another browser: the same dead end as for an unknown ID', async () => {
    const t = await journeySetup();
    const journey = await t.begin();
    const foreign = await open(t, journey, { browserId: `${BROWSER}-other` });
    const unknown = await open(t, journey, { requestId: 'no-such-journey' });
    expect(foreign).toEqual({ kind: 'dead_end', reason: 'expired' });
    expect(unknown).toEqual(foreign);
  });

  it.each([
    ['no request ID', { requestId: undefined }],
    ['an empty request ID', { requestId: '' }],
    ['an oversized request ID', { requestId: 'x'.repeat(101) }],
    ['no browser cookie', { browserId: undefined }],
    ['an oversized browser cookie', { browserId: 'x'.repeat(101) }],
  ])('%s: a dead end', async (_name, context) => {
    const t = await journeySetup();
    const journey = await t.begin();
    expect(await open(t, journey, context)).toEqual({ kind: 'dead_end', reason: 'expired' });
  });

  it('is open until the second before its expiry (900 s), a dead end at and after it', async () => {
    const t = await journeySetup();
    const journey = await t.begin();
    t.clock.set(T0 + 899);
    expect(isOpen(await open(t, journey))).toBe(true);
    t.clock.set(T0 + 900);
    expect(await open(t, journey)).toEqual({ kind: 'dead_end', reason: 'expired' });
    t.clock.set(T0 + 901);
    expect(await open(t, journey)).toEqual({ kind: 'dead_end', reason: 'expired' });
  });

  it.each([['cancelled' as const], ['code_issued' as const]])('once %s: finished', async (state) => {
    const t = await journeySetup();
    const customer = await t.addCustomer();
    const journey = await t.begin({}, { sessionId: await t.session(customer.profileId) });
    const transition = state === 'cancelled' ? TRANSITIONS.cancelled : TRANSITIONS.approved;
    expect(await t.storage.authorizationRequests.transitionAuthorizationRequest(journey.idHash, transition, T0)).toBeDefined();
    expect(await open(t, journey)).toEqual({ kind: 'dead_end', reason: 'finished' });
  });

  it('a dead end of a journey ui_locales gave a language carries it; one that may not exist (expired) never does', async () => {
    const t = await journeySetup();
    const customer = await t.addCustomer();
    const journey = await t.begin({ ui_locales: 'fil' }, { sessionId: await t.session(customer.profileId) });
    expect((await opened(t, journey)).view.uiLocale).toBe('fil');
    expect(await open(t, journey, {}, { ...t.deps, findClient: async () => undefined })).toEqual({ kind: 'dead_end', reason: 'client_unavailable', uiLocale: 'fil' });
    expect(await open(t, journey, { browserId: `${BROWSER}-other` })).toEqual({ kind: 'dead_end', reason: 'expired' });
    expect(await t.storage.authorizationRequests.transitionAuthorizationRequest(journey.idHash, TRANSITIONS.cancelled, T0)).toBeDefined();
    expect(await open(t, journey)).toEqual({ kind: 'dead_end', reason: 'finished', uiLocale: 'fil' });
    t.clock.set(T0 + 900);
    expect(await open(t, journey)).toEqual({ kind: 'dead_end', reason: 'finished', uiLocale: 'fil' });
    const expiring = await t.begin({ ui_locales: 'fil' });
    t.clock.set(T0 + 1800);
    expect(await open(t, expiring)).toEqual({ kind: 'dead_end', reason: 'expired' });
  });

  it('a client disabled, removed, or given another redirect URI meanwhile: client_unavailable, nothing sent to the old one', async () => {
    const t = await journeySetup();
    const journey = await t.begin();
    for (const client of [{ ...ACME, status: 'disabled' as const }, undefined, { ...ACME, redirectUri: 'https://acme.example/new-callback' }]) {
      expect(await open(t, journey, {}, { ...t.deps, findClient: async () => client })).toEqual({ kind: 'dead_end', reason: 'client_unavailable' });
    }
    expect(await opened(t, journey)).toMatchObject({ client: ACME });
  });
});

describe('pageForState and firstPage', () => {
  /** The journey as opened, with its status set to `status` (pageForState reads nothing else of it). */
  async function inState(status: JourneyState, query: Record<string, string> = {}) {
    const t = await journeySetup();
    await t.addCustomer();
    const journey = await opened(t, await t.begin(query));
    return { t, journey: { ...journey, record: { ...journey.record, status } } };
  }

  it.each([
    ['pending', {}, { kind: 'goto', page: 'login' }],
    ['pending', { user_id: MOBILE }, { kind: 'goto', page: 'login' }],
    ['pending', { user_id: OTHER_MOBILE }, { kind: 'goto', page: 'register' }],
    ['otp_sent', {}, { kind: 'goto', page: 'otp' }],
    ['consent_required', {}, { kind: 'goto', page: 'consent' }],
    ['code_issued', {}, { kind: 'dead_end', reason: 'finished' }],
    ['cancelled', {}, { kind: 'dead_end', reason: 'finished' }],
  ] as const)('%s with %j: %j', async (status, query, expected) => {
    const { t, journey } = await inState(status, query);
    const result = pageForState(journey);
    expect(result).toEqual(expected.kind === 'goto' ? { ...expected, requestId: journey.requestId } : expected);
  });

  it('firstPage: registration only when user_id names no account; the journey is opened knowing whether it does', async () => {
    for (const [query, page, hinted] of [
      [{}, 'login', false],
      [{ user_id: MOBILE }, 'login', true],
      [{ user_id: OTHER_MOBILE }, 'register', false],
    ] as const) {
      const { journey } = await inState('pending', query);
      expect(firstPage(journey), JSON.stringify(query)).toBe(page);
      expect(journey.hintRegistered, JSON.stringify(query)).toBe(hinted);
    }
  });
});
