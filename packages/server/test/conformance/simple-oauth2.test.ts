import { createHash, randomBytes } from 'node:crypto';
import { AuthorizationCode, ClientCredentials, type ModuleOptions } from 'simple-oauth2';
import { describe, expect, it } from 'vitest';
import { introspect, sharedConnect, type ConformanceClient, type RunningConnect } from './connect.js';

/**
 * simple-oauth2, as its users configure it: the token host and paths of
 * Connect, HTTP Basic (`authorizationMethod: 'header'`, the default) or the
 * form body. The library has no discovery and no introspection, and leaves
 * PKCE, `state` and `iss` to its user, who passes them as parameters and
 * checks them: so does this test.
 */

/** The configuration of a client; the authorization code grant adds where to send the customer. */
function options(connect: RunningConnect, registered: ConformanceClient, authorizationMethod: 'header' | 'body' = 'header'): ModuleOptions {
  return {
    client: { id: registered.id, secret: registered.secret },
    auth: { tokenHost: connect.issuer, tokenPath: '/token', revokePath: '/revoke' },
    options: { authorizationMethod },
  };
}

function codeOptions(connect: RunningConnect, registered: ConformanceClient, authorizationMethod: 'header' | 'body' = 'header'): ModuleOptions {
  const base = options(connect, registered, authorizationMethod);
  return { ...base, auth: { ...base.auth, authorizePath: '/authorize' } };
}

/** A Boom error of the library: the status and the parsed body Connect answered. */
interface LibraryError {
  readonly output: { readonly statusCode: number };
  readonly data: { readonly payload: unknown; readonly res: { readonly headers: Record<string, string | undefined> } };
}

async function linkCustomer(connect: RunningConnect, registered: ConformanceClient, authorizationMethod: 'header' | 'body' = 'header') {
  const client = new AuthorizationCode(codeOptions(connect, registered, authorizationMethod));
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const url = client.authorizeURL({
    redirect_uri: registered.redirectUri,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  } as Parameters<AuthorizationCode['authorizeURL']>[0]);
  const callback = await connect.authorize(url);
  // What the library leaves to its user: the state is ours, the answer is Connect's (RFC 9207).
  expect(callback.searchParams.get('state')).toBe(state);
  expect(callback.searchParams.get('iss')).toBe(connect.issuer);
  const token = await client.getToken({
    code: callback.searchParams.get('code') as string,
    redirect_uri: registered.redirectUri,
    code_verifier: verifier,
  } as Parameters<AuthorizationCode['getToken']>[0]);
  return { client, token };
}

describe('simple-oauth2', () => {
  const connect = sharedConnect();

  it('client credentials with scope (a list, joined by the library): the scope granted in the token; one the client lacks: invalid_scope', async () => {
    const registered = await connect().createClient({ scopes: 'payments:read payments:write profile' });
    const client = new ClientCredentials(options(connect(), registered));
    expect((await client.getToken({ scope: ['payments:read', 'profile'] })).token.scope).toBe('payments:read profile');
    expect((await client.getToken({})).token.scope).toBe('payments:read payments:write profile');
    const refused = (await client.getToken({ scope: 'admin' }).catch((e: unknown) => e)) as LibraryError;
    expect({ status: refused.output.statusCode, payload: refused.data.payload }).toMatchObject({ status: 400, payload: { error: 'invalid_scope' } });
  });

  it.each(['header', 'body'] as const)('client credentials, authorizationMethod %s', async (method) => {
    const registered = await connect().createClient();
    const token = await new ClientCredentials(options(connect(), registered, method)).getToken({});
    expect(token.token).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(token.expired()).toBe(false);
    expect(token.expired(3601)).toBe(true);
    expect(await introspect(connect(), registered, token.token.access_token as string)).toMatchObject({ active: true });
  });

  it.each(['header', 'body'] as const)('the authorization code with PKCE, authorizationMethod %s', async (method) => {
    const registered = await connect().createClient();
    const { token } = await linkCustomer(connect(), registered, method);
    expect(token.token).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(String(token.token.access_token).split('.')).toHaveLength(5);
    expect(String(token.token.refresh_token).split('.')).toHaveLength(3);
  });

  it('refresh: a new access token, the same refresh token, the previous access token inactive', async () => {
    const registered = await connect().createClient();
    const { token } = await linkCustomer(connect(), registered);
    const refreshed = await token.refresh();
    expect(refreshed.token.access_token).not.toBe(token.token.access_token);
    expect(refreshed.token.refresh_token).toBe(token.token.refresh_token);
    expect(refreshed.expired()).toBe(false);
    expect(await introspect(connect(), registered, token.token.access_token as string)).toEqual({ active: false });
  });

  it('revocation (RFC 7009): revoke and revokeAll answer, and the tokens are ended', async () => {
    const registered = await connect().createClient();
    const { token } = await linkCustomer(connect(), registered);
    await expect(token.revoke('access_token')).resolves.toEqual({});
    expect(await introspect(connect(), registered, token.token.access_token as string)).toEqual({ active: false });
    expect(await introspect(connect(), registered, token.token.refresh_token as string)).toMatchObject({ active: true });
    await token.revokeAll();
    expect(await introspect(connect(), registered, token.token.refresh_token as string)).toEqual({ active: false });
    const error = (await token.refresh().catch((e: unknown) => e)) as LibraryError;
    expect({ status: error.output.statusCode, payload: error.data.payload }).toMatchObject({ status: 400, payload: { error: 'invalid_grant' } });
  });

  it.each(['header', 'body'] as const)('a wrong secret, authorizationMethod %s: 401 invalid_client with the Basic challenge', async (method) => {
    const registered = await connect().createClient();
    const client = new ClientCredentials(options(connect(), { ...registered, secret: `${registered.secret}x` }, method));
    const error = (await client.getToken({}).catch((e: unknown) => e)) as LibraryError;
    expect({ status: error.output.statusCode, payload: error.data.payload }).toEqual({
      status: 401,
      payload: { error: 'invalid_client', error_description: 'client authentication failed' },
    });
    expect(error.data.res.headers['www-authenticate']).toBe('Basic realm="connect"');
  });
});
