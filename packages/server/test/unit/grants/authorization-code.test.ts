import { randomBytes } from 'node:crypto';
import { decodeJwt, jwtDecrypt } from 'jose';
import { describe, expect, it } from 'vitest';
import { createAuditLog } from '../../../src/core/audit/audit-log.js';
import { s256Challenge } from '../../../src/core/authorize/pkce.js';
import type { Client } from '../../../src/core/clients/client.js';
import { fixedClock } from '../../../src/core/clock.js';
import type { Customer } from '../../../src/core/customers/customer.js';
import { createCustomer } from '../../../src/core/customers/manage-customers.js';
import { InvalidGrant, InvalidRequest } from '../../../src/core/errors.js';
import { hashCode } from '../../../src/core/codes/authorization-code.js';
import { issueCode } from '../../../src/core/journey/code.js';
import { redeemCode, type RedeemCodeDeps } from '../../../src/core/grants/authorization-code.js';
import { NO_REFRESH_TOKEN } from '../../../src/core/tokens/records.js';
import { KeyRing } from '../../../src/core/keys/key-ring.js';
import { deriveKey } from '../../../src/core/keys/master-key.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { memoryStorage } from '../otp/otp-fixtures.js';
import { cachedPinHash } from '../../helpers/pin-hash.js';
import { ACME, ISSUER, MOBILE, OTHER_CLIENT, PIN, REDIRECT, T0 } from '../journey/fixtures.js';
import { pinSmsAuthentication, type Authentication } from '../../../src/core/authentication.js';

const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
/** Acme allowed to refresh: only such a client gets a refresh token. */
const ACME_REFRESHING: Client = { ...ACME, grants: ['client_credentials', 'authorization_code', 'refresh_token'] };
const URLS = { authUrl: ISSUER, baseUrl: 'https://api.connect.test' };

async function addCustomer(storage: Storage, clock = fixedClock(T0)): Promise<Customer> {
  return (await createCustomer({ mobile: MOBILE, pin: '', pinHash: await cachedPinHash(PIN) }, { customers: storage.customers, clock })).customer;
}

/** How the customer of `withCode` signed in: PIN + SMS, 30 s before the code was issued (a silent sign-in's code is younger than its sign-in). */
const SIGN_IN = pinSmsAuthentication(T0 - 30, 'sign_in_otp');

/** A real in-memory database and key ring, a customer, and one code of Acme issued at T0 (valid 300 s). */
async function withCode(options: { codeChallenge?: string; authentication?: Authentication | null } = {}) {
  const storage = await memoryStorage();
  const clock = fixedClock(T0);
  const customer = await addCustomer(storage, clock);
  await storage.clients.insertClient(ACME);
  const keys = await KeyRing.open({ keys: storage.keys, sealKey: deriveKey(randomBytes(32), 'key-sealing'), clock });
  const deps: RedeemCodeDeps = {
    keys,
    clock,
    urls: URLS,
    lifetimes: { accessTokenSeconds: 3600, refreshTokenSeconds: 86_400 },
    codes: storage.codes,
    transaction: (work) => storage.transaction(work),
    audit: createAuditLog(storage.audit, clock),
  };
  const location = await issueCode(
    { clientId: ACME.id, redirectUri: REDIRECT, state: null, codeChallenge: options.codeChallenge ?? null, scopes: [] },
    customer,
    options.authentication === undefined ? SIGN_IN : options.authentication,
    storage.codes,
    { clock, lifetimes: { codeSeconds: 300 }, issuer: ISSUER },
  );
  const code = new URL(location).searchParams.get('code') ?? '';
  const redeem = (input: { code?: string; redirectUri?: string; verifier?: string } = {}, client: Client = ACME_REFRESHING) =>
    redeemCode({ code, redirectUri: REDIRECT, verifier: options.codeChallenge ? VERIFIER : undefined, ...input }, client, deps);
  const stored = () => storage.codes.findAuthorizationCode(hashCode(code));
  return { storage, clock, keys, customer, deps, code, redeem, stored };
}

type Setup = Awaited<ReturnType<typeof withCode>>;

/** One redemption: how the code was issued, what happened since, what is sent, and what must come of it. */
interface Case {
  readonly name: string;
  readonly pkce?: boolean;
  /** Seconds since the code was issued. */
  readonly after?: number;
  readonly meanwhile?: (s: Setup) => Promise<unknown>;
  readonly input?: { code?: string; redirectUri?: string; verifier?: string };
  readonly client?: Client;
  /** `undefined`: tokens. */
  readonly error?: { readonly type: typeof InvalidGrant | typeof InvalidRequest; readonly description: RegExp };
  /** Whether the code is consumed afterwards. */
  readonly consumed: boolean;
}

