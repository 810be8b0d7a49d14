import { describe, expect, it } from 'vitest';
import { errorRedirect, issueCodeRedirect } from '../../../src/core/authorize/issue-code.js';
import { fixedClock } from '../../../src/core/clock.js';
import type { Customer } from '../../../src/core/customers/customer.js';
import { hashCode } from '../../../src/core/grants/authorization-code.js';
import { memoryStorage, T0 } from '../login/otp-fixtures.js';

const ISSUER = 'https://auth.connect.test';
const CUSTOMER = { profileId: '123456789012', mobile: '+639171234567' } as Customer;
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('issueCodeRedirect', () => {
  it('redirects with code, state, masked userId, profileId and iss, keeping the registered query', async () => {
    const storage = await memoryStorage();
    const location = await issueCodeRedirect(
      { clientId: 'cid_acme', redirectUri: 'https://acme.example/cb?from=connect', state: 'st 1&2', codeChallenge: null },
      CUSTOMER,
      { codes: storage.codes, clock: fixedClock(T0), codeTtlSeconds: 300, issuer: ISSUER },
    );
    const url = new URL(location);
    expect(`${url.origin}${url.pathname}`).toBe('https://acme.example/cb');
    expect([...url.searchParams.keys()]).toEqual(['from', 'code', 'state', 'userId', 'profileId', 'iss']);
    expect(url.searchParams.get('from')).toBe('connect');
    expect(url.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')).toBe('st 1&2');
    expect(url.searchParams.get('userId')).toBe('+63******4567');
    expect(url.searchParams.get('profileId')).toBe('123456789012');
    expect(url.searchParams.get('iss')).toBe(ISSUER);
  });

  it('stores only the SHA-256 of the code, bound to client, redirect URI, customer and PKCE challenge, for codeTtlSeconds', async () => {
    const storage = await memoryStorage();
    const location = await issueCodeRedirect(
      { clientId: 'cid_acme', redirectUri: 'https://acme.example/cb', state: null, codeChallenge: CHALLENGE },
      CUSTOMER,
      { codes: storage.codes, clock: fixedClock(T0), codeTtlSeconds: 120, issuer: ISSUER },
    );
    const code = new URL(location).searchParams.get('code') ?? '';
    expect(new URL(location).searchParams.has('state')).toBe(false);
    expect(await storage.codes.findAuthorizationCode(code)).toBeUndefined();
    expect(await storage.codes.findAuthorizationCode(hashCode(code))).toEqual({
      codeHash: hashCode(code),
      clientId: 'cid_acme',
      redirectUri: 'https://acme.example/cb',
      profileId: '123456789012',
      codeChallenge: CHALLENGE,
      createdAt: T0,
      expiresAt: T0 + 120,
      consumedAt: null,
    });
  });

  it('issues a new code every time', async () => {
    const storage = await memoryStorage();
    const deps = { codes: storage.codes, clock: fixedClock(T0), codeTtlSeconds: 300, issuer: ISSUER };
    const request = { clientId: 'cid_acme', redirectUri: 'https://acme.example/cb', state: null, codeChallenge: null };
    const codes = new Set<string | null>();
    for (let i = 0; i < 10; i++) codes.add(new URL(await issueCodeRedirect(request, CUSTOMER, deps)).searchParams.get('code'));
    expect(codes.size).toBe(10);
  });
});

describe('errorRedirect', () => {
  it('carries error, error_description, state and iss back to the redirect URI', () => {
    const url = new URL(errorRedirect('https://acme.example/cb?from=connect', 'access_denied', 'the customer cancelled', 'xyz', ISSUER));
    expect(Object.fromEntries(url.searchParams)).toEqual({
      from: 'connect',
      error: 'access_denied',
      error_description: 'the customer cancelled',
      state: 'xyz',
      iss: ISSUER,
    });
  });

  it('leaves state out when the request had none', () => {
    const url = new URL(errorRedirect('https://acme.example/cb', 'login_required', 'log in', null, ISSUER));
    expect(url.searchParams.has('state')).toBe(false);
  });
});
