import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompactEncrypt, SignJWT, compactDecrypt, jwtVerify } from 'jose';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { fixedClock, type FixedClock } from '../../../src/core/clock.js';
import { KeyRing } from '../../../src/core/keys/key-ring.js';
import { revokeKey, rotateKeys, type RotationPolicy } from '../../../src/core/keys/key-rotation.js';
import { deriveKey } from '../../../src/core/keys/master-key.js';
import type { SigningKeyStore } from '../../../src/core/keys/signing-key-store.js';
import { displayStatus } from '../../../src/core/keys/signing-key.js';
import { KEY_RETIREMENT_MARGIN_SECONDS } from '../../../src/core/lifetimes.js';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';

const T0 = 1_800_000_000;
const POLICY: RotationPolicy = { maxTokenTtlSeconds: 604_800, publicationDelaySeconds: 330 };
const opened: Storage[] = [];

async function setup() {
  const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
  opened.push(storage);
  await storage.migrate();
  const clock = fixedClock(T0);
  const sealKey = deriveKey(randomBytes(32), 'key-sealing');
  const deps = { storage, sealKey, clock };
  return {
    storage,
    clock,
    sealKey,
    open: (keys: SigningKeyStore = storage.keys) => KeyRing.open({ keys, sealKey, clock }),
    rotate: () => rotateKeys(deps, POLICY),
    revoke: (kid: string) => revokeKey(deps, kid),
  };
}

async function signWith(ring: KeyRing, iat: number) {
  const { kid, alg, key } = ring.signingKey();
  return new SignJWT({}).setProtectedHeader({ alg, kid }).setIssuedAt(iat).sign(key);
}

async function verifiesWith(ring: KeyRing, token: string): Promise<boolean> {
  try {
    await jwtVerify(token, async (header) => {
      const key = await ring.verificationKey(header.kid ?? '');
      if (!key) throw new Error('unknown key');
      return key;
    });
    return true;
  } catch {
    return false;
  }
}

async function encryptWith(ring: KeyRing): Promise<string> {
  const { kid, key } = ring.encryptionKey();
  return new CompactEncrypt(new TextEncoder().encode('x')).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid }).encrypt(key);
}

async function decryptsWith(ring: KeyRing, token: string): Promise<boolean> {
  try {
    await compactDecrypt(token, async (header) => {
      const key = await ring.decryptionKey(header.kid ?? '');
      if (!key) throw new Error('unknown key');
      return key;
    });
    return true;
  } catch {
    return false;
  }
}

/** The store, counting how often the keys are read. */
function counting(keys: SigningKeyStore) {
  const counter = { reads: 0 };
  const store: SigningKeyStore = { ...keys, listKeys: async () => (counter.reads++, keys.listKeys()) };
  return { store, counter };
}

afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
});

