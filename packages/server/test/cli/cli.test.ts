import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { MASTER_KEY_FILE } from '../../src/config/master-key-file.js';
import { MasterKeys } from '../../src/core/keys/master-keys.js';
import { ClientSecretHasher } from '../../src/core/clients/client-secret.js';
import type { FixedClock } from '../../src/core/clock.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import { build, type TestApp } from '../helpers/build.js';
import { changeReached } from '../helpers/change-reached.js';
import { cliWorkspace, expectFailure, parseOneDocument, requestToken, type CliWorkspace, type Run } from './command-line.js';

let ws: CliWorkspace;
let dataDir: string;
let clock: FixedClock;

beforeEach(() => {
  ws = cliWorkspace();
  dataDir = ws.dataDir;
  clock = ws.clock;
});

/** Runs `connect-auth ...argv` in-process on this test's data folder. */
function cli(argv: readonly string[], extraEnv: Record<string, string> = {}): Promise<Run> {
  return ws.cli(argv, extraEnv);
}

/** Runs a `--json` command that must succeed, checks it printed exactly one JSON document, and returns it. */
function cliJson<T = Record<string, unknown>>(argv: readonly string[], extraEnv: Record<string, string> = {}): Promise<T> {
  return ws.cliJson<T>(argv, extraEnv);
}

interface CreatedClient {
  clientId: string;
  clientSecret: string;
  name: string;
  redirectUri: string;
  grants: string[];
  /** Only for a client with scopes. */
  scopes?: string[];
  environment: string;
}

interface ClientView {
  clientId: string;
  name: string;
  kind: string;
  redirectUri: string | null;
  grants: string[];
  requirePkce: boolean;
  scopes: string[];
  scopeDescriptions: Record<string, string>;
  status: string;
  environment: string;
  createdAt: string;
  updatedAt: string;
}

const REDIRECT_URI = 'https://shop.example/callback';

function createClient(...extra: string[]): Promise<CreatedClient> {
  return cliJson<CreatedClient>(['clients', 'create', '--name', 'Acme Shop', '--redirect-uri', REDIRECT_URI, ...extra]);
}

/** An app on the CLI's database file and master key, as `serve` would build it, with a clock of its own. */
async function appOnCliDatabase(): Promise<TestApp> {
  return build({ storage: await ws.storage(), masterKey: ws.masterKey() });
}

