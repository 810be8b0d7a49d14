import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it, onTestFinished } from 'vitest';
import { rotateKeys } from '../../src/core/keys/key-ring.js';
import { deriveKey } from '../../src/core/keys/master-key.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../src/storage/ports.js';
import { build, type TestApp } from '../helpers/build.js';
import { fetchJwks, obtainToken, verifyWithPublishedKeys } from './wire.js';

const TTL = 3600;

function rotate(t: TestApp) {
  return rotateKeys({ storage: t.storage, sealKey: deriveKey(t.masterKey, 'key-sealing'), clock: t.clock }, TTL);
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
  it('signs with the new key after a reload and keeps publishing the old one until its tokens expired', async () => {
    const t = await build({ accessTokenTtlSeconds: TTL });
    const client = await t.createClient();
    const oldKid = t.keyRing.signingKey().kid;
    const before = await obtainToken(t, client);
    expect(decodeProtectedHeader(before).kid).toBe(oldKid);

    const rotated = await rotate(t);
    expect(rotated.kid).not.toBe(oldKid);
    await t.keyRing.reload();

    const after = await obtainToken(t, client);
    expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);
    expect(await publishedKids(t)).toEqual([oldKid, rotated.kid].sort());
    await expect(verifyWithPublishedKeys(t, before)).resolves.toBeDefined();
    await expect(verifyWithPublishedKeys(t, after)).resolves.toBeDefined();

    // The old key verifies until every token it signed has expired (docs/operator-guide.md, "Signing keys").
    const oldRecord = (await t.storage.keys.listKeys()).find((key) => key.kid === oldKid);
    const verifyUntil = oldRecord?.verifyUntil;
    if (verifyUntil == null) throw new Error('the old key has no verifyUntil after rotation');
    const lastValidSecond = (decodeJwt(before).exp as number) - 1;
    expect(verifyUntil).toBeGreaterThan(lastValidSecond);

    // In the last second of the old token's life, a verifier fetching the JWKS still accepts it.
    t.clock.set(lastValidSecond);
    await t.keyRing.reload();
    await expect(verifyWithPublishedKeys(t, before)).resolves.toBeDefined();

    // Just before verifyUntil the old key is still published; at verifyUntil it is gone.
    t.clock.set(verifyUntil - 1);
    await t.keyRing.reload();
    expect(await publishedKids(t)).toContain(oldKid);
    t.clock.set(verifyUntil);
    await t.keyRing.reload();
    expect(await publishedKids(t)).toEqual([rotated.kid]);
    expect(decodeProtectedHeader(await obtainToken(t, client)).kid).toBe(rotated.kid);
  });

  it('keeps signing with the loaded key until the ring is reloaded', async () => {
    const t = await build();
    const client = await t.createClient();
    const oldKid = t.keyRing.signingKey().kid;
    const rotated = await rotate(t);
    // No reload yet: the running app has not seen the rotation, and its tokens still verify.
    const token = await obtainToken(t, client);
    expect(decodeProtectedHeader(token).kid).toBe(oldKid);
    await t.keyRing.reload();
    await expect(verifyWithPublishedKeys(t, token)).resolves.toBeDefined();
    expect(decodeProtectedHeader(await obtainToken(t, client)).kid).toBe(rotated.kid);
  });
});

describe('two servers on one database', () => {
  it('share keys and clients through one storage: a token from A verifies with the JWKS of B', async () => {
    const storage = await openShared(temporaryDatabase());
    const masterKey = randomBytes(32);
    const a = await build({ storage, masterKey });
    const b = await build({ storage, masterKey });
    expect(b.keyRing.signingKey().kid).toBe(a.keyRing.signingKey().kid);

    const client = await a.createClient();
    const fromA = await obtainToken(a, client);
    await expect(verifyWithPublishedKeys(b, fromA)).resolves.toBeDefined();
    const fromB = await obtainToken(b, client); // the client registered through A authenticates at B
    await expect(verifyWithPublishedKeys(a, fromB)).resolves.toBeDefined();

    // A rotation made through A reaches B on its next reload.
    const rotated = await rotate(a);
    await Promise.all([a.keyRing.reload(), b.keyRing.reload()]);
    const afterRotation = await obtainToken(b, client);
    expect(decodeProtectedHeader(afterRotation).kid).toBe(rotated.kid);
    await expect(verifyWithPublishedKeys(a, afterRotation)).resolves.toBeDefined();
    await expect(verifyWithPublishedKeys(b, fromA)).resolves.toBeDefined();
    expect(await publishedKids(a)).toEqual(await publishedKids(b));
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
