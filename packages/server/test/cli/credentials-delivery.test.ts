import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openEmbeddedSqlite } from '../../src/storage/kysely/embedded-sqlite.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../src/core/clients/client.js';
import { fixedClock } from '../../src/core/clock.js';
import { filesIn, GnupgHome, gpgForTests } from '../helpers/gpg.js';
import { cliWorkspace, expectFailure, tokenOutcome, type CliWorkspace, type Run } from './command-line.js';
import { basicAuth } from '../helpers/build.js';

/**
 * `clients create` and `clients rotate-secret` with `--recipient-email`,
 * `--recipient-key` and `--out` (docs/operator-guide.md, "Delivering
 * credentials encrypted"): the credentials go only into an OpenPGP file for
 * the recipient, checked with real GnuPG.
 */

const HAS_GPG = gpgForTests('credentials-delivery.test.ts');

const REDIRECT_URI = 'https://shop.example/callback';
const URLS = { CONNECT_AUTH_URL: 'https://auth.sandbox.example', CONNECT_BASE_URL: 'https://api.sandbox.example' };
const BEGIN_JSON = '-----BEGIN CONNECT CREDENTIALS JSON-----';
const END_JSON = '-----END CONNECT CREDENTIALS JSON-----';

/** The recipients' keys, made once for the file. */
interface Keys {
  readonly dir: string;
  /** `Alice Example <Alice@Example.COM>`: ed25519 signing key with a cv25519 encryption subkey. */
  readonly alice: string;
  readonly aliceFingerprint: string;
  readonly aliceEncryptionKeyIds: string[];
  /** GnuPG's default RSA 3072 key pair, `rita@rsa.example`. */
  readonly rita: string;
  /** Two user IDs: `bob@example.com` and `bob@work.example`. */
  readonly bob: string;
  /** `carol@old.example` (revoked user ID) and `carol@new.example`. */
  readonly carol: string;
  /** Made in 2020, expired in 2021. */
  readonly expired: string;
  /** Valid primary key whose only encryption subkey expired. */
  readonly expiredSubkey: string;
  /** Expires two days after it was made. */
  readonly shortLived: string;
  readonly revoked: string;
  /** Signing only: no encryption subkey. */
  readonly signOnly: string;
  /** Alice's private key, armored. */
  readonly alicePrivate: string;
  readonly notAKey: string;
  readonly truncated: string;
  readonly empty: string;
  readonly missing: string;
}