describe('clients create', () => {
  it('prints the new client with its secret as one JSON document with exactly the contract fields', async () => {
    const run = await cli(['clients', 'create', '--name', 'Acme Shop', '--redirect-uri', REDIRECT_URI, '--json']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const created = parseOneDocument(run.stdout) as CreatedClient;
    expect(Object.keys(created).sort()).toEqual(['clientId', 'clientSecret', 'environment', 'grants', 'name', 'redirectUri']);
    expect(created).toEqual({
      clientId: expect.stringMatching(/^cid_sandbox_[A-Za-z0-9_-]{22}$/),
      clientSecret: expect.stringMatching(/^csk_sandbox_[A-Za-z0-9_-]{43}$/),
      name: 'Acme Shop',
      redirectUri: REDIRECT_URI,
      grants: ['client_credentials', 'authorization_code'],
      environment: 'sandbox',
    });
  });

  it('stores the client: show and list find it with the default settings', async () => {
    const created = await createClient();
    const shown = await cliJson<ClientView>(['clients', 'show', created.clientId]);
    expect(shown).toEqual({
      clientId: created.clientId,
      name: 'Acme Shop',
      kind: 'consumer',
      redirectUri: REDIRECT_URI,
      grants: ['client_credentials', 'authorization_code'],
      requirePkce: false,
      scopes: [],
      scopeDescriptions: {},
      status: 'active',
      environment: 'sandbox',
      createdAt: '2026-01-01T00:00:00Z',
      updatedAt: '2026-01-01T00:00:00Z',
      tokensEndedAt: null,
      profile: 'standard',
      keys: null,
    });
  });

  it.each([
    ['client_credentials', ['client_credentials']],
    ['authorization_code', ['authorization_code']],
    ['client_credentials,authorization_code,refresh_token', ['client_credentials', 'authorization_code', 'refresh_token']],
    ['authorization_code, refresh_token', ['authorization_code', 'refresh_token']],
  ])('--grants %s', async (grants, expected) => {
    const created = await createClient('--grants', grants);
    expect(created.grants).toEqual(expected);
    expect((await cliJson<ClientView>(['clients', 'show', created.clientId])).grants).toEqual(expected);
  });

  it('--require-pkce is stored and shown', async () => {
    const created = await createClient('--require-pkce');
    expect((await cliJson<ClientView>(['clients', 'show', created.clientId])).requirePkce).toBe(true);
    const text = await cli(['clients', 'show', created.clientId]);
    expect(text.stdout).toMatch(/require PKCE:\s+yes/);
  });

  it('prints the secret once in the text output, with a warning to store it', async () => {
    const run = await cli(['clients', 'create', '--name', 'Acme Shop', '--redirect-uri', REDIRECT_URI]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const secret = /client secret:\s+(\S+)/.exec(run.stdout)?.[1];
    expect(secret).toMatch(/^csk_sandbox_/);
    expect(run.stdout.split(secret as string)).toHaveLength(2);
    expect(run.stdout).toMatch(/shown only now/);
  });

  it('gives every client its own ID and secret', async () => {
    const a = await createClient();
    const b = await createClient();
    expect(a.clientId).not.toBe(b.clientId);
    expect(a.clientSecret).not.toBe(b.clientSecret);
  });

  it.each([
    ['https://shop.example/callback#done', /fragment/],
    ['https://*.shop.example/callback', /wildcard/],
    ['https://shop.example/*', /wildcard/],
    ['javascript:alert(1)', /redirect URI/],
    ['/callback', /absolute/],
    ['shop.example/callback', /absolute/],
    ['https://user:pw@shop.example/callback', /user info/],
  ])('refuses the redirect URI %s and creates nothing', async (redirectUri, reason) => {
    const line = expectFailure(await cli(['clients', 'create', '--name', 'Acme', '--redirect-uri', redirectUri, '--json']), 'non-zero');
    expect(line).toMatch(/redirect URI/);
    expect(line).toMatch(reason);
    expect(await cliJson<unknown[]>(['clients', 'list'])).toEqual([]);
  });

  it.each([
    ['password', /unknown grant password/],
    ['client_credentials,implicit', /unknown grant implicit/],
    ['refresh_token', /refresh_token.*authorization_code/],
    ['', /at least one grant/],
    [',', /at least one grant/],
  ])('refuses --grants %j and creates nothing', async (grants, reason) => {
    const line = expectFailure(
      await cli(['clients', 'create', '--name', 'Acme', '--redirect-uri', REDIRECT_URI, '--grants', grants, '--json']),
      'non-zero',
    );
    expect(line).toMatch(reason);
    expect(await cliJson<unknown[]>(['clients', 'list'])).toEqual([]);
  });

  it('refuses a blank name and creates nothing', async () => {
    const line = expectFailure(await cli(['clients', 'create', '--name', '   ', '--redirect-uri', REDIRECT_URI]), 'non-zero');
    expect(line).toMatch(/name/);
    expect(await cliJson<unknown[]>(['clients', 'list'])).toEqual([]);
  });

  it('requires --name and --redirect-uri (usage mistakes, status 2)', async () => {
    expect(expectFailure(await cli(['clients', 'create', '--redirect-uri', REDIRECT_URI]), 2)).toMatch(/--name is required/);
    expect(expectFailure(await cli(['clients', 'create', '--name', 'Acme']), 2)).toMatch(/--redirect-uri is required/);
    expect(expectFailure(await cli(['clients', 'create', '--name']), 2)).toMatch(/--name/);
    expect(await cliJson<unknown[]>(['clients', 'list'])).toEqual([]);
  });
});

describe('a secret is shown once', () => {
  it('never appears in the output of list, show, update, enable, disable or a later rotation', async () => {
    const created = await createClient('--grants', 'client_credentials');
    const storedHash = new ClientSecretHasher(new MasterKeys(ws.masterKey()).subKeys('client-secret-hmac')).hash(created.clientSecret);
    const id = created.clientId;
    const runs: Run[] = [
      await cli(['clients', 'list']),
      await cli(['clients', 'list', '--json']),
      await cli(['clients', 'show', id]),
      await cli(['clients', 'show', id, '--json']),
      await cli(['clients', 'update', id, '--redirect-uri', 'https://shop.example/v2/callback']),
      await cli(['clients', 'update', id, '--grants', 'client_credentials,authorization_code', '--json']),
      await cli(['clients', 'disable', id]),
      await cli(['clients', 'disable', id, '--json']),
    ];
    // An enable sooner than a second after the disable's second would wait for the clock.
    clock.advance(2);
    runs.push(await cli(['clients', 'enable', id]), await cli(['clients', 'enable', id, '--json']));
    const rotated = await cli(['clients', 'rotate-secret', id, '--json']);
    const newSecret = (parseOneDocument(rotated.stdout) as { clientSecret: string }).clientSecret;
    runs.push(rotated, await cli(['clients', 'list', '--json']), await cli(['clients', 'show', id, '--json']));

    for (const run of runs) {
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(id);
      expect(run.stdout).not.toContain(created.clientSecret);
      expect(run.stdout).not.toContain(storedHash);
      // Only the rotation prints a secret at all: its new one.
      if (run !== rotated) expect(run.stdout).not.toContain('csk_sandbox_');
      expect(run.stderr).toBe('');
    }
    // After the rotation the new secret is not printed again either.
    const later = [await cli(['clients', 'show', id, '--json']), await cli(['clients', 'list'])];
    for (const run of later) expect(run.stdout).not.toContain(newSecret);
  });

  it('shows no secret or hash field in the JSON of list and show', async () => {
    const created = await createClient();
    const [listed] = await cliJson<ClientView[]>(['clients', 'list']);
    const shown = await cliJson<ClientView>(['clients', 'show', created.clientId]);
    for (const view of [listed, shown]) {
      expect(Object.keys(view ?? {}).filter((key) => /secret|hash/i.test(key))).toEqual([]);
    }
  });
});

describe('clients list and show', () => {
  it('lists no clients as an empty JSON array', async () => {
    expect(await cliJson(['clients', 'list'])).toEqual([]);
    const text = await cli(['clients', 'list']);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toMatch(/no clients/);
  });

  it('lists every client as a JSON array', async () => {
    const a = await createClient();
    const b = await cliJson<CreatedClient>(['clients', 'create', '--name', 'Beta', '--redirect-uri', 'https://beta.example/cb', '--grants', 'client_credentials']);
    const listed = await cliJson<ClientView[]>(['clients', 'list']);
    expect(Array.isArray(listed)).toBe(true);
    expect(listed).toHaveLength(2);
    expect(listed.map((c) => c.clientId).sort()).toEqual([a.clientId, b.clientId].sort());
    expect(listed.find((c) => c.clientId === b.clientId)).toMatchObject({
      name: 'Beta',
      redirectUri: 'https://beta.example/cb',
      grants: ['client_credentials'],
      status: 'active',
      environment: 'sandbox',
    });
  });

  it('shows an unknown client ID as a failure with one line on stderr', async () => {
    const line = expectFailure(await cli(['clients', 'show', 'cid_sandbox_doesnotexist', '--json']), 1);
    expect(line).toContain('cid_sandbox_doesnotexist');
    expectFailure(await cli(['clients', 'show', 'cid_sandbox_doesnotexist']), 1);
  });

  it('keeps the failure on one line when the ID holds a line break', async () => {
    expectFailure(await cli(['clients', 'show', 'cid_sandbox_x\nrm -rf /']), 1);
  });

  it('requires an ID', async () => {
    expect(expectFailure(await cli(['clients', 'show']), 2)).toMatch(/client ID is required/);
  });
});

describe('clients update', () => {
  it('changes the redirect URI', async () => {
    const created = await createClient();
    clock.advance(60);
    const updated = await cliJson<ClientView>(['clients', 'update', created.clientId, '--redirect-uri', 'https://shop.example/v2/cb']);
    expect(updated).toMatchObject({ clientId: created.clientId, redirectUri: 'https://shop.example/v2/cb', grants: created.grants });
    expect(updated.updatedAt).toBe('2026-01-01T00:01:00Z');
    expect((await cliJson<ClientView>(['clients', 'show', created.clientId])).redirectUri).toBe('https://shop.example/v2/cb');
  });

  it('changes the grants', async () => {
    const created = await createClient();
    await cliJson(['clients', 'update', created.clientId, '--grants', 'client_credentials,authorization_code,refresh_token']);
    expect((await cliJson<ClientView>(['clients', 'show', created.clientId])).grants).toEqual([
      'client_credentials',
      'authorization_code',
      'refresh_token',
    ]);
    await cliJson(['clients', 'update', created.clientId, '--grants', 'client_credentials']);
    expect((await cliJson<ClientView>(['clients', 'show', created.clientId])).grants).toEqual(['client_credentials']);
  });

  it('turns PKCE on and off', async () => {
    const created = await createClient();
    expect((await cliJson<ClientView>(['clients', 'update', created.clientId, '--require-pkce'])).requirePkce).toBe(true);
    expect((await cliJson<ClientView>(['clients', 'update', created.clientId, '--no-require-pkce'])).requirePkce).toBe(false);
    expectFailure(await cli(['clients', 'update', created.clientId, '--require-pkce', '--no-require-pkce']), 2);
  });

  it.each([
    ['--redirect-uri', 'https://shop.example/cb#x'],
    ['--redirect-uri', 'https://*.example/cb'],
    ['--redirect-uri', 'javascript:alert(1)'],
    ['--redirect-uri', 'callback'],
    ['--grants', 'implicit'],
    ['--grants', 'refresh_token'],
  ])('refuses %s %s and changes nothing', async (option, value) => {
    const created = await createClient();
    const before = await cliJson<ClientView>(['clients', 'show', created.clientId]);
    clock.advance(60);
    expectFailure(await cli(['clients', 'update', created.clientId, option, value]), 'non-zero');
    expect(await cliJson<ClientView>(['clients', 'show', created.clientId])).toEqual(before);
  });

  it('refuses an update with nothing to change', async () => {
    const created = await createClient();
    expect(expectFailure(await cli(['clients', 'update', created.clientId]), 'non-zero')).toMatch(/nothing to update/);
  });

  it('fails for an unknown client', async () => {
    expectFailure(await cli(['clients', 'update', 'cid_sandbox_nope', '--grants', 'client_credentials']), 1);
  });
});

describe('clients --scopes', () => {
  it('a client has no scopes unless given: create keeps its documented fields, show and list say []', async () => {
    const created = await createClient();
    expect(created).not.toHaveProperty('scopes');
    expect((await cliJson<ClientView>(['clients', 'show', created.clientId])).scopes).toEqual([]);
    expect((await cli(['clients', 'show', created.clientId])).stdout).toMatch(/^scopes: +-$/m);
  });

  it('create stores the scopes, each once, in the order given; create, show, list and the audit log say them', async () => {
    const created = await createClient('--scopes', '  payments:read profile\tpayments:read https://api.shop.example/orders ');
    const scopes = ['payments:read', 'profile', 'https://api.shop.example/orders'];
    expect(created).toMatchObject({ scopes });
    expect((await cliJson<ClientView>(['clients', 'show', created.clientId])).scopes).toEqual(scopes);
    expect((await cliJson<ClientView[]>(['clients', 'list']))[0]?.scopes).toEqual(scopes);
    expect((await cli(['clients', 'show', created.clientId])).stdout).toMatch(/^scopes: +payments:read profile https:\/\/api\.shop\.example\/orders$/m);
    expect((await cli(['clients', 'list'])).stdout).toContain('scopes: payments:read profile https://api.shop.example/orders');
    const text = await cli(['clients', 'create', '--name', 'Other', '--redirect-uri', REDIRECT_URI, '--scopes', 'profile']);
    expect(text.stdout).toMatch(/^scopes: +profile$/m);
    const [event] = (await ws.auditEvents()).filter((e) => e.subject === created.clientId);
    expect(event).toMatchObject({ type: 'client.created', details: { scopes: scopes.join(' ') } });
  });

  it('update replaces the scopes, and "" removes them all', async () => {
    const created = await createClient('--scopes', 'profile');
    clock.advance(60);
    const updated = await cliJson<ClientView>(['clients', 'update', created.clientId, '--scopes', 'payments:read payments:write']);
    expect(updated).toMatchObject({ scopes: ['payments:read', 'payments:write'], updatedAt: '2026-01-01T00:01:00Z', grants: created.grants });
    // A second later: the two audit events are told apart, and listed, by their time.
    clock.advance(1);
    expect((await cliJson<ClientView>(['clients', 'update', created.clientId, '--scopes', ''])).scopes).toEqual([]);
    expect((await cliJson<ClientView>(['clients', 'show', created.clientId])).scopes).toEqual([]);
    const events = (await ws.auditEvents()).filter((e) => e.subject === created.clientId && e.type === 'client.updated');
    expect(events.map((e) => e.details)).toEqual([
      expect.objectContaining({ scopes: 'payments:read payments:write' }),
      expect.objectContaining({ scopes: '' }),
    ]);
  });

  const TWENTY_ONE = Array.from({ length: 21 }, (_, i) => `scope${i}`).join(' ');
  it.each([
    ['a double quote', 'pay"ments', /^connect-auth: --scopes: "pay\\"ments": a scope is printable ASCII without spaces, double quotes or backslashes \(RFC 6749 section 3\.3\)\n$/],
    ['a backslash', 'pay\\ments', /--scopes: "pay\\\\ments": a scope is printable ASCII/],
    ['a control character', 'pay\u0007ments', /--scopes: "pay\\u0007ments": a scope is printable ASCII/],
    ['non-ASCII', 'caf\u00e9', /--scopes: "caf\u00e9": a scope is printable ASCII/],
    ['a scope of 65 characters', 'x'.repeat(65), /^connect-auth: --scopes: a scope may have at most 64 characters: "x{65}"\n$/],
    ['21 scopes', TWENTY_ONE, /^connect-auth: --scopes: a client may have at most 20 scopes\n$/],
  ])('create and update refuse %s with one line, exit non-zero and change nothing', async (_name, scopes, message) => {
    expect(expectFailure(await cli(['clients', 'create', '--name', 'Acme', '--redirect-uri', REDIRECT_URI, '--scopes', scopes]), 1)).toMatch(message);
    expect(await cliJson<unknown[]>(['clients', 'list'])).toEqual([]);
    const created = await createClient('--scopes', 'profile');
    const before = await cliJson<ClientView>(['clients', 'show', created.clientId]);
    clock.advance(60);
    expect(expectFailure(await cli(['clients', 'update', created.clientId, '--scopes', scopes]), 1)).toMatch(message);
    expect(await cliJson<ClientView>(['clients', 'show', created.clientId])).toEqual(before);
  });

  it('accepts 20 scopes of 64 characters', async () => {
    const scopes = Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(64, 'x'));
    expect((await createClient('--scopes', scopes.join(' '))).scopes).toEqual(scopes);
  });

  it('--scopes belongs to clients create and update only', async () => {
    const created = await createClient();
    for (const argv of [['clients', 'show', created.clientId, '--scopes', 'a'], ['clients', 'list', '--scopes', 'a'], ['customers', 'list', '--scopes', 'a']]) {
      expect(expectFailure(await cli(argv), 2)).toMatch(/--scopes is an option of clients create, clients update only/);
    }
  });

  it('a created client obtains a token with its scopes', async () => {
    const created = await createClient('--scopes', 'payments:read profile');
    const t = await appOnCliDatabase();
    const res = await requestToken(t, created.clientId, created.clientSecret);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ scope: 'payments:read profile' });
  });

  it('--help describes --scopes', async () => {
    const create = await cli(['clients', 'create', '--help']);
    expect(create.stdout).toMatch(/--scopes <"S1 S2">\s+the OAuth scopes it may obtain \(RFC 6749 section 3\.3\)/);
    expect(create.stdout).toMatch(/--scopes "payments:read profile"/);
    const update = await cli(['clients', 'update', '--help']);
    expect(update.stdout).toMatch(/--scopes <"S1 S2">\s+replace its scopes/);
  });
});

