import * as client from 'openid-client';
import { describe, expect, it } from 'vitest';
import { introspect, SCOPES_SUPPORTED, sharedConnect, startConnect, type ConformanceClient, type RunningConnect } from './connect.js';

/**
 * openid-client, as its users call it: discovery of the RFC 8414 metadata,
 * then every grant and endpoint through the Configuration it returns.
 * Plain HTTP on 127.0.0.1 is allowed with the library's own option for it
 * (`allowInsecureRequests`); Connect is an OAuth 2.0 authorization server,
 * not an OpenID Provider, so discovery uses the library's `oauth2`
 * algorithm (RFC 8414 metadata) instead of OpenID discovery.
 */

const discoveryOptions = (): client.DiscoveryRequestOptions => ({ execute: [client.allowInsecureRequests], algorithm: 'oauth2' });

function discover(connect: RunningConnect, registered: ConformanceClient, auth: 'basic' | 'post' = 'basic'): Promise<client.Configuration> {
  const method = auth === 'basic' ? client.ClientSecretBasic(registered.secret) : client.ClientSecretPost(registered.secret);
  return client.discovery(new URL(connect.issuer), registered.id, undefined, method, discoveryOptions());
}

/** Sends the customer to Connect with PKCE and `state` (and `scope` when given); answers the callback URL and what the exchange needs. */
async function authorize(connect: RunningConnect, config: client.Configuration, registered: ConformanceClient, scope?: string) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: registered.redirectUri,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(scope === undefined ? {} : { scope }),
  });
  return { callback: await connect.authorize(url), checks: { pkceCodeVerifier: verifier, expectedState: state } };
}

async function linkCustomer(connect: RunningConnect, config: client.Configuration, registered: ConformanceClient, scope?: string) {
  const { callback, checks } = await authorize(connect, config, registered, scope);
  const tokens = await client.authorizationCodeGrant(config, callback, checks);
  return { access: tokens.access_token, refresh: tokens.refresh_token as string, tokens };
}

