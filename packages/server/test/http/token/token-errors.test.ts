import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { basicAuth, build, form, type TestApp } from '../../helpers/build.js';
import { expectNoStore, expectOAuthError, postToken, type Credentials, type ExpectedOAuthError, type TokenRequestOptions } from '../../helpers/wire.js';

/** The clients every error case can use. */
interface Fixture {
  readonly t: TestApp;
  /** Active, allowed client_credentials. */
  readonly client: Credentials;
  /** Disabled before any request, so no cached record hides it. */
  readonly disabled: Credentials;
  /** Active, allowed only authorization_code. */
  readonly codeOnly: Credentials;
}

async function setUp(): Promise<Fixture> {
  const t = await build();
  const client = await t.createClient();
  const disabled = await t.createClient({ name: 'Disabled' });
  await t.storage.clients.updateClient(disabled.id, { status: 'disabled' }, t.clock.nowSeconds());
  const codeOnly = await t.createClient({ name: 'Code only', grants: ['authorization_code'] });
  return { t, client, disabled, codeOnly };
}

const CC = 'client_credentials';
/** How stale a client record a server may act on: CLI changes reach running servers within this time. */
const AUTH_FAILED = 'client authentication failed';
const UNKNOWN_ID = 'cid_sandbox_AAAAAAAAAAAAAAAAAAAAAA';
const WRONG_SECRET = 'csk_sandbox_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';

interface ErrorCase {
  readonly name: string;
  readonly request: (f: Fixture) => TokenRequestOptions;
  readonly expected: ExpectedOAuthError;
}

const basic = (c: Credentials, params: Record<string, string>): TokenRequestOptions => ({
  authorization: basicAuth(c.id, c.secret),
  body: form(params),
});
const post = (params: Record<string, string>): TokenRequestOptions => ({ body: form(params) });

