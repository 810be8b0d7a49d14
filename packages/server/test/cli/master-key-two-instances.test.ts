import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { idempotentResponseLabel } from '../../src/core/keys/sealed-labels.js';
import { deriveKey, masterKeyFingerprint, seal, unseal } from '../../src/core/keys/master-key.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { basicAuth, form } from '../helpers/build.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl } from '../helpers/postgres.js';
import { cliJson, HttpBrowser, logIn, requireBuiltCli, onEveryServerWithin, runProcess, serve, type ProcessSetting } from '../helpers/processes.js';

/**
 * Replacing the master key while two `connect-auth serve` processes run on
 * one PostgreSQL database (docs/operator-guide.md, "Replacing the master
 * key"): tokens, a journey and client secrets work before, during and after
 * `master-key rotate`; every server writes under the new key within a
 * second of it, and refuses what only the old key made within a second of
 * `master-key retire`; a rotation killed half-way finishes when run again.
 */

const BIN = fileURLToPath(new URL('../../bin/connect-auth.js', import.meta.url));
const REDIRECT_URI = 'https://shop.example/callback';
const PIN = '3817';
const MOBILE = '+639170000001';
const OLD = randomBytes(32);
const NEW = randomBytes(32);
const b64 = (key: Buffer) => key.toString('base64');
const BOTH = { CONNECT_MASTER_KEY: b64(NEW), CONNECT_PREVIOUS_MASTER_KEY: b64(OLD) };

beforeAll(requireBuiltCli);
if (!postgresAdminUrl) noticePostgresSkipped('master key replacement on two servers');

/** A database made under OLD: its settings (with OLD alone), and a storage to look into it. */
async function setting(): Promise<{ s: ProcessSetting; storage: Storage }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'connect-master-key-'));
  onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
  const database = await createTestDatabase();
  onTestFinished(() => database.drop());
  const s = {
    cwd: dataDir,
    env: { CONNECT_DATA_DIR: dataDir, CONNECT_ENVIRONMENT: 'sandbox', CONNECT_MASTER_KEY: b64(OLD), CONNECT_AUTH_URL: 'http://connect.test', DATABASE_URL: database.url },
  };
  await cliJson(s, ['migrate']);
  const storage = openStorage({ engine: 'postgres', url: database.url });
  onTestFinished(() => storage.close());
  return { s, storage };
}

