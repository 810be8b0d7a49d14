import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientCredentialsProvider, discover, InvalidResponse, IssuerMismatch } from '../../src/index.js';
import { startConnect, type TestConnect } from '../support/test-connect.js';
import { sendJson, startLocalServer } from '../support/local-server.js';

// Discovery (RFC 8414) against real Connect servers: one at the root of its host, one whose auth URL has a path.
let connect: TestConnect;
let withPath: TestConnect;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  connect = await startConnect();
  const port = await freePort();
  withPath = await startConnect({ env: { PORT: String(port), CONNECT_AUTH_URL: `http://127.0.0.1:${port}/auth` } });
});

afterAll(async () => {
  await connect?.close();
  await withPath?.close();
});

describe('discover', () => {
  it('reads and checks the metadata, and its authUrl works for the rest of the SDK', async () => {
    const found = await discover(connect.authUrl);
    expect(found).toMatchObject({
      authUrl: connect.authUrl,
      issuer: connect.authUrl,
      authorizationEndpoint: `${connect.authUrl}/authorize`,
      tokenEndpoint: `${connect.authUrl}/token`,
      revocationEndpoint: `${connect.authUrl}/revoke`,
      introspectionEndpoint: `${connect.authUrl}/introspect`,
      jwksUri: `${connect.authUrl}/.well-known/jwks.json`,
      issParameterSupported: true,
      acrValuesSupported: ['phr', 'urn:connect:acr:pin-sms'],
    });
    expect(found.grantTypesSupported).toEqual(expect.arrayContaining(['client_credentials', 'authorization_code', 'refresh_token']));
    const provider = new ClientCredentialsProvider({ ...found, clientId: connect.demo.clientId, clientSecret: connect.demo.clientSecret });
    expect((await provider.getToken()).tokenType).toBe('Bearer');
  });

  it('accepts the issuer with a trailing slash as the same configuration', async () => {
    expect((await discover(`${connect.authUrl}/`)).authUrl).toBe(connect.authUrl);
  });

  it('asks the path-inserted well-known URL for an issuer with a path (RFC 8414 §3.1)', async () => {
    expect(withPath.authUrl).toMatch(/\/auth$/);
    const seen: string[] = [];
    const found = await discover(withPath.authUrl, {
      fetch: (input, init) => {
        seen.push(String(input));
        return fetch(input, init);
      },
    });
    expect(found.authUrl).toBe(withPath.authUrl);
    expect(found.tokenEndpoint).toBe(`${withPath.authUrl}/token`);
    expect(seen).toEqual([`${new URL(withPath.authUrl).origin}/.well-known/oauth-authorization-server/auth`]);
  });

  it('refuses metadata naming another issuer (RFC 8414 §3.3)', async () => {
    // The same server under another name: its metadata says localhost, not 127.0.0.1.
    const other = connect.authUrl.replace('localhost', '127.0.0.1');
    const error = await discover(other).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IssuerMismatch);
    expect((error as Error).message).toContain(`the metadata names issuer "${connect.authUrl}", not "${other}"`);
  });

  it('falls back to {issuer}/.well-known/… after a 404, and refuses endpoints elsewhere than the SDK sends to', async () => {
    const fake = await startLocalServer((request, response) => {
      const issuer = `http://${request.headers.host}/tenant`;
      if (request.url === '/tenant/.well-known/oauth-authorization-server') {
        return sendJson(response, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `https://elsewhere.example/token`,
          revocation_endpoint: `${issuer}/revoke`,
          introspection_endpoint: `${issuer}/introspect`,
          jwks_uri: `${issuer}/.well-known/jwks.json`,
        });
      }
      return sendJson(response, 404, { error: 'Not Found' });
    });
    try {
      const error = await discover(`${fake.url}/tenant`).catch((e: unknown) => e);
      expect(fake.requests.map((r) => r.path)).toEqual(['/.well-known/oauth-authorization-server/tenant', '/tenant/.well-known/oauth-authorization-server']);
      expect(error).toBeInstanceOf(InvalidResponse);
      expect((error as Error).message).toContain(`the metadata's token_endpoint is "https://elsewhere.example/token", not ${fake.url}/tenant/token`);
    } finally {
      await fake.close();
    }
  });

  it('refuses a URL that cannot be an issuer', async () => {
    await expect(discover('auth.example')).rejects.toThrow(TypeError);
  });
});
