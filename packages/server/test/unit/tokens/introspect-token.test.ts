import { randomBytes } from 'node:crypto';
import { createDpopNonces } from '../../../src/core/dpop/dpop-nonce.js';
import { describe, expect, it } from 'vitest';
import { refreshCustomerToken } from '../../../src/core/grants/refresh-token.js';
import { issueClientAccessToken } from '../../../src/core/grants/client-credentials.js';
import { identifyToken, introspectToken, revokeToken, type TokenStateDeps } from '../../../src/core/tokens/introspect-token.js';
import { ACME, OTHER, PROFILE_ID, SIGN_IN, T0, tokenSetup, URLS } from './token-fixtures.js';
import { authenticateBearer, type BearerDeps } from '../../../src/core/tokens/authenticate-bearer.js';
import type { Client } from '../../../src/core/clients/client.js';
import { clientRecord } from '../../helpers/client-record.js';

/** A resource server: no grant, no redirect URI. */
const API = clientRecord({ id: 'cid_sandbox_api', name: 'Payments API', kind: 'resource_server', redirectUri: null, grants: [] });

async function setup() {
  const s = await tokenSetup();
  /** The stored clients as `findClient` sees them; tests change them. */
  const clients = new Map<string, Client>([ACME, OTHER, API].map((c) => [c.id, c]));
  const deps: TokenStateDeps = {
    keys: s.keys,
    clock: s.clock,
    urls: URLS,
    tokenSessions: s.storage.tokenSessions,
    revokedTokens: s.storage.revokedTokens,
    findClient: async (id) => clients.get(id),
  };
  const session = await s.openSession();
  const clientToken = (await issueClientAccessToken(ACME, s.deps)).token;
  return { ...s, state: deps, session, clientToken, clients };
}

/** The bearer check, with `client` as the stored client. */
function bearerDeps(s: Awaited<ReturnType<typeof setup>>, client: Client): BearerDeps {
  const dpop = { clock: s.state.clock, replay: { useJtiOnce: async () => true }, nonces: createDpopNonces(randomBytes(32), s.state.clock) };
  return { ...s.state, findClient: async (id) => (id === client.id ? client : undefined), dpop };
}

/** A POST /tokens request presenting `token` as Bearer. */
function bearerRequest(token: string) {
  return { authorization: `Bearer ${token}`, dpopProofs: [], method: 'POST', url: 'https://api.connect.test/tokens' };
}

describe('identifyToken', () => {
  it('tells the three kinds apart, whatever the hint would have said', async () => {
    const s = await setup();
    expect((await identifyToken(s.clientToken, s.state))?.kind).toBe('client_access');
    expect((await identifyToken(s.session.accessToken, s.state))?.kind).toBe('customer_access');
    expect((await identifyToken(s.session.refreshToken, s.state))?.kind).toBe('refresh');
  });

  it.each(['', 'x', 'a.b', 'a.b.c', 'a.b.c.d', 'a.b.c.d.e', 'a.b.c.d.e.f'])('%j is no token of ours', async (token) => {
    const s = await setup();
    expect(await identifyToken(token, s.state)).toBeUndefined();
  });
});