// Table-driven, like fosite's flow_client_credentials_test.go: request in, exact error out.
const CASES: readonly ErrorCase[] = [
  {
    name: 'missing grant_type',
    request: ({ client }) => basic(client, {}),
    expected: { status: 400, error: 'invalid_request', description: 'grant_type is required', challenge: 'none' },
  },
  {
    name: 'empty grant_type (treated as omitted)',
    request: ({ client }) => basic(client, { grant_type: '' }),
    expected: { status: 400, error: 'invalid_request', description: 'grant_type is required', challenge: 'none' },
  },
  {
    name: 'unknown grant_type',
    request: ({ client }) => basic(client, { grant_type: 'password' }),
    expected: { status: 400, error: 'unsupported_grant_type', description: /client_credentials/, challenge: 'none' },
  },
  {
    name: 'grant_type authorization_code with an unknown code',
    request: ({ client }) => basic(client, { grant_type: 'authorization_code', code: 'x', redirect_uri: 'https://acme.example/callback' }),
    expected: { status: 400, error: 'invalid_grant', description: 'authorization code is invalid', challenge: 'none' },
  },
  {
    name: 'grant_type refresh_token for a client without the refresh grant',
    request: ({ client }) => basic(client, { grant_type: 'refresh_token', refresh_token: 'x' }),
    expected: { status: 400, error: 'unauthorized_client', challenge: 'none' },
  },
  {
    name: 'no client authentication',
    request: () => post({ grant_type: CC }),
    // RFC 9110 §15.5.2: every 401 carries a challenge, whatever method the client tried.
    expected: { status: 401, error: 'invalid_client', description: /client authentication is required/, challenge: 'basic' },
  },
  {
    name: 'unknown client, HTTP Basic',
    request: () => basic({ id: UNKNOWN_ID, secret: WRONG_SECRET }, { grant_type: CC }),
    expected: { status: 401, error: 'invalid_client', description: AUTH_FAILED, challenge: 'basic' },
  },
  {
    name: 'unknown client, client_secret_post',
    request: () => post({ grant_type: CC, client_id: UNKNOWN_ID, client_secret: WRONG_SECRET }),
    expected: { status: 401, error: 'invalid_client', description: AUTH_FAILED, challenge: 'basic' },
  },
  {
    name: 'wrong secret, HTTP Basic',
    request: ({ client }) => basic({ id: client.id, secret: WRONG_SECRET }, { grant_type: CC }),
    expected: { status: 401, error: 'invalid_client', description: AUTH_FAILED, challenge: 'basic' },
  },
  {
    name: 'wrong secret, client_secret_post',
    request: ({ client }) => post({ grant_type: CC, client_id: client.id, client_secret: WRONG_SECRET }),
    expected: { status: 401, error: 'invalid_client', description: AUTH_FAILED, challenge: 'basic' },
  },
  {
    name: 'secret of another client',
    request: ({ client, codeOnly }) => basic({ id: client.id, secret: codeOnly.secret }, { grant_type: CC }),
    expected: { status: 401, error: 'invalid_client', description: AUTH_FAILED, challenge: 'basic' },
  },
  {
    name: 'disabled client, HTTP Basic',
    request: ({ disabled }) => basic(disabled, { grant_type: CC }),
    expected: { status: 401, error: 'invalid_client', description: 'client is disabled', challenge: 'basic' },
  },
  {
    name: 'disabled client, client_secret_post',
    request: ({ disabled }) => post({ grant_type: CC, client_id: disabled.id, client_secret: disabled.secret }),
    expected: { status: 401, error: 'invalid_client', description: 'client is disabled', challenge: 'basic' },
  },
  {
    name: 'disabled client with a wrong secret (not told it is disabled)',
    request: ({ disabled }) => basic({ id: disabled.id, secret: WRONG_SECRET }, { grant_type: CC }),
    expected: { status: 401, error: 'invalid_client', description: AUTH_FAILED, challenge: 'basic' },
  },
  {
    name: 'HTTP Basic and client_secret in the body',
    request: ({ client }) => basic(client, { grant_type: CC, client_secret: client.secret }),
    expected: { status: 400, error: 'invalid_request', description: /HTTP Basic and client_secret/, challenge: 'none' },
  },
  {
    name: 'HTTP Basic and a different client_id in the body',
    request: ({ client, codeOnly }) => basic(client, { grant_type: CC, client_id: codeOnly.id }),
    expected: { status: 400, error: 'invalid_request', description: /client_id does not match/, challenge: 'none' },
  },
  {
    name: 'client_secret without client_id',
    request: ({ client }) => post({ grant_type: CC, client_secret: client.secret }),
    expected: { status: 400, error: 'invalid_request', description: 'client_id is required with client_secret', challenge: 'none' },
  },
  {
    name: 'client_id without client_secret',
    request: ({ client }) => post({ grant_type: CC, client_id: client.id }),
    expected: { status: 401, error: 'invalid_client', description: 'client_secret is required', challenge: 'basic' },
  },
  {
    name: 'client not allowed client_credentials, HTTP Basic',
    request: ({ codeOnly }) => basic(codeOnly, { grant_type: CC }),
    expected: { status: 400, error: 'unauthorized_client', description: /client_credentials/, challenge: 'none' },
  },
  {
    name: 'client not allowed client_credentials, client_secret_post',
    request: ({ codeOnly }) => post({ grant_type: CC, client_id: codeOnly.id, client_secret: codeOnly.secret }),
    expected: { status: 400, error: 'unauthorized_client', challenge: 'none' },
  },
  {
    name: 'client not allowed client_credentials, with a wrong secret (authentication comes first)',
    request: ({ codeOnly }) => basic({ id: codeOnly.id, secret: WRONG_SECRET }, { grant_type: CC }),
    expected: { status: 401, error: 'invalid_client', description: AUTH_FAILED, challenge: 'basic' },
  },
  {
    name: 'production client ID on the sandbox, HTTP Basic',
    request: () => basic({ id: 'cid_production_AAAAAAAAAAAAAAAAAAAAAA', secret: WRONG_SECRET }, { grant_type: CC }),
    expected: { status: 401, error: 'invalid_client', description: /\bproduction\b.*\bsandbox\b/, challenge: 'basic' },
  },
  {
    name: 'production client ID on the sandbox, client_secret_post',
    request: () => post({ grant_type: CC, client_id: 'cid_production_AAAAAAAAAAAAAAAAAAAAAA', client_secret: 'csk_production_x' }),
    expected: { status: 401, error: 'invalid_client', description: /\bproduction\b.*\bsandbox\b/, challenge: 'basic' },
  },
  {
    name: 'sandbox client ID with a production secret',
    request: ({ client }) => basic({ id: client.id, secret: 'csk_production_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC' }, { grant_type: CC }),
    expected: { status: 401, error: 'invalid_client', description: /\bproduction\b/, challenge: 'basic' },
  },
];

