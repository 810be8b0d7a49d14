import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import * as oauth from 'oauth4webapi';
import { describe, expect, it, onTestFinished } from 'vitest';
import { registerErrorHandling } from '../../src/http/plugins/oauth-errors.js';
import { introspect, SCOPES_SUPPORTED, sharedConnect, startConnect, type ConformanceClient, type RunningConnect } from './connect.js';

/**
 * oauth4webapi, as its users call it: a request function and its
 * `process…Response` for each step, the server read from its RFC 8414
 * metadata. Plain HTTP on 127.0.0.1 is allowed with the library's own
 * option for it (`allowInsecureRequests`).
 */

const HTTP = { [oauth.allowInsecureRequests]: true } as const;

async function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer);
  return oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, { algorithm: 'oauth2', ...HTTP }));
}

/** What every call of the library takes about the client. */
interface ClientSide {
  readonly as: oauth.AuthorizationServer;
  readonly client: oauth.Client;
  readonly auth: oauth.ClientAuth;
  readonly registered: ConformanceClient;
}

async function clientSide(connect: RunningConnect, method: 'basic' | 'post' = 'basic', scopes?: string): Promise<ClientSide> {
  const registered = await connect.createClient({ scopes });
  const auth = method === 'basic' ? oauth.ClientSecretBasic(registered.secret) : oauth.ClientSecretPost(registered.secret);
  return { as: await discover(connect.issuer), client: { client_id: registered.id }, auth, registered };
}

/** The customer's authorization with PKCE and `state` (and `scope` when given); answers the callback URL and what the exchange needs. */
async function authorize(connect: RunningConnect, side: ClientSide, scope?: string): Promise<{ callback: URL; state: string; verifier: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(side.as.authorization_endpoint as string);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: side.client.client_id,
    redirect_uri: side.registered.redirectUri,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(scope === undefined ? {} : { scope }),
  }).toString();
  return { callback: await connect.authorize(url), state, verifier };
}

