import { randomUUID } from 'node:crypto';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { maxTokenTtlSeconds } from '../../../src/compose/runtime.js';
import { activateKeysNow, revokeKey, rotateKeys } from '../../../src/core/keys/key-rotation.js';
import { deriveKey } from '../../../src/core/keys/master-key.js';
import { KEY_PUBLICATION_MARGIN_SECONDS, KEY_RETIREMENT_MARGIN_SECONDS, keyPublicationDelaySeconds } from '../../../src/core/lifetimes.js';
import { changeReached } from '../../helpers/change-reached.js';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { build, T0, TEST_AUTH_URL, TEST_BASE_URL, type TestApp } from '../../helpers/build.js';
import { expectInactive, expectInvalidToken, getProfile, introspect, lifecycle, postTokens, refreshAtToken } from '../../helpers/token-session.js';
import { expectOAuthError, fetchJwks, obtainToken, verifyWithPublishedKeys } from '../../helpers/wire.js';

const TTL = 3600;

/** What the CLI's key actions are handed, for the app `t`. */
function keyDeps(t: TestApp) {
  return { storage: t.storage, sealKey: deriveKey(t.masterKey, 'key-sealing'), clock: t.clock };
}

/** The policy `keys rotate` uses with the app's configuration. */
function policy(t: TestApp) {
  const { config } = t.services.runtime;
  return { maxTokenTtlSeconds: maxTokenTtlSeconds(config), publicationDelaySeconds: keyPublicationDelaySeconds(config.lifetimes) };
}

/** `keys rotate`; returns the new signing key's kid and its activation. */
async function rotate(t: TestApp): Promise<{ kid: string; activatesAt: number }> {
  const result = await rotateKeys(keyDeps(t), policy(t));
  return { kid: result.keys.find((k) => k.use === 'sig')?.kid ?? '', activatesAt: result.activatesAt };
}

async function publishedKids(t: TestApp): Promise<string[]> {
  return (await fetchJwks(t.app)).keys.map((key) => key.kid as string).sort();
}

