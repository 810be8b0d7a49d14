import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Client } from '../../../src/core/clients/client.js';
import { InvalidClient, InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from '../../../src/core/errors.js';
import { handleTokenRequest } from '../../../src/core/grants/token-request.js';
import { bindGrant, createGrantRegistry } from '../../../src/core/grants/registry.js';
import type { GrantHandler } from '../../../src/core/grants/grant.js';
import { fixedClock } from '../../../src/core/clock.js';
import { createDpopNonces } from '../../../src/core/dpop/dpop-nonce.js';

const acme = { id: 'cid_sandbox_acme', grants: ['client_credentials'], status: 'active' } as unknown as Client;

const echoGrant: GrantHandler<{ calls: string[] }> = {
  grantType: 'client_credentials',
  parameters: [],
  async handle(request, deps) {
    deps.calls.push(request.client.id);
    return { accessToken: `token-for-${request.client.id}`, tokenType: 'Bearer', expiresIn: 60, scopes: [] };
  },
};

/** DPoP checks that are never reached: these requests carry no proof, and acme is a standard client. */
const DPOP = {
  clock: fixedClock(0),
  replay: { useJtiOnce: async () => true },
  nonces: createDpopNonces(randomBytes(32), fixedClock(0)),
  urls: { authUrl: 'https://auth.connect.test', baseUrl: 'https://api.connect.test' },
};

function setup(authenticate: () => Promise<Client> = async () => acme) {
  const calls: string[] = [];
  const grants = createGrantRegistry([bindGrant(echoGrant, { calls })]);
  let authenticated = 0;
  return {
    calls,
    authenticated: () => authenticated,
    deps: {
      grants,
      dpop: DPOP,
      authenticate: async () => {
        authenticated++;
        return authenticate();
      },
    },
  };
}

describe('handleTokenRequest', () => {
  const cases: Array<{
    description: string;
    params: Record<string, string>;
    client?: Client;
    authFails?: boolean;
    error: unknown;
    authenticates: boolean;
  }> = [
    { description: 'missing grant_type', params: {}, error: InvalidRequest, authenticates: false },
    { description: 'unknown grant_type', params: { grant_type: 'password' }, error: UnsupportedGrantType, authenticates: false },
    { description: 'grant not built here', params: { grant_type: 'authorization_code' }, error: UnsupportedGrantType, authenticates: false },
    { description: 'client authentication fails', params: { grant_type: 'client_credentials' }, authFails: true, error: InvalidClient, authenticates: true },
    {
      description: 'client not allowed the grant',
      params: { grant_type: 'client_credentials' },
      client: { ...acme, grants: ['authorization_code'] } as Client,
      error: UnauthorizedClient,
      authenticates: true,
    },
    {
      description: 'a resource server, even with the grant in its record',
      params: { grant_type: 'client_credentials' },
      client: { ...acme, kind: 'resource_server', redirectUri: null } as Client,
      error: UnauthorizedClient,
      authenticates: true,
    },
  ];

  it.each(cases)('refuses: $description', async ({ params, client, authFails, error, authenticates }) => {
    const s = setup(async () => {
      if (authFails) throw new InvalidClient('client authentication failed', 'none');
      return client ?? acme;
    });
    await expect(handleTokenRequest({ params }, s.deps)).rejects.toBeInstanceOf(error);
    expect(s.calls).toEqual([]);
    expect(s.authenticated()).toBe(authenticates ? 1 : 0);
  });

  it('runs the grant for an authenticated client allowed to use it', async () => {
    const s = setup();
    const result = await handleTokenRequest({ params: { grant_type: 'client_credentials' } }, s.deps);
    expect(result).toEqual({ accessToken: 'token-for-cid_sandbox_acme', tokenType: 'Bearer', expiresIn: 60, scopes: [] });
    expect(s.calls).toEqual(['cid_sandbox_acme']);
  });

  it('lists the supported grants when refusing one', async () => {
    const s = setup();
    await expect(handleTokenRequest({ params: { grant_type: 'x' } }, s.deps)).rejects.toMatchObject({
      description: expect.stringContaining('client_credentials'),
    });
  });

  it('refuses to register one grant type twice', () => {
    expect(() => createGrantRegistry([bindGrant(echoGrant, { calls: [] }), bindGrant(echoGrant, { calls: [] })])).toThrow(/twice/);
  });

  it('hands the grant only the parameters it declares, besides grant_type and client authentication (RFC 6749 §3.2)', async () => {
    const seen: Array<Readonly<Record<string, string>>> = [];
    const scopedGrant: GrantHandler<null> = {
      grantType: 'client_credentials',
      parameters: ['scope'],
      async handle(request) {
        seen.push(request.params);
        return { accessToken: 'token', tokenType: 'Bearer', expiresIn: 60, scopes: [] };
      },
    };
    const deps = { grants: createGrantRegistry([bindGrant(scopedGrant, null)]), authenticate: async () => acme, dpop: DPOP };
    const params = {
      grant_type: 'client_credentials',
      client_id: 'cid_sandbox_acme',
      client_secret: 'secret',
      scope: 'read',
      code: 'not-this-grant',
      refresh_token: 'not-this-grant-either',
      audience: 'unknown',
    };
    await handleTokenRequest({ params }, deps);
    expect(seen).toEqual([{ grant_type: 'client_credentials', client_id: 'cid_sandbox_acme', client_secret: 'secret', scope: 'read' }]);
  });

  it('does not hand a grant scope when it does not declare it', async () => {
    const seen: Array<Readonly<Record<string, string>>> = [];
    const grant: GrantHandler<null> = {
      grantType: 'client_credentials',
      parameters: [],
      async handle(request) {
        seen.push(request.params);
        return { accessToken: 'token', tokenType: 'Bearer', expiresIn: 60, scopes: [] };
      },
    };
    const deps = { grants: createGrantRegistry([bindGrant(grant, null)]), authenticate: async () => acme, dpop: DPOP };
    await handleTokenRequest({ params: { grant_type: 'client_credentials', scope: 'read', extra: 'x' } }, deps);
    expect(seen).toEqual([{ grant_type: 'client_credentials' }]);
  });
});
