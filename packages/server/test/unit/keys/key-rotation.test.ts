import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/core/clock.js';
import { KeyRing } from '../../../src/core/keys/key-ring.js';
import { activateKeysNow, KeyOperationRefused, revokeKey, rotateKeys, type RotationPolicy } from '../../../src/core/keys/key-rotation.js';
import { deriveKey } from '../../../src/core/keys/master-key.js';
import { displayStatus, type SigningKeyRecord } from '../../../src/core/keys/signing-key.js';
import { KEY_RETIREMENT_MARGIN_SECONDS } from '../../../src/core/lifetimes.js';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../../src/core/storage/storage.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';

const T0 = 1_800_000_000;
const POLICY: RotationPolicy = { maxTokenTtlSeconds: 3600, publicationDelaySeconds: 330 };
const opened: Storage[] = [];

afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
});

async function setup(storage?: Storage) {
  const db = storage ?? openStorage({ engine: 'sqlite', path: ':memory:' });
  if (!storage) opened.push(db);
  await db.migrate();
  const clock = fixedClock(T0);
  const sealKey = deriveKey(randomBytes(32), 'key-sealing');
  const deps = { storage: db, sealKey, clock };
  const ring = await KeyRing.open({ keys: db.keys, sealKey, clock });
  return {
    storage: db,
    clock,
    deps,
    ring,
    current: { sig: ring.signingKey().kid, enc: ring.encryptionKey().kid },
    async statuses(): Promise<Record<string, string>> {
      const keys = await db.keys.listKeys();
      return Object.fromEntries(keys.map((k) => [k.kid, displayStatus(k, keys, clock.nowSeconds())]));
    },
    async find(kid: string): Promise<SigningKeyRecord | undefined> {
      return (await db.keys.listKeys()).find((k) => k.kid === kid);
    },
  };
}

function kidOf(result: { keys: readonly SigningKeyRecord[] }, use: 'sig' | 'enc'): string {
  return result.keys.find((k) => k.use === use)?.kid ?? '';
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KeyOperationRefused);
  const message = (error as Error).message;
  expect(message).not.toContain('\n');
  return message;
}

