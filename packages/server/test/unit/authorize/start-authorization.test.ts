import { describe, expect, it } from 'vitest';
import { AUTHORIZATION_REQUEST_TTL_SECONDS, startAuthorization, type StartAuthorizationDeps } from '../../../src/core/authorize/start-authorization.js';
import type { Client } from '../../../src/core/clients/client.js';
import { fixedClock } from '../../../src/core/clock.js';
import type { Customer } from '../../../src/core/customers/customer.js';
import { hashCode } from '../../../src/core/grants/authorization-code.js';
import { findSessionCustomer, hashCookieValue, startCustomerSession } from '../../../src/core/login/customer-session.js';
import { clientRecord } from '../../helpers/client-record.js';
import { memoryStorage, T0 } from '../login/otp-fixtures.js';

const ISSUER = 'https://auth.connect.test';
const REDIRECT = 'https://acme.example/cb';
const ACME: Client = clientRecord({ id: 'cid_acme', redirectUri: REDIRECT });
const CUSTOMER: Customer = {
  profileId: '123456789012',
  mobile: '+639171234567',
  name: null,
  pinHash: 'unused',
  status: 'active',
  failedPinAttempts: 0,
  lockedUntil: null,
  createdAt: T0,
  updatedAt: T0,
};
const QUERY = { response_type: 'code', client_id: ACME.id, redirect_uri: REDIRECT, state: 'xyz' };

async function setup() {
  const storage = await memoryStorage();
  await storage.customers.insertCustomer(CUSTOMER);
  const clock = fixedClock(T0);
  const deps: StartAuthorizationDeps = {
    findClient: async (id) => (id === ACME.id ? ACME : undefined),
    requests: storage.authorizationRequests,
    codes: storage.codes,
    sessions: storage.customerSessions,
    customers: storage.customers,
    clock,
    codeTtlSeconds: 300,
    issuer: ISSUER,
    sessionIdleSeconds: 1800,
    sessionTtlSeconds: 43_200,
  };
  const sessionId = await startCustomerSession(CUSTOMER, undefined, deps);
  return { storage, clock, deps, sessionId };
}

function params(location: string): Record<string, string> {
  expect(location.startsWith(`${REDIRECT}?`)).toBe(true);
  return Object.fromEntries(new URL(location).searchParams);
}

describe('startAuthorization', () => {
  it('shows an error page, never a redirect, for an unverified client or redirect URI', async () => {
    const { deps } = await setup();
    expect(await startAuthorization({ ...QUERY, redirect_uri: 'https://evil.example/' }, { browserId: 'b', sessionId: undefined }, deps)).toMatchObject({
      kind: 'page_error',
    });
  });

  it('sends other request errors back to the redirect URI with state and iss', async () => {
    const { deps } = await setup();
    const result = await startAuthorization({ ...QUERY, response_type: 'token' }, { browserId: 'b', sessionId: undefined }, deps);
    expect(result).toMatchObject({ kind: 'redirect', endSession: false });
    if (result.kind !== 'redirect') return;
    expect(params(result.location)).toEqual({ error: 'unsupported_response_type', error_description: 'response_type must be code', state: 'xyz', iss: ISSUER });
  });

  it('without a session: stores the request bound to the browser for 15 minutes and goes to the login page', async () => {
    const { deps, storage } = await setup();
    const result = await startAuthorization({ ...QUERY, user_id: '+63 917 123 4567' }, { browserId: 'browser-1', sessionId: undefined }, deps);
    expect(result).toMatchObject({ kind: 'login', endSession: false });
    if (result.kind !== 'login') return;
    expect(result.requestId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(AUTHORIZATION_REQUEST_TTL_SECONDS).toBe(900);
    expect(await storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(result.requestId))).toEqual({
      idHash: hashCookieValue(result.requestId),
      clientId: ACME.id,
      redirectUri: REDIRECT,
      state: 'xyz',
      codeChallenge: null,
      loginHint: '+639171234567',
      browserHash: hashCookieValue('browser-1'),
      createdAt: T0,
      expiresAt: T0 + 900,
      completedAt: null,
    });
  });

  it('with a live session and no prompt: straight back with a code for that customer', async () => {
    const { deps, sessionId, storage } = await setup();
    const result = await startAuthorization(QUERY, { browserId: 'b', sessionId }, deps);
    expect(result).toMatchObject({ kind: 'redirect', endSession: false });
    if (result.kind !== 'redirect') return;
    const p = params(result.location);
    expect(p).toMatchObject({ state: 'xyz', userId: '+63******4567', profileId: CUSTOMER.profileId, iss: ISSUER });
    expect(await storage.codes.findAuthorizationCode(hashCode(p.code ?? ''))).toMatchObject({ clientId: ACME.id, profileId: CUSTOMER.profileId });
  });

  it('with a live session of the customer user_id names: straight back with a code', async () => {
    const { deps, sessionId } = await setup();
    const result = await startAuthorization({ ...QUERY, user_id: CUSTOMER.mobile }, { browserId: 'b', sessionId }, deps);
    expect(result.kind).toBe('redirect');
  });

  it('with a live session of another customer than user_id: to the login page', async () => {
    const { deps, sessionId } = await setup();
    const result = await startAuthorization({ ...QUERY, user_id: '+639179999999' }, { browserId: 'b', sessionId }, deps);
    expect(result).toMatchObject({ kind: 'login', endSession: false });
  });

  it('prompt=login ends the session and forces a login', async () => {
    const { deps, sessionId } = await setup();
    const result = await startAuthorization({ ...QUERY, prompt: 'login' }, { browserId: 'b', sessionId }, deps);
    expect(result).toMatchObject({ kind: 'login', endSession: true });
    expect(await findSessionCustomer(sessionId, deps)).toBeUndefined();
  });

  it('prompt=none without a live session: login_required', async () => {
    const { deps } = await setup();
    const result = await startAuthorization({ ...QUERY, prompt: 'none' }, { browserId: 'b', sessionId: undefined }, deps);
    expect(result).toMatchObject({ kind: 'redirect' });
    if (result.kind !== 'redirect') return;
    expect(params(result.location)).toMatchObject({ error: 'login_required', state: 'xyz', iss: ISSUER });
  });

  it('prompt=none with a session that idled out: login_required', async () => {
    const { deps, sessionId, clock } = await setup();
    clock.advance(1800);
    const result = await startAuthorization({ ...QUERY, prompt: 'none' }, { browserId: 'b', sessionId }, deps);
    if (result.kind !== 'redirect') throw new Error(result.kind);
    expect(params(result.location).error).toBe('login_required');
  });

  it('prompt=none with a live session: a code', async () => {
    const { deps, sessionId } = await setup();
    const result = await startAuthorization({ ...QUERY, prompt: 'none' }, { browserId: 'b', sessionId }, deps);
    if (result.kind !== 'redirect') throw new Error(result.kind);
    expect(params(result.location).code).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