describe('openid-client', () => {
  const connect = sharedConnect();

  it('discovers Connect from its RFC 8414 metadata', async () => {
    const config = await discover(connect(), await connect().createClient());
    const metadata = config.serverMetadata();
    const { issuer } = connect();
    expect(metadata).toMatchObject({
      issuer,
      token_endpoint: `${issuer}/token`,
      authorization_endpoint: `${issuer}/authorize`,
      introspection_endpoint: `${issuer}/introspect`,
      revocation_endpoint: `${issuer}/revoke`,
      authorization_response_iss_parameter_supported: true,
    });
    expect(metadata.supportsPKCE()).toBe(true);
  });

  it('discovers an issuer with a path at /.well-known/oauth-authorization-server/<path> (RFC 8414 §3.1)', async () => {
    const withPath = await startConnect({ authPath: '/auth' });
    const registered = await withPath.createClient();
    const config = await client.discovery(new URL(withPath.issuer), registered.id, registered.secret, undefined, discoveryOptions());
    expect(config.serverMetadata()).toMatchObject({ issuer: `${withPath.origin}/auth`, token_endpoint: `${withPath.origin}/auth/token` });
  });

  it.each(['basic', 'post'] as const)('client credentials with client_secret_%s', async (auth) => {
    const registered = await connect().createClient();
    const tokens = await client.clientCredentialsGrant(await discover(connect(), registered, auth));
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.refresh_token).toBeUndefined();
    expect(await introspect(connect(), registered, tokens.access_token)).toMatchObject({ active: true, client_id: registered.id });
  });

  it('the authorization code with PKCE, state and iss (RFC 9207): an access and a refresh token', async () => {
    const registered = await connect().createClient();
    const { tokens } = await linkCustomer(connect(), await discover(connect(), registered), registered);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.access_token.split('.')).toHaveLength(5);
    expect(tokens.refresh_token?.split('.')).toHaveLength(3);
  });

  it('refuses a callback with a foreign or missing iss, or another state, before spending the code', async () => {
    const registered = await connect().createClient();
    const config = await discover(connect(), registered);
    const { callback, checks } = await authorize(connect(), config, registered);
    expect(callback.searchParams.get('iss')).toBe(connect().issuer);
    const forged = new URL(callback);
    forged.searchParams.set('iss', 'https://attacker.example');
    const missing = new URL(callback);
    missing.searchParams.delete('iss');
    const refusals = [
      [forged, checks, /"iss"/],
      [missing, checks, /"iss"/],
      [callback, { ...checks, expectedState: 'another' }, /"state"/],
    ] as const;
    for (const [url, expected, reason] of refusals) {
      const error = await client.authorizationCodeGrant(config, url, expected).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(client.ClientError);
      expect(String((error as Error).cause)).toMatch(reason);
    }
    const tokens = await client.authorizationCodeGrant(config, callback, checks);
    expect(tokens.refresh_token).toBeDefined();
  });

  it('refresh: a new access token, the same refresh token, the previous access token inactive', async () => {
    const registered = await connect().createClient();
    const config = await discover(connect(), registered);
    const first = await linkCustomer(connect(), config, registered);
    const refreshed = await client.refreshTokenGrant(config, first.refresh);
    expect(refreshed.access_token).not.toBe(first.access);
    expect(refreshed.refresh_token).toBe(first.refresh);
    expect(refreshed.expires_in).toBe(3600);
    expect(await introspect(connect(), registered, first.access)).toEqual({ active: false });
  });

  it('introspection (RFC 7662) of each kind of token, and revocation (RFC 7009) of the refresh token', async () => {
    const registered = await connect().createClient();
    const config = await discover(connect(), registered);
    const { access, refresh } = await linkCustomer(connect(), config, registered);
    const clientToken = (await client.clientCredentialsGrant(config)).access_token;

    expect(await client.tokenIntrospection(config, clientToken)).toMatchObject({ active: true, token_type: 'Bearer', sub: registered.id });
    expect(await client.tokenIntrospection(config, access)).toMatchObject({ active: true, token_type: 'Bearer', client_id: registered.id });
    const refreshState = await client.tokenIntrospection(config, refresh);
    expect(refreshState).toMatchObject({ active: true, client_id: registered.id });
    expect(refreshState).not.toHaveProperty('token_type');

    await client.tokenRevocation(config, refresh);
    expect(await client.tokenIntrospection(config, refresh)).toEqual({ active: false });
    expect(await client.tokenIntrospection(config, access)).toEqual({ active: false });
    await expect(client.refreshTokenGrant(config, refresh)).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
  });

  it('scopes: discovery lists them; client credentials and the authorization code get what they ask for, refresh keeps it, introspection says it', async () => {
    const registered = await connect().createClient({ scopes: 'payments:read payments:write profile' });
    const config = await discover(connect(), registered);
    expect(config.serverMetadata().scopes_supported).toEqual([...SCOPES_SUPPORTED]);

    expect((await client.clientCredentialsGrant(config)).scope).toBe('payments:read payments:write profile');
    const scoped = await client.clientCredentialsGrant(config, { scope: 'payments:read' });
    expect(scoped.scope).toBe('payments:read');
    expect(await client.tokenIntrospection(config, scoped.access_token)).toMatchObject({ active: true, scope: 'payments:read' });

    const { tokens, refresh } = await linkCustomer(connect(), config, registered, 'profile payments:write');
    expect(tokens.scope).toBe('profile payments:write');
    expect(await client.tokenIntrospection(config, tokens.access_token)).toMatchObject({ active: true, scope: 'profile payments:write' });
    expect((await client.refreshTokenGrant(config, refresh)).scope).toBe('profile payments:write');
    // RFC 6749 §6: a narrower scope for the new access token.
    expect((await client.refreshTokenGrant(config, refresh, { scope: 'profile' })).scope).toBe('profile');
  });

  it('invalid_scope: at /token as a ResponseBodyError, from /authorize as an AuthorizationResponseError', async () => {
    const registered = await connect().createClient({ scopes: 'profile' });
    const config = await discover(connect(), registered);
    await expect(client.clientCredentialsGrant(config, { scope: 'admin' })).rejects.toMatchObject({ error: 'invalid_scope', status: 400 });
    const { callback, checks } = await authorize(connect(), config, registered, 'admin');
    const error = await client.authorizationCodeGrant(config, callback, checks).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(client.AuthorizationResponseError);
    expect(error).toMatchObject({ error: 'invalid_scope' });
  });

  it('a wrong secret (Basic or post): 401 with the Basic challenge, which the library parses', async () => {
    const registered = await connect().createClient();
    for (const auth of ['basic', 'post'] as const) {
      const config = await discover(connect(), { ...registered, secret: `${registered.secret}x` }, auth);
      const error = await client.clientCredentialsGrant(config).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(client.WWWAuthenticateChallengeError);
      const challenge = error as client.WWWAuthenticateChallengeError;
      expect({ status: challenge.status, challenges: challenge.cause }).toEqual({ status: 401, challenges: [{ scheme: 'basic', parameters: { realm: 'connect' } }] });
    }
  });
});