describe('KeyRing', () => {
  it('creates one ES256 signing key and one encryption key, generation 1, on first open and reuses them', async () => {
    const s = await setup();
    const first = await s.open();
    const second = await s.open();
    expect(second.signingKey().kid).toBe(first.signingKey().kid);
    const stored = await s.storage.keys.listKeys();
    expect(stored.map((k) => [k.use, k.generation, k.activatesAt]).sort()).toEqual([
      ['enc', 1, T0],
      ['sig', 1, T0],
    ]);
    expect(first.encryptionKey().kid).toBe(second.encryptionKey().kid);
    expect(first.encryptionKey().key.algorithm).toMatchObject({ name: 'AES-GCM', length: 256 });
    expect(first.encryptionKey().key.extractable).toBe(false);
    const [jwk] = first.jwks().keys;
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: first.signingKey().kid });
    expect(jwk).not.toHaveProperty('d');
  });

  it('stores the private key sealed, never in clear', async () => {
    const s = await setup();
    await s.open();
    const records = await s.storage.keys.listKeys();
    expect(records).toHaveLength(2);
    for (const record of records) {
      expect(record.sealedPrivateJwk.split('.')).toHaveLength(5);
      expect(record.sealedPrivateJwk).not.toMatch(/"[dk]"/);
      expect(record.publicJwk ?? '').not.toMatch(/"[dk]"/);
    }
    expect(records.find((r) => r.use === 'enc')?.publicJwk).toBeNull();
  });

  it('refuses to open with another master key', async () => {
    const s = await setup();
    await s.open();
    await expect(KeyRing.open({ keys: s.storage.keys, sealKey: deriveKey(randomBytes(32), 'key-sealing'), clock: s.clock })).rejects.toThrow(
      /is CONNECT_MASTER_KEY the key this database was created with/,
    );
  });

  it('publishes a rotated-in key at once and switches to it when the clock reaches its activation, without reading the keys again', async () => {
    const s = await setup();
    const { store, counter } = counting(s.storage.keys);
    const ring = await s.open(store);
    const old = { sig: ring.signingKey().kid, enc: ring.encryptionKey().kid };
    const rotated = await s.rotate();
    const next = { sig: rotated.keys.find((k) => k.use === 'sig')!.kid, enc: rotated.keys.find((k) => k.use === 'enc')!.kid };
    expect(rotated.activatesAt).toBe(T0 + 330);
    await ring.reload();
    const reads = counter.reads;

    // Published (and trusted) before it signs: a verifier meets it only after it knew it.
    expect(ring.jwks().keys.map((k) => k.kid).sort()).toEqual([old.sig, next.sig].sort());
    s.clock.set(T0 + 329);
    expect(ring.signingKey().kid).toBe(old.sig);
    expect(ring.encryptionKey().kid).toBe(old.enc);
    const beforeSwitch = await signWith(ring, T0 + 329);

    s.clock.set(T0 + 330);
    expect(ring.signingKey().kid).toBe(next.sig);
    expect(ring.encryptionKey().kid).toBe(next.enc);
    expect(counter.reads).toBe(reads);
    expect(await verifiesWith(ring, beforeSwitch)).toBe(true);
    expect(await verifiesWith(ring, await signWith(ring, T0 + 330))).toBe(true);
  });

  it('verifies and decrypts with a pending key, for an instance whose clock is ahead', async () => {
    const s = await setup();
    const ring = await s.open();
    await s.rotate();
    await ring.reload();
    const ahead = await KeyRing.open({ keys: s.storage.keys, sealKey: s.sealKey, clock: fixedClock(T0 + 330) });
    expect(ahead.signingKey().kid).not.toBe(ring.signingKey().kid);
    expect(await verifiesWith(ring, await signWith(ahead, T0 + 330))).toBe(true);
    expect(await decryptsWith(ring, await encryptWith(ahead))).toBe(true);
  });

  it('keeps verifying the replaced key until the last token it signed expires, plus the margin', async () => {
    const s = await setup();
    const ring = await s.open();
    const oldKid = ring.signingKey().kid;
    const rotated = await s.rotate();
    await ring.reload();
    s.clock.set(rotated.activatesAt - 1);
    const lastOld = await signWith(ring, s.clock.nowSeconds());

    const records = await s.storage.keys.listKeys();
    const old = records.find((k) => k.kid === oldKid)!;
    const verifyUntil = rotated.activatesAt + POLICY.maxTokenTtlSeconds + KEY_RETIREMENT_MARGIN_SECONDS;
    expect(old).toMatchObject({ status: 'retired', retiredAt: rotated.activatesAt, verifyUntil });
    expect(displayStatus(old, records, rotated.activatesAt - 1)).toBe('active');
    expect(displayStatus(old, records, rotated.activatesAt)).toBe('retired');

    s.clock.set(verifyUntil - 1);
    expect(displayStatus(old, records, s.clock.nowSeconds())).toBe('retired');
    expect(await verifiesWith(ring, lastOld)).toBe(true);
    expect(ring.jwks().keys.map((k) => k.kid)).toContain(oldKid);

    s.clock.set(verifyUntil);
    expect(displayStatus(old, records, s.clock.nowSeconds())).toBe('expired');
    expect(await verifiesWith(ring, lastOld)).toBe(false);
    expect(ring.jwks().keys.map((k) => k.kid)).not.toContain(oldKid);
  });

  it('forgets a revoked key on reload: out of the JWKS, its signatures and encryptions refused', async () => {
    const s = await setup();
    const ring = await s.open();
    const old = { sig: ring.signingKey().kid, enc: ring.encryptionKey().kid };
    const signed = await signWith(ring, T0);
    const encrypted = await encryptWith(ring);
    const rotated = await s.rotate();
    s.clock.set(rotated.activatesAt);
    await ring.reload();
    expect(await verifiesWith(ring, signed)).toBe(true);
    expect(await decryptsWith(ring, encrypted)).toBe(true);

    await s.revoke(old.sig);
    await s.revoke(old.enc);
    await ring.reload();
    expect(ring.jwks().keys.map((k) => k.kid)).not.toContain(old.sig);
    expect(await verifiesWith(ring, signed)).toBe(false);
    expect(await decryptsWith(ring, encrypted)).toBe(false);
    // Not even a reload for the unknown kid brings it back.
    s.clock.advance(5);
    expect(await verifiesWith(ring, signed)).toBe(false);
  });

  it('a cancelled rotation: the revoked pending key leaves the JWKS and the current key signs on', async () => {
    const s = await setup();
    const ring = await s.open();
    const current = ring.signingKey().kid;
    const rotated = await s.rotate();
    await ring.reload();
    const next = rotated.keys.find((k) => k.use === 'sig')!.kid;
    await s.revoke(next);
    await ring.reload();
    expect(ring.jwks().keys.map((k) => k.kid)).toEqual([current]);
    s.clock.set(rotated.activatesAt + POLICY.maxTokenTtlSeconds + 3600);
    expect(ring.signingKey().kid).toBe(current);
    expect(await verifiesWith(ring, await signWith(ring, s.clock.nowSeconds()))).toBe(true);
  });

  it('another instance picks up a rotation on reload, and verifies a new kid at once', async () => {
    const s = await setup();
    const a = await s.open();
    const b = await s.open();
    const rotated = await s.rotate();
    await a.reload();
    s.clock.set(rotated.activatesAt);
    const fresh = await signWith(a, rotated.activatesAt);
    // b has not reloaded: it still signs with the old key, but an unknown kid makes it look again.
    expect(b.signingKey().kid).not.toBe(a.signingKey().kid);
    expect(await verifiesWith(b, fresh)).toBe(true);
    expect(b.signingKey().kid).toBe(a.signingKey().kid);
  });

  it('reloads for an unknown kid at most once a second', async () => {
    const s = await setup();
    const ring = await s.open();
    const { store, counter } = counting(s.storage.keys);
    const watched = await s.open(store);
    counter.reads = 0;
    s.clock.advance(1);
    expect(await watched.verificationKey('nope')).toBeUndefined();
    expect(await watched.decryptionKey('nope')).toBeUndefined();
    expect(counter.reads).toBe(1);
    s.clock.advance(1);
    await watched.verificationKey('nope');
    expect(counter.reads).toBe(2);
    expect(await watched.verificationKey(ring.signingKey().kid)).toBeDefined();
  });

  it('a reload asked for while one is reading reads once more afterwards, so no change is missed', async () => {
    const s = await setup();
    const { store, counter } = counting(s.storage.keys);
    const ring = await s.open(store);
    counter.reads = 0;
    const first = ring.reload();
    // A revocation commits while the first read is under way; the change signal asks again.
    const second = ring.reload();
    const third = ring.reload();
    await Promise.all([first, second, third]);
    expect(counter.reads).toBe(2);
    expect(second).toBe(third);
  });
});