describe.skipIf(!HAS_GPG)('OpenPGP credential delivery', () => {
  let home: GnupgHome;
  let keys: Keys;

  beforeAll(() => {
    home = GnupgHome.create();
    const dir = join(home.dir, 'exported');
    mkdirSync(dir);
    const write = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };

    const aliceFingerprint = home.generateKey({ userId: 'Alice Example <Alice@Example.COM>' });
    const ritaFingerprint = home.generateKey({ userId: 'Rita Rsa <rita@rsa.example>', algorithm: 'rsa', expiry: 'never' });
    const bob = home.generateKey({ userId: 'Bob Builder <bob@example.com>' });
    home.addUserId(bob, 'Bob at Work <bob@work.example>');
    const carol = home.generateKey({ userId: 'Carol Old <carol@old.example>' });
    home.addUserId(carol, 'Carol New <carol@new.example>');
    home.revokeUserId(carol, 'Carol Old <carol@old.example>');
    const expired = home.generateKey({ userId: 'Old Timer <old@example.com>', expiry: '1y', madeAt: '20200101T000000' });
    const expiredSubkey = home.generateKey({ userId: 'Sub Expired <subexp@example.com>', expiry: 'never', subkeyExpiry: '1y', madeAt: '20200101T000000' });
    const shortLived = home.generateKey({ userId: 'Day Fly <dayfly@example.com>', expiry: '2d' });
    const revoked = home.generateKey({ userId: 'Rev Oked <revoked@example.com>' });
    home.revokeKey(revoked);
    const signOnly = home.generateKey({ userId: 'Sign Only <signonly@example.com>', encrypt: false });
    const alicePublic = home.exportPublic(aliceFingerprint);

    keys = {
      dir,
      alice: write('alice.asc', alicePublic),
      aliceFingerprint,
      aliceEncryptionKeyIds: home.encryptionKeyIds(aliceFingerprint),
      rita: write('rita.asc', home.exportPublic(ritaFingerprint)),
      bob: write('bob.asc', home.exportPublic(bob)),
      carol: write('carol.asc', home.exportPublic(carol)),
      expired: write('expired.asc', home.exportPublic(expired)),
      expiredSubkey: write('expired-subkey.asc', home.exportPublic(expiredSubkey)),
      shortLived: write('short-lived.asc', home.exportPublic(shortLived)),
      revoked: write('revoked.asc', home.exportPublic(revoked)),
      signOnly: write('sign-only.asc', home.exportPublic(signOnly)),
      alicePrivate: write('alice-private.asc', home.exportSecret(aliceFingerprint)),
      notAKey: write('not-a-key.asc', 'This is the key: trust me.\n'),
      truncated: write('truncated.asc', alicePublic.slice(0, Math.floor(alicePublic.length / 2))),
      empty: write('empty.asc', ''),
      missing: join(dir, 'nobody.asc'),
    };
    // The fixtures really are what their names say, as GnuPG sees them.
    expect(keys.aliceEncryptionKeyIds).toHaveLength(1);
    expect(home.encryptionKeyIds(signOnly)).toEqual([]);
    expect(readFileSync(keys.alicePrivate, 'utf8')).toContain('-----BEGIN PGP PRIVATE KEY BLOCK-----');
    expect(home.gpg(['--with-colons', '--list-keys', revoked])).toMatch(/^pub:r:/m);
    expect(home.gpg(['--with-colons', '--list-keys', expired])).toMatch(/^pub:e:/m);
    expect(home.gpg(['--with-colons', '--list-keys', carol])).toMatch(/^uid:r:.*carol@old\.example/m);
  });

  afterAll(() => home?.remove());

  /** A sandbox data folder whose clock is now: the keys were made a moment ago. */
  function workspace(): CliWorkspace & { outDir: string } {
    const w = cliWorkspace({ clock: fixedClock(Math.floor(Date.now() / 1000)), env: URLS });
    const outDir = join(w.dataDir, 'out');
    mkdirSync(outDir);
    return Object.assign(w, { outDir });
  }

  function delivery(email: string, key: string, out: string): string[] {
    return ['--recipient-email', email, '--recipient-key', key, '--out', out];
  }

  function createArgs(...extra: string[]): string[] {
    return ['clients', 'create', '--name', 'Acme Shop', '--redirect-uri', REDIRECT_URI, ...extra];
  }

  /** Decrypts a credentials file with gpg; returns the text and its JSON block. */
  function decrypt(path: string): { text: string; json: Record<string, unknown> } {
    const result = home.decrypt(path);
    expect(result.status, result.stderr).toBe(0);
    const text = result.stdout;
    const start = text.indexOf(`\n${BEGIN_JSON}\n`);
    const end = text.indexOf(`\n${END_JSON}\n`);
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    const json = JSON.parse(text.slice(start + BEGIN_JSON.length + 2, end)) as Record<string, unknown>;
    return { text, json };
  }

  /** A credentials file as written: ASCII armor, owner-only, encrypted to Alice's encryption subkey. */
  function expectArmoredFile(path: string, encryptionKeyIds: string[] = keys.aliceEncryptionKeyIds): string {
    const armored = readFileSync(path, 'utf8');
    expect(armored.startsWith('-----BEGIN PGP MESSAGE-----\n')).toBe(true);
    expect(armored.trimEnd().endsWith('-----END PGP MESSAGE-----')).toBe(true);
    expect(armored).toMatch(/^[\x20-\x7e\r\n]+$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(home.recipientsOf(path)).toEqual(encryptionKeyIds);
    return armored;
  }

  /**
   * Makes the workspace's SQLite database refuse to commit any change to the
   * clients table: each change adds a row whose deferred foreign key nothing
   * satisfies, and SQLite checks deferred keys only at COMMIT. A real commit
   * failure, after the credentials file was written inside the transaction.
   */
  function refuseCommitsChangingClients(w: CliWorkspace): void {
    const db = openEmbeddedSqlite(join(w.dataDir, 'connect-sandbox.db'));
    try {
      db.exec(`
        CREATE TABLE commit_guard_target (id TEXT PRIMARY KEY);
        CREATE TABLE commit_guard (ref TEXT REFERENCES commit_guard_target (id) DEFERRABLE INITIALLY DEFERRED);
        CREATE TRIGGER commit_guard_insert AFTER INSERT ON clients BEGIN INSERT INTO commit_guard VALUES ('none'); END;
        CREATE TRIGGER commit_guard_update AFTER UPDATE ON clients BEGIN INSERT INTO commit_guard VALUES ('none'); END;
      `);
    } finally {
      db.close();
    }
  }

  type Refusal = readonly [string, (w: CliWorkspace & { outDir: string }) => string[], RegExp, number | 'non-zero'];
  const refusals: Refusal[] = [
    ['a key without that e-mail address', (w) => delivery('mallory@example.com', keys.alice, join(w.outDir, 'c.asc')), /no valid user ID with mallory@example\.com/, 'non-zero'],
    ['only part of a user ID address', (w) => delivery('lice@example.com', keys.alice, join(w.outDir, 'c.asc')), /no valid user ID with lice@example\.com/, 'non-zero'],
    ['the address of a revoked user ID', (w) => delivery('carol@old.example', keys.carol, join(w.outDir, 'c.asc')), /no valid user ID with carol@old\.example/, 'non-zero'],
    ['something that is not an e-mail address', (w) => delivery('alice', keys.alice, join(w.outDir, 'c.asc')), /--recipient-email "alice" is not an e-mail address/, 'non-zero'],
    ['an expired key', (w) => delivery('old@example.com', keys.expired, join(w.outDir, 'c.asc')), /recipient key [0-9A-F]{40} expired on 2020-12-31/, 'non-zero'],
    ['a key whose encryption subkey expired', (w) => delivery('subexp@example.com', keys.expiredSubkey, join(w.outDir, 'c.asc')), /cannot encrypt/, 'non-zero'],
    ['a revoked key', (w) => delivery('revoked@example.com', keys.revoked, join(w.outDir, 'c.asc')), /recipient key [0-9A-F]{40} is revoked/, 'non-zero'],
    ['a sign-only key', (w) => delivery('signonly@example.com', keys.signOnly, join(w.outDir, 'c.asc')), /cannot encrypt \(no valid encryption subkey\)/, 'non-zero'],
    ['a private key file', (w) => delivery('alice@example.com', keys.alicePrivate, join(w.outDir, 'c.asc')), /holds a private key; give the recipient's public key/, 'non-zero'],
    ['a file that is not a key', (w) => delivery('alice@example.com', keys.notAKey, join(w.outDir, 'c.asc')), /not-a-key\.asc is not an ASCII-armored OpenPGP public key/, 'non-zero'],
    ['a truncated key', (w) => delivery('alice@example.com', keys.truncated, join(w.outDir, 'c.asc')), /truncated\.asc is not an ASCII-armored OpenPGP public key/, 'non-zero'],
    ['an empty key file', (w) => delivery('alice@example.com', keys.empty, join(w.outDir, 'c.asc')), /empty\.asc is not an ASCII-armored OpenPGP public key/, 'non-zero'],
    ['a missing key file', (w) => delivery('alice@example.com', keys.missing, join(w.outDir, 'c.asc')), /recipient key file \S+nobody\.asc does not exist/, 'non-zero'],
    ['--out in a folder that does not exist', (w) => delivery('alice@example.com', keys.alice, join(w.outDir, 'no-such-folder', 'c.asc')), /cannot write --out \S+c\.asc: its folder does not exist/, 'non-zero'],
    ['--out under a file', (w) => delivery('alice@example.com', keys.alice, join(keys.alice, 'c.asc')), /cannot write --out \S+: its folder does not exist/, 'non-zero'],
    ['--out naming an existing file', (w) => delivery('alice@example.com', keys.alice, join(w.outDir, 'existing.asc')), /--out \S+existing\.asc exists already/, 'non-zero'],
    ['--out naming a folder', (w) => delivery('alice@example.com', keys.alice, w.outDir), /--out \S+ exists already/, 'non-zero'],
    ['--recipient-email alone', () => ['--recipient-email', 'alice@example.com'], /--recipient-email, --recipient-key and --out go together/, 2],
    ['--recipient-key alone', () => ['--recipient-key', keys.alice], /go together/, 2],
    ['--out alone', (w) => ['--out', join(w.outDir, 'c.asc')], /go together/, 2],
    ['no --out', () => ['--recipient-email', 'alice@example.com', '--recipient-key', keys.alice], /go together/, 2],
    ['no --recipient-key', (w) => ['--recipient-email', 'alice@example.com', '--out', join(w.outDir, 'c.asc')], /go together/, 2],
    ['no --recipient-email', (w) => ['--recipient-key', keys.alice, '--out', join(w.outDir, 'c.asc')], /go together/, 2],
  ];

  /** Expects a refused delivery: one line saying why, no file, no secret printed. */
  function expectRefused(run: Run, reason: RegExp, code: number | 'non-zero', w: CliWorkspace & { outDir: string }, filesBefore: string[]): void {
    const line = expectFailure(run, code);
    expect(line).toMatch(reason);
    expect(line).not.toContain('csk_');
    expect(filesIn(w.outDir)).toEqual(filesBefore);
  }

  describe('clients create', () => {
    it('writes the credentials only to the file, encrypted to the recipient; gpg decrypts them and the secret gets a token', async () => {
      const w = workspace();
      const out = join(w.outDir, 'acme.asc');
      const run = await w.cli([...createArgs(...delivery('alice@example.com', keys.alice, out)), '--json']);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const created = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(created).toEqual({
        clientId: expect.stringMatching(/^cid_sandbox_/),
        name: 'Acme Shop',
        redirectUri: REDIRECT_URI,
        grants: ['client_credentials', 'authorization_code'],
        environment: 'sandbox',
        delivery: { recipientEmail: 'alice@example.com', keyFingerprint: keys.aliceFingerprint, file: out },
      });
      expect(run.stdout).not.toMatch(/csk_|secret/i);

      expectArmoredFile(out);
      const { text, json } = decrypt(out);
      const issuedAt = new Date(w.clock.nowSeconds() * 1000).toISOString().replace('.000Z', 'Z');
      expect(json).toEqual({
        clientId: created.clientId,
        clientSecret: expect.stringMatching(/^csk_sandbox_[A-Za-z0-9_-]{43}$/),
        name: 'Acme Shop',
        environment: 'sandbox',
        authUrl: URLS.CONNECT_AUTH_URL,
        baseUrl: URLS.CONNECT_BASE_URL,
        redirectUri: REDIRECT_URI,
        issuedAt,
      });
      const secret = json.clientSecret as string;
      expect(run.stdout).not.toContain(secret);
      expect(w.printed.join('')).not.toContain(secret);

      // The part for people says the same, line by line.
      const prose = text.slice(0, text.indexOf(BEGIN_JSON));
      expect(prose).toMatch(/^Connect API credentials \(sandbox\)\n/);
      for (const [label, value] of [
        ['Client ID', created.clientId],
        ['Client secret', secret],
        ['Auth URL', URLS.CONNECT_AUTH_URL],
        ['Base URL', URLS.CONNECT_BASE_URL],
        ['Redirect URL', REDIRECT_URI],
      ]) {
        expect(prose).toMatch(new RegExp(`^${label}:\\s+${String(value).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm'));
      }

      const t = await w.app();
      expect(await tokenOutcome(t, created.clientId as string, secret)).toBe(200);

      const events = await w.auditEvents();
      expect(events).toEqual([
        expect.objectContaining({ type: 'client.created', subject: created.clientId, outcome: 'success', details: expect.objectContaining({ delivered_to: 'alice@example.com' }) }),
      ]);
      expect(JSON.stringify(events)).not.toContain(secret);
    });

    it('delivers a resource server the same way: its kind instead of a redirect URL, and its secret introspects', async () => {
      const w = workspace();
      const out = join(w.outDir, 'api.asc');
      const run = await w.cli(['clients', 'create', '--name', 'Payments API', '--resource-server', ...delivery('alice@example.com', keys.alice, out), '--json']);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const created = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(created).toEqual({
        clientId: expect.stringMatching(/^cid_sandbox_/),
        name: 'Payments API',
        kind: 'resource_server',
        redirectUri: null,
        grants: [],
        environment: 'sandbox',
        delivery: { recipientEmail: 'alice@example.com', keyFingerprint: keys.aliceFingerprint, file: out },
      });
      const { text, json } = decrypt(out);
      expect(json).toEqual({
        clientId: created.clientId,
        clientSecret: expect.stringMatching(/^csk_sandbox_[A-Za-z0-9_-]{43}$/),
        name: 'Payments API',
        environment: 'sandbox',
        authUrl: URLS.CONNECT_AUTH_URL,
        baseUrl: URLS.CONNECT_BASE_URL,
        redirectUri: null,
        kind: 'resource_server',
        issuedAt: expect.any(String),
      });
      const prose = text.slice(0, text.indexOf(BEGIN_JSON));
      expect(prose).toMatch(/^Kind:\s+resource server \(it checks tokens at the auth URL's \/introspect and obtains none\)$/m);
      expect(prose).not.toMatch(/Redirect URL/);

      const t = await w.app();
      const res = await t.app.inject({
        method: 'POST',
        url: '/introspect',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(created.clientId as string, json.clientSecret as string) },
        payload: 'token=x',
      });
      expect({ status: res.statusCode, body: res.body }).toEqual({ status: 200, body: '{"active":false}' });
      expect(await tokenOutcome(t, created.clientId as string, json.clientSecret as string)).toBe('400 unauthorized_client');
    });

    it('the text output names the file and the recipient, and holds no secret', async () => {
      const w = workspace();
      const out = join(w.outDir, 'acme.asc');
      const run = await w.cli(createArgs(...delivery('alice@example.com', keys.alice, out)));
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toContain(out);
      expect(run.stdout).toContain('alice@example.com');
      expect(run.stdout).toContain(keys.aliceFingerprint);
      expect(run.stdout).not.toContain('csk_');
      expect(run.stdout).not.toContain(decrypt(out).json.clientSecret as string);
    });

    it('defaults the auth and base URLs in the file as the server does', async () => {
      const w = cliWorkspace({ clock: fixedClock(Math.floor(Date.now() / 1000)) });
      const out = join(w.dataDir, 'acme.asc');
      await w.cliJson(createArgs(...delivery('alice@example.com', keys.alice, out)));
      expect(decrypt(out).json).toMatchObject({ authUrl: 'http://localhost:3000', baseUrl: 'http://localhost:3000' });
    });

    it.each([['alice@example.com'], ['ALICE@EXAMPLE.COM'], ['Alice@Example.COM'], ['  alice@example.com ']])(
      'matches the e-mail address %j case-insensitively',
      async (email) => {
        const w = workspace();
        const out = join(w.outDir, 'acme.asc');
        const created = await w.cliJson<{ delivery: { recipientEmail: string } }>(createArgs(...delivery(email, keys.alice, out)));
        expect(created.delivery.recipientEmail).toBe('alice@example.com');
        expect(decrypt(out).json.clientSecret).toMatch(/^csk_sandbox_/);
      },
    );

    it('accepts the address of any valid user ID, and a GnuPG default RSA key', async () => {
      const w = workspace();
      const toBob = join(w.outDir, 'bob.asc');
      await w.cliJson(createArgs(...delivery('bob@work.example', keys.bob, toBob)));
      expect(decrypt(toBob).json.clientSecret).toMatch(/^csk_sandbox_/);

      const toCarol = join(w.outDir, 'carol.asc');
      await w.cliJson(createArgs(...delivery('carol@new.example', keys.carol, toCarol)));
      expect(decrypt(toCarol).json.clientSecret).toMatch(/^csk_sandbox_/);

      const toRita = join(w.outDir, 'rita.asc');
      await w.cliJson(createArgs(...delivery('rita@rsa.example', keys.rita, toRita)));
      const { json } = decrypt(toRita);
      const t = await w.app();
      expect(await tokenOutcome(t, json.clientId as string, json.clientSecret as string)).toBe(200);
    });

    it.each(refusals)('refuses %s: one line, no file, no client, no audit event', async (_name, options, reason, code) => {
      const w = workspace();
      writeFileSync(join(w.outDir, 'existing.asc'), 'keep me\n');
      await w.cliJson(['migrate']);
      const run = await w.cli([...createArgs(...options(w)), '--json']);
      expectRefused(run, reason, code, w, ['existing.asc']);
      expect(readFileSync(join(w.outDir, 'existing.asc'), 'utf8')).toBe('keep me\n');
      expect(await w.cliJson(['clients', 'list'])).toEqual([]);
      expect(await w.auditEvents()).toEqual([]);
    });

    it('a file that cannot be written after every check passed (a dangling symlink): no client, no audit event, nothing written', async () => {
      const w = workspace();
      const target = join(w.outDir, 'elsewhere.asc');
      symlinkSync(target, join(w.outDir, 'link.asc'));
      await w.cliJson(['migrate']);
      const run = await w.cli([...createArgs(...delivery('alice@example.com', keys.alice, join(w.outDir, 'link.asc'))), '--json']);
      expectRefused(run, /cannot write \S+link\.asc/, 'non-zero', w, ['link.asc']);
      expect(existsSync(target)).toBe(false);
      expect(await w.cliJson(['clients', 'list'])).toEqual([]);
      expect(await w.auditEvents()).toEqual([]);
    });

    it('refuses a key that has expired by the time the command runs (the command\'s clock decides)', async () => {
      const w = workspace();
      const out = join(w.outDir, 'c.asc');
      w.clock.advance(2 * 86_400 - 60);
      await w.cliJson(createArgs(...delivery('dayfly@example.com', keys.shortLived, out)));
      w.clock.advance(120);
      const run = await w.cli(createArgs(...delivery('dayfly@example.com', keys.shortLived, join(w.outDir, 'd.asc'))));
      expectRefused(run, /recipient key [0-9A-F]{40} expired on/, 'non-zero', w, ['c.asc']);
      expect(await w.cliJson<unknown[]>(['clients', 'list'])).toHaveLength(1);
    });
  });

  it('clients create removes the file again when the database refuses the commit, and creates nothing', async () => {
    const w = workspace();
    expect(await w.cliJson<unknown[]>(['clients', 'list'])).toEqual([]);
    refuseCommitsChangingClients(w);
    const run = await w.cli(createArgs(...delivery('alice@example.com', keys.alice, join(w.outDir, 'acme.asc'))));
    const line = expectFailure(run, 1);
    expect(line).toMatch(/nothing was saved \(.*FOREIGN KEY constraint failed\); \S+acme\.asc was removed again/);
    expect(line).not.toContain('csk_');
    expect(filesIn(w.outDir)).toEqual([]);
    expect(await w.cliJson<unknown[]>(['clients', 'list'])).toEqual([]);
    expect((await w.auditEvents()).filter((event) => event.type === 'client.created')).toEqual([]);
  });

  describe('clients rotate-secret', () => {
    /** A workspace with one client made without delivery; returns its ID and secret. */
    async function withClient() {
      const w = workspace();
      const created = await w.cliJson<{ clientId: string; clientSecret: string }>(createArgs('--grants', 'client_credentials'));
      return { w, clientId: created.clientId, secret: created.clientSecret };
    }

    async function storedClient(w: CliWorkspace, id: string): Promise<Client | undefined> {
      return (await w.storage()).clients.findClient(id);
    }

    it('removes the file again when the database refuses the commit; the old secret stays the only one', async () => {
      const { w, clientId, secret } = await withClient();
      const before = await storedClient(w, clientId);
      refuseCommitsChangingClients(w);
      const run = await w.cli(['clients', 'rotate-secret', clientId, ...delivery('alice@example.com', keys.alice, join(w.outDir, 'rotated.asc'))]);
      const line = expectFailure(run, 1);
      expect(line).toMatch(/nothing was saved \(.*FOREIGN KEY constraint failed\); \S+rotated\.asc was removed again/);
      expect(filesIn(w.outDir)).toEqual([]);
      expect(await storedClient(w, clientId)).toEqual(before);
      expect(await tokenOutcome(await w.app(), clientId, secret)).toBe(200);
    });

    it('puts the new secret only in the file; the old one keeps working for the grace period', async () => {
      const { w, clientId, secret } = await withClient();
      const out = join(w.outDir, 'rotated.asc');
      const rotatedAt = w.clock.nowSeconds();
      const run = await w.cli(['clients', 'rotate-secret', clientId, ...delivery('alice@example.com', keys.alice, out), '--grace', '60', '--json']);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(run.stdout)).toEqual({
        clientId,
        delivery: { recipientEmail: 'alice@example.com', keyFingerprint: keys.aliceFingerprint, file: out },
        previousSecretValidUntil: new Date((rotatedAt + 60) * 1000).toISOString().replace('.000Z', 'Z'),
      });
      expect(run.stdout).not.toContain('csk_');

      expectArmoredFile(out);
      const { json } = decrypt(out);
      expect(json).toMatchObject({ clientId, environment: 'sandbox', authUrl: URLS.CONNECT_AUTH_URL, baseUrl: URLS.CONNECT_BASE_URL, redirectUri: REDIRECT_URI });
      const newSecret = json.clientSecret as string;
      expect(newSecret).toMatch(/^csk_sandbox_/);
      expect(newSecret).not.toBe(secret);
      expect(w.printed.join('')).not.toContain(newSecret);

      const t = await w.app();
      expect(await tokenOutcome(t, clientId, newSecret)).toBe(200);
      expect(await tokenOutcome(t, clientId, secret)).toBe(200);
      w.clock.advance(60);
      expect(await tokenOutcome(t, clientId, secret)).toBe('401 invalid_client');
      expect(await tokenOutcome(t, clientId, newSecret)).toBe(200);

      const rotations = (await w.auditEvents()).filter((e) => e.type === 'client.secret_rotated');
      expect(rotations).toEqual([
        expect.objectContaining({ subject: clientId, outcome: 'success', details: { grace_seconds: 60, delivered_to: 'alice@example.com' } }),
      ]);
      expect(JSON.stringify(await w.auditEvents())).not.toContain(newSecret);
    });

    it('a file that cannot be written after every check passed: the rotation is undone, the old secret works alone', async () => {
      const { w, clientId, secret } = await withClient();
      const target = join(w.outDir, 'elsewhere.asc');
      symlinkSync(target, join(w.outDir, 'link.asc'));
      const before = await storedClient(w, clientId);
      const eventsBefore = await w.auditEvents();
      w.clock.advance(30);
      const run = await w.cli(['clients', 'rotate-secret', clientId, ...delivery('alice@example.com', keys.alice, join(w.outDir, 'link.asc')), '--json']);
      expectRefused(run, /cannot write \S+link\.asc/, 'non-zero', w, ['link.asc']);
      expect(existsSync(target)).toBe(false);
      expect(await storedClient(w, clientId)).toEqual(before);
      expect(await w.auditEvents()).toEqual(eventsBefore);
      const t = await w.app();
      expect(await tokenOutcome(t, clientId, secret)).toBe(200);
    });

    const rotateRefusals = refusals.filter(([name]) =>
      [
        'a key without that e-mail address',
        'an expired key',
        'a revoked key',
        'a sign-only key',
        'a private key file',
        'a file that is not a key',
        'a missing key file',
        '--out in a folder that does not exist',
        '--out naming an existing file',
        '--recipient-key alone',
        'no --out',
      ].includes(name),
    );
    if (rotateRefusals.length !== 11) throw new Error('a refusal picked for rotate-secret is missing');

    it.each(rotateRefusals)('refuses %s: the client keeps its secret alone, no file, no audit event', async (_name, options, reason, code) => {
      const { w, clientId, secret } = await withClient();
      writeFileSync(join(w.outDir, 'existing.asc'), 'keep me\n');
      const before = await storedClient(w, clientId);
      const eventsBefore = await w.auditEvents();
      w.clock.advance(30);

      const run = await w.cli(['clients', 'rotate-secret', clientId, ...options(w), '--json']);
      expectRefused(run, reason, code, w, ['existing.asc']);
      // Nothing changed: the same secret hash, no previous secret in grace, not even updatedAt.
      expect(await storedClient(w, clientId)).toEqual(before);
      expect(before).toMatchObject({ previousSecretHash: null, previousSecretExpiresAt: null });
      expect(await w.auditEvents()).toEqual(eventsBefore);
      const t = await w.app();
      expect(await tokenOutcome(t, clientId, secret)).toBe(200);
    });
  });
});
