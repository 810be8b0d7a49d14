import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/main.js';
import { ConfigError } from '../../../src/config/load.js';
import { startServer, type RunningServer } from '../../../src/http/server.js';
import { basicAuth, form } from '../../helpers/build.js';

/**
 * A sandbox and a production server side by side, each started as
 * `connect-auth serve` starts it (docs/operator-guide.md, "One server, one
 * environment"): separate data, keys and credentials; neither accepts what
 * the other issued; production refuses sandbox-only settings and sets its
 * cookies and headers for HTTPS.
 */

const PRODUCTION_AUTH_URL = 'https://auth.prod.example';
const PRODUCTION_BASE_URL = 'https://api.prod.example';
const REDIRECT_URI = 'https://shop.example/callback';

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'connect-env-'));
  tempDirs.push(dir);
  return dir;
}

/** A log sink: the servers' JSON logs stay out of the test output. */
function discard(): Writable {
  return new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
}

/** The settings of a valid production server on its own data folder and database. */
function productionEnv(dataDir: string): Record<string, string> {
  return {
    CONNECT_ENVIRONMENT: 'production',
    CONNECT_DATA_DIR: dataDir,
    DATABASE_URL: `sqlite:${join(dataDir, 'production.db')}`,
    CONNECT_MASTER_KEY: randomBytes(32).toString('base64'),
    CONNECT_AUTH_URL: PRODUCTION_AUTH_URL,
    CONNECT_BASE_URL: PRODUCTION_BASE_URL,
    CONNECT_SMS_WEBHOOK_URL: 'https://sms.example/hook',
    CONNECT_SMS_WEBHOOK_SECRET: 's',
    PORT: '0',
  };
}

/** Registers a client with `connect-auth clients create` on that environment's data. */
async function createClient(env: Record<string, string>): Promise<{ clientId: string; clientSecret: string; environment: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['clients', 'create', '--name', 'Acme', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials,authorization_code,refresh_token', '--json'], {
    env,
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  });
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(stdout) as { clientId: string; clientSecret: string; environment: string };
}

interface Environment {
  readonly server: RunningServer;
  readonly client: { clientId: string; clientSecret: string };
}

let sandbox: Environment;
let production: Environment;

beforeAll(async () => {
  const sandboxEnv = { CONNECT_DATA_DIR: tempDir(), PORT: '0' };
  const prodEnv = productionEnv(tempDir());
  const sandboxClient = await createClient(sandboxEnv);
  const productionClient = await createClient(prodEnv);
  expect([sandboxClient.environment, productionClient.environment]).toEqual(['sandbox', 'production']);
  sandbox = { server: await startServer({ env: sandboxEnv, print: () => {}, logDestination: discard() }), client: sandboxClient };
  production = { server: await startServer({ env: prodEnv, print: () => {}, logDestination: discard() }), client: productionClient };
});