describe('introspectToken', () => {
  it('answers active with the claims for each kind of token of the asking client', async () => {
    const s = await setup();
    const refresh = await introspectToken(s.session.refreshToken, ACME, s.state);
    // RFC 7662 token_type is an access token type (RFC 6749 §7.1); a refresh token has none.
    expect(refresh).not.toHaveProperty('token_type');
    expect(refresh).toMatchObject({
      active: true,
      client_id: ACME.id,
      sub: PROFILE_ID,
      sid: s.session.sid,
      jti: s.session.refreshJti,
      aud: URLS.authUrl,
      exp: T0 + 86_400,
    });
    expect(await introspectToken(s.session.accessToken, ACME, s.state)).toMatchObject({ active: true, token_type: 'Bearer', jti: s.session.accessJti, aud: URLS.baseUrl });
    expect(await introspectToken(s.clientToken, ACME, s.state)).toMatchObject({ active: true, token_type: 'Bearer', sub: ACME.id });
  });

  it('answers exactly { active: false } to another client, and for no token', async () => {
    const s = await setup();
    for (const token of [s.session.refreshToken, s.session.accessToken, s.clientToken]) {
      expect(await introspectToken(token, OTHER, s.state)).toEqual({ active: false });
    }
    expect(await introspectToken(undefined, ACME, s.state)).toEqual({ active: false });
    expect(await introspectToken('', ACME, s.state)).toEqual({ active: false });
  });

  it('a client access token issued at or before the client\'s tokensEndedAt is inactive; one issued after it is active', async () => {
    const s = await setup();
    // clientToken was issued at T0.
    expect(await introspectToken(s.clientToken, { ...ACME, tokensEndedAt: T0 - 1 }, s.state)).toMatchObject({ active: true, iat: T0 });
    expect(await introspectToken(s.clientToken, { ...ACME, tokensEndedAt: T0 }, s.state)).toEqual({ active: false });
    expect(await introspectToken(s.clientToken, { ...ACME, tokensEndedAt: T0 + 1 }, s.state)).toEqual({ active: false });
    expect(await authenticateBearer(bearerRequest(s.clientToken), bearerDeps(s, { ...ACME, tokensEndedAt: T0 - 1 }))).toMatchObject({ client: { id: ACME.id } });
    await expect(authenticateBearer(bearerRequest(s.clientToken), bearerDeps(s, { ...ACME, tokensEndedAt: T0 }))).rejects.toMatchObject({
      error: 'invalid_token',
      description: 'the access token was ended when its client was disabled',
    });
  });

  it('a replaced access token is inactive at once; the refresh token stays active', async () => {
    const s = await setup();
    const refreshed = await refreshCustomerToken(s.session.refreshToken, ACME, s.deps);
    expect(await introspectToken(s.session.accessToken, ACME, s.state)).toEqual({ active: false });
    expect(await introspectToken(refreshed.accessToken, ACME, s.state)).toMatchObject({ active: true });
    expect(await introspectToken(s.session.refreshToken, ACME, s.state)).toMatchObject({ active: true });
  });

  it('the stored refresh expiry counts too: inactive once it has passed, even before the token’s exp', async () => {
    const s = await setup();
    const state: TokenStateDeps = {
      ...s.state,
      tokenSessions: {
        ...s.state.tokenSessions,
        async findTokenSession(sid) {
          const record = await s.storage.tokenSessions.findTokenSession(sid);
          return record && { ...record, refreshExpiresAt: T0 + 10 };
        },
      },
    };
    s.clock.set(T0 + 9);
    expect(await introspectToken(s.session.refreshToken, ACME, state)).toMatchObject({ active: true });
    s.clock.set(T0 + 10);
    expect(await introspectToken(s.session.refreshToken, ACME, state)).toEqual({ active: false });
  });
});