async function linkCustomer(connect: RunningConnect, side: ClientSide, scope?: string): Promise<oauth.TokenEndpointResponse> {
  const { callback, state, verifier } = await authorize(connect, side, scope);
  const params = oauth.validateAuthResponse(side.as, side.client, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(side.as, side.client, side.auth, params, side.registered.redirectUri, verifier, HTTP);
  return oauth.processAuthorizationCodeResponse(side.as, side.client, response);
}

async function clientCredentials(side: ClientSide, scope?: string): Promise<oauth.TokenEndpointResponse> {
  const parameters = new URLSearchParams(scope === undefined ? {} : { scope });
  const response = await oauth.clientCredentialsGrantRequest(side.as, side.client, side.auth, parameters, HTTP);
  return oauth.processClientCredentialsResponse(side.as, side.client, response);
}

describe('oauth4webapi', () => {
  const connect = sharedConnect();

  it('discovers Connect from its RFC 8414 metadata, the issuer checked', async () => {
    const as = await discover(connect().issuer);
    expect(as).toMatchObject({ issuer: connect().issuer, token_endpoint: `${connect().issuer}/token`, code_challenge_methods_supported: ['S256'] });
  });

  it('discovers an issuer with a path at /.well-known/oauth-authorization-server/<path> (RFC 8414 §3.1)', async () => {
    const withPath = await startConnect({ authPath: '/auth' });
    const as = await discover(withPath.issuer);
    expect(as).toMatchObject({ issuer: `${withPath.origin}/auth`, jwks_uri: `${withPath.origin}/auth/.well-known/jwks.json` });
  });

  it.each(['basic', 'post'] as const)('client credentials with client_secret_%s', async (method) => {
    const side = await clientSide(connect(), method);
    const tokens = await clientCredentials(side);
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    expect(tokens.refresh_token).toBeUndefined();
  });

  it('validates the client-credentials token as an RFC 9068 JWT access token at a resource server', async () => {
    const side = await clientSide(connect());
    const { access_token } = await clientCredentials(side);
    const request = new Request('http://127.0.0.1/api', { headers: { authorization: `Bearer ${access_token}` } });
    const claims = await oauth.validateJwtAccessToken(side.as, request, connect().issuer, { ...HTTP, signingAlgorithms: ['ES256'] });
    expect(claims).toMatchObject({ iss: connect().issuer, aud: connect().issuer, sub: side.registered.id, client_id: side.registered.id });
    expect(claims.exp - claims.iat).toBe(3600);
    const otherAudience = await oauth.validateJwtAccessToken(side.as, request, 'https://elsewhere.example', HTTP).catch((e: unknown) => e);
    expect(otherAudience).toBeInstanceOf(oauth.OperationProcessingError);
  });

  it('the authorization code with PKCE, state and iss (RFC 9207)', async () => {
    const side = await clientSide(connect());
    const tokens = await linkCustomer(connect(), side);
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    expect(tokens.access_token.split('.')).toHaveLength(5);
    expect(tokens.refresh_token?.split('.')).toHaveLength(3);
  });

  it('a pushed authorization request (RFC 9126): pushedAuthorizationRequest, then /authorize with the request_uri only, then the code', async () => {
    const side = await clientSide(connect());
    expect(side.as.pushed_authorization_request_endpoint).toBe(`${connect().issuer}/par`);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const pushed = await oauth.processPushedAuthorizationResponse(
      side.as,
      side.client,
      await oauth.pushedAuthorizationRequest(
        side.as,
        side.client,
        side.auth,
        {
          response_type: 'code',
          redirect_uri: side.registered.redirectUri,
          code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
        },
        HTTP,
      ),
    );
    expect(pushed.expires_in).toBe(60);
    const url = new URL(side.as.authorization_endpoint as string);
    url.search = new URLSearchParams({ client_id: side.client.client_id, request_uri: pushed.request_uri }).toString();
    const params = oauth.validateAuthResponse(side.as, side.client, await connect().authorize(url), state);
    const response = await oauth.authorizationCodeGrantRequest(side.as, side.client, side.auth, params, side.registered.redirectUri, verifier, HTTP);
    const tokens = await oauth.processAuthorizationCodeResponse(side.as, side.client, response);
    expect(tokens.refresh_token).toBeDefined();
  });

  it('refuses a callback with a foreign or missing iss, or another state (validateAuthResponse)', async () => {
    const side = await clientSide(connect());
    const { callback, state } = await authorize(connect(), side);
    const forged = new URL(callback);
    forged.searchParams.set('iss', 'https://attacker.example');
    const missing = new URL(callback);
    missing.searchParams.delete('iss');
    for (const [url, expected, reason] of [[forged, state, /"iss"/], [missing, state, /"iss"/], [callback, 'another', /"state"/]] as const) {
      expect(() => oauth.validateAuthResponse(side.as, side.client, url, expected)).toThrow(reason);
    }
    expect(oauth.validateAuthResponse(side.as, side.client, callback, state).get('code')).toBe(callback.searchParams.get('code'));
  });

  it('refresh: a new access token, the same refresh token, the previous access token inactive', async () => {
    const side = await clientSide(connect(), 'post');
    const first = await linkCustomer(connect(), side);
    const response = await oauth.refreshTokenGrantRequest(side.as, side.client, side.auth, first.refresh_token as string, HTTP);
    const refreshed = await oauth.processRefreshTokenResponse(side.as, side.client, response);
    expect(refreshed.access_token).not.toBe(first.access_token);
    expect(refreshed).toMatchObject({ refresh_token: first.refresh_token, expires_in: 3600 });
    expect(await introspect(connect(), side.registered, first.access_token)).toEqual({ active: false });
  });

  it('introspection (RFC 7662) of each kind of token, and revocation (RFC 7009)', async () => {
    const side = await clientSide(connect());
    const tokens = await linkCustomer(connect(), side);
    const refresh = tokens.refresh_token as string;
    const introspected = async (token: string) =>
      oauth.processIntrospectionResponse(side.as, side.client, await oauth.introspectionRequest(side.as, side.client, side.auth, token, HTTP));

    expect(await introspected((await clientCredentials(side)).access_token)).toMatchObject({ active: true, token_type: 'Bearer' });
    expect(await introspected(tokens.access_token)).toMatchObject({ active: true, token_type: 'Bearer', client_id: side.registered.id });
    const refreshState = await introspected(refresh);
    expect(refreshState).toMatchObject({ active: true, client_id: side.registered.id });
    expect(refreshState).not.toHaveProperty('token_type');

    const revoked = await oauth.revocationRequest(side.as, side.client, side.auth, refresh, HTTP);
    expect(revoked.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await oauth.processRevocationResponse(revoked)).toBeUndefined();
    expect(await introspected(refresh)).toEqual({ active: false });
    expect(await introspected(tokens.access_token)).toEqual({ active: false });
  });

  it('scopes: scopes_supported; the scope asked for (or all the client has) in the answers, the RFC 9068 JWT and refreshes', async () => {
    const side = await clientSide(connect(), 'basic', 'payments:read payments:write profile');
    expect(side.as.scopes_supported).toEqual([...SCOPES_SUPPORTED]);
    expect((await clientCredentials(side)).scope).toBe('payments:read payments:write profile');
    const { access_token, scope } = await clientCredentials(side, 'payments:read');
    expect(scope).toBe('payments:read');
    const request = new Request('http://127.0.0.1/api', { headers: { authorization: `Bearer ${access_token}` } });
    expect(await oauth.validateJwtAccessToken(side.as, request, connect().issuer, { ...HTTP, signingAlgorithms: ['ES256'] })).toMatchObject({ scope: 'payments:read' });

    const tokens = await linkCustomer(connect(), side, 'profile');
    expect(tokens.scope).toBe('profile');
    const response = await oauth.refreshTokenGrantRequest(side.as, side.client, side.auth, tokens.refresh_token as string, HTTP);
    expect((await oauth.processRefreshTokenResponse(side.as, side.client, response)).scope).toBe('profile');
  });

  it('invalid_scope at /token as a ResponseBodyError, and from /authorize through validateAuthResponse', async () => {
    const side = await clientSide(connect(), 'basic', 'profile');
    const error = await clientCredentials(side, 'admin').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(oauth.ResponseBodyError);
    expect(error).toMatchObject({ error: 'invalid_scope', status: 400 });
    const { callback, state } = await authorize(connect(), side, 'admin');
    const refused = (() => {
      try {
        return oauth.validateAuthResponse(side.as, side.client, callback, state);
      } catch (e) {
        return e;
      }
    })();
    expect(refused).toBeInstanceOf(oauth.AuthorizationResponseError);
    expect(refused).toMatchObject({ error: 'invalid_scope' });
  });

  it('a resource server on Connect\'s error mapping refuses a token lacking a scope with a Bearer insufficient_scope challenge the library parses (RFC 6750 §3.1)', async () => {
    const side = await clientSide(connect(), 'basic', 'profile payments:read');
    const tokens = await linkCustomer(connect(), side, 'profile');
    const api = Fastify();
    registerErrorHandling(api);
    api.get('/payments', async (request) => {
      const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
      const access = await connect().t.services.customerAccess.verify(token, { scopes: ['payments:read'] });
      return { profileId: access.profileId };
    });
    await api.listen({ host: '127.0.0.1', port: 0 });
    onTestFinished(() => api.close());
    const url = new URL(`http://127.0.0.1:${(api.server.address() as AddressInfo).port}/payments`);
    const error = await oauth.protectedResourceRequest(tokens.access_token, 'GET', url, new Headers(), null, HTTP).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const { status, cause } = error as oauth.WWWAuthenticateChallengeError;
    expect({ status, cause }).toEqual({ status: 403, cause: [{ scheme: 'bearer', parameters: { error: 'insufficient_scope', scope: 'payments:read' } }] });
  });

  it('GET /customer/profile: a bad token gets a Bearer invalid_token challenge the library parses; no token, a challenge without an error code (RFC 6750 §3.1)', async () => {
    const url = new URL(`${connect().issuer}/customer/profile`);
    const error = await oauth.protectedResourceRequest('not-a-token', 'GET', url, new Headers(), null, HTTP).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const { status, cause } = error as oauth.WWWAuthenticateChallengeError;
    expect({ status, cause }).toEqual({
      status: 401,
      cause: [{ scheme: 'bearer', parameters: { error: 'invalid_token', error_description: 'the access token is invalid or expired' } }],
    });
    for (const headers of [{}, { authorization: 'Basic Zm9vOmJhcg==' }] as Record<string, string>[]) {
      const missing = await fetch(url, { headers });
      expect({ status: missing.status, challenge: missing.headers.get('www-authenticate'), body: await missing.json() }).toMatchObject({
        status: 401,
        challenge: 'Bearer realm="connect"',
        body: { error: 'invalid_token' },
      });
    }
  });

  it('errors: invalid_grant as a ResponseBodyError; a wrong secret as a parsed Basic challenge', async () => {
    const side = await clientSide(connect());
    const refreshed = await oauth.refreshTokenGrantRequest(side.as, side.client, side.auth, 'not-a-refresh-token', HTTP);
    const grantError = await oauth.processRefreshTokenResponse(side.as, side.client, refreshed).catch((e: unknown) => e);
    expect(grantError).toBeInstanceOf(oauth.ResponseBodyError);
    expect(grantError).toMatchObject({ error: 'invalid_grant', status: 400 });
    expect((grantError as oauth.ResponseBodyError).error_description).toMatch(/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/);

    for (const wrong of [oauth.ClientSecretBasic(`${side.registered.secret}x`), oauth.ClientSecretPost(`${side.registered.secret}x`)]) {
      const error = await clientCredentials({ ...side, auth: wrong }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
      const { status, cause } = error as oauth.WWWAuthenticateChallengeError;
      expect({ status, cause }).toEqual({ status: 401, cause: [{ scheme: 'basic', parameters: { realm: 'connect' } }] });
    }
  });
});
