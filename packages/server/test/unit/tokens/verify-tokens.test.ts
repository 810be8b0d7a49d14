import { randomBytes } from 'node:crypto';
import { EncryptJWT, SignJWT, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { issueClientAccessToken } from '../../../src/core/grants/client-credentials.js';
import { decryptCustomerAccessToken, verifyClientAccessToken, verifyRefreshToken } from '../../../src/core/tokens/verify-tokens.js';
import { activateKeysNow, revokeKey, rotateKeys } from '../../../src/core/keys/key-rotation.js';
import { ACME, PROFILE_ID, T0, tokenSetup, URLS } from './token-fixtures.js';

type Setup = Awaited<ReturnType<typeof tokenSetup>>;

/** Signs `claims` with the setup's active key and the given `typ`. */
function signed(s: Setup, typ: string, claims: JWTPayload): Promise<string> {
  const { key, kid, alg } = s.keys.signingKey();
  return new SignJWT(claims).setProtectedHeader({ alg, kid, typ }).sign(key);
}

/** Encrypts `claims` with the setup's active encryption key. */
function encrypted(s: Setup, claims: JWTPayload, header: { typ?: string } = { typ: 'at+jwt' }): Promise<string> {
  const { key, kid } = s.keys.encryptionKey();
  return new EncryptJWT(claims).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid, ...header }).encrypt(key);
}

const CLIENT_CLAIMS = { iss: URLS.authUrl, aud: URLS.baseUrl, sub: ACME.id, client_id: ACME.id, jti: 'j1', iat: T0, exp: T0 + 60 };
const REFRESH_CLAIMS = { iss: URLS.authUrl, aud: URLS.authUrl, sub: PROFILE_ID, client_id: ACME.id, sid: 's1', jti: 'j2', iat: T0, exp: T0 + 60 };
const ACCESS_CLAIMS = { iss: URLS.authUrl, aud: URLS.baseUrl, sub: PROFILE_ID, client_id: ACME.id, sid: 's1', jti: 'j3', iat: T0, exp: T0 + 60 };

describe('verifyClientAccessToken', () => {
  it('accepts a token minted by issueClientAccessToken until exp - 1, not at exp', async () => {
    const s = await setup60();
    const { token } = await issueClientAccessToken(ACME, s.deps);
    s.clock.set(T0 + 59);
    expect(await verifyClientAccessToken(token, s.deps)).toEqual({ iss: URLS.authUrl, sub: ACME.id, clientId: ACME.id, jti: expect.any(String), iat: T0, exp: T0 + 60, scopes: [], jkt: null });
    s.clock.set(T0 + 60);
    expect(await verifyClientAccessToken(token, s.deps)).toBeUndefined();
  });

  it.each<[string, string, JWTPayload]>([
    ['typ JWT', 'JWT', CLIENT_CLAIMS],
    ['typ rt+jwt', 'rt+jwt', CLIENT_CLAIMS],
    ['another issuer', 'at+jwt', { ...CLIENT_CLAIMS, iss: 'https://evil.example' }],
    ['the auth URL as audience', 'at+jwt', { ...CLIENT_CLAIMS, aud: URLS.authUrl }],
    ['sub other than client_id', 'at+jwt', { ...CLIENT_CLAIMS, sub: PROFILE_ID }],
    ['no client_id', 'at+jwt', { ...CLIENT_CLAIMS, client_id: undefined }],
    ['a numeric client_id', 'at+jwt', { ...CLIENT_CLAIMS, client_id: 7, sub: '7' }],
    ['no jti', 'at+jwt', { ...CLIENT_CLAIMS, jti: undefined }],
    ['no iat', 'at+jwt', { ...CLIENT_CLAIMS, iat: undefined }],
    ['no exp', 'at+jwt', { ...CLIENT_CLAIMS, exp: undefined }],
    ['exp now', 'at+jwt', { ...CLIENT_CLAIMS, exp: T0 }],
  ])('refuses a well-signed token with %s', async (_name, typ, claims) => {
    const s = await setup60();
    expect(await verifyClientAccessToken(await signed(s, typ, claims), s.deps)).toBeUndefined();
  });

  it('refuses tokens longer than 4096 characters without parsing them', async () => {
    const s = await setup60();
    const token = await signed(s, 'at+jwt', { ...CLIENT_CLAIMS, pad: 'x'.repeat(4096) });
    expect(await verifyClientAccessToken(token, s.deps)).toBeUndefined();
  });

  it('a key retired by a rotation verifies until its window ends (longest lifetime + the 60 s margin), then no more', async () => {
    const s = await setup60();
    const { token } = await issueClientAccessToken(ACME, s.deps);
    const longLived = await signed(s, 'at+jwt', { ...CLIENT_CLAIMS, exp: T0 + 500 });
    const kid = s.keys.signingKey().kid;
    await rotateKeys({ storage: s.storage, sealKey: s.sealKey, clock: s.clock }, { maxTokenTtlSeconds: 60, publicationDelaySeconds: 0 });
    await s.keys.reload();
    expect(s.keys.signingKey().kid).not.toBe(kid);
    s.clock.set(T0 + 59);
    expect(await verifyClientAccessToken(token, s.deps)).toBeDefined();
    s.clock.set(T0 + 119);
    expect(await verifyClientAccessToken(longLived, s.deps)).toBeDefined();
    s.clock.set(T0 + 120);
    expect(await verifyClientAccessToken(longLived, s.deps)).toBeUndefined();
  });
});

