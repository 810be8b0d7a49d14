import { writeFileSync } from 'node:fs';
import { dpopKey } from '../helpers/dpop.js';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { form, TEST_AUTH_URL } from '../helpers/build.js';
import { cliWorkspace, expectFailure, tokenOutcome, type CliWorkspace } from './command-line.js';

/**
 * `clients create|update --profile standard|fapi2 --jwks FILE | --jwks-uri URL`
 * (docs/operator-guide.md, "FAPI 2.0 clients").
 */

let ws: CliWorkspace;
let key: Awaited<ReturnType<typeof generateKeyPair>>;
let jwk: JWK;

beforeAll(async () => {
  key = await generateKeyPair('ES256', { extractable: true });
  jwk = { ...(await exportJWK(key.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
});

beforeEach(() => {
  ws = cliWorkspace();
});

const REDIRECT_URI = 'https://bank.example/callback';

function jwksFile(content: unknown, name = 'keys.json'): string {
  const path = join(ws.dataDir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const create = (...extra: string[]) => ['clients', 'create', '--name', 'Acme Bank', '--redirect-uri', REDIRECT_URI, ...extra];

interface Shown {
  clientId: string;
  clientSecret?: string;
  profile: string;
  requirePkce?: boolean;
  keys: { source: string; kids?: Array<string | null>; jwksUri?: string } | null;
}

async function assertionStatus(clientId: string): Promise<number | string> {
  const t = await ws.app();
  const now = ws.clock.nowSeconds();
  // A fapi2 client's token request also needs a DPoP proof with Connect's nonce: the first answer gives it.
  const dpop = await dpopKey();
  const send = async (nonce?: string) => {
    const assertion = await new SignJWT({ iss: clientId, sub: clientId, aud: TEST_AUTH_URL, iat: now, exp: now + 60, jti: crypto.randomUUID() })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(key.privateKey);
    const proof = await dpop.proof({ htm: 'POST', htu: `${TEST_AUTH_URL}/token`, iat: now, ...(nonce === undefined ? {} : { nonce }) });
    return t.app.inject({
      method: 'POST',
      url: '/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
      payload: form({ grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion }),
    });
  };
  let res = await send();
  if (res.statusCode === 400 && res.json<{ error: string }>().error === 'use_dpop_nonce') res = await send(String(res.headers['dpop-nonce']));
  return res.statusCode === 200 ? 200 : `${res.statusCode} ${res.json<{ error: string }>().error}`;
}

describe('clients create --profile fapi2', () => {
  it('registers keys and no secret, requires PKCE, and the client authenticates with an assertion', async () => {
    const created = await ws.cliJson<Shown>(create('--profile', 'fapi2', '--jwks', jwksFile({ keys: [jwk] })));
    expect(created).not.toHaveProperty('clientSecret');
    expect(created).toMatchObject({ profile: 'fapi2', keys: { source: 'jwks', kids: ['k1'] } });
    const text = await ws.cli(create('--profile', 'fapi2', '--jwks', jwksFile({ keys: [jwk] })));
    expect(text.stdout).toContain('A fapi2 client has no secret: it authenticates only with private_key_jwt');
    expect(text.stdout).not.toMatch(/csk_sandbox_/);

    const shown = await ws.cliJson<Shown>(['clients', 'show', created.clientId]);
    expect(shown).toMatchObject({ profile: 'fapi2', requirePkce: true, keys: { source: 'jwks', kids: ['k1'] } });
    const shownText = (await ws.cli(['clients', 'show', created.clientId])).stdout;
    expect(shownText).toMatch(/profile:\s+fapi2/);
    expect(shownText).toMatch(/keys:\s+1 registered \(k1\)/);
    expect((await ws.cli(['clients', 'list'])).stdout).toContain('profile: fapi2  keys: jwks');
    expect(await assertionStatus(created.clientId)).toBe(200);

    const events = (await ws.auditEvents()).filter((e) => e.type === 'client.created');
    expect(events[0]?.details).toMatchObject({ profile: 'fapi2', keys: 'jwks k1' });
  });

  it('refuses fapi2 without keys, a private key, a symmetric key, both --jwks and --jwks-uri, an http jwks_uri elsewhere than localhost', async () => {
    const privateJwk = { ...(await exportJWK(key.privateKey)), kid: 'k1' };
    const cases: Array<[string[], RegExp]> = [
      [create('--profile', 'fapi2'), /a fapi2 client authenticates only with private_key_jwt: give its public keys with --jwks FILE or --jwks-uri URL/],
      [create('--jwks', jwksFile({ keys: [privateJwk] }, 'private.json')), /--jwks: key 1: it holds private key material \("d"\)/],
      [create('--jwks', jwksFile({ keys: [{ kty: 'oct', k: 'c2VjcmV0c2VjcmV0', kid: 's' }] }, 'oct.json')), /symmetric \("oct"\) key is refused/],
      [create('--jwks', jwksFile({ keys: [jwk] }, 'good.json'), '--jwks-uri', 'https://bank.example/jwks'), /give --jwks or --jwks-uri, not both/],
      [create('--jwks-uri', 'http://bank.example/jwks'), /--jwks-uri: the jwks_uri must be https:\/\/ \(or http:\/\/localhost/],
      [create('--jwks', jwksFile('{not json', 'bad.json')), /--jwks .*: not JSON/],
      [create('--jwks', join(ws.dataDir, 'missing.json')), /--jwks .*: cannot be read \(ENOENT\)/],
      [create('--profile', 'fapi3', '--jwks', jwksFile({ keys: [jwk] }, 'good.json')), /--profile must be one of standard, fapi2/],
    ];
    for (const [argv, message] of cases) {
      const run = await ws.cli(argv);
      expect(expectFailure(run, 'non-zero')).toMatch(message);
    }
    expect((await (await ws.storage()).clients.listClients()).length).toBe(0);
  });

  it('accepts a jwks_uri on localhost in sandbox and shows it', async () => {
    const created = await ws.cliJson<Shown>(create('--profile', 'fapi2', '--jwks-uri', 'http://127.0.0.1:9/jwks.json'));
    expect(created.keys).toEqual({ source: 'jwks_uri', jwksUri: 'http://127.0.0.1:9/jwks.json' });
    expect((await ws.cli(['clients', 'show', created.clientId])).stdout).toMatch(/keys:\s+fetched from http:\/\/127\.0\.0\.1:9\/jwks\.json/);
  });
});

describe('clients update --profile, rotate-secret', () => {
  it('switching a standard client to fapi2 ends its secrets at once (also one in its grace), and rotate-secret refuses it', async () => {
    const created = await ws.cliJson<Shown & { clientSecret: string }>(create());
    const rotated = await ws.cliJson<{ clientSecret: string }>(['clients', 'rotate-secret', created.clientId, '--grace', '3600']);
    const t = await ws.app();
    expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(200);
    expect(await tokenOutcome(t, created.clientId, rotated.clientSecret)).toBe(200);

    const refused = await ws.cli(['clients', 'update', created.clientId, '--profile', 'fapi2']);
    expect(expectFailure(refused, 'non-zero')).toMatch(/give its public keys with --jwks FILE or --jwks-uri URL/);

    const run = await ws.cli(['clients', 'update', created.clientId, '--profile', 'fapi2', '--jwks', jwksFile({ keys: [jwk] })]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Now a fapi2 client: its secret (and any previous one) no longer works');
    const stored = await (await ws.storage()).clients.findClient(created.clientId);
    expect(stored).toMatchObject({ profile: 'fapi2', requirePkce: true, secretHash: '', previousSecretHash: null, previousSecretExpiresAt: null });
    const after = await ws.app();
    expect(await tokenOutcome(after, created.clientId, created.clientSecret)).toBe('401 invalid_client');
    expect(await tokenOutcome(after, created.clientId, rotated.clientSecret)).toBe('401 invalid_client');
    expect(await assertionStatus(created.clientId)).toBe(200);

    const updated = (await ws.auditEvents()).filter((e) => e.type === 'client.updated');
    expect(updated.at(-1)?.details).toMatchObject({ profile: 'fapi2', keys: 'jwks k1', secrets_removed: true });

    expect(expectFailure(await ws.cli(['clients', 'rotate-secret', created.clientId]), 'non-zero')).toMatch(
      /this is a fapi2 client: it has no secret and authenticates only with private_key_jwt; rotate its keys instead/,
    );
    expect(expectFailure(await ws.cli(['clients', 'update', created.clientId, '--no-require-pkce']), 'non-zero')).toMatch(/a fapi2 client requires PKCE/);
  });

  it('a standard client with keys keeps its secret and may use either', async () => {
    const created = await ws.cliJson<Shown & { clientSecret: string }>(create());
    const shown = await ws.cliJson<Shown>(['clients', 'update', created.clientId, '--jwks', jwksFile({ keys: [jwk] })]);
    expect(shown).toMatchObject({ profile: 'standard', keys: { source: 'jwks', kids: ['k1'] } });
    expect(await tokenOutcome(await ws.app(), created.clientId, created.clientSecret)).toBe(200);
    expect(await assertionStatus(created.clientId)).toBe(200);
    // --jwks-uri replaces the registered keys.
    const moved = await ws.cliJson<Shown>(['clients', 'update', created.clientId, '--jwks-uri', 'https://bank.example/jwks.json']);
    expect(moved.keys).toEqual({ source: 'jwks_uri', jwksUri: 'https://bank.example/jwks.json' });
  });

  it('--help names the new options', async () => {
    for (const command of ['create', 'update']) {
      const help = (await ws.cli(['clients', command, '--help'])).stdout;
      expect(help).toContain('--profile <PROFILE>');
      expect(help).toContain('--jwks <FILE>');
      expect(help).toContain('--jwks-uri <URL>');
    }
  });
});