afterAll(async () => {
  await sandbox?.server.close();
  await production?.server.close();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function post(env: Environment, path: string, headers: Record<string, string>, body: string): Promise<Response> {
  return fetch(`${env.server.address}${path}`, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
}

function requestToken(at: Environment, client: { clientId: string; clientSecret: string }): Promise<Response> {
  return post(at, '/token', { authorization: basicAuth(client.clientId, client.clientSecret), 'content-type': 'application/x-www-form-urlencoded' }, form({ grant_type: 'client_credentials' }));
}

async function accessToken(env: Environment): Promise<string> {
  const res = await requestToken(env, env.client);
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

function introspect(at: Environment, token: string): Promise<Response> {
  return post(at, '/introspect', { authorization: basicAuth(at.client.clientId, at.client.clientSecret), 'content-type': 'application/x-www-form-urlencoded' }, form({ token }));
}

function refreshAtTokens(at: Environment, bearer: string): Promise<Response> {
  return post(
    at,
    '/tokens',
    { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', accept: 'application/json', 'request-reference-no': randomUUID() },
    JSON.stringify({ refreshToken: 'not-looked-at' }),
  );
}

describe('the two servers', () => {
  it('listen on their own addresses, with their own public URLs', () => {
    expect(sandbox.server.config.environment).toBe('sandbox');
    expect(production.server.config.environment).toBe('production');
    expect(sandbox.server.address).not.toBe(production.server.address);
    expect(production.server.urls).toEqual({ authUrl: PRODUCTION_AUTH_URL, baseUrl: PRODUCTION_BASE_URL });
    expect(sandbox.server.urls.authUrl).toBe(sandbox.server.address.replace('//127.0.0.1:', '//localhost:'));
  });

  it('each gives its own client a token', async () => {
    expect((await requestToken(sandbox, sandbox.client)).status).toBe(200);
    expect((await requestToken(production, production.client)).status).toBe(200);
  });

  it('production advertises its https:// URLs', async () => {
    const res = await fetch(`${production.server.address}/.well-known/oauth-authorization-server`);
    expect(await res.json()).toMatchObject({ issuer: PRODUCTION_AUTH_URL, token_endpoint: `${PRODUCTION_AUTH_URL}/token` });
  });
});

describe('the sandbox outbox', () => {
  it('exists in the sandbox only: production answers 404 under /sandbox/', async () => {
    const query = `?to=${encodeURIComponent('+639171234567')}`;
    const inSandbox = await fetch(`${sandbox.server.address}/sandbox/messages${query}`);
    expect(inSandbox.status).toBe(200);
    expect(await inSandbox.json()).toEqual({ messages: [] });
    for (const path of [`/sandbox/messages${query}`, '/sandbox/messages', '/sandbox/']) {
      expect((await fetch(`${production.server.address}${path}`)).status).toBe(404);
    }
  });
});

describe('credentials and tokens stay in their environment', () => {
  it('sandbox credentials at the production /token: invalid_client naming the sandbox', async () => {
    const res = await requestToken(production, sandbox.client);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_client');
    expect(body.error_description).toMatch(/sandbox/);
    expect(body.error_description).toMatch(/production/);
  });

  it('production credentials at the sandbox /token: invalid_client naming production', async () => {
    const res = await requestToken(sandbox, production.client);
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_client');
    expect(body.error_description).toMatch(/production credentials/);
  });

  it('the same refusal with client_secret_post', async () => {
    const res = await post(
      production,
      '/token',
      { 'content-type': 'application/x-www-form-urlencoded' },
      form({ grant_type: 'client_credentials', client_id: sandbox.client.clientId, client_secret: sandbox.client.clientSecret }),
    );
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'invalid_client', error_description: expect.stringMatching(/sandbox/) });
  });

  it('a sandbox client access token is not a bearer token at the production POST /tokens, nor the reverse', async () => {
    for (const [from, to] of [
      [sandbox, production],
      [production, sandbox],
    ] as const) {
      const res = await refreshAtTokens(to, await accessToken(from));
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
      expect(await res.json()).toMatchObject({ error: 'invalid_token' });
    }
    // The same request with the server's own token gets past the bearer check.
    const own = await refreshAtTokens(production, await accessToken(production));
    expect(own.status).toBe(400);
    expect(await own.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('a token of one environment introspects as inactive in the other', async () => {
    const sandboxToken = await accessToken(sandbox);
    const productionToken = await accessToken(production);
    expect(await (await introspect(production, sandboxToken)).json()).toEqual({ active: false });
    expect(await (await introspect(sandbox, productionToken)).json()).toEqual({ active: false });
    // Each server does know its own.
    expect(await (await introspect(production, productionToken)).json()).toMatchObject({ active: true, client_id: production.client.clientId, iss: PRODUCTION_AUTH_URL });
    expect(await (await introspect(sandbox, sandboxToken)).json()).toMatchObject({ active: true, client_id: sandbox.client.clientId });
  });
});

describe('production pages and headers', () => {
  async function authorize(env: Environment): Promise<Response> {
    const query = new URLSearchParams({ response_type: 'code', client_id: env.client.clientId, redirect_uri: REDIRECT_URI, state: 'xyz' });
    return fetch(`${env.server.address}/authorize?${query.toString()}`, { redirect: 'manual' });
  }

  it('sets its cookies Secure, with the __Host- prefix, on path / and without a domain', async () => {
    const res = await authorize(production);
    expect(res.status).toBe(303);
    const cookies = res.headers.getSetCookie();
    const browser = cookies.find((c) => c.startsWith('__Host-connect_browser='));
    expect(browser, cookies.join('\n')).toBeDefined();
    for (const cookie of cookies) {
      const attributes = cookie.split(/;\s*/).slice(1).map((a) => a.toLowerCase());
      expect(cookie).toMatch(/^__Host-/);
      expect(attributes).toContain('secure');
      expect(attributes).toContain('path=/');
      expect(attributes).toContain('httponly');
      expect(attributes.some((a) => a.startsWith('domain='))).toBe(false);
    }

    // The login page it leads to sets its CSRF cookie the same way.
    const page = await fetch(`${production.server.address}${res.headers.get('location') ?? ''}`, {
      headers: { cookie: (browser as string).split(';')[0] as string },
      redirect: 'manual',
    });
    expect(page.status).toBe(200);
    const csrf = page.headers.getSetCookie().find((c) => /^__Host-connect_csrf=/.test(c));
    expect(csrf).toBeDefined();
    expect(csrf?.split(/;\s*/).map((a) => a.toLowerCase())).toEqual(expect.arrayContaining(['secure', 'path=/']));
  });

  it('the sandbox, on plain http://, sets the same cookies without Secure or the prefix', async () => {
    const res = await authorize(sandbox);
    expect(res.status).toBe(303);
    const cookies = res.headers.getSetCookie();
    expect(cookies.some((c) => c.startsWith('connect_browser='))).toBe(true);
    for (const cookie of cookies) {
      expect(cookie).not.toMatch(/^__Host-/);
      expect(cookie.split(/;\s*/).map((a) => a.toLowerCase())).not.toContain('secure');
    }
  });

  it('sends Strict-Transport-Security in production only', async () => {
    for (const path of ['/healthz', '/.well-known/jwks.json', '/sandbox/messages']) {
      expect((await fetch(`${production.server.address}${path}`)).headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
      expect((await fetch(`${sandbox.server.address}${path}`)).headers.get('strict-transport-security')).toBeNull();
    }
    const token = await requestToken(production, production.client);
    expect(token.headers.get('strict-transport-security')).toMatch(/^max-age=\d+/);
  });
});

describe('production refuses to start with sandbox settings', () => {
  it.each([
    ['no master key', { CONNECT_MASTER_KEY: '' }, false, /CONNECT_MASTER_KEY is required in production/],
    ['an http:// auth URL', { CONNECT_AUTH_URL: 'http://auth.prod.example' }, false, /CONNECT_AUTH_URL must be an https:\/\/ URL in production/],
    ['an http:// base URL', { CONNECT_BASE_URL: 'http://api.prod.example' }, false, /CONNECT_BASE_URL must be an https:\/\/ URL in production/],
    ['no auth URL', { CONNECT_AUTH_URL: '' }, false, /CONNECT_AUTH_URL is required in production/],
    ['CONNECT_SMS_SENDER=outbox', { CONNECT_SMS_SENDER: 'outbox' }, false, /CONNECT_SMS_SENDER=outbox is for the sandbox only/],
    ['CONNECT_SMS_SENDER=console', { CONNECT_SMS_SENDER: 'console' }, false, /CONNECT_SMS_SENDER=console is for the sandbox only/],
    ['no SMS webhook', { CONNECT_SMS_WEBHOOK_URL: '', CONNECT_SMS_WEBHOOK_SECRET: '' }, false, /CONNECT_SMS_WEBHOOK_URL is required in production/],
    ['an http:// SMS webhook', { CONNECT_SMS_WEBHOOK_URL: 'http://sms.example/hook' }, false, /CONNECT_SMS_WEBHOOK_URL must be https:\/\/ in production/],
    ['--seed-demo', {}, true, /--seed-demo is for the sandbox only/],
  ])('%s: one clear line naming the setting, and nothing set up', async (_name, change, seedDemo, message) => {
    const dataDir = tempDir();
    const env = { ...productionEnv(dataDir), ...change };
    const failure = await startServer({ env, seedDemo, print: () => {}, logDestination: discard() }).then(
      async (server) => {
        await server.close();
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    const error = failure as Error;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(message);
    expect(error.message).not.toMatch(/\n/);
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
