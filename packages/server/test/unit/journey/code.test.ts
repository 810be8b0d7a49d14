import { describe, expect, it } from 'vitest';
import { s256Challenge } from '../../../src/core/authorize/pkce.js';
import { fixedClock } from '../../../src/core/clock.js';
import type { Customer } from '../../../src/core/customers/customer.js';
import { createCustomer } from '../../../src/core/customers/manage-customers.js';
import { buildErrorRedirect as errorRedirect } from '../../../src/core/authorize/redirect.js';
import { issueCode } from '../../../src/core/journey/code.js';
import { hashCode } from '../../../src/core/codes/authorization-code.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { memoryStorage } from '../otp/otp-fixtures.js';
import { cachedPinHash } from '../../helpers/pin-hash.js';
import { ACME, ISSUER, MASKED, MOBILE, PIN, REDIRECT, T0 } from './fixtures.js';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

async function addCustomer(storage: Storage, clock = fixedClock(T0)): Promise<Customer> {
  return (await createCustomer({ mobile: MOBILE, pin: '', pinHash: await cachedPinHash(PIN) }, { customers: storage.customers, clock })).customer;
}

describe('issueCode', () => {
  it('redirects with code, state, masked userId, profileId and iss, keeping the registered query', async () => {
    const storage = await memoryStorage();
    const customer = await addCustomer(storage);
    const location = await issueCode(
      { clientId: ACME.id, redirectUri: 'https://acme.example/cb?from=connect', state: 'st 1&2', codeChallenge: null, scopes: [] },
      customer,
      null,
      storage.codes,
      { clock: fixedClock(T0), lifetimes: { codeSeconds: 300 }, issuer: ISSUER },
    );
    const url = new URL(location);
    expect(`${url.origin}${url.pathname}`).toBe('https://acme.example/cb');
    expect([...url.searchParams.keys()]).toEqual(['from', 'code', 'state', 'userId', 'profileId', 'iss']);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ from: 'connect', state: 'st 1&2', userId: MASKED, profileId: customer.profileId, iss: ISSUER });
    expect(url.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('stores only the SHA-256 of the code, bound to client, redirect URI, customer and PKCE challenge, for codeSeconds', async () => {
    const storage = await memoryStorage();
    const customer = await addCustomer(storage);
    const challenge = s256Challenge(VERIFIER);
    const location = await issueCode({ clientId: ACME.id, redirectUri: REDIRECT, state: null, codeChallenge: challenge, scopes: [] }, customer, null, storage.codes, {
      clock: fixedClock(T0),
      lifetimes: { codeSeconds: 120 },
      issuer: ISSUER,
    });
    const code = new URL(location).searchParams.get('code') ?? '';
    expect(new URL(location).searchParams.has('state')).toBe(false);
    expect(await storage.codes.findAuthorizationCode(code)).toBeUndefined();
    expect(await storage.codes.findAuthorizationCode(hashCode(code))).toEqual({
      codeHash: hashCode(code),
      clientId: ACME.id,
      redirectUri: REDIRECT,
      profileId: customer.profileId,
      codeChallenge: challenge,
      createdAt: T0,
      expiresAt: T0 + 120,
      consumedAt: null,
      scopes: [],
      authentication: null,
    });
  });

  it('issues a new code every time', async () => {
    const storage = await memoryStorage();
    const customer = await addCustomer(storage);
    const deps = { clock: fixedClock(T0), lifetimes: { codeSeconds: 300 }, issuer: ISSUER };
    const codes = new Set<string | null>();
    for (let i = 0; i < 10; i++) {
      codes.add(new URL(await issueCode({ clientId: ACME.id, redirectUri: REDIRECT, state: null, codeChallenge: null, scopes: [] }, customer, null, storage.codes, deps)).searchParams.get('code'));
    }
    expect(codes.size).toBe(10);
  });
});

describe('errorRedirect', () => {
  it('carries error, error_description, state and iss back to the redirect URI', () => {
    const url = new URL(errorRedirect('https://acme.example/cb?from=connect', 'access_denied', 'the customer cancelled', 'xyz', ISSUER));
    expect(Object.fromEntries(url.searchParams)).toEqual({ from: 'connect', error: 'access_denied', error_description: 'the customer cancelled', state: 'xyz', iss: ISSUER });
  });

  it('leaves state out when the request had none', () => {
    expect(new URL(errorRedirect(REDIRECT, 'login_required', 'log in', null, ISSUER)).searchParams.has('state')).toBe(false);
  });
});
