import { createHash, randomBytes } from 'node:crypto';
import ClientOAuth2 from 'client-oauth2';
import { describe, expect, it } from 'vitest';
import { MASKED_MOBILE } from '../helpers/customer-flow.js';
import { introspect, sharedConnect, type ConformanceClient, type RunningConnect } from './connect.js';

/**
 * client-oauth2, as its users configure it: Connect's endpoints, the client
 * ID and secret (HTTP Basic), and PKCE through the extra query and body
 * parameters the library passes on. It checks `state` itself; `iss` is its
 * user's to check, and this test does. It has no discovery, introspection
 * or revocation.
 */

function configure(connect: RunningConnect, registered: ConformanceClient, extra: Partial<ClientOAuth2.Options> = {}): ClientOAuth2 {
  return new ClientOAuth2({
    clientId: registered.id,
    clientSecret: registered.secret,
    accessTokenUri: `${connect.issuer}/token`,
    authorizationUri: `${connect.issuer}/authorize`,
    redirectUri: registered.redirectUri,
    ...extra,
  });
}

/** An error the library rejects with for an OAuth error answer: its code and Connect's body. */
interface LibraryError {
  readonly code: string;
  readonly body: { readonly error: string; readonly error_description: string };
}

async function linkCustomer(connect: RunningConnect, registered: ConformanceClient): Promise<ClientOAuth2.Token> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const client = configure(connect, registered, { state });
  const callback = await connect.authorize(
    client.code.getUri({ query: { code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' } }),
  );
  // The library checks state; iss (RFC 9207) is its user's to check.
  expect(callback.searchParams.get('iss')).toBe(connect.issuer);
  return client.code.getToken(callback.href, { body: { code_verifier: verifier } });
}

describe('client-oauth2', () => {
  const connect = sharedConnect();

  it('client credentials (HTTP Basic), without scope and with an empty one', async () => {
    const registered = await connect().createClient();
    for (const extra of [{}, { scopes: [] }]) {
      const token = await configure(connect(), registered, extra).credentials.getToken();
      expect({ type: token.tokenType, refresh: token.refreshToken, expiresIn: token.data.expires_in }).toEqual({ type: 'bearer', refresh: undefined, expiresIn: 3600 });
      expect(await introspect(connect(), registered, token.accessToken)).toMatchObject({ active: true, sub: registered.id });
    }
  });

  it('client credentials with scopes: the scope granted in token.data; one the client lacks is invalid_scope', async () => {
    const registered = await connect().createClient({ scopes: 'payments:read profile' });
    expect((await configure(connect(), registered).credentials.getToken()).data.scope).toBe('payments:read profile');
    expect((await configure(connect(), registered, { scopes: ['payments:read'] }).credentials.getToken()).data.scope).toBe('payments:read');
    const refused = (await configure(connect(), registered, { scopes: ['admin'] }).credentials.getToken().catch((e: unknown) => e)) as LibraryError;
    expect({ code: refused.code, error: refused.body.error }).toEqual({ code: 'EAUTH', error: 'invalid_scope' });
  });

  it('the authorization code with PKCE and state; the token signs a request the platform’s API accepts', async () => {
    const registered = await connect().createClient();
    const token = await linkCustomer(connect(), registered);
    expect(token.tokenType).toBe('bearer');
    expect(token.accessToken.split('.')).toHaveLength(5);
    expect(token.refreshToken.split('.')).toHaveLength(3);
    const signed = token.sign({ method: 'GET', url: `${connect().origin}/customer/profile`, headers: {} });
    const res = await fetch(signed.url, { method: signed.method, headers: signed.headers as Record<string, string> });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ userId: MASKED_MOBILE, clientId: registered.id });
  });

  it('refresh: a new access token, the same refresh token, the previous access token inactive', async () => {
    const registered = await connect().createClient();
    const first = await linkCustomer(connect(), registered);
    const refreshed = await first.refresh();
    expect(refreshed.accessToken).not.toBe(first.accessToken);
    expect(refreshed.refreshToken).toBe(first.refreshToken);
    expect(refreshed.expired()).toBe(false);
    expect(await introspect(connect(), registered, first.accessToken)).toEqual({ active: false });
  });

  it('errors: Connect’s error redirect, another state, an unknown code, a wrong secret', async () => {
    const registered = await connect().createClient();
    await linkCustomer(connect(), registered);
    // A signed-in customer and a client they never approved, without a page: an error redirect.
    const stranger = await connect().createClient();
    const denied = await connect().authorize(configure(connect(), stranger, { state: 's' }).code.getUri({ query: { prompt: 'none' } }));
    const redirectError = (await configure(connect(), stranger, { state: 's' }).code.getToken(denied.href).catch((e: unknown) => e)) as LibraryError;
    expect({ code: redirectError.code, error: redirectError.body.error }).toEqual({ code: 'EAUTH', error: 'consent_required' });

    const otherState = await configure(connect(), registered, { state: 'mine' }).code.getToken(`${registered.redirectUri}?code=c&state=theirs`).catch((e: unknown) => e);
    expect(otherState).toBeInstanceOf(TypeError);

    const unknownCode = (await configure(connect(), registered).code.getToken(`${registered.redirectUri}?code=no-such-code`).catch((e: unknown) => e)) as LibraryError;
    expect({ code: unknownCode.code, body: unknownCode.body }).toEqual({ code: 'EAUTH', body: { error: 'invalid_grant', error_description: 'authorization code is invalid' } });

    const wrongSecret = (await configure(connect(), { ...registered, secret: `${registered.secret}x` }).credentials.getToken().catch((e: unknown) => e)) as LibraryError;
    expect({ code: wrongSecret.code, body: wrongSecret.body }).toEqual({ code: 'EAUTH', body: { error: 'invalid_client', error_description: 'client authentication failed' } });
  });
});