describe('rotateKeys', () => {
  it('on an empty database makes keys that sign at once: there is nothing to replace', async () => {
    const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
    opened.push(storage);
    await storage.migrate();
    const result = await rotateKeys({ storage, sealKey: deriveKey(randomBytes(32), 'key-sealing'), clock: fixedClock(T0) }, POLICY);
    expect(result).toMatchObject({ activatesAt: T0, created: true });
    expect(result.keys.map((k) => [k.use, k.generation])).toEqual([
      ['sig', 1],
      ['enc', 1],
    ]);
  });

  it('adds the next generation of both keys, next until the publication delay has passed; the current ones retire then', async () => {
    const s = await setup();
    const result = await rotateKeys(s.deps, POLICY);
    expect(result.activatesAt).toBe(T0 + 330);
    expect(result.keys.map((k) => [k.use, k.generation, k.activatesAt])).toEqual([
      ['sig', 2, T0 + 330],
      ['enc', 2, T0 + 330],
    ]);
    const verifyUntil = T0 + 330 + 3600 + KEY_RETIREMENT_MARGIN_SECONDS;
    for (const kid of [s.current.sig, s.current.enc]) {
      expect(await s.find(kid)).toMatchObject({ status: 'retired', retiredAt: T0 + 330, verifyUntil });
    }
    expect(await s.statuses()).toEqual({
      [s.current.sig]: 'active',
      [s.current.enc]: 'active',
      [kidOf(result, 'sig')]: 'next',
      [kidOf(result, 'enc')]: 'next',
    });
    s.clock.set(T0 + 330);
    expect(await s.statuses()).toEqual({
      [s.current.sig]: 'retired',
      [s.current.enc]: 'retired',
      [kidOf(result, 'sig')]: 'active',
      [kidOf(result, 'enc')]: 'active',
    });
  });

  it('is refused while a rotation is pending, naming the pending key and its activation, and changes nothing', async () => {
    const s = await setup();
    const first = await rotateKeys(s.deps, POLICY);
    const before = await s.storage.keys.listKeys();
    s.clock.advance(100);
    const message = await refusal(rotateKeys(s.deps, POLICY));
    expect(message).toBe(
      `a rotation is pending: key ${kidOf(first, 'sig')} becomes the signing key at 2027-01-15T08:05:30Z (in 230 s); run keys rotate --now to activate it at once`,
    );
    expect(await s.storage.keys.listKeys()).toEqual(before);
    // Once it has activated, the next rotation may start.
    s.clock.set(first.activatesAt);
    await expect(rotateKeys(s.deps, POLICY)).resolves.toMatchObject({ activatesAt: first.activatesAt + 330 });
  });

  it('rolls back when the work joined to its transaction fails', async () => {
    const s = await setup();
    const before = await s.storage.keys.listKeys();
    await expect(
      rotateKeys(s.deps, POLICY, async () => {
        throw new Error('audit write failed');
      }),
    ).rejects.toThrow('audit write failed');
    expect(await s.storage.keys.listKeys()).toEqual(before);
  });

  it('of two rotations at the same moment one is made, the other refused: never two next keys', async () => {
    const s = await setup();
    const outcomes = await Promise.allSettled([rotateKeys(s.deps, POLICY), rotateKeys(s.deps, POLICY)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(KeyOperationRefused);
    expect(Object.values(await s.statuses()).filter((status) => status === 'next')).toHaveLength(2);
  });

  noticePostgresSkipped('key rotation on PostgreSQL');
  describe.skipIf(!postgresAdminUrl)('on PostgreSQL', () => {
    const postgres = usePostgresStorage();

    it('of rotations from several connections at the same moment one is made, the others refused', async () => {
      const s = await setup(postgres.open());
      const others = [postgres.open(), postgres.open(), postgres.open()];
      const outcomes = await Promise.allSettled([s.storage, ...others].map((storage) => rotateKeys({ ...s.deps, storage }, POLICY)));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      for (const outcome of outcomes.filter((o) => o.status === 'rejected')) {
        const reason = (outcome as PromiseRejectedResult).reason as Error;
        expect(reason).toBeInstanceOf(KeyOperationRefused);
        expect(reason.message).toMatch(/^(a rotation is pending: key \S+ becomes|another key rotation was made at the same moment)/);
      }
      const keys = await s.storage.keys.listKeys();
      expect(keys.map((k) => [k.use, k.generation]).sort()).toEqual([
        ['enc', 1],
        ['enc', 2],
        ['sig', 1],
        ['sig', 2],
      ]);
    });
  });
});

describe('activateKeysNow', () => {
  it('activates the pending keys at once; the keys they replace keep their window', async () => {
    const s = await setup();
    const rotated = await rotateKeys(s.deps, POLICY);
    const replaced = await s.find(s.current.sig);
    s.clock.advance(10);
    const result = await activateKeysNow(s.deps, POLICY);
    expect(result).toMatchObject({ activatesAt: T0 + 10, created: false });
    expect(result.keys.map((k) => k.kid)).toEqual(rotated.keys.map((k) => k.kid));
    expect(await s.find(kidOf(rotated, 'sig'))).toMatchObject({ activatesAt: T0 + 10 });
    expect(await s.find(s.current.sig)).toEqual(replaced);
    await s.ring.reload();
    expect(s.ring.signingKey().kid).toBe(kidOf(rotated, 'sig'));
    expect(s.ring.encryptionKey().kid).toBe(kidOf(rotated, 'enc'));
  });

  it('with nothing pending makes new keys that sign at once; the current ones verify until their tokens expired', async () => {
    const s = await setup();
    s.clock.advance(10);
    const result = await activateKeysNow(s.deps, POLICY);
    expect(result).toMatchObject({ activatesAt: T0 + 10, created: true });
    expect(await s.find(s.current.sig)).toMatchObject({ verifyUntil: T0 + 10 + 3600 + KEY_RETIREMENT_MARGIN_SECONDS });
    expect(await s.statuses()).toMatchObject({ [kidOf(result, 'sig')]: 'active', [s.current.sig]: 'retired' });
  });
});

describe('revokeKey', () => {
  it('revokes a retired key; a second revocation changes nothing', async () => {
    const s = await setup();
    const rotated = await rotateKeys(s.deps, POLICY);
    s.clock.set(rotated.activatesAt);
    const result = await revokeKey(s.deps, s.current.sig);
    expect(result).toMatchObject({ cancelledRotation: false, alreadyRevoked: false });
    expect(result.revoked.map((k) => k.kid)).toEqual([s.current.sig]);
    expect((await s.statuses())[s.current.sig]).toBe('revoked');
    const before = await s.storage.keys.listKeys();
    await expect(revokeKey(s.deps, s.current.sig)).resolves.toEqual({ revoked: [], cancelledRotation: false, alreadyRevoked: true });
    expect(await s.storage.keys.listKeys()).toEqual(before);
  });

  it.each(['sig', 'enc'] as const)('refuses the current %s key', async (use) => {
    const s = await setup();
    const kid = s.current[use];
    const role = use === 'sig' ? 'signing' : 'encryption';
    expect(await refusal(revokeKey(s.deps, kid))).toBe(`key ${kid} is the current ${role} key; run keys rotate --now first, then revoke it`);
    expect((await s.find(kid))?.status).toBe('active');
  });

  it('refuses an unknown kid', async () => {
    const s = await setup();
    expect(await refusal(revokeKey(s.deps, 'nope'))).toBe('no key has kid "nope"; keys list shows every key');
  });

  it('revoking a pending key cancels its rotation: both new keys revoked, the current ones sign on with no end', async () => {
    const s = await setup();
    const rotated = await rotateKeys(s.deps, POLICY);
    const result = await revokeKey(s.deps, kidOf(rotated, 'enc'));
    expect(result).toMatchObject({ cancelledRotation: true, alreadyRevoked: false });
    expect(result.revoked.map((k) => k.kid)).toEqual([kidOf(rotated, 'enc'), kidOf(rotated, 'sig')]);
    for (const use of ['sig', 'enc'] as const) {
      expect(await s.find(s.current[use])).toMatchObject({ status: 'active', retiredAt: null, verifyUntil: null });
    }
    s.clock.set(rotated.activatesAt + 86_400);
    expect(await s.statuses()).toEqual({
      [s.current.sig]: 'active',
      [s.current.enc]: 'active',
      [kidOf(rotated, 'sig')]: 'revoked',
      [kidOf(rotated, 'enc')]: 'revoked',
    });
    // A new rotation takes the generation after the cancelled one.
    const again = await rotateKeys(s.deps, POLICY);
    expect(again.keys.map((k) => k.generation)).toEqual([3, 3]);
  });
});
