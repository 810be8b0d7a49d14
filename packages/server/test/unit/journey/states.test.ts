import { describe, expect, it } from 'vitest';
import type { AuthorizationRequestRecord } from '../../../src/core/journey/records.js';
import { canMove, FINAL_STATES, TRANSITIONS, type JourneyState } from '../../../src/core/journey/states.js';
import { codeState } from '../../../src/core/codes/authorization-code.js';
import { AUTHORIZATION_REQUEST_TTL_SECONDS } from '../../../src/core/lifetimes.js';
import { memoryStorage, T0 } from '../otp/otp-fixtures.js';

const STATES: readonly JourneyState[] = ['pending', 'otp_sent', 'reset_otp_sent', 'reset_verified', 'consent_required', 'code_issued', 'cancelled'];
/** Where a customer may log in, register or ask for a PIN reset: every state of the sign-in but consent and the final ones. */
const SIGNING_IN: readonly JourneyState[] = ['pending', 'otp_sent', 'reset_otp_sent', 'reset_verified'];
type TransitionName = keyof typeof TRANSITIONS;

/**
 * The journey's moves as docs/journey.md draws them, written out by hand (not
 * read from `TRANSITIONS`): for each, the states it may start from and where it leads.
 */
const EXPECTED: Record<TransitionName, { from: readonly JourneyState[]; to: JourneyState }> = {
  codeSent: { from: SIGNING_IN, to: 'otp_sent' },
  codeResent: { from: ['otp_sent'], to: 'otp_sent' },
  otpVerified: { from: ['otp_sent'], to: 'code_issued' },
  passkeyVerified: { from: SIGNING_IN, to: 'code_issued' },
  resetCodeSent: { from: SIGNING_IN, to: 'reset_otp_sent' },
  resetVerified: { from: ['reset_otp_sent'], to: 'reset_verified' },
  pinReset: { from: ['reset_verified'], to: 'pending' },
  approved: { from: ['consent_required'], to: 'code_issued' },
  loginRequired: { from: ['consent_required'], to: 'pending' },
  accountSwitched: { from: ['consent_required'], to: 'pending' },
  cancelled: { from: [...SIGNING_IN, 'consent_required'], to: 'cancelled' },
};

/** Every (transition, state) pair, and whether the move is allowed. */
const TABLE = (Object.keys(EXPECTED) as TransitionName[]).flatMap((name) =>
  STATES.map((state) => ({ name, state, allowed: EXPECTED[name].from.includes(state), to: EXPECTED[name].to })),
);

function journey(status: JourneyState, overrides: Partial<AuthorizationRequestRecord> = {}): AuthorizationRequestRecord {
  return {
    idHash: `journey-${status}`,
    clientId: 'cid_sandbox_acme',
    redirectUri: 'https://acme.example/cb',
    state: 'xyz',
    codeChallenge: null,
    loginHint: null,
    browserHash: 'browser-hash',
    createdAt: T0,
    expiresAt: T0 + AUTHORIZATION_REQUEST_TTL_SECONDS,
    completedAt: null,
    endedBy: null,
    status,
    profileId: status === 'pending' ? null : '123456789012',
    uiLocale: null,
    scopes: [],
    ...overrides,
  };
}

describe('TRANSITIONS', () => {
  it('are exactly the moves of the journey, with their names', () => {
    expect(Object.keys(TRANSITIONS).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const [name, expected] of Object.entries(EXPECTED)) {
      const transition = TRANSITIONS[name as TransitionName];
      expect([...transition.from].sort(), name).toEqual([...expected.from].sort());
      expect(transition.to, name).toBe(expected.to);
    }
    expect(TRANSITIONS.loginRequired.name).toBe('login_required');
    expect(TRANSITIONS.otpVerified.name).toBe('otp_verified');
    expect(TRANSITIONS.resetCodeSent.name).toBe('reset_code_sent');
    expect(TRANSITIONS.resetVerified.name).toBe('reset_verified');
    expect(TRANSITIONS.pinReset.name).toBe('pin_reset');
    expect(TRANSITIONS.codeResent.name).toBe('code_resent');
  });

  it('never leave a final state', () => {
    expect([...FINAL_STATES].sort()).toEqual(['cancelled', 'code_issued']);
    for (const transition of Object.values(TRANSITIONS)) {
      for (const final of FINAL_STATES) expect(canMove(final, transition), `${transition.name} from ${final}`).toBe(false);
    }
  });

  it.each(TABLE)('canMove: $name from $state is $allowed', ({ name, state, allowed }) => {
    expect(canMove(state, TRANSITIONS[name])).toBe(allowed);
  });
});