/** A SQLite file in a fresh folder, removed when the test ends. */
function temporaryDatabase(): string {
  const dir = mkdtempSync(join(tmpdir(), 'connect-http-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'connect.db');
}

async function openShared(path: string): Promise<Storage> {
  const storage = openStorage({ engine: 'sqlite', path });
  onTestFinished(() => storage.close());
  await storage.migrate();
  return storage;
}

describe('signing key rotation over HTTP', () => {
  it('publishes the new key at once, signs with it from its activation, and publishes the old one until its tokens expired', async () => {
    const t = await build({ accessTokenTtlSeconds: TTL });
    const client = await t.createClient();
    const oldKid = t.keyRing.signingKey().kid;
    const before = await obtainToken(t, client);
    expect(decodeProtectedHeader(before).kid).toBe(oldKid);

    const rotated = await rotate(t);
    expect(rotated.activatesAt).toBe(T0 + 300 + KEY_PUBLICATION_MARGIN_SECONDS);
    await t.keyRing.reload();
    expect(await publishedKids(t)).toEqual([oldKid, rotated.kid].sort());

    // Until the activation the old key signs; from it, the new one, on this ring without a reload.
    t.clock.set(rotated.activatesAt - 1);
    const lastOld = await obtainToken(t, client);
    expect(decodeProtectedHeader(lastOld).kid).toBe(oldKid);
    t.clock.set(rotated.activatesAt);
    const after = await obtainToken(t, client);
    expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);
    await expect(verifyWithPublishedKeys(t, before)).resolves.toBeDefined();
    await expect(verifyWithPublishedKeys(t, lastOld)).resolves.toBeDefined();
    await expect(verifyWithPublishedKeys(t, after)).resolves.toBeDefined();

    // The old key verifies until every token it signed has expired (docs/operator-guide.md, "Signing keys").
    const oldRecord = (await t.storage.keys.listKeys()).find((key) => key.kid === oldKid);
    const verifyUntil = oldRecord?.verifyUntil;
    if (verifyUntil == null) throw new Error('the old key has no verifyUntil after rotation');
    expect(verifyUntil).toBe(rotated.activatesAt + maxTokenTtlSeconds(t.services.runtime.config) + KEY_RETIREMENT_MARGIN_SECONDS);
    const lastValidSecond = (decodeJwt(lastOld).exp as number) - 1;
    expect(verifyUntil).toBeGreaterThan(lastValidSecond);
    t.clock.set(lastValidSecond);
    await expect(verifyWithPublishedKeys(t, lastOld)).resolves.toBeDefined();

    // Just before verifyUntil the old key is still published; at verifyUntil it is gone.
    t.clock.set(verifyUntil - 1);
    expect(await publishedKids(t)).toContain(oldKid);
    t.clock.set(verifyUntil);
    expect(await publishedKids(t)).toEqual([rotated.kid]);
    expect(decodeProtectedHeader(await obtainToken(t, client)).kid).toBe(rotated.kid);
  });

  it('an instance that has not reloaded yet keeps signing with the key it knows, and its tokens verify', async () => {
    const t = await build();
    const client = await t.createClient();
    const oldKid = t.keyRing.signingKey().kid;
    const rotated = await rotate(t);
    t.clock.set(rotated.activatesAt);
    const token = await obtainToken(t, client);
    expect(decodeProtectedHeader(token).kid).toBe(oldKid);
    await t.keyRing.reload();
    await expect(verifyWithPublishedKeys(t, token)).resolves.toBeDefined();
    expect(decodeProtectedHeader(await obtainToken(t, client)).kid).toBe(rotated.kid);
  });

  it('serves the JWKS with the configured max-age', async () => {
    const t = await build({ env: { CONNECT_JWKS_MAX_AGE: '120' } });
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(res.headers['cache-control']).toBe('public, max-age=120');
    expect((await rotate(t)).activatesAt).toBe(T0 + 120 + KEY_PUBLICATION_MARGIN_SECONDS);
  });
});

describe('a verifier that caches the JWKS for its max-age', () => {
  it('verifies every client access token issued before, during and after a rotation, never meeting an unknown kid', async () => {
    // jose's cache ages by Date: only Date is faked, and it follows the server's clock.
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => void vi.useRealTimers());
    const t = await build({ accessTokenTtlSeconds: TTL });
    const maxAge = t.services.runtime.config.lifetimes.jwksMaxAgeSeconds;
    expect(maxAge).toBe(300);
    const sync = () => vi.setSystemTime(t.clock.nowSeconds() * 1000);
    sync();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    let fetches = 0;
    t.app.server.on('request', (request: { url?: string }) => {
      if (request.url === '/.well-known/jwks.json') fetches++;
    });
    const url = new URL(`http://127.0.0.1:${port}/.well-known/jwks.json`);
    expect((await fetch(url)).headers.get('cache-control')).toBe(`public, max-age=${maxAge}`);
    fetches = 0;

    // It never refetches early: not on an unknown kid either (the cool-down outlasts the test).
    const jwks = createRemoteJWKSet(url, { cacheMaxAge: maxAge * 1000, cooldownDuration: 365 * 86_400 * 1000 });
    const verify = (token: string) => jwtVerify(token, jwks, { issuer: TEST_AUTH_URL, audience: TEST_BASE_URL, typ: 'at+jwt', algorithms: ['ES256'] });
    const client = await t.createClient();
    const oldKid = t.keyRing.signingKey().kid;

    // The worst case: the verifier refreshes its copy (at T0 + 300) just before
    // the rotation, and so keeps a copy without the new key for a whole max-age.
    const rotationAt = T0 + 300;
    let rotated: { kid: string; activatesAt: number } | undefined;
    const tokens: string[] = [];
    const kids = new Set<string>();
    for (let now = T0; now <= T0 + 1000; now++) {
      t.clock.set(now);
      sync();
      const token = await obtainToken(t, client);
      kids.add(decodeProtectedHeader(token).kid ?? '');
      await expect(verify(token), `the token issued at T0 + ${now - T0}`).resolves.toBeDefined();
      tokens.push(token);
      if (now === rotationAt) {
        const made = await rotate(t);
        rotated = made;
        // The instance hears of it through the change signal and publishes it.
        await changeReached(async () => t.keyRing.jwks().keys.some((k) => k.kid === made.kid));
      }
    }
    if (!rotated) throw new Error('no rotation');
    expect(rotated.activatesAt).toBe(rotationAt + maxAge + KEY_PUBLICATION_MARGIN_SECONDS);
    expect([...kids]).toEqual([oldKid, rotated.kid]);
    expect(decodeProtectedHeader(tokens.at(-1) ?? '').kid).toBe(rotated.kid);
    // One fetch when the cache was empty, then one each time it expired.
    expect(fetches).toBe(Math.floor(1000 / maxAge) + 1);
    // Every token is still valid, and still verifies.
    for (const token of tokens) await expect(verify(token)).resolves.toBeDefined();
  });
});