const CASES: readonly Case[] = [
  { name: 'a valid code', consumed: true },
  { name: 'a code 299 s old', after: 299, consumed: true },
  { name: 'a code 300 s old', after: 300, error: { type: InvalidGrant, description: /expired/ }, consumed: false },
  { name: 'a code 301 s old', after: 301, error: { type: InvalidGrant, description: /expired/ }, consumed: false },
  { name: 'a code an hour old', after: 3600, error: { type: InvalidGrant, description: /expired/ }, consumed: false },
  { name: 'an unknown code', input: { code: 'not-a-code' }, error: { type: InvalidGrant, description: /^authorization code is invalid$/ }, consumed: false },
  { name: 'the code of another client', client: OTHER_CLIENT, error: { type: InvalidGrant, description: /^authorization code is invalid$/ }, consumed: false },
  { name: 'another redirect_uri', input: { redirectUri: `${REDIRECT}/` }, error: { type: InvalidGrant, description: /redirect_uri/ }, consumed: false },
  { name: 'a redirect_uri with a query added', input: { redirectUri: `${REDIRECT}?x=1` }, error: { type: InvalidGrant, description: /redirect_uri/ }, consumed: false },
  { name: 'a verifier for a code without a challenge (RFC 9700 §4.8.2)', input: { verifier: VERIFIER }, error: { type: InvalidGrant, description: /no code_challenge/ }, consumed: false },
  { name: 'a malformed verifier for a code without a challenge', input: { verifier: 'short' }, error: { type: InvalidRequest, description: /code_verifier/ }, consumed: false },
  { name: 'PKCE: the right verifier', pkce: true, consumed: true },
  { name: 'PKCE: no verifier', pkce: true, input: { verifier: undefined }, error: { type: InvalidGrant, description: /code_verifier is required/ }, consumed: false },
  { name: 'PKCE: a wrong verifier', pkce: true, input: { verifier: 'a'.repeat(43) }, error: { type: InvalidGrant, description: /does not match/ }, consumed: false },
  { name: 'PKCE: a verifier of 42 characters', pkce: true, input: { verifier: VERIFIER.slice(0, 42) }, error: { type: InvalidRequest, description: /43 to 128/ }, consumed: false },
  { name: 'PKCE: a verifier of 129 characters', pkce: true, input: { verifier: 'a'.repeat(129) }, error: { type: InvalidRequest, description: /43 to 128/ }, consumed: false },
  { name: 'PKCE: a verifier with a character outside the set', pkce: true, input: { verifier: `${VERIFIER.slice(0, 42)}+` }, error: { type: InvalidRequest, description: /43 to 128/ }, consumed: false },
  {
    name: 'a customer an operator locked after the code was issued',
    meanwhile: (s) => s.storage.customers.updateCustomer(s.customer.profileId, { status: 'locked' }, T0 + 1),
    after: 2,
    error: { type: InvalidGrant, description: /can no longer sign in/ },
    consumed: true,
  },
  {
    name: 'a used code',
    meanwhile: (s) => s.redeem(),
    after: 10,
    error: { type: InvalidGrant, description: /already used/ },
    consumed: true,
  },
];

