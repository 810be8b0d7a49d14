import { describe, expect, it } from 'vitest';
import { basicAuth, T0 } from '../../helpers/build.js';
import { MASKED_MOBILE } from '../../helpers/customer-flow.js';
import { expectInvalidToken, expectMissingToken, expectNoLeak, getProfile, lifecycle, type Lifecycle } from '../../helpers/token-session.js';
import { obtainToken } from '../../helpers/wire.js';

const INVALID = 'the access token is invalid or expired';
const REQUIRED = 'an access token is required: Authorization: Bearer <access_token>';

describe('GET /customer/profile', () => {
  it('a valid customer access token: 200 with profileId, masked userId, clientId and the token expiry; never cached', async () => {
    const s = await lifecycle();
    const res = await getProfile(s.t.app, s.tokens.accessToken);
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 200,
      body: { profileId: s.profileId, userId: MASKED_MOBILE, clientId: s.client.id, tokenExpiresAt: T0 + 3600 },
    });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it('the scheme name is case-insensitive (RFC 7235 §2.1)', async () => {
    const s = await lifecycle();
    expect((await getProfile(s.t.app, undefined, `bearer ${s.tokens.accessToken}`)).statusCode).toBe(200);
    expect((await getProfile(s.t.app, undefined, `BEARER ${s.tokens.accessToken}`)).statusCode).toBe(200);
  });

  it('another client’s customer token stands for that client', async () => {
    const s = await lifecycle();
    const other = await s.addClient();
    const tokens = await s.newSession(other);
    const res = await getProfile(s.t.app, tokens.accessToken);
    expect(res.json()).toMatchObject({ profileId: s.profileId, clientId: other.id });
  });

  it.each<[string, (s: Lifecycle) => Promise<string | undefined> | string | undefined, string]>([
    ['a client access token', (s) => obtainToken(s.t, s.client), INVALID],
    ['a refresh token', (s) => s.tokens.refreshToken, INVALID],
    ['garbage', () => 'not-a-token', INVALID],
    ['the access token truncated', (s) => s.tokens.accessToken.slice(0, -3), INVALID],
    ['an 8 KB token', () => 'A'.repeat(8192), INVALID],
  ])('%s → 401 invalid_token with a Bearer challenge', async (_name, token, description) => {
    const s = await lifecycle();
    const res = await getProfile(s.t.app, await token(s));
    expectInvalidToken(res, description);
    expectNoLeak(res);
  });

  it.each<[string, (s: Lifecycle) => string | undefined]>([
    ['no Authorization header', () => undefined],
    ['Authorization: Bearer (no token)', () => 'Bearer'],
    ['Authorization: Bearer and spaces', () => 'Bearer   '],
    ['HTTP Basic credentials', (s) => basicAuth(s.client.id, s.client.secret)],
    ['the token without a scheme', (s) => s.tokens.accessToken],
    ['another scheme (Token)', (s) => `Token ${s.tokens.accessToken}`],
    ['an empty header', () => ''],
  ])('%s: no token presented → 401 invalid_token, challenge Bearer realm="connect" without an error code (RFC 6750 §3.1)', async (_name, authorization) => {
    const s = await lifecycle();
    const res = await getProfile(s.t.app, undefined, authorization(s));
    expectMissingToken(res, REQUIRED);
    expect(res.headers['www-authenticate']).not.toMatch(/error/);
  });

  it.each<[string, (s: Lifecycle) => string]>([
    ['two tokens', (s) => `Bearer ${s.tokens.accessToken} ${s.tokens.accessToken}`],
    ['a bearer token of bad characters', () => 'Bearer $$$'],
  ])('%s: a bad token presented → 401 with error="invalid_token"', async (_name, authorization) => {
    const s = await lifecycle();
    const res = await getProfile(s.t.app, undefined, authorization(s));
    expectInvalidToken(res, INVALID);
  });

  it('a bearer token under the DPoP scheme (which names a DPoP-bound token) → 401 invalid_token', async () => {
    const s = await lifecycle();
    expectInvalidToken(await getProfile(s.t.app, undefined, `DPoP ${s.tokens.accessToken}`), 'this access token is not DPoP-bound: present it as Authorization: Bearer');
  });

  it('an expired token: 200 at exp - 1, 401 at exp and after', async () => {
    const s = await lifecycle({ accessTokenTtlSeconds: 60 });
    s.t.clock.set(T0 + 59);
    expect((await getProfile(s.t.app, s.tokens.accessToken)).statusCode).toBe(200);
    s.t.clock.set(T0 + 60);
    expectInvalidToken(await getProfile(s.t.app, s.tokens.accessToken), INVALID);
    s.t.clock.set(T0 + 3600);
    expectInvalidToken(await getProfile(s.t.app, s.tokens.accessToken), INVALID);
  });
});