describe('keys revoke over HTTP', () => {
  it('a POST /tokens replay whose tokens a revoked key made gets invalid_grant, never those tokens', async () => {
    const { t, client, tokens } = await lifecycle();
    const reference = randomUUID();
    const first = await postTokens(t.app, { bearer: await obtainToken(t, client), reference, body: { refreshToken: tokens.refreshToken } });
    expect(first.statusCode).toBe(200);
    const old = { sig: t.keyRing.signingKey().kid, enc: t.keyRing.encryptionKey().kid };
    await activateKeysNow(keyDeps(t), policy(t));
    await t.keyRing.reload();
    // Before the revocation the replay still answers, with a bearer of the new key.
    expect((await postTokens(t.app, { bearer: await obtainToken(t, client), reference, body: { refreshToken: tokens.refreshToken } })).body).toBe(first.body);
    await revokeKey(keyDeps(t), old.enc);
    await t.keyRing.reload();
    const replay = await postTokens(t.app, { bearer: await obtainToken(t, client), reference, body: { refreshToken: tokens.refreshToken } });
    expectOAuthError(replay, { status: 400, error: 'invalid_grant' });
    expect(replay.body).not.toContain(first.json<{ accessToken: string }>().accessToken);
    expect(old.sig).not.toBe(t.keyRing.signingKey().kid);
  });

  it('a refresh within CONNECT_REFRESH_REUSE_SECONDS of one whose access token a key now revoked made gets a working token, never that one', async () => {
    const { t, client, tokens } = await lifecycle();
    const first = await refreshAtToken(t.app, client, tokens.refreshToken);
    expect(first.statusCode).toBe(200);
    const minted = first.json<{ access_token: string }>().access_token;
    const old = t.keyRing.encryptionKey().kid;
    expect(decodeProtectedHeader(minted).kid).toBe(old);
    // The encryption key is compromised: replaced at once, then revoked, within the reuse interval.
    await activateKeysNow(keyDeps(t), policy(t));
    await revokeKey(keyDeps(t), old);
    await t.keyRing.reload();
    t.clock.advance(1);
    const second = await refreshAtToken(t.app, client, tokens.refreshToken);
    expect(second.statusCode).toBe(200);
    const handed = second.json<{ access_token: string }>().access_token;
    expect(handed).not.toBe(minted);
    expect(decodeProtectedHeader(handed).kid).not.toBe(old);
    expect((await getProfile(t.app, handed)).statusCode).toBe(200);
    // The refreshes after it reuse the working one.
    expect((await refreshAtToken(t.app, client, tokens.refreshToken)).json<{ access_token: string }>().access_token).toBe(handed);
    expectInvalidToken(await getProfile(t.app, minted));
  });

  it('every token of the revoked keys is refused: client access token, refresh token, customer access token', async () => {
    const { t, client, tokens } = await lifecycle();
    const clientToken = await obtainToken(t, client);
    const old = { sig: t.keyRing.signingKey().kid, enc: t.keyRing.encryptionKey().kid };
    // The compromised keys are replaced at once, then revoked.
    await activateKeysNow(keyDeps(t), policy(t));
    await t.keyRing.reload();
    expect((await getProfile(t.app, tokens.accessToken)).statusCode).toBe(200);
    expect(await publishedKids(t)).toContain(old.sig);

    await revokeKey(keyDeps(t), old.sig);
    await revokeKey(keyDeps(t), old.enc);
    await t.keyRing.reload();
    expect(await publishedKids(t)).not.toContain(old.sig);
    expectInactive(await introspect(t.app, client, clientToken));
    expectInactive(await introspect(t.app, client, tokens.refreshToken));
    expectInvalidToken(await postTokens(t.app, { bearer: clientToken, body: { refreshToken: tokens.refreshToken } }));
    expectOAuthError(await refreshAtToken(t.app, client, tokens.refreshToken), { status: 400, error: 'invalid_grant' });
    expectInvalidToken(await getProfile(t.app, tokens.accessToken));

    // Tokens of the keys that took their place work.
    const fresh = await obtainToken(t, client);
    expect(decodeProtectedHeader(fresh).kid).not.toBe(old.sig);
    await expect(verifyWithPublishedKeys(t, fresh)).resolves.toBeDefined();
  });
});

describe('two servers on one database', () => {
  it('share keys and clients through one storage: a token from A verifies with the JWKS of B', async () => {
    const storage = await openShared(temporaryDatabase());
    const masterKey = randomBytes(32);
    const a = await build({ storage, masterKey });
    const b = await build({ storage, masterKey, clock: a.clock });
    expect(b.keyRing.signingKey().kid).toBe(a.keyRing.signingKey().kid);

    const client = await a.createClient();
    const fromA = await obtainToken(a, client);
    await expect(verifyWithPublishedKeys(b, fromA)).resolves.toBeDefined();
    const fromB = await obtainToken(b, client); // the client registered through A authenticates at B
    await expect(verifyWithPublishedKeys(a, fromB)).resolves.toBeDefined();

    // A rotation reaches both on their next reload, and both switch at its activation.
    const rotated = await rotate(a);
    await Promise.all([a.keyRing.reload(), b.keyRing.reload()]);
    expect(await publishedKids(a)).toEqual(await publishedKids(b));
    a.clock.set(rotated.activatesAt);
    const afterRotation = await obtainToken(b, client);
    expect(decodeProtectedHeader(afterRotation).kid).toBe(rotated.kid);
    expect(decodeProtectedHeader(await obtainToken(a, client)).kid).toBe(rotated.kid);
    await expect(verifyWithPublishedKeys(a, afterRotation)).resolves.toBeDefined();
    await expect(verifyWithPublishedKeys(b, fromA)).resolves.toBeDefined();
  });

  it('share them through separate connections to one SQLite file, as two processes would', async () => {
    const path = temporaryDatabase();
    const masterKey = randomBytes(32);
    const a = await build({ storage: await openShared(path), masterKey });
    const b = await build({ storage: await openShared(path), masterKey });
    expect(b.keyRing.signingKey().kid).toBe(a.keyRing.signingKey().kid);

    const client = await a.createClient();
    await expect(verifyWithPublishedKeys(b, await obtainToken(a, client))).resolves.toBeDefined();
    await expect(verifyWithPublishedKeys(a, await obtainToken(b, client))).resolves.toBeDefined();
  });
});