describe('clients update --scope-description', () => {
  it('sets, shows, replaces and removes what a scope says to customers; a removed scope loses its description', async () => {
    const created = await createClient('--scopes', 'payments:read payments:write a=b');
    const updated = await cliJson<ClientView>([
      'clients', 'update', created.clientId,
      '--scope-description', 'payments:read=  See your payment history ',
      '--scope-description', 'a=b=Tingnan ang iyong balanse',
    ]);
    const expected = { 'payments:read': 'See your payment history', 'a=b': 'Tingnan ang iyong balanse' };
    expect(updated.scopeDescriptions).toEqual(expected);
    expect((await cliJson<ClientView>(['clients', 'show', created.clientId])).scopeDescriptions).toEqual(expected);
    expect((await cliJson<ClientView[]>(['clients', 'list']))[0]?.scopeDescriptions).toEqual(expected);
    // Under the scopes, not under another row.
    expect((await cli(['clients', 'show', created.clientId])).stdout).toMatch(/^scopes: +[^\n]+\n {2}payments:read: +See your payment history\n {2}a=b: +Tingnan ang iyong balanse\nprofile: /m);
    const events = (await ws.auditEvents()).filter((e) => e.subject === created.clientId && e.type === 'client.updated');
    expect(events.at(-1)?.details).toMatchObject({ scope_descriptions_set: 'payments:read a=b' });

    // A second entry for a scope replaces it; an empty TEXT removes it.
    expect((await cliJson<ClientView>(['clients', 'update', created.clientId, '--scope-description', 'payments:read=Your payments'])).scopeDescriptions).toEqual({
      ...expected,
      'payments:read': 'Your payments',
    });
    expect((await cliJson<ClientView>(['clients', 'update', created.clientId, '--scope-description', 'a=b='])).scopeDescriptions).toEqual({ 'payments:read': 'Your payments' });
    // Removing the scope removes its description.
    expect((await cliJson<ClientView>(['clients', 'update', created.clientId, '--scopes', 'payments:write'])).scopeDescriptions).toEqual({});
  });

  const LONG = 'x'.repeat(161);
  it.each([
    ['no =', ['payments:read'], /^connect-auth: --scope-description "payments:read": give SCOPE=TEXT\n$/],
    ['a scope the client does not have', ['profile=See your profile'], /^connect-auth: --scope-description: "profile" is not a scope of this client; its scopes are payments:read payments:write\n$/],
    ['the same scope twice', ['payments:read=A', 'payments:read=B'], /^connect-auth: --scope-description: "payments:read" is given twice\n$/],
    ['161 characters', [`payments:read=${LONG}`], /^connect-auth: --scope-description for "payments:read" has 161 characters; at most 160\n$/],
    ['a line break', ['payments:read=See\nyour payments'], /^connect-auth: --scope-description for "payments:read" must not contain control characters/],
    ['a tab', ['payments:read=See\tyour payments'], /must not contain control characters/],
    ['an escape sequence', ['payments:read=\u001b[2JSee'], /must not contain control characters/],
    ['a C1 control', ['payments:read=See\u0085you'], /must not contain control characters/],
  ])('refuses %s with one line, exit 1, and changes nothing', async (_name, entries, message) => {
    const created = await createClient('--scopes', 'payments:read payments:write');
    await cliJson(['clients', 'update', created.clientId, '--scope-description', 'payments:write=Send payments']);
    const before = await cliJson<ClientView>(['clients', 'show', created.clientId]);
    clock.advance(60);
    const argv = ['clients', 'update', created.clientId, ...entries.flatMap((entry) => ['--scope-description', entry])];
    expect(expectFailure(await cli(argv), 1)).toMatch(message);
    expect(await cliJson<ClientView>(['clients', 'show', created.clientId])).toEqual(before);
  });

  it('160 characters, in any script, are accepted; a client without scopes is told so', async () => {
    const created = await createClient('--scopes', 'payments:read');
    const text = 'ñ'.repeat(159) + '😀';
    expect((await cliJson<ClientView>(['clients', 'update', created.clientId, '--scope-description', `payments:read=${text}`])).scopeDescriptions).toEqual({ 'payments:read': text });
    const bare = await createClient();
    expect(expectFailure(await cli(['clients', 'update', bare.clientId, '--scope-description', 'profile=x']), 1)).toMatch(/"profile" is not a scope of this client; it has no scopes \(give --scopes\)/);
  });

  it('a resource server takes none; --help describes it', async () => {
    const api = await cliJson<{ clientId: string }>(['clients', 'create', '--name', 'Payments API', '--resource-server']);
    expect(expectFailure(await cli(['clients', 'update', api.clientId, '--scope-description', 'a=b']), 1)).toMatch(/a resource server has no/);
    const help = await cli(['clients', 'update', '--help']);
    expect(help.stdout).toMatch(/--scope-description <SCOPE=TEXT>\s+what SCOPE lets the client do, as customers\s+read it on the consent page/);
    expect(help.stdout).toMatch(/--scope-description "payments:read=See your payment history"/);
  });
});

