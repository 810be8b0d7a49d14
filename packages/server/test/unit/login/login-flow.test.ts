import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startAuthorization } from '../../../src/core/authorize/start-authorization.js';
import type { Client } from '../../../src/core/clients/client.js';
import { createAuditLog } from '../../../src/core/audit/audit-log.js';
import { fixedClock } from '../../../src/core/clock.js';
import { createCustomer } from '../../../src/core/customers/manage-customers.js';
import { verifyPin as verifyCustomerPin } from '../../../src/core/customers/pin.js';
import { findSessionCustomer } from '../../../src/core/login/customer-session.js';
import {
  openPendingLogin,
  submitLogin,
  submitOtp,
  submitRegistration,
  type LoginFlowDeps,
  type PendingLogin,
} from '../../../src/core/login/login-flow.js';
import { OtpHasher } from '../../../src/core/login/one-time-pin.js';
import { clientRecord } from '../../helpers/client-record.js';
import { memoryStorage, openLimiter, recordingSender, T0 } from './otp-fixtures.js';

const MOBILE = '+639171234567';
const PIN = '7391';
const IP = '203.0.113.7';
const ACME: Client = clientRecord({ id: 'cid_acme' });

async function setup(query: Record<string, string> = {}) {
  const storage = await memoryStorage();
  const clock = fixedClock(T0);
  const sms = recordingSender();
  const deps: LoginFlowDeps = {
    findClient: async (id) => (id === ACME.id ? ACME : undefined),
    requests: storage.authorizationRequests,
    customers: storage.customers,
    audit: createAuditLog(storage.audit, clock),
    sessions: storage.customerSessions,
    codes: storage.codes,
    clock,
    codeTtlSeconds: 300,
    issuer: 'https://auth.connect.test',
    sessionIdleSeconds: 1800,
    sessionTtlSeconds: 43_200,
    otp: { challenges: storage.otpChallenges, hasher: new OtpHasher(randomBytes(32)), sms, limiter: openLimiter(), clock },
  };
  const browserId = 'browser-1';
  const started = await startAuthorization(
    { response_type: 'code', client_id: ACME.id, redirect_uri: ACME.redirectUri, state: 'xyz', ...query },
    { browserId, sessionId: undefined },
    deps,
  );
  if (started.kind !== 'login') throw new Error(started.kind);
  const open = async (): Promise<PendingLogin> => {
    const pending = await openPendingLogin(started.requestId, browserId, deps);
    if ('kind' in pending) throw new Error(pending.message);
    return pending;
  };
  return { storage, clock, sms, deps, open };
}

/** The SMS body without its one-time code, which could contain the PIN's digits by chance. */
const bodyWithoutCode = (body: string) => body.replace(/^\d{6} /, '');

describe('hosted login flow', () => {
  it('login: mobile + PIN sends a one-time PIN that never carries the PIN; the right one returns a code', async () => {
    const { sms, deps, open } = await setup();
    await createCustomer({ mobile: MOBILE, pin: PIN }, deps);
    expect(await submitLogin(await open(), { mobile: '+63 917 123 4567', pin: PIN }, IP, deps)).toMatchObject({ kind: 'goto', page: 'otp' });
    expect(sms.messages).toHaveLength(1);
    expect(sms.messages[0]?.to).toBe(MOBILE);
    expect(bodyWithoutCode(sms.messages[0]?.body ?? '')).not.toContain(PIN);
    expect(sms.messages[0]?.body).toContain('Acme Shop');

    const result = await submitOtp(await open(), sms.lastCode(), undefined, deps);
    expect(result.kind).toBe('client_redirect');
    if (result.kind !== 'client_redirect') return;
    const params = new URL(result.location).searchParams;
    expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('state')).toBe('xyz');
    expect(params.get('userId')).toBe('+63******4567');
    expect((await findSessionCustomer(result.sessionId, deps))?.mobile).toBe(MOBILE);
    // The request is finished: the same page cannot be used again.
    await expect(open()).rejects.toThrow(/expired/);
  });

  it('login: a wrong PIN sends nothing', async () => {
    const { sms, deps, open } = await setup();
    await createCustomer({ mobile: MOBILE, pin: PIN }, deps);
    expect(await submitLogin(await open(), { mobile: MOBILE, pin: '7392' }, IP, deps)).toMatchObject({ kind: 'login_page', error: { field: 'pin' } });
    expect(sms.messages).toEqual([]);
  });

  it('registration: the chosen PIN is kept only hashed, never sent; the account exists once the one-time PIN is right', async () => {
    const { storage, sms, deps, open } = await setup({ user_id: MOBILE });
    const pending = await open();
    expect(await submitRegistration(pending, { pin: PIN, pinConfirmation: PIN }, IP, deps)).toMatchObject({ kind: 'goto', page: 'otp' });
    expect(await storage.customers.findCustomerByMobile(MOBILE)).toBeUndefined();
    expect(bodyWithoutCode(sms.messages[0]?.body ?? '')).not.toContain(PIN);
    const challenge = await storage.otpChallenges.findLatestOtpChallenge(pending.request.idHash);
    expect(challenge?.pendingPinHash).toMatch(/^scrypt\$/);
    expect(challenge?.pendingPinHash).not.toContain(PIN);

    const result = await submitOtp(await open(), sms.lastCode(), undefined, deps);
    expect(result.kind).toBe('client_redirect');
    const customer = await storage.customers.findCustomerByMobile(MOBILE);
    expect(customer?.status).toBe('active');
    expect(await verifyCustomerPin(PIN, customer?.pinHash ?? '')).toBe(true);
  });
});