describe('POST /token errors (RFC 6749 §5.2)', () => {
  for (const testCase of CASES) {
    it(testCase.name, async () => {
      const fixture = await setUp();
      const res = await postToken(fixture.t.app, testCase.request(fixture));
      expectOAuthError(res, testCase.expected);
    });
  }

  it('answers an unknown client and a wrong secret identically, so neither is revealed', async () => {
    const { t, client } = await setUp();
    const comparable = (res: LightMyRequestResponse) => {
      const { date: _date, 'x-request-id': _requestId, ...headers } = res.headers;
      return { status: res.statusCode, headers, body: res.body };
    };
    const unknownBasic = await postToken(t.app, basic({ id: UNKNOWN_ID, secret: WRONG_SECRET }, { grant_type: CC }));
    const wrongBasic = await postToken(t.app, basic({ id: client.id, secret: WRONG_SECRET }, { grant_type: CC }));
    expect(comparable(unknownBasic)).toEqual(comparable(wrongBasic));
    const unknownPost = await postToken(t.app, post({ grant_type: CC, client_id: UNKNOWN_ID, client_secret: WRONG_SECRET }));
    const wrongPost = await postToken(t.app, post({ grant_type: CC, client_id: client.id, client_secret: WRONG_SECRET }));
    expect(comparable(unknownPost)).toEqual(comparable(wrongPost));
    expect(unknownBasic.body).not.toContain(UNKNOWN_ID);
    expect(wrongBasic.body).not.toContain(client.id);
  });

  it('refuses sandbox credentials on a production server, naming the environments', async () => {
    const sandbox = await build({ environment: 'sandbox' });
    const sandboxClient = await sandbox.createClient();
    const production = await build({ environment: 'production' });
    const res = await postToken(production.app, basic(sandboxClient, { grant_type: CC }));
    expectOAuthError(res, {
      status: 401,
      error: 'invalid_client',
      description: 'these are sandbox credentials; this server is the production environment',
      challenge: 'basic',
    });
    // And its own clients work there.
    const productionClient = await production.createClient();
    expect(productionClient.id.startsWith('cid_production_')).toBe(true);
    expect((await postToken(production.app, basic(productionClient, { grant_type: CC }))).statusCode).toBe(200);
  });

  it('refuses a client disabled after its last request at the very next request, whatever the clock says', async () => {
    const { t, client } = await setUp();
    const request = () => postToken(t.app, basic(client, { grant_type: CC }));
    expect((await request()).statusCode).toBe(200); // reads and holds the record
    await t.storage.clients.updateClient(client.id, { status: 'disabled' }, t.clock.nowSeconds());
    expectOAuthError(await request(), { status: 401, error: 'invalid_client', description: 'client is disabled', challenge: 'basic' });
  });

  it('answers a re-enabled client at the very next request', async () => {
    const { t, disabled } = await setUp();
    const request = () => postToken(t.app, basic(disabled, { grant_type: CC }));
    expect((await request()).statusCode).toBe(401);
    await t.storage.clients.updateClient(disabled.id, { status: 'active' }, t.clock.nowSeconds());
    expect((await request()).statusCode).toBe(200);
  });

  it.each(['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const)('answers %s /token with 405 and Allow: POST', async (method) => {
    const { t, client } = await setUp();
    const res = await t.app.inject({
      method,
      url: '/token',
      headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
      ...(method === 'GET' || method === 'OPTIONS' ? {} : { payload: form({ grant_type: CC }) }),
    });
    expectOAuthError(res, { status: 405, error: 'invalid_request', challenge: 'none' });
    expect(res.headers.allow).toBe('POST');
  });

  it('answers HEAD /token with 405, Allow: POST and the no-store headers', async () => {
    const { t } = await setUp();
    const res = await t.app.inject({ method: 'HEAD', url: '/token' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expectNoStore(res);
    expect(res.body).toBe('');
  });
});

describe('POST /token while the database is down', () => {
  it('answers 503 temporarily_unavailable, not a 500, and logs the cause', async () => {
    const t = await build({ captureLogs: true });
    const client = await t.createClient();
    await t.storage.close();
    const res = await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: form({ grant_type: CC }) });
    expectOAuthError(res, { status: 503, error: 'temporarily_unavailable', description: /retry/ });
    // The outage is logged once, with its cause; the request's own line says what was unavailable, without a stack.
    const lines = t.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((line) => line.level === 50 && line.msg === 'database unreachable' && String(line.cause).includes('closed'))).toHaveLength(1);
    expect(lines.filter((line) => line.msg === 'request completed' && line.unavailable === 'database' && line.statusCode === 503)).toHaveLength(1);
    expect(t.logs.join('\n')).not.toMatch(/\bat .*\.(?:ts|js):\d+/);
    expect(t.logs.join('\n')).not.toContain(client.secret);
  });
});