describe('redeemCode', () => {
  it.each(CASES)('$name', async ({ pkce, after, meanwhile, input, client, error, consumed }) => {
    const s = await withCode(pkce ? { codeChallenge: s256Challenge(VERIFIER) } : {});
    await meanwhile?.(s);
    s.clock.set(T0 + (after ?? 0));
    const outcome = await s.redeem(input, client).then(
      (tokens) => ({ tokens }),
      (thrown: unknown) => ({ thrown }),
    );
    if (error) {
      expect('thrown' in outcome ? outcome.thrown : outcome).toBeInstanceOf(error.type);
      const refusal = (outcome as { thrown: InvalidGrant }).thrown;
      expect(refusal.description).toMatch(error.description);
    } else {
      expect(outcome).toMatchObject({ tokens: { accessToken: { token: expect.any(String) }, refreshToken: { token: expect.any(String) } } });
    }
    const record = await s.stored();
    if (consumed) expect(record?.consumedAt).not.toBeNull();
    else expect(record?.consumedAt).toBeNull();
    // A refusal that leaves the code unused leaves it to the right exchange, while it lives.
    if (error && !consumed && (after ?? 0) < 300) await expect(s.redeem()).resolves.toBeDefined();
  });

  it('mints a JWE access token and a refresh token for the customer and records their token session', async () => {
    const s = await withCode();
    s.clock.advance(5);
    const { accessToken, refreshToken } = await s.redeem();
    const refresh = decodeJwt(refreshToken!.token);
    expect(refresh).toMatchObject({ sub: s.customer.profileId, client_id: ACME.id, iss: ISSUER, aud: ISSUER, iat: T0 + 5, exp: T0 + 5 + 86_400, jti: refreshToken!.jti });
    const { payload: access } = await jwtDecrypt(accessToken.token, s.keys.encryptionKey().key, { currentDate: new Date((T0 + 5) * 1000) });
    expect(access).toMatchObject({ sub: s.customer.profileId, client_id: ACME.id, aud: URLS.baseUrl, sid: refresh.sid, iat: T0 + 5, exp: T0 + 5 + 3600, jti: accessToken.jti });
    // Both carry the code's sign-in as it was, not the exchange's time.
    const signIn = { acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], auth_time: T0 - 30 };
    expect(access).toMatchObject(signIn);
    expect(refresh).toMatchObject(signIn);
    expect(await s.stored()).toMatchObject({ consumedAt: T0 + 5 });
    expect(await s.storage.tokenSessions.findTokenSession(String(refresh.sid))).toEqual({
      sid: refresh.sid,
      clientId: ACME.id,
      profileId: s.customer.profileId,
      codeHash: hashCode(s.code),
      refreshJti: refreshToken!.jti,
      accessJti: accessToken.jti,
      createdAt: T0 + 5,
      refreshExpiresAt: T0 + 5 + 86_400,
      accessExpiresAt: T0 + 5 + 3600,
      revokedAt: null,
      authentication: SIGN_IN,
    });
  });

  it('a code of a session whose sign-in is unknown (from before it was recorded) gives tokens without acr, amr or auth_time', async () => {
    const s = await withCode({ authentication: null });
    const { accessToken, refreshToken } = await s.redeem();
    const { payload: access } = await jwtDecrypt(accessToken.token, s.keys.encryptionKey().key, { currentDate: new Date(T0 * 1000) });
    for (const claims of [access, decodeJwt(refreshToken!.token)]) {
      expect(claims).not.toHaveProperty('acr');
      expect(claims).not.toHaveProperty('amr');
      expect(claims).not.toHaveProperty('auth_time');
    }
    expect((await s.storage.tokenSessions.findTokenSession(String(access.sid)))?.authentication).toBeNull();
  });

  it('a client without the refresh_token grant gets an access token only; its session has no refresh token and ends with it', async () => {
    const s = await withCode();
    s.clock.advance(5);
    const redeemed = await s.redeem({}, ACME);
    expect(Object.keys(redeemed)).toEqual(['accessToken', 'scopes']);
    const { payload: access } = await jwtDecrypt(redeemed.accessToken.token, s.keys.encryptionKey().key, { currentDate: new Date((T0 + 5) * 1000) });
    expect(await s.storage.tokenSessions.findTokenSession(String(access.sid))).toEqual({
      sid: access.sid,
      clientId: ACME.id,
      profileId: s.customer.profileId,
      codeHash: hashCode(s.code),
      refreshJti: NO_REFRESH_TOKEN,
      accessJti: redeemed.accessToken.jti,
      createdAt: T0 + 5,
      refreshExpiresAt: T0 + 5 + 3600,
      accessExpiresAt: T0 + 5 + 3600,
      revokedAt: null,
      authentication: SIGN_IN,
    });
  });

  it('a replay revokes the tokens of the first exchange and is audited, also once the code expired', async () => {
    const s = await withCode();
    const first = await s.redeem();
    const sid = String(decodeJwt(first.refreshToken!.token).sid);
    s.clock.set(T0 + 1000);
    await expect(s.redeem()).rejects.toThrow(/already used/);
    expect((await s.storage.tokenSessions.findTokenSession(sid))?.revokedAt).toBe(T0 + 1000);
    const audits = await s.storage.audit.listAuditEvents({ type: 'code.replayed', limit: 10 });
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ actor: `client:${ACME.id}`, subject: s.customer.profileId, outcome: 'failure', at: T0 + 1000, details: { revoked_sessions: 1 } });
  });

  it('a refusal that is no replay is not audited', async () => {
    const s = await withCode();
    s.clock.set(T0 + 300);
    await expect(s.redeem()).rejects.toThrow(/expired/);
    await expect(s.redeem({}, OTHER_CLIENT)).rejects.toThrow(/invalid/);
    expect(await s.storage.audit.listAuditEvents({ type: 'code.replayed', limit: 10 })).toEqual([]);
  });

  it('a locked customer\'s code gives no tokens and stays used: nothing to revoke on a second try', async () => {
    const s = await withCode();
    await s.storage.customers.updateCustomer(s.customer.profileId, { status: 'locked' }, T0);
    await expect(s.redeem()).rejects.toThrow(/can no longer sign in/);
    await expect(s.redeem()).rejects.toThrow(/already used/);
    expect(await s.storage.audit.listAuditEvents({ type: 'code.replayed', limit: 10 })).toMatchObject([{ details: { revoked_sessions: 0 } }]);
  });

  it('of concurrent exchanges at most one gets tokens, and the replays leave none of them usable', async () => {
    const s = await withCode();
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => s.redeem()));
    // One exchange redeems the code; each other one is a replay. A replay that
    // comes before the winner adds its token session ends the code, and the
    // winner gets no tokens either.
    expect(results.filter((result) => result.status === 'fulfilled').length).toBeLessThanOrEqual(1);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toMatchObject({ error: 'invalid_grant', description: /already used/ });
    }
    expect((await s.stored())?.consumedAt).toBe(T0);
    // No token session of the code is left unrevoked.
    expect(await s.storage.tokenSessions.revokeTokenSessionsByCode(hashCode(s.code), T0)).toBe(0);
  });
});