describe('verifyRefreshToken', () => {
  it('accepts a refresh token until exp - 1', async () => {
    const s = await setup60();
    const token = await signed(s, 'rt+jwt', REFRESH_CLAIMS);
    s.clock.set(T0 + 59);
    expect(await verifyRefreshToken(token, s.deps)).toEqual({ iss: URLS.authUrl, sub: PROFILE_ID, clientId: ACME.id, sid: 's1', jti: 'j2', iat: T0, exp: T0 + 60, scopes: [], authentication: null, jkt: null });
    s.clock.set(T0 + 60);
    expect(await verifyRefreshToken(token, s.deps)).toBeUndefined();
  });

  it.each<[string, string, JWTPayload]>([
    ['typ at+jwt', 'at+jwt', REFRESH_CLAIMS],
    ['the base URL as audience', 'rt+jwt', { ...REFRESH_CLAIMS, aud: URLS.baseUrl }],
    ['no sid', 'rt+jwt', { ...REFRESH_CLAIMS, sid: undefined }],
    ['a numeric sid', 'rt+jwt', { ...REFRESH_CLAIMS, sid: 1 }],
    ['another issuer', 'rt+jwt', { ...REFRESH_CLAIMS, iss: 'https://evil.example' }],
  ])('refuses a well-signed token with %s', async (_name, typ, claims) => {
    const s = await setup60();
    expect(await verifyRefreshToken(await signed(s, typ, claims), s.deps)).toBeUndefined();
  });

  it('refuses a client access token', async () => {
    const s = await setup60();
    expect(await verifyRefreshToken((await issueClientAccessToken(ACME, s.deps)).token, s.deps)).toBeUndefined();
  });
});