describe('redirect URI rules at the command line', () => {
  const REFUSED: ReadonlyArray<readonly [string, RegExp]> = [
    ['https:///evil.example/cb', /^connect-auth: redirect URI must have a host: https:\/\/host\/path\n$/],
    ['https://shop.example\\@evil.example/cb', /^connect-auth: redirect URI must not contain a backslash\n$/],
    ['https://shop.example/c\tb', /^connect-auth: redirect URI must not contain control characters/],
    ['https://shop.example/cb\n', /^connect-auth: redirect URI must not contain control characters/],
    ['https://shop.example/a b', /^connect-auth: redirect URI must not contain spaces or other whitespace\n$/],
    ['https://shop.example/c\u200bb', /^connect-auth: redirect URI must not contain invisible formatting characters/],
    ['https://user@shop.example/cb', /^connect-auth: redirect URI must not contain user info/],
    ['http://shop.example/cb', /^connect-auth: redirect URI may use http:\/\/ only on localhost, 127\.0\.0\.1 or \[::1\] \(sandbox\)/],
    ['https://Shöp.Example/cb', /^connect-auth: redirect URI must be written in its standard form, https:\/\/xn--shp-tna\.example\/cb \(.*\): register that form\n$/],
    ['https://shop.example/x/%2e%2e/cb', /standard form, https:\/\/shop\.example\/cb /],
    ['https://shop.example:443/cb', /standard form, https:\/\/shop\.example\/cb /],
    ['myapp:/cb', /^connect-auth: redirect URI must use https:\/\/ \(or, in the sandbox, http:\/\/localhost/],
  ];

  it.each(REFUSED)('clients create refuses %j with one line, exits non-zero and creates nothing', async (uri, message) => {
    for (const json of [[], ['--json']]) {
      const run = await cli(['clients', 'create', '--name', 'Acme', '--redirect-uri', uri, ...json]);
      expect(expectFailure(run, 1)).toMatch(message);
    }
    expect(await cliJson<unknown[]>(['clients', 'list'])).toEqual([]);
  });

  it.each(REFUSED)('clients update refuses %j with one line, exits non-zero and changes nothing', async (uri, message) => {
    const created = await createClient();
    const before = await cliJson<ClientView>(['clients', 'show', created.clientId]);
    clock.advance(60);
    expect(expectFailure(await cli(['clients', 'update', created.clientId, '--redirect-uri', uri]), 1)).toMatch(message);
    expect(await cliJson<ClientView>(['clients', 'show', created.clientId])).toEqual(before);
  });

  it.each(['http://localhost:8080/cb', 'http://[::1]:4000/callback', 'com.shop.app:/oauth/callback', 'https://xn--shp-tna.example/cb'])(
    'clients create and update store %j exactly as typed',
    async (uri) => {
      const created = await cliJson<CreatedClient>(['clients', 'create', '--name', 'Acme', '--redirect-uri', uri]);
      expect(created.redirectUri).toBe(uri);
      const other = await createClient();
      expect((await cliJson<ClientView>(['clients', 'update', other.clientId, '--redirect-uri', uri])).redirectUri).toBe(uri);
      expect((await cliJson<ClientView>(['clients', 'show', other.clientId])).redirectUri).toBe(uri);
    },
  );
});

describe('clients create --resource-server', () => {
  interface CreatedResourceServer {
    clientId: string;
    clientSecret: string;
    name: string;
    kind: string;
    redirectUri: null;
    grants: string[];
    environment: string;
  }

  function createResourceServer(): Promise<CreatedResourceServer> {
    return cliJson<CreatedResourceServer>(['clients', 'create', '--name', 'Payments API', '--resource-server']);
  }

  it('registers a resource server: its kind, no redirect URI, no grant, and the secret once', async () => {
    const created = await createResourceServer();
    expect(Object.keys(created).sort()).toEqual(['clientId', 'clientSecret', 'environment', 'grants', 'kind', 'name', 'redirectUri']);
    expect(created).toMatchObject({ name: 'Payments API', kind: 'resource_server', redirectUri: null, grants: [], environment: 'sandbox' });
    expect(created.clientId).toMatch(/^cid_sandbox_/);
    expect(created.clientSecret).toMatch(/^csk_sandbox_[A-Za-z0-9_-]{43}$/);

    const shown = await cliJson<ClientView>(['clients', 'show', created.clientId]);
    expect(shown).toMatchObject({ kind: 'resource_server', redirectUri: null, grants: [], requirePkce: false, status: 'active' });
    expect(JSON.stringify(shown)).not.toContain(created.clientSecret);
    clock.advance(1);
    const consumer = await createClient();
    expect((await cliJson<ClientView[]>(['clients', 'list'])).map((c) => [c.clientId, c.kind])).toEqual([
      [created.clientId, 'resource_server'],
      [consumer.clientId, 'consumer'],
    ]);
    expect((await cli(['clients', 'list'])).stdout).toContain(`${created.clientId}  active    Payments API  (resource server)`);
    expect((await cli(['clients', 'show', created.clientId])).stdout).toMatch(/^kind: +resource server$/m);

    const [event] = (await ws.auditEvents()).filter((e) => e.subject === created.clientId);
    expect(event).toMatchObject({ type: 'client.created', details: { name: 'Payments API', delivered_to: null, kind: 'resource_server' } });
  });

  it('prints, as text, what it is and the secret once', async () => {
    const run = await cli(['clients', 'create', '--name', 'Payments API', '--resource-server']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^client secret: +csk_sandbox_/m);
    expect(run.stdout).toMatch(/^kind: +resource server: checks tokens at \/introspect, obtains none$/m);
    expect(run.stdout).not.toMatch(/redirect URI|grants/);
  });

  it.each([
    [['--redirect-uri', REDIRECT_URI], /--resource-server takes no --redirect-uri: a resource server obtains no token/],
    [['--grants', 'client_credentials'], /takes no --grants/],
    [['--require-pkce'], /takes no --require-pkce/],
    [['--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials'], /takes no --redirect-uri, --grants/],
    [['--scopes', 'profile'], /takes no --scopes/],
  ])('refuses --resource-server with %j (usage, status 2) and creates nothing', async (extra, message) => {
    const line = expectFailure(await cli(['clients', 'create', '--name', 'Payments API', '--resource-server', ...extra]), 2);
    expect(line).toMatch(message);
    expect(await cliJson<unknown[]>(['clients', 'list'])).toEqual([]);
  });

  it('a consumer without --redirect-uri is told about --resource-server', async () => {
    expect(expectFailure(await cli(['clients', 'create', '--name', 'Acme']), 2)).toMatch(/--redirect-uri is required \(or --resource-server/);
  });

  it.each([
    ['--redirect-uri', REDIRECT_URI],
    ['--grants', 'client_credentials'],
    ['--require-pkce'],
    ['--scopes', 'profile'],
  ])('clients update refuses %s on a resource server and changes nothing', async (...option) => {
    const created = await createResourceServer();
    const before = await cliJson<ClientView>(['clients', 'show', created.clientId]);
    clock.advance(60);
    const line = expectFailure(await cli(['clients', 'update', created.clientId, ...option]), 1);
    expect(line).toMatch(/a resource server has no redirect URI, grants, PKCE setting or scopes/);
    expect(await cliJson<ClientView>(['clients', 'show', created.clientId])).toEqual(before);
  });

  it('--resource-server belongs to clients create only: a client never changes its kind', async () => {
    const consumer = await createClient();
    for (const argv of [['clients', 'update', consumer.clientId, '--resource-server'], ['clients', 'list', '--resource-server']]) {
      expect(expectFailure(await cli(argv), 2)).toMatch(/--resource-server is an option of clients create only/);
    }
    expect((await cliJson<ClientView>(['clients', 'show', consumer.clientId])).kind).toBe('consumer');
  });

  it('its secret introspects and obtains no token; rotate-secret and disable work on it as on any client', async () => {
    const created = await createResourceServer();
    const consumer = await createClient('--grants', 'client_credentials');
    const t = await appOnCliDatabase();
    const consumerToken = (await requestToken(t, consumer.clientId, consumer.clientSecret)).json<{ access_token: string }>().access_token;
    const introspect = (secret: string) =>
      t.app.inject({
        method: 'POST',
        url: '/introspect',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${created.clientId}:${secret}`).toString('base64')}` },
        payload: `token=${consumerToken}`,
      });
    expect((await introspect(created.clientSecret)).json()).toMatchObject({ active: true, client_id: consumer.clientId });
    const refused = await requestToken(t, created.clientId, created.clientSecret);
    expect({ status: refused.statusCode, error: refused.json<{ error: string }>().error }).toEqual({ status: 400, error: 'unauthorized_client' });

    const rotated = await cliJson<{ clientSecret: string }>(['clients', 'rotate-secret', created.clientId, '--grace', '0']);
    await changeReached(async () => (await introspect(created.clientSecret)).statusCode === 401);
    expect((await introspect(rotated.clientSecret)).json()).toMatchObject({ active: true });

    await cliJson(['clients', 'disable', created.clientId]);
    await changeReached(async () => (await introspect(rotated.clientSecret)).statusCode === 401);
  });
});

describe('clients disable, enable, rotate-secret', () => {
  it('disable and enable change the status', async () => {
    const created = await createClient();
    expect((await cliJson<ClientView>(['clients', 'disable', created.clientId])).status).toBe('disabled');
    expect((await cliJson<ClientView>(['clients', 'show', created.clientId])).status).toBe('disabled');
    expect((await cliJson<ClientView[]>(['clients', 'list']))[0]?.status).toBe('disabled');
    clock.advance(2);
    expect((await cliJson<ClientView>(['clients', 'enable', created.clientId])).status).toBe('active');
    expect((await cliJson<ClientView>(['clients', 'show', created.clientId])).status).toBe('active');
  });

  it('disable and enable fail for an unknown client', async () => {
    expectFailure(await cli(['clients', 'disable', 'cid_sandbox_nope']), 1);
    expectFailure(await cli(['clients', 'enable', 'cid_sandbox_nope']), 1);
  });

  it('rotate-secret prints only the client ID and a new secret', async () => {
    const created = await createClient();
    const rotated = await cliJson<{ clientId: string; clientSecret: string }>(['clients', 'rotate-secret', created.clientId]);
    expect(Object.keys(rotated).sort()).toEqual(['clientId', 'clientSecret']);
    expect(rotated.clientId).toBe(created.clientId);
    expect(rotated.clientSecret).toMatch(/^csk_sandbox_/);
    expect(rotated.clientSecret).not.toBe(created.clientSecret);
  });

  it('rotate-secret fails for an unknown client', async () => {
    expectFailure(await cli(['clients', 'rotate-secret', 'cid_sandbox_nope']), 1);
  });
});

describe('credentials made by the command line work at the token endpoint', () => {
  it('authenticates a created client; a disabled one gets invalid_client; enabled again it works', async () => {
    const created = await createClient('--grants', 'client_credentials');
    const t = await appOnCliDatabase();

    const ok = await requestToken(t, created.clientId, created.clientSecret);
    expect(ok.statusCode).toBe(200);
    const { payload } = await t.verifyAccessToken(ok.json().access_token);
    expect(payload).toMatchObject({ sub: created.clientId, client_id: created.clientId });

    await cliJson(['clients', 'disable', created.clientId]);
    await changeReached(async () => (await requestToken(t, created.clientId, created.clientSecret)).statusCode === 401);
    const refused = await requestToken(t, created.clientId, created.clientSecret);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ error: 'invalid_client' });
    expect(refused.headers['www-authenticate']).toMatch(/^Basic /);

    // The command line's clock: an enable sooner than a second after the disable's second would wait.
    clock.advance(2);
    await cliJson(['clients', 'enable', created.clientId]);
    await changeReached(async () => (await requestToken(t, created.clientId, created.clientSecret)).statusCode === 200);
  });

  it('a disabled client is refused by a freshly started app', async () => {
    const created = await createClient('--grants', 'client_credentials');
    await cliJson(['clients', 'disable', created.clientId]);
    const t = await appOnCliDatabase();
    const refused = await requestToken(t, created.clientId, created.clientSecret);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('after rotate-secret --grace 0 the new secret works and the old one does not', async () => {
    const created = await createClient('--grants', 'client_credentials');
    const t = await appOnCliDatabase();
    expect((await requestToken(t, created.clientId, created.clientSecret)).statusCode).toBe(200);

    const rotated = await cliJson<{ clientSecret: string }>(['clients', 'rotate-secret', created.clientId, '--grace', '0']);
    // The running app is another instance: the change reaches it within a second.
    await changeReached(async () => (await requestToken(t, created.clientId, created.clientSecret)).statusCode === 401);
    const old = await requestToken(t, created.clientId, created.clientSecret);
    expect(old.statusCode).toBe(401);
    expect(old.json()).toMatchObject({ error: 'invalid_client' });
    expect((await requestToken(t, created.clientId, rotated.clientSecret)).statusCode).toBe(200);
  });

  it('a server with another master key does not start on the database (docs/operator-guide.md, "Replacing the master key")', async () => {
    await createClient('--grants', 'client_credentials');
    const storage = openStorage({ engine: 'sqlite', path: join(dataDir, 'connect-sandbox.db') });
    onTestFinished(() => storage.close());
    await expect(build({ storage, masterKey: randomBytes(32) })).rejects.toThrow(/^CONNECT_MASTER_KEY \([\w-]{22}\) is not a master key of this database/);
  });
});

describe('migrate', () => {
  it('creates the database and exits 0', async () => {
    const run = await cli(['migrate']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/up to date/);
    expect(existsSync(join(dataDir, 'connect-sandbox.db'))).toBe(true);
  });

  it('is idempotent and reports in JSON the migrations it applied', async () => {
    const first = await cliJson<{ migrated: boolean; engine: string; applied: string[] }>(['migrate']);
    expect(first).toMatchObject({ migrated: true, engine: 'sqlite' });
    expect(first.applied.length).toBeGreaterThan(0);
    expect(first.applied[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-initial$/);
    expect([...first.applied].sort()).toEqual(first.applied);
    expect(await cliJson(['migrate'])).toEqual({ migrated: true, engine: 'sqlite', applied: [] });
  });

  it('stops on bad configuration with one line naming the variable', async () => {
    const line = expectFailure(await cli(['migrate'], { CONNECT_ACCESS_TOKEN_TTL: '0' }), 'non-zero');
    expect(line).toContain('CONNECT_ACCESS_TOKEN_TTL');
    expect(existsSync(join(dataDir, 'connect-sandbox.db'))).toBe(false);
  });

  it('with several configuration problems, lists every one on its own line, also with --json', async () => {
    const bad = { CONNECT_ACCESS_TOKEN_TTL: '0', PORT: 'abc', CONNECT_LOG_LEVEL: 'verbose' };
    const expected = [
      'connect-auth: the configuration has 3 problems:',
      '  PORT must be a whole number, not "abc"',
      '  CONNECT_ACCESS_TOKEN_TTL must be between 1 and 315360000, not 0',
      '  CONNECT_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      '',
    ].join('\n');
    for (const argv of [['migrate'], ['migrate', '--json']]) {
      expect(await cli(argv, bad)).toEqual({ code: 1, stdout: '', stderr: expected });
    }
    expect(existsSync(join(dataDir, 'connect-sandbox.db'))).toBe(false);
  });

  it('says in one line that the database cannot be reached, naming the server, the database and DATABASE_URL', async () => {
    // Nothing listens on port 1: the connection is refused at once.
    const line = expectFailure(await cli(['migrate'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/connect' }), 1);
    expect(line).toBe('connect-auth: cannot reach PostgreSQL on 127.0.0.1:1 for database "connect": the connection was refused; is it running there? check DATABASE_URL (ECONNREFUSED)\n');
  });
});

describe('usage mistakes exit 2 with one line on stderr', () => {
  it.each([
    [['frobnicate'], /unknown command "frobnicate"/],
    [['clients'], /clients needs a command/],
    [['clients', 'frobnicate'], /unknown clients command "frobnicate"/],
    [['keys'], /keys needs a command/],
    [['keys', 'frobnicate'], /unknown keys command "frobnicate"/],
    [['clients', 'list', '--frobnicate'], /unknown option '--frobnicate'/],
    [['migrate', '--json=yes'], /--json/],
    [['migrate', 'now'], /too many arguments/],
    [['clients', 'show', 'a', 'b'], /too many arguments/],
    [['keys', 'list', 'extra'], /too many arguments/],
    [['keys', 'revoke'], /keys revoke needs the kid/],
    [['keys', 'revoke', 'a', 'b'], /too many arguments/],
    [['keys', 'list', '--now'], /--now is an option of keys rotate only/],
    [['clients', 'list', '--now'], /--now is an option of keys rotate only/],
    [['serve', 'extra'], /too many arguments for serve: it takes none/],
  ])('%j', async (argv, reason) => {
    const line = expectFailure(await cli(argv), 2);
    expect(line).toMatch(reason);
    expect(line).toMatch(/; see connect-auth( [a-z-]+)* --help\n$/);
  });

  it('an unknown option is reported with the options the command takes', async () => {
    const line = expectFailure(await cli(['clients', 'list', '--frobnicate']), 2);
    expect(line).toBe("connect-auth: unknown option '--frobnicate' for clients list; its options are --json, --help; see connect-auth clients list --help\n");
  });
});

describe('--json prints exactly one JSON document on stdout', () => {
  it.each([
    [['migrate']],
    [['clients', 'list']],
    [['keys', 'list']],
    [['keys', 'rotate']],
    [['clients', 'create', '--name', 'Acme', '--redirect-uri', REDIRECT_URI]],
    [['--version']],
  ])('%j', async (argv) => {
    const run = await cli([...argv, '--json']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(() => parseOneDocument(run.stdout)).not.toThrow();
  });

  it('for every clients command on an existing client', async () => {
    const { clientId } = await createClient();
    for (const argv of [
      ['clients', 'show', clientId],
      ['clients', 'update', clientId, '--grants', 'client_credentials'],
      ['clients', 'disable', clientId],
      ['clients', 'enable', clientId],
      ['clients', 'rotate-secret', clientId],
    ]) {
      // Two seconds apart: an enable sooner after a disable would wait for the clock.
      clock.advance(2);
      const run = await cli([...argv, '--json']);
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
      expect(parseOneDocument(run.stdout)).toMatchObject({ clientId });
    }
  });

  it('and nothing on stdout when the command fails', async () => {
    expectFailure(await cli(['clients', 'show', 'cid_sandbox_nope', '--json']), 1);
    expectFailure(await cli(['frobnicate', '--json']), 2);
  });
});

describe('--help and --version', () => {
  it.each([[['--help']], [['-h']], [[]], [['help']]])('%j prints the usage', async (argv) => {
    const run = await cli(argv);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^Usage: connect-auth <command>/);
    for (const command of ['serve', 'migrate', 'clients create', 'clients list', 'clients rotate-secret', 'keys list', 'keys rotate']) {
      expect(run.stdout).toContain(command);
    }
  });

  it('--help does not touch the data folder', async () => {
    await cli(['--help']);
    expect(existsSync(join(dataDir, MASTER_KEY_FILE))).toBe(false);
    expect(existsSync(join(dataDir, 'connect-sandbox.db'))).toBe(false);
  });

  it('--version prints the package version and the commit the build recorded', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const { commit } = JSON.parse(readFileSync(new URL('../../dist/build-info.json', import.meta.url), 'utf8')) as { commit: string };
    expect(commit).toMatch(/^([0-9a-f]{40}(-modified)?|unknown)$/);
    expect(await cli(['--version'])).toEqual({ code: 0, stdout: `connect-auth ${version} (commit ${commit})\n`, stderr: '' });
    expect(await cli(['-v'])).toEqual({ code: 0, stdout: `connect-auth ${version} (commit ${commit})\n`, stderr: '' });
    expect(await cliJson(['--version'])).toEqual({ version, commit });
  });
});

describe('environments', () => {
  // One production master key for every command: a database refuses a master key it does not know.
  const productionKey = randomBytes(32).toString('base64');
  const production = () => ({
    CONNECT_ENVIRONMENT: 'production',
    CONNECT_MASTER_KEY: productionKey,
    CONNECT_AUTH_URL: 'https://auth.connect.example',
    CONNECT_SMS_WEBHOOK_URL: 'https://sms.gateway.example/send',
    CONNECT_SMS_WEBHOOK_SECRET: 'webhook-secret',
  });

  it('production keeps its own clients, credentials and database, and writes no master key file', async () => {
    await createClient();
    const prod = production();
    expect(await cliJson(['clients', 'list'], prod)).toEqual([]);
    const created = await cliJson<CreatedClient>(['clients', 'create', '--name', 'Acme', '--redirect-uri', REDIRECT_URI], prod);
    expect(created.clientId).toMatch(/^cid_production_/);
    expect(created.clientSecret).toMatch(/^csk_production_/);
    expect(created.environment).toBe('production');
    expect(existsSync(join(dataDir, 'connect-production.db'))).toBe(true);
    expect((await cliJson<ClientView[]>(['clients', 'list'])).map((c) => c.environment)).toEqual(['sandbox']);
  });

  it('production refuses a plain http:// redirect URI on a public host', async () => {
    const line = expectFailure(await cli(['clients', 'create', '--name', 'Acme', '--redirect-uri', 'http://shop.example/cb'], production()), 'non-zero');
    expect(line).toMatch(/https/);
  });

  it('production refuses http:// on a loopback host too, which the sandbox accepts', async () => {
    for (const uri of ['http://127.0.0.1:4000/callback', 'http://localhost/cb', 'http://[::1]/cb']) {
      const line = expectFailure(await cli(['clients', 'create', '--name', 'Acme', '--redirect-uri', uri], production()), 1);
      expect(line).toBe('connect-auth: redirect URI must use https:// in production\n');
    }
    expect((await cliJson<CreatedClient>(['clients', 'create', '--name', 'Acme', '--redirect-uri', 'http://127.0.0.1:4000/callback'])).redirectUri).toBe(
      'http://127.0.0.1:4000/callback',
    );
  });

  it('every command stops on bad production configuration with one line naming the variable', async () => {
    const { CONNECT_MASTER_KEY: _unused, ...withoutKey } = production();
    for (const argv of [['migrate'], ['clients', 'list'], ['keys', 'list']]) {
      expect(expectFailure(await cli(argv, withoutKey), 'non-zero')).toContain('CONNECT_MASTER_KEY');
    }
    expect(existsSync(join(dataDir, MASTER_KEY_FILE))).toBe(false);
  });
});
