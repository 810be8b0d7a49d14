import { randomBytes } from 'node:crypto';
import { decodeJwt, jwtDecrypt } from 'jose';
import { describe, expect, it } from 'vitest';
import { issueCodeRedirect } from '../../../src/core/authorize/issue-code.js';
import { s256Challenge } from '../../../src/core/authorize/pkce.js';
import type { Client } from '../../../src/core/clients/client.js';
import { createAuditLog } from '../../../src/core/audit/audit-log.js';
import { fixedClock } from '../../../src/core/clock.js';
import type { Customer } from '../../../src/core/customers/customer.js';
import { InvalidGrant, InvalidRequest, type OAuthError } from '../../../src/core/errors.js';
import { authorizationCodeGrant, hashCode, type AuthorizationCodeDeps } from '../../../src/core/grants/authorization-code.js';
import { KeyRing } from '../../../src/core/keys/key-ring.js';
import { deriveKey } from '../../../src/core/keys/master-key.js';
import { memoryStorage, T0 } from '../login/otp-fixtures.js';

const REDIRECT = 'https://acme.example/cb';
const ACME = { id: 'cid_sandbox_acme', redirectUri: REDIRECT } as Client;
const OTHER = { id: 'cid_sandbox_other', redirectUri: REDIRECT } as Client;
const CUSTOMER = { profileId: '123456789012', mobile: '+639171234567' } as Customer;
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const URLS = { authUrl: 'https://auth.connect.test', baseUrl: 'https://api.connect.test' };

/** A real in-memory database and key ring, and one code created at T0 (TTL 300 s). */
async function setup(options: { codeChallenge?: string } = {}) {
  const storage = await memoryStorage();
  const clock = fixedClock(T0);
  const keys = await KeyRing.open({ keys: storage.keys, sealKey: deriveKey(randomBytes(32), 'key-sealing'), clock });
  const deps: AuthorizationCodeDeps = {
    transaction: (work) => storage.transaction(work),
    codes: storage.codes,
    clock,
    keys,
    urls: URLS,
    accessTokenTtlSeconds: 3600,
    refreshTokenTtlSeconds: 86_400,
    audit: createAuditLog(storage.audit, clock),
  };
  const location = await issueCodeRedirect(
    { clientId: ACME.id, redirectUri: REDIRECT, state: null, codeChallenge: options.codeChallenge ?? null },
    CUSTOMER,
    { codes: storage.codes, clock, codeTtlSeconds: 300, issuer: URLS.authUrl },
  );
  const code = new URL(location).searchParams.get('code') ?? '';
  const exchange = (params: Record<string, string> = {}, client: Client = ACME) =>
    authorizationCodeGrant.handle({ params: { code, redirect_uri: REDIRECT, ...params }, client }, deps);
  return { storage, clock, keys, deps, code, exchange };
}

async function refusal(promise: Promise<unknown>): Promise<OAuthError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof InvalidGrant) && !(error instanceof InvalidRequest)) throw new Error(`expected an OAuth error, got ${String(error)}`);
  return error;
}