describe('several instances starting at once on an empty database', () => {
  const INSTANCES = 8;

  async function startTogether(storages: Storage[]) {
    const sealKey = deriveKey(randomBytes(32), 'key-sealing');
    const clock: FixedClock = fixedClock(T0);
    const rings = await Promise.all(storages.map((storage) => KeyRing.open({ keys: storage.keys, sealKey, clock })));
    const keys = await storages[0]!.keys.listKeys();
    expect(keys.filter((k) => k.use === 'sig')).toHaveLength(1);
    expect(keys.filter((k) => k.use === 'enc')).toHaveLength(1);
    for (const ring of rings) {
      expect(ring.signingKey().kid).toBe(keys.find((k) => k.use === 'sig')?.kid);
      expect(ring.encryptionKey().kid).toBe(keys.find((k) => k.use === 'enc')?.kid);
    }
  }

  it(`end up with exactly one key per use: ${INSTANCES} on one SQLite file`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-keys-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'connect.db');
    const storages = Array.from({ length: INSTANCES }, () => openStorage({ engine: 'sqlite', path }));
    opened.push(...storages);
    await storages[0]!.migrate();
    await startTogether(storages);
  });

  noticePostgresSkipped('KeyRing on PostgreSQL');
  describe.skipIf(!postgresAdminUrl)('on PostgreSQL', () => {
    const postgres = usePostgresStorage();

    it(`end up with exactly one key per use: ${INSTANCES} on one database`, async () => {
      const storages = Array.from({ length: INSTANCES }, () => postgres.open());
      await storages[0]!.migrate();
      await startTogether(storages);
    });
  });
});