describe('introspectToken by a resource server', () => {
  it('sees every access token of the environment, whichever client holds it, and no refresh token', async () => {
    const s = await setup();
    const otherSession = await s.openSession(OTHER, '210987654321');
    expect(await introspectToken(s.session.accessToken, API, s.state)).toEqual({
      active: true,
      token_type: 'Bearer',
      client_id: ACME.id,
      sub: PROFILE_ID,
      sid: s.session.sid,
      jti: s.session.accessJti,
      iss: URLS.authUrl,
      aud: URLS.baseUrl,
      iat: T0,
      exp: T0 + 3600,
      acr: 'urn:connect:acr:pin-sms',
      amr: ['pin', 'sms', 'mfa'],
      auth_time: SIGN_IN.authTime,
    });
    expect(await introspectToken(otherSession.accessToken, API, s.state)).toMatchObject({ active: true, client_id: OTHER.id, sub: '210987654321' });
    expect(await introspectToken(s.clientToken, API, s.state)).toMatchObject({ active: true, token_type: 'Bearer', client_id: ACME.id, sub: ACME.id });
    // A refresh token is never presented to an API: a resource server learns nothing of it.
    expect(await introspectToken(s.session.refreshToken, API, s.state)).toEqual({ active: false });
    expect(await introspectToken(otherSession.refreshToken, API, s.state)).toEqual({ active: false });
  });

  it('a replaced, revoked or expired customer access token is inactive', async () => {
    const s = await setup();
    const refreshed = await refreshCustomerToken(s.session.refreshToken, ACME, s.deps);
    expect(await introspectToken(s.session.accessToken, API, s.state)).toEqual({ active: false });
    expect(await introspectToken(refreshed.accessToken, API, s.state)).toMatchObject({ active: true });
    await revokeToken(refreshed.accessToken, ACME, s.state);
    expect(await introspectToken(refreshed.accessToken, API, s.state)).toEqual({ active: false });
    const next = await s.openSession();
    s.clock.set(T0 + 3599);
    expect(await introspectToken(next.accessToken, API, s.state)).toMatchObject({ active: true });
    s.clock.set(T0 + 3600);
    expect(await introspectToken(next.accessToken, API, s.state)).toEqual({ active: false });
  });

  it('a client access token is inactive once revoked, or its client disabled, ended or gone', async () => {
    const s = await setup();
    s.clients.set(ACME.id, { ...ACME, status: 'disabled' });
    expect(await introspectToken(s.clientToken, API, s.state)).toEqual({ active: false });
    s.clients.set(ACME.id, { ...ACME, tokensEndedAt: T0 });
    expect(await introspectToken(s.clientToken, API, s.state)).toEqual({ active: false });
    s.clients.delete(ACME.id);
    expect(await introspectToken(s.clientToken, API, s.state)).toEqual({ active: false });
    s.clients.set(ACME.id, ACME);
    expect(await introspectToken(s.clientToken, API, s.state)).toMatchObject({ active: true });
    await revokeToken(s.clientToken, ACME, s.state);
    expect(await introspectToken(s.clientToken, API, s.state)).toEqual({ active: false });
  });

  it('revokes nothing: it holds no token of its own', async () => {
    const s = await setup();
    for (const token of [s.session.refreshToken, s.session.accessToken, s.clientToken]) await revokeToken(token, API, s.state);
    for (const token of [s.session.refreshToken, s.session.accessToken, s.clientToken]) {
      expect(await introspectToken(token, ACME, s.state)).toMatchObject({ active: true });
    }
  });

  it('a consumer still sees only its own tokens, also those a resource server sees', async () => {
    const s = await setup();
    for (const token of [s.session.accessToken, s.clientToken]) {
      expect(await introspectToken(token, API, s.state)).toMatchObject({ active: true });
      expect(await introspectToken(token, OTHER, s.state)).toEqual({ active: false });
    }
  });
});

describe('revokeToken', () => {
  it('a refresh token ends its session, access token included', async () => {
    const s = await setup();
    s.clock.advance(3);
    await revokeToken(s.session.refreshToken, ACME, s.state);
    expect((await s.storage.tokenSessions.findTokenSession(s.session.sid))?.revokedAt).toBe(T0 + 3);
    expect(await introspectToken(s.session.accessToken, ACME, s.state)).toEqual({ active: false });
  });

  it('a customer access token ends alone', async () => {
    const s = await setup();
    await revokeToken(s.session.accessToken, ACME, s.state);
    expect(await introspectToken(s.session.accessToken, ACME, s.state)).toEqual({ active: false });
    expect(await introspectToken(s.session.refreshToken, ACME, s.state)).toMatchObject({ active: true });
    expect((await s.storage.tokenSessions.findTokenSession(s.session.sid))?.revokedAt).toBeNull();
  });

  it('a client access token is remembered as revoked until it expires', async () => {
    const s = await setup();
    await revokeToken(s.clientToken, ACME, s.state);
    expect(await introspectToken(s.clientToken, ACME, s.state)).toEqual({ active: false });
    expect(await s.storage.revokedTokens.deleteExpiredRevocations(T0 + 3599)).toBe(0);
    expect(await s.storage.revokedTokens.deleteExpiredRevocations(T0 + 3600)).toBe(1);
  });

  it('another client’s tokens are left alone', async () => {
    const s = await setup();
    for (const token of [s.session.refreshToken, s.session.accessToken, s.clientToken]) await revokeToken(token, OTHER, s.state);
    for (const token of [s.session.refreshToken, s.session.accessToken, s.clientToken]) {
      expect(await introspectToken(token, ACME, s.state)).toMatchObject({ active: true });
    }
  });
});
