import { CodeChallengeMethod, generateCodeVerifier, generateState, OAuth2Client, OAuth2RequestError, type OAuth2Tokens } from 'arctic';
import { describe, expect, it } from 'vitest';
import { introspect, sharedConnect, type ConformanceClient, type RunningConnect } from './connect.js';

/**
 * arctic, as its users call it for a provider it has no class of its own
 * for: the generic `OAuth2Client` with Connect's endpoints. It
 * authenticates with HTTP Basic, does the authorization code with PKCE,
 * refresh and revocation; it has no client credentials grant, no discovery
 * and no introspection, and leaves `state` and `iss` to its user, who
 * checks them: so does this test.
 */

const endpoints = (connect: RunningConnect) => ({
  authorize: `${connect.issuer}/authorize`,
  token: `${connect.issuer}/token`,
  revoke: `${connect.issuer}/revoke`,
});

async function linkCustomer(connect: RunningConnect, registered: ConformanceClient, scopes: string[] = []): Promise<OAuth2Tokens> {
  const arctic = new OAuth2Client(registered.id, registered.secret, registered.redirectUri);
  const state = generateState();
  const verifier = generateCodeVerifier();
  const url = arctic.createAuthorizationURLWithPKCE(endpoints(connect).authorize, state, CodeChallengeMethod.S256, verifier, scopes);
  expect(url.searchParams.get('scope')).toBe(scopes.length === 0 ? null : scopes.join(' '));
  const callback = await connect.authorize(url);
  // What arctic leaves to its user: the state is ours, the answer is Connect's (RFC 9207).
  expect(callback.searchParams.get('state')).toBe(state);
  expect(callback.searchParams.get('iss')).toBe(connect.issuer);
  return arctic.validateAuthorizationCode(endpoints(connect).token, callback.searchParams.get('code') as string, verifier);
}

describe('arctic', () => {
  const connect = sharedConnect();

  it('the authorization code with PKCE (S256): a Bearer access token and a refresh token', async () => {
    const registered = await connect().createClient();
    const tokens = await linkCustomer(connect(), registered);
    expect(tokens.tokenType()).toBe('Bearer');
    expect(tokens.accessTokenExpiresInSeconds()).toBe(3600);
    expect(tokens.hasRefreshToken()).toBe(true);
    expect(tokens.hasScopes()).toBe(false);
    expect(await introspect(connect(), registered, tokens.accessToken())).toMatchObject({ active: true, client_id: registered.id });
  });

  it('refresh: a new access token, the same refresh token, the previous access token inactive', async () => {
    const registered = await connect().createClient();
    const first = await linkCustomer(connect(), registered);
    const arctic = new OAuth2Client(registered.id, registered.secret, registered.redirectUri);
    const refreshed = await arctic.refreshAccessToken(endpoints(connect()).token, first.refreshToken(), []);
    expect(refreshed.accessToken()).not.toBe(first.accessToken());
    expect(refreshed.refreshToken()).toBe(first.refreshToken());
    expect(await introspect(connect(), registered, first.accessToken())).toEqual({ active: false });
  });

  it('scopes: the scopes asked for come back in tokens.scopes(); a refresh may narrow them', async () => {
    const registered = await connect().createClient({ scopes: 'payments:read payments:write profile' });
    const tokens = await linkCustomer(connect(), registered, ['profile', 'payments:read']);
    expect(tokens.hasScopes()).toBe(true);
    expect(tokens.scopes()).toEqual(['profile', 'payments:read']);
    const arctic = new OAuth2Client(registered.id, registered.secret, registered.redirectUri);
    expect((await arctic.refreshAccessToken(endpoints(connect()).token, tokens.refreshToken(), [])).scopes()).toEqual(['profile', 'payments:read']);
    expect((await arctic.refreshAccessToken(endpoints(connect()).token, tokens.refreshToken(), ['profile'])).scopes()).toEqual(['profile']);
    const wider = await arctic.refreshAccessToken(endpoints(connect()).token, tokens.refreshToken(), ['payments:write']).catch((e: unknown) => e);
    expect(wider).toBeInstanceOf(OAuth2RequestError);
    expect(wider).toMatchObject({ code: 'invalid_scope' });
  });

  it('revocation (RFC 7009) of the refresh token ends the session; a second revocation answers the same', async () => {
    const registered = await connect().createClient();
    const tokens = await linkCustomer(connect(), registered);
    const arctic = new OAuth2Client(registered.id, registered.secret, registered.redirectUri);
    await arctic.revokeToken(endpoints(connect()).revoke, tokens.refreshToken());
    await arctic.revokeToken(endpoints(connect()).revoke, tokens.refreshToken());
    expect(await introspect(connect(), registered, tokens.refreshToken())).toEqual({ active: false });
    expect(await introspect(connect(), registered, tokens.accessToken())).toEqual({ active: false });
  });

  it('errors arrive as OAuth2RequestError with Connect’s code: invalid_grant, invalid_client', async () => {
    const registered = await connect().createClient();
    const arctic = new OAuth2Client(registered.id, registered.secret, registered.redirectUri);
    const unknownCode = await arctic.validateAuthorizationCode(endpoints(connect()).token, 'no-such-code', generateCodeVerifier()).catch((e: unknown) => e);
    expect(unknownCode).toBeInstanceOf(OAuth2RequestError);
    expect(unknownCode).toMatchObject({ code: 'invalid_grant', description: 'authorization code is invalid' });

    const wrongSecret = new OAuth2Client(registered.id, `${registered.secret}x`, registered.redirectUri);
    for (const attempt of [
      () => wrongSecret.refreshAccessToken(endpoints(connect()).token, 'a-refresh-token', []),
      () => wrongSecret.revokeToken(endpoints(connect()).revoke, 'a-token'),
    ]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OAuth2RequestError);
      expect(error).toMatchObject({ code: 'invalid_client', description: 'client authentication failed' });
    }
  });
});