describe('authorization_code grant', () => {
  it('exchanges a valid code for tokens and consumes it', async () => {
    const { exchange, storage, code, keys } = await setup();
    const result = await exchange();
    expect(result).toMatchObject({ tokenType: 'Bearer', expiresIn: 3600 });
    const refresh = decodeJwt(result.refreshToken ?? '');
    expect(refresh).toMatchObject({ sub: CUSTOMER.profileId, client_id: ACME.id, iat: T0, exp: T0 + 86_400 });
    const { payload: access } = await jwtDecrypt(result.accessToken, keys.encryptionKey().key, { currentDate: new Date(T0 * 1000) });
    expect(access).toMatchObject({ sub: CUSTOMER.profileId, client_id: ACME.id, sid: refresh.sid, iat: T0, exp: T0 + 3600 });
    expect((await storage.codes.findAuthorizationCode(hashCode(code)))?.consumedAt).toBe(T0);
    expect(await storage.tokenSessions.findTokenSession(String(refresh.sid))).toMatchObject({
      clientId: ACME.id,
      profileId: CUSTOMER.profileId,
      codeHash: hashCode(code),
      refreshJti: refresh.jti,
      accessJti: access.jti,
      revokedAt: null,
    });
  });

  it('exchanges a code 299 s after it was created', async () => {
    const { exchange, clock } = await setup();
    clock.set(T0 + 299);
    await expect(exchange()).resolves.toMatchObject({ tokenType: 'Bearer' });
  });

  it.each([300, 301, 3600])('refuses a code %i s after it was created: expired', async (age) => {
    const { exchange, clock, storage, code } = await setup();
    clock.set(T0 + age);
    const error = await refusal(exchange());
    expect(error).toBeInstanceOf(InvalidGrant);
    expect(error.description).toMatch(/expired/);
    expect((await storage.codes.findAuthorizationCode(hashCode(code)))?.consumedAt).toBeNull();
  });

  it('refuses a used code, and the replay revokes the token session of the first exchange', async () => {
    const { exchange, clock, storage } = await setup();
    const first = await exchange();
    const sid = String(decodeJwt(first.refreshToken ?? '').sid);
    clock.advance(10);
    const error = await refusal(exchange());
    expect(error).toBeInstanceOf(InvalidGrant);
    expect(error.description).toMatch(/already used/);
    expect((await storage.tokenSessions.findTokenSession(sid))?.revokedAt).toBe(T0 + 10);
  });

  it('refuses a replay after the code expired too, and still revokes', async () => {
    const { exchange, clock, storage } = await setup();
    const sid = String(decodeJwt((await exchange()).refreshToken ?? '').sid);
    clock.set(T0 + 1000);
    expect((await refusal(exchange())).description).toMatch(/already used/);
    expect((await storage.tokenSessions.findTokenSession(sid))?.revokedAt).toBe(T0 + 1000);
  });

  it('lets exactly one of concurrent exchanges succeed', async () => {
    const { exchange } = await setup();
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => exchange()));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(InvalidGrant);
  });

  it('refuses an unknown code', async () => {
    const { exchange } = await setup();
    expect((await refusal(exchange({ code: 'not-a-code' }))).description).toBe('authorization code is invalid');
  });

  it('refuses the code of another client, as if unknown, and leaves it to its client', async () => {
    const { exchange } = await setup();
    const error = await refusal(exchange({}, OTHER));
    expect(error).toBeInstanceOf(InvalidGrant);
    expect(error.description).toBe('authorization code is invalid');
    await expect(exchange()).resolves.toMatchObject({ tokenType: 'Bearer' });
  });

  it('refuses another redirect_uri and leaves the code usable', async () => {
    const { exchange } = await setup();
    expect((await refusal(exchange({ redirect_uri: `${REDIRECT}/` }))).description).toMatch(/redirect_uri/);
    await expect(exchange()).resolves.toMatchObject({ tokenType: 'Bearer' });
  });

  it('refuses a code_verifier for a code created without a challenge (RFC 9700 §4.8.2)', async () => {
    const { exchange } = await setup();
    expect((await refusal(exchange({ code_verifier: VERIFIER }))).description).toMatch(/no code_challenge/);
    await expect(exchange()).resolves.toBeDefined();
  });

  describe('with PKCE', () => {
    it('accepts the right verifier', async () => {
      const { exchange } = await setup({ codeChallenge: s256Challenge(VERIFIER) });
      await expect(exchange({ code_verifier: VERIFIER })).resolves.toMatchObject({ tokenType: 'Bearer' });
    });

    it('refuses a missing or wrong verifier and leaves the code usable', async () => {
      const { exchange } = await setup({ codeChallenge: s256Challenge(VERIFIER) });
      expect((await refusal(exchange())).description).toMatch(/code_verifier is required/);
      expect((await refusal(exchange({ code_verifier: 'a'.repeat(43) }))).description).toMatch(/does not match/);
      await expect(exchange({ code_verifier: VERIFIER })).resolves.toBeDefined();
    });

    it('refuses a malformed verifier as invalid_request', async () => {
      const { exchange } = await setup({ codeChallenge: s256Challenge(VERIFIER) });
      const error = await refusal(exchange({ code_verifier: 'short' }));
      expect(error).toBeInstanceOf(InvalidRequest);
    });
  });

  it.each([['code'], ['redirect_uri']])('requires %s', async (name) => {
    const { deps, code } = await setup();
    const params: Record<string, string> = { code, redirect_uri: REDIRECT };
    delete params[name];
    const error = await refusal(authorizationCodeGrant.handle({ params, client: ACME }, deps));
    expect(error).toBeInstanceOf(InvalidRequest);
    expect(error.description).toBe(`${name} is required`);
  });
});
