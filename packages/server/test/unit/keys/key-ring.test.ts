import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/core/clock.js';
import { KeyRing, rotateKeys } from '../../../src/core/keys/key-ring.js';
import { deriveKey } from '../../../src/core/keys/master-key.js';
import { displayStatus } from '../../../src/core/keys/signing-key.js';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../../src/storage/ports.js';
import { KEY_RELOAD_SECONDS } from '../../../src/core/lifetimes.js';

const T0 = 1_800_000_000;
const MAX_TTL = 604_800;
const opened: Storage[] = [];

async function setup() {
  const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
  opened.push(storage);
  await storage.migrate();
  const clock = fixedClock(T0);
  const sealKey = deriveKey(randomBytes(32), 'key-sealing');
  return { storage, clock, sealKey, open: () => KeyRing.open({ keys: storage.keys, sealKey, clock }) };
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

afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
});

describe('KeyRing', () => {
  it('creates one ES256 signing key on first open and reuses it afterwards', async () => {
    const s = await setup();
    const first = await s.open();
    const second = await s.open();
    expect(second.signingKey().kid).toBe(first.signingKey().kid);
    const stored = await s.storage.keys.listKeys();
    expect(stored.map((k) => k.use).sort()).toEqual(['enc', 'sig']);
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

  it('after a rotation signs with the new key and keeps verifying old tokens until their window ends', async () => {
    const s = await setup();
    const ring = await s.open();
    const oldKid = ring.signingKey().kid;
    const oldToken = await signWith(ring, T0);

    const rotated = await rotateKeys({ storage: s.storage, sealKey: s.sealKey, clock: s.clock }, MAX_TTL);
    await ring.reload();
    expect(ring.signingKey().kid).toBe(rotated.kid);
    expect(ring.jwks().keys.map((k) => k.kid).sort()).toEqual([oldKid, rotated.kid].sort());
    expect(await verifiesWith(ring, oldToken)).toBe(true);

    const old = (await s.storage.keys.listKeys()).find((k) => k.kid === oldKid)!;
    const verifyUntil = T0 + MAX_TTL + 2 * KEY_RELOAD_SECONDS;
    expect(old).toMatchObject({ status: 'retired', retiredAt: T0, verifyUntil });

    s.clock.set(verifyUntil - 1);
    expect(displayStatus(old, s.clock.nowSeconds())).toBe('retired');
    expect(await verifiesWith(ring, oldToken)).toBe(true);

    s.clock.set(verifyUntil);
    expect(displayStatus(old, s.clock.nowSeconds())).toBe('expired');
    expect(await verifiesWith(ring, oldToken)).toBe(false);
    await ring.reload();
    expect(ring.jwks().keys.map((k) => k.kid)).toEqual([rotated.kid]);
  });

  it('rolls the rotation back when the work joined to its transaction fails', async () => {
    const s = await setup();
    const ring = await s.open();
    const before = await s.storage.keys.listKeys();
    await expect(
      rotateKeys({ storage: s.storage, sealKey: s.sealKey, clock: s.clock }, MAX_TTL, async () => {
        throw new Error('audit write failed');
      }),
    ).rejects.toThrow('audit write failed');
    expect(await s.storage.keys.listKeys()).toEqual(before);
    await ring.reload();
    expect(ring.signingKey().kid).toBe(before.find((k) => k.use === 'sig')?.kid);
  });

  it('another instance picks up a rotation on reload, and verifies a new kid at once', async () => {
    const s = await setup();
    const a = await s.open();
    const b = await s.open();
    await rotateKeys({ storage: s.storage, sealKey: s.sealKey, clock: s.clock }, MAX_TTL);
    await a.reload();
    const fresh = await signWith(a, T0);
    // b has not reloaded yet: it still signs with the old key, but an unknown kid makes it look again.
    expect(b.signingKey().kid).not.toBe(a.signingKey().kid);
    s.clock.advance(1);
    expect(await verifiesWith(b, fresh)).toBe(true);
    expect(b.signingKey().kid).toBe(a.signingKey().kid);
  });

  it('reloads for an unknown kid at most once a second', async () => {
    const s = await setup();
    const ring = await s.open();
    let reads = 0;
    const listKeys = s.storage.keys.listKeys.bind(s.storage.keys);
    const counting = { ...s.storage.keys, listKeys: async () => (reads++, listKeys()) };
    const watched = await KeyRing.open({ keys: counting, sealKey: s.sealKey, clock: s.clock });
    reads = 0;
    s.clock.advance(1);
    expect(await watched.verificationKey('nope')).toBeUndefined();
    expect(await watched.verificationKey('nope')).toBeUndefined();
    expect(reads).toBe(1);
    s.clock.advance(1);
    await watched.verificationKey('nope');
    expect(reads).toBe(2);
    expect(await watched.verificationKey(ring.signingKey().kid)).toBeDefined();
  });
});