describe('decryptCustomerAccessToken', () => {
  it('accepts a customer access token until exp - 1', async () => {
    const s = await setup60();
    const token = await encrypted(s, ACCESS_CLAIMS);
    s.clock.set(T0 + 59);
    expect(await decryptCustomerAccessToken(token, s.deps)).toEqual({ iss: URLS.authUrl, sub: PROFILE_ID, clientId: ACME.id, sid: 's1', jti: 'j3', iat: T0, exp: T0 + 60, scopes: [], authentication: null, jkt: null });
    s.clock.set(T0 + 60);
    expect(await decryptCustomerAccessToken(token, s.deps)).toBeUndefined();
  });

  it('reads acr, amr and auth_time when the token carries all three well formed, and no authentication otherwise', async () => {
    const s = await setup60();
    const signIn = { acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], auth_time: T0 - 100 };
    const read = async (claims: JWTPayload) => (await decryptCustomerAccessToken(await encrypted(s, { ...ACCESS_CLAIMS, ...claims }), s.deps))?.authentication;
    expect(await read(signIn)).toEqual({ acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'], authTime: T0 - 100 });
    expect(await read({ ...signIn, amr: 'pin sms' })).toBeNull();
    expect(await read({ ...signIn, amr: ['pin', 7] })).toBeNull();
    expect(await read({ ...signIn, auth_time: '12' })).toBeNull();
    expect(await read({ ...signIn, auth_time: 1.5 })).toBeNull();
    expect(await read({ acr: signIn.acr, amr: signIn.amr })).toBeNull();
  });

  it.each<[string, JWTPayload, { typ?: string }]>([
    ['typ JWT', ACCESS_CLAIMS, { typ: 'JWT' }],
    ['no typ', ACCESS_CLAIMS, {}],
    ['the auth URL as audience', { ...ACCESS_CLAIMS, aud: URLS.authUrl }, { typ: 'at+jwt' }],
    ['another issuer', { ...ACCESS_CLAIMS, iss: 'https://evil.example' }, { typ: 'at+jwt' }],
    ['no sid', { ...ACCESS_CLAIMS, sid: undefined }, { typ: 'at+jwt' }],
    ['no jti', { ...ACCESS_CLAIMS, jti: undefined }, { typ: 'at+jwt' }],
    ['no exp', { ...ACCESS_CLAIMS, exp: undefined }, { typ: 'at+jwt' }],
  ])('refuses a token encrypted with the right key but %s', async (_name, claims, header) => {
    const s = await setup60();
    expect(await decryptCustomerAccessToken(await encrypted(s, claims, header), s.deps)).toBeUndefined();
  });

  it('refuses a token encrypted with another key under the same kid', async () => {
    const s = await setup60();
    const token = await new EncryptJWT(ACCESS_CLAIMS)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: s.keys.encryptionKey().kid, typ: 'at+jwt' })
      .encrypt(randomBytes(32));
    expect(await decryptCustomerAccessToken(token, s.deps)).toBeUndefined();
  });

  it('refuses a signed token and tokens longer than 4096 characters', async () => {
    const s = await setup60();
    expect(await decryptCustomerAccessToken(await signed(s, 'at+jwt', ACCESS_CLAIMS), s.deps)).toBeUndefined();
    const long = await encrypted(s, { ...ACCESS_CLAIMS, pad: 'x'.repeat(4096) });
    expect(await decryptCustomerAccessToken(long, s.deps)).toBeUndefined();
  });
});

/** A setup whose tokens live 60 s. */
async function setup60(): Promise<Setup> {
  const s = await tokenSetup();
  return { ...s, deps: { ...s.deps, lifetimes: { ...s.deps.lifetimes, accessTokenSeconds: 60 } } };
}

describe('a revoked key', () => {
  it('makes every token it signed or encrypted fail every check once the key ring reloads', async () => {
    const s = await setup60();
    const { token: clientToken } = await issueClientAccessToken(ACME, s.deps);
    const refresh = await signed(s, 'rt+jwt', REFRESH_CLAIMS);
    const access = await encrypted(s, ACCESS_CLAIMS);
    const old = { sig: s.keys.signingKey().kid, enc: s.keys.encryptionKey().kid };
    const deps = { storage: s.storage, sealKey: s.sealKey, clock: s.clock };
    await activateKeysNow(deps, { maxTokenTtlSeconds: 60, publicationDelaySeconds: 300 });
    await s.keys.reload();
    expect(await verifyClientAccessToken(clientToken, s.deps)).toBeDefined();
    expect(await verifyRefreshToken(refresh, s.deps)).toBeDefined();
    expect(await decryptCustomerAccessToken(access, s.deps)).toBeDefined();

    await revokeKey(deps, old.sig);
    await revokeKey(deps, old.enc);
    await s.keys.reload();
    expect(await verifyClientAccessToken(clientToken, s.deps)).toBeUndefined();
    expect(await verifyRefreshToken(refresh, s.deps)).toBeUndefined();
    expect(await decryptCustomerAccessToken(access, s.deps)).toBeUndefined();
    // Tokens of the keys that took their place are accepted.
    expect(await verifyClientAccessToken((await issueClientAccessToken(ACME, s.deps)).token, s.deps)).toBeDefined();
    expect(await decryptCustomerAccessToken(await encrypted(s, ACCESS_CLAIMS), s.deps)).toBeDefined();
  });
});