describe('transitionAuthorizationRequest', () => {
  it.each(TABLE)('$name from $state: moves to $to only when allowed ($allowed)', async ({ name, state, allowed, to }) => {
    const storage = await memoryStorage();
    const before = journey(state);
    await storage.authorizationRequests.insertAuthorizationRequest(before);
    const moved = await storage.authorizationRequests.transitionAuthorizationRequest(before.idHash, TRANSITIONS[name], T0 + 10);
    const after = await storage.authorizationRequests.findAuthorizationRequest(before.idHash);
    if (allowed) {
      const completedAt = FINAL_STATES.includes(to) ? T0 + 10 : null;
      expect(moved).toEqual({ ...before, status: to, completedAt });
      expect(after).toEqual(moved);
    } else {
      expect(moved).toBeUndefined();
      expect(after).toEqual(before);
    }
  });

  it('moves an unexpired journey until the second before its expiry, never at or after it', async () => {
    const storage = await memoryStorage();
    const expiresAt = T0 + AUTHORIZATION_REQUEST_TTL_SECONDS;
    for (const [id, at, moves] of [
      ['before', expiresAt - 1, true],
      ['at', expiresAt, false],
      ['after', expiresAt + 1, false],
    ] as const) {
      await storage.authorizationRequests.insertAuthorizationRequest(journey('pending', { idHash: id }));
      const moved = await storage.authorizationRequests.transitionAuthorizationRequest(id, TRANSITIONS.cancelled, at);
      expect(moved !== undefined, `${id} the expiry`).toBe(moves);
      expect((await storage.authorizationRequests.findAuthorizationRequest(id))?.status).toBe(moves ? 'cancelled' : 'pending');
    }
  });

  it('binds the customer when given, unbinds with null, and keeps it when not given', async () => {
    const storage = await memoryStorage();
    const store = storage.authorizationRequests;
    await store.insertAuthorizationRequest(journey('pending'));
    const id = journey('pending').idHash;
    expect((await store.transitionAuthorizationRequest(id, TRANSITIONS.codeSent, T0, '111111111111'))?.profileId).toBe('111111111111');
    expect((await store.transitionAuthorizationRequest(id, TRANSITIONS.codeSent, T0))?.profileId).toBe('111111111111');
    expect((await store.transitionAuthorizationRequest(id, TRANSITIONS.codeSent, T0, '222222222222'))?.profileId).toBe('222222222222');

    await store.insertAuthorizationRequest(journey('consent_required'));
    const consent = journey('consent_required').idHash;
    expect(await store.transitionAuthorizationRequest(consent, TRANSITIONS.loginRequired, T0, null)).toMatchObject({ status: 'pending', profileId: null });
  });

  it('answers undefined for a journey that does not exist', async () => {
    const storage = await memoryStorage();
    expect(await storage.authorizationRequests.transitionAuthorizationRequest('no-such-journey', TRANSITIONS.cancelled, T0)).toBeUndefined();
  });

  it('lets exactly one of concurrent moves from the same state win', async () => {
    const storage = await memoryStorage();
    const record = journey('otp_sent');
    await storage.authorizationRequests.insertAuthorizationRequest(record);
    const results = await Promise.all([
      storage.authorizationRequests.transitionAuthorizationRequest(record.idHash, TRANSITIONS.otpVerified, T0),
      storage.authorizationRequests.transitionAuthorizationRequest(record.idHash, TRANSITIONS.cancelled, T0),
      storage.authorizationRequests.transitionAuthorizationRequest(record.idHash, TRANSITIONS.otpVerified, T0),
    ]);
    const winners = results.filter((result) => result !== undefined);
    expect(winners).toHaveLength(1);
    expect((await storage.authorizationRequests.findAuthorizationRequest(record.idHash))?.status).toBe(winners[0]?.status);
  });
});

describe('codeState', () => {
  it('is issued until the second before its expiry, expired at and after it, redeemed once consumed', () => {
    const code = { consumedAt: null, expiresAt: T0 + 300 };
    expect(codeState(code, T0 + 299)).toBe('issued');
    expect(codeState(code, T0 + 300)).toBe('expired');
    expect(codeState(code, T0 + 301)).toBe('expired');
    expect(codeState({ ...code, consumedAt: T0 + 10 }, T0 + 20)).toBe('redeemed');
    expect(codeState({ ...code, consumedAt: T0 + 10 }, T0 + 400)).toBe('redeemed');
  });
});