/** Runs `connect-auth ...args --json` as its own process with `env`; its JSON output. */
async function command<T = Record<string, unknown>>(s: ProcessSetting, args: string[], env: Record<string, string>): Promise<T> {
  const run = await runProcess(s, [...args, '--json'], env);
  if (run.code !== 0) throw new Error(`connect-auth ${args.join(' ')}: exit ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}

async function clientToken(base: string, client: { id: string; secret: string }): Promise<number> {
  const res = await fetch(new URL('/token', base), {
    method: 'POST',
    headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ grant_type: 'client_credentials' }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function bearerToken(base: string, client: { id: string; secret: string }): Promise<string> {
  const res = await fetch(new URL('/token', base), {
    method: 'POST',
    headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ grant_type: 'client_credentials' }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

async function profileStatus(base: string, accessToken: string): Promise<number> {
  const res = await fetch(new URL('/customer/profile', base), { headers: { authorization: `Bearer ${accessToken}` } });
  await res.arrayBuffer();
  return res.status;
}

/** `POST /tokens` with a new reference: its status, the reference and the access token it gave. */
async function refreshAtTokens(base: string, bearer: string, refreshToken: string): Promise<{ status: number; reference: string; accessToken: string }> {
  const reference = randomUUID();
  const res = await fetch(new URL('/tokens', base), {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'request-reference-no': reference },
    body: JSON.stringify({ refreshToken }),
  });
  const body = (await res.json()) as { accessToken?: string };
  return { status: res.status, reference, accessToken: body.accessToken ?? '' };
}

/** Whether the response stored for `reference` is sealed under `masterKey`. */
async function storedUnder(storage: Storage, clientId: string, reference: string, masterKey: Buffer): Promise<boolean> {
  const [row] = (await storage.masterKeys.listSealedValues('idempotent-response', [clientId, reference.slice(0, -1)], 1)).filter((v) => v.key[1] === reference);
  if (!row) return false;
  return unseal(deriveKey(masterKey, 'idempotency'), idempotentResponseLabel(clientId, reference), row.sealed).then(
    () => true,
    () => false,
  );
}

/** A journey on `base` brought up to its one-time PIN page: the PIN was sent, hashed under the writing key. */
async function journeyAtOtp(base: string, client: { id: string }): Promise<{ browser: HttpBrowser; otpPage: string }> {
  const browser = new HttpBrowser(base, '10.0.0.7');
  const query = new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: REDIRECT_URI, state: 'journey' });
  const started = await browser.request('GET', `/authorize?${query}`);
  const loginPage = await browser.request('GET', started.location);
  const credentials = await browser.submit(loginPage.body, { mobile: MOBILE, pin: PIN });
  expect(credentials.status).toBe(303);
  const otpPage = await browser.request('GET', credentials.location);
  expect(otpPage.status).toBe(200);
  return { browser, otpPage: otpPage.body };
}

/** Enters the newest one-time PIN of the journey; the code it gives, or the status it got. */
async function finishJourney(journey: { browser: HttpBrowser; otpPage: string }): Promise<string> {
  const messages = await journey.browser.request('GET', `/sandbox/messages?to=${encodeURIComponent(MOBILE)}`);
  const [newest] = (JSON.parse(messages.body) as { messages: Array<{ body: string }> }).messages;
  const otp = /\b(\d{6})\b/.exec(newest?.body ?? '')?.[1] ?? '';
  const verified = await journey.browser.submit(journey.otpPage, { otp });
  expect(verified.status).toBe(303);
  return new URL(verified.location).searchParams.get('code') ?? '';
}

describe.skipIf(!postgresAdminUrl)('replacing the master key on two servers on one PostgreSQL database', () => {
  it('before, during and after rotate and retire: tokens, a journey and client secrets work; both switch, then refuse the old key, within a second', { timeout: 120_000 }, async () => {
    const { s, storage } = await setting();
    const shop = await cliJson<{ clientId: string; clientSecret: string }>(s, [
      'clients', 'create', '--name', 'Shop', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials,authorization_code,refresh_token',
    ]);
    const client = { id: shop.clientId, secret: shop.clientSecret };
    const idle = await cliJson<{ clientId: string; clientSecret: string }>(s, ['clients', 'create', '--name', 'Idle', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials']);
    const idleClient = { id: idle.clientId, secret: idle.clientSecret };
    await cliJson(s, ['customers', 'create', '--mobile', MOBILE, '--pin', PIN]);

    // Rolled first: both servers hold the new key beside the old one, which still writes.
    const [a, b] = await Promise.all([serve(s, BOTH), serve(s, BOTH)]);
    const servers = [a, b] as const;
    const tokens = await logIn(a, '10.0.0.1', client, { mobile: MOBILE, pin: PIN, redirectUri: REDIRECT_URI });
    const bearer = await bearerToken(b, client);
    for (const base of servers) {
      expect(await clientToken(base, client)).toBe(200);
      expect(await clientToken(base, idleClient)).toBe(200);
      expect(await profileStatus(base, tokens.accessToken)).toBe(200);
    }
    const before = await refreshAtTokens(b, bearer, tokens.refreshToken as string);
    expect(before.status).toBe(200);
    expect(await storedUnder(storage, client.id, before.reference, OLD)).toBe(true);
    // A journey waits at its one-time PIN across the rotation.
    const journey = await journeyAtOtp(a, client);

    const rotated = await command<{ switched: boolean; sealed: Record<string, { resealed: number }> }>(s, ['master-key', 'rotate'], BOTH);
    expect(rotated.switched).toBe(true);
    expect(rotated.sealed['signing-key']?.resealed).toBe(2);
    expect(rotated.sealed['idempotent-response']?.resealed).toBeGreaterThanOrEqual(1);
    expect(rotated.sealed['refresh-reuse']?.resealed).toBe(1);

    // Within a second, what each server seals is sealed under the new key.
    const switched = await onEveryServerWithin(servers, 'writes under the new key', async (base) => {
      const refreshed = await refreshAtTokens(base, bearer, tokens.refreshToken as string);
      return refreshed.status === 200 && (await storedUnder(storage, client.id, refreshed.reference, NEW));
    });
    // What was made before still works on both: the secret, the journey's PIN, and an access token.
    let latest = await refreshAtTokens(a, bearer, tokens.refreshToken as string);
    for (const base of servers) {
      expect(await profileStatus(base, latest.accessToken)).toBe(200);
      expect(await clientToken(base, client)).toBe(200);
    }
    const code = await finishJourney(journey);
    const exchanged = await fetch(new URL('/token', b), {
      method: 'POST',
      headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }),
    });
    expect(exchanged.status).toBe(200);
    expect((await storage.clients.findClient(client.id))?.secretHash.startsWith(`${masterKeyFingerprint(NEW)}:`)).toBe(true);

    // The idle client never authenticated since: retire refuses, naming it, unless forced.
    const refused = await runProcess(s, ['master-key', 'retire'], BOTH);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`^connect-auth: 1 client secret\\(s\\) are still hashed under the previous master key: ${idleClient.id} \\(Idle\\);.*\\n$`));
    await command(s, ['master-key', 'retire', '--force'], BOTH);
    const retired = await onEveryServerWithin(servers, 'the old key refused', async (base) => (await clientToken(base, idleClient)) === 401);
    for (const base of servers) {
      expect(await clientToken(base, client)).toBe(200);
      latest = await refreshAtTokens(base, bearer, tokens.refreshToken as string);
      expect(latest.status).toBe(200);
    }
    for (const base of servers) expect(await profileStatus(base, latest.accessToken)).toBe(200);

    // A server given only the new key starts and verifies the earlier tokens; one given only the old key does not start.
    const c = await serve(s, { CONNECT_MASTER_KEY: b64(NEW) });
    expect(await profileStatus(c, latest.accessToken)).toBe(200);
    const oldOnly = await runProcess(s, ['serve'], { PORT: '0' });
    expect(oldOnly.code).not.toBe(0);
    expect(oldOnly.stderr).toContain(`CONNECT_MASTER_KEY (${masterKeyFingerprint(OLD)}) was retired`);
    expect(oldOnly.stderr).not.toContain(b64(OLD));
    console.log(`master key replacement on two servers: both wrote under the new key ${Math.round(switched)} ms after rotate, refused the old one ${Math.round(retired)} ms after retire`);
  });

  it('a rotation killed half-way finishes when run again', { timeout: 120_000 }, async () => {
    const { s, storage } = await setting();
    const created = await cliJson<{ clientId: string }>(s, ['clients', 'create', '--name', 'Shop', '--redirect-uri', REDIRECT_URI]);
    const a = await serve(s, BOTH);
    // Many stored responses sealed under the old key, so that the run is stopped in the middle of them.
    const key = deriveKey(OLD, 'idempotency');
    const now = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 1500; i++) {
      const reference = `ref-${String(i).padStart(5, '0')}`;
      await storage.idempotentRequests.claimIdempotentRequest({
        clientId: created.clientId,
        reference,
        requestHash: 'h',
        sealedResponse: await seal(key, idempotentResponseLabel(created.clientId, reference), '{"accessToken":"x"}'),
        createdAt: now,
        expiresAt: now + 3600,
      });
    }
    const child = spawn(process.execPath, [BIN, 'master-key', 'rotate'], { cwd: s.cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...s.env, ...BOTH }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const deadline = performance.now() + 60_000;
    while (!stderr.includes('stored /tokens responses') && performance.now() < deadline) await delay(5);
    child.kill('SIGKILL');
    await exited;
    expect(stderr).toContain('stored /tokens responses');

    const halfway = await command<{ sealedNotUnderWritingKey: Record<string, number> }>(s, ['master-key', 'status'], BOTH);
    expect(halfway.sealedNotUnderWritingKey['idempotent-response']).toBeGreaterThan(0);
    expect(halfway.sealedNotUnderWritingKey['idempotent-response']).toBeLessThan(1500);
    // The switch came first: the running server already writes under the new key.
    expect((await storage.masterKeys.listMasterKeys()).find((k) => k.state === 'writing')?.fingerprint).toBe(masterKeyFingerprint(NEW));
    expect(await clientToken(a, { id: created.clientId, secret: 'wrong' })).toBe(401);

    const again = await command<{ switched: boolean; sealed: Record<string, { resealed: number; already: number; unreadable: number }> }>(s, ['master-key', 'rotate'], BOTH);
    expect(again.switched).toBe(false);
    expect(again.sealed['idempotent-response']?.resealed).toBe(halfway.sealedNotUnderWritingKey['idempotent-response']);
    expect(again.sealed['idempotent-response']?.unreadable).toBe(0);
    const done = await command<{ sealedNotUnderWritingKey: Record<string, number> }>(s, ['master-key', 'status'], BOTH);
    expect(done.sealedNotUnderWritingKey).toEqual({ 'signing-key': 0, 'idempotent-response': 0, 'refresh-reuse': 0 });
  });
});
