import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ClientSecretHasher } from '../../../src/core/clients/client-secret.js';
import { createDpopNonces } from '../../../src/core/dpop/dpop-nonce.js';
import { fixedClock } from '../../../src/core/clock.js';
import { knownDeviceOf, proveKnownDevice } from '../../../src/core/journey/known-device.js';
import { deriveKey, masterKeyFingerprint, seal } from '../../../src/core/keys/master-key.js';
import type { MasterKeyRecord, MasterKeyState } from '../../../src/core/keys/master-key-store.js';
import { checkConfiguredKeys, MasterKeyMismatch, MasterKeys, unsealAccepted } from '../../../src/core/keys/master-keys.js';
import { OtpHasher } from '../../../src/core/otp/otp-hasher.js';

const OLD = randomBytes(32);
const NEW = randomBytes(32);
const T = 1_800_000_000;

function record(key: Buffer, state: MasterKeyState, sealedCarried: string | null = null): MasterKeyRecord {
  return { fingerprint: masterKeyFingerprint(key), state, recordedAt: T, changedAt: T, sealedCarried };
}

/** The database before the rotation, after it, and after the retirement; `carried` is the new key's record of the carried sub-keys. */
function stages(carried: string) {
  return {
    before: [record(OLD, 'writing'), record(NEW, 'next')],
    rotated: [record(OLD, 'previous'), record(NEW, 'writing', carried)],
    retired: [record(OLD, 'retired'), record(NEW, 'writing', carried)],
  };
}

describe('master key fingerprints', () => {
  it('are stable, distinct per key, and not the key or a sub-key', () => {
    expect(masterKeyFingerprint(OLD)).toBe(masterKeyFingerprint(Buffer.from(OLD)));
    expect(masterKeyFingerprint(OLD)).not.toBe(masterKeyFingerprint(NEW));
    expect(masterKeyFingerprint(OLD)).toMatch(/^[\w-]{22}$/);
    expect(Buffer.from(masterKeyFingerprint(OLD), 'base64url')).not.toEqual(OLD.subarray(0, 16));
    expect(Buffer.from(masterKeyFingerprint(OLD), 'base64url')).not.toEqual(Buffer.from(deriveKey(OLD, 'key-sealing')).subarray(0, 16));
    expect(() => masterKeyFingerprint(randomBytes(16))).toThrow(RangeError);
  });
});

describe('MasterKeys: the writing key and the accepted ones follow the database', () => {
  it('writes under the old key until the rotation, then under the new one; accepts both until the retirement', async () => {
    const keys = new MasterKeys(NEW, OLD);
    const sealing = keys.subKeys('key-sealing');
    const carried = await new MasterKeys(NEW, OLD).sealCarriedFor(keys.current);
    const { before, rotated, retired } = stages(carried);

    await keys.apply(before);
    expect(keys.writingFingerprint).toBe(masterKeyFingerprint(OLD));
    expect(sealing.writing).toEqual(deriveKey(OLD, 'key-sealing'));
    expect(sealing.accepted.map((k) => k.fingerprint)).toEqual([masterKeyFingerprint(OLD), masterKeyFingerprint(NEW)]);

    await keys.apply(rotated);
    expect(sealing.writing).toEqual(deriveKey(NEW, 'key-sealing'));
    expect(keys.acceptedFingerprints).toEqual([masterKeyFingerprint(NEW), masterKeyFingerprint(OLD)]);

    await keys.apply(retired);
    expect(keys.acceptedFingerprints).toEqual([masterKeyFingerprint(NEW)]);
  });

  it('tells its listeners when the writing or accepted keys change, and only then', async () => {
    const keys = new MasterKeys(NEW, OLD);
    const { before, rotated, retired } = stages(await keys.sealCarriedFor(keys.current));
    let changes = 0;
    keys.onChange(() => changes++);
    await keys.apply(before);
    expect(changes).toBe(0);
    await keys.apply(rotated);
    await keys.apply(rotated);
    expect(changes).toBe(1);
    await keys.apply(retired);
    expect(changes).toBe(2);
  });

  it('carries the rate-limit, CSRF and demo sub-keys of the first key across rotations, so no budget starts afresh', async () => {
    const onlyOld = new MasterKeys(OLD);
    await onlyOld.apply([record(OLD, 'writing')]);
    const both = new MasterKeys(NEW, OLD);
    await both.apply([record(OLD, 'writing'), record(NEW, 'next')]);
    const carried = await both.sealCarriedFor(both.current);
    const third = randomBytes(32);

    const afterRotation = new MasterKeys(NEW, OLD);
    await afterRotation.apply(stages(carried).rotated);
    const onlyNew = new MasterKeys(NEW);
    await onlyNew.apply(stages(carried).retired);
    for (const purpose of ['rate-limit-keys', 'csrf', 'sandbox-demo'] as const) {
      expect(onlyOld.carried(purpose)).toEqual(deriveKey(OLD, purpose));
      expect(afterRotation.carried(purpose)).toEqual(deriveKey(OLD, purpose));
      expect(onlyNew.carried(purpose)).toEqual(deriveKey(OLD, purpose));
    }
    // A second rotation carries what the first carried, not what the new key derives.
    const carriedAgain = await onlyNew.sealCarriedFor({ key: third, fingerprint: masterKeyFingerprint(third) });
    const afterSecond = new MasterKeys(third, NEW);
    await afterSecond.apply([record(OLD, 'retired'), record(NEW, 'previous', carried), record(third, 'writing', carriedAgain)]);
    expect(afterSecond.carried('rate-limit-keys')).toEqual(deriveKey(OLD, 'rate-limit-keys'));
  });

  it('an instance given only the old key keeps its own key when the database has moved on', async () => {
    const keys = new MasterKeys(OLD);
    const { rotated } = stages(await new MasterKeys(NEW, OLD).sealCarriedFor(new MasterKeys(NEW).current));
    await keys.apply(rotated);
    expect(keys.writingFingerprint).toBe(masterKeyFingerprint(OLD));
  });
});

describe('checkConfiguredKeys: a start with keys the database does not know stops', () => {
  const fp = (key: Buffer) => masterKeyFingerprint(key);
  const other = randomBytes(32);
  const table: { description: string; records: MasterKeyRecord[]; current: Buffer; previous?: Buffer; refused?: RegExp }[] = [
    { description: 'an empty database takes any key', records: [], current: NEW },
    { description: 'the writing key alone', records: [record(OLD, 'writing')], current: OLD },
    { description: 'a new key beside the writing one', records: [record(OLD, 'writing')], current: NEW, previous: OLD },
    { description: 'the new key alone, once it writes', records: [record(OLD, 'previous'), record(NEW, 'writing')], current: NEW },
    {
      description: 'the previous key alone (a server rolled back after a rotation)',
      records: [record(OLD, 'previous'), record(NEW, 'writing')],
      current: OLD,
      refused: /^CONNECT_MASTER_KEY \([\w-]{22}\) was replaced by master-key rotate; this database writes under [\w-]{22}: configure that key$/,
    },
    {
      description: 'the next key alone, before the rotation',
      records: [record(OLD, 'writing'), record(NEW, 'next')],
      current: NEW,
      refused: /^CONNECT_MASTER_KEY \([\w-]{22}\) is not yet the writing master key/,
    },
    {
      description: 'two keys, neither of them the writing one',
      records: [record(OLD, 'previous'), record(NEW, 'writing')],
      current: other,
      previous: OLD,
      refused: /^neither CONNECT_MASTER_KEY \([\w-]{22}\) nor CONNECT_PREVIOUS_MASTER_KEY \([\w-]{22}\) is the master key this database writes under/,
    },
    { description: 'an unknown key alone', records: [record(OLD, 'writing')], current: NEW, refused: /^CONNECT_MASTER_KEY \([\w-]{22}\) is not a master key of this database/ },
    { description: 'a retired key', records: [record(OLD, 'retired'), record(NEW, 'writing')], current: OLD, refused: /^CONNECT_MASTER_KEY \([\w-]{22}\) was retired/ },
    { description: 'an unknown previous key', records: [record(OLD, 'writing')], current: NEW, previous: other, refused: /^CONNECT_PREVIOUS_MASTER_KEY \([\w-]{22}\) is not a master key/ },
  ];
  for (const { description, records, current, previous, refused } of table) {
    it(description, () => {
      const check = () => checkConfiguredKeys(records, fp(current), previous && fp(previous));
      if (refused) {
        expect(check).toThrow(MasterKeyMismatch);
        expect(check).toThrow(refused);
      } else {
        expect(check).not.toThrow();
      }
    });
  }
  it('never names a key, only its fingerprint', () => {
    try {
      checkConfiguredKeys([record(OLD, 'writing')], fp(NEW), undefined);
    } catch (error) {
      const message = (error as Error).message;
      for (const key of [OLD, NEW]) expect(message).not.toContain(key.toString('base64'));
      return;
    }
    throw new Error('not refused');
  });
});

describe('values made under either key, during the replacement', () => {
  async function replacement() {
    const keys = new MasterKeys(NEW, OLD);
    const { before, rotated, retired } = stages(await keys.sealCarriedFor(keys.current));
    await keys.apply(before);
    return { keys, rotate: () => keys.apply(rotated), retire: () => keys.apply(retired) };
  }

  it('sealed values: open under either until the old key is retired', async () => {
    const { keys, rotate, retire } = await replacement();
    const sealing = keys.subKeys('key-sealing');
    const underOld = await seal(sealing.writing, 'kid-1', 'private');
    await rotate();
    const underNew = await seal(sealing.writing, 'kid-2', 'private 2');
    expect(await unsealAccepted(sealing, 'kid-1', underOld)).toBe('private');
    expect(await unsealAccepted(sealing, 'kid-2', underNew)).toBe('private 2');
    await expect(unsealAccepted(sealing, 'kid-2', underOld)).rejects.toThrow();
    await retire();
    await expect(unsealAccepted(sealing, 'kid-1', underOld)).rejects.toThrow();
    expect(await unsealAccepted(sealing, 'kid-2', underNew)).toBe('private 2');
  });

  it('client secret hashes: bare under the first key (as earlier releases read them), named under later ones; current only under the writing key', async () => {
    const { keys, rotate, retire } = await replacement();
    const hasher = new ClientSecretHasher(keys.subKeys('client-secret-hmac'));
    const secret = 'csk_sandbox_secret';
    const underOld = hasher.hash(secret);
    // Under the database's first key: the bare HMAC, exactly what a release before master-key replacement makes and checks.
    expect(underOld).toBe(new ClientSecretHasher(deriveKey(OLD, 'client-secret-hmac')).hash(secret));
    expect(underOld).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(hasher.isCurrent(underOld)).toBe(true);
    await rotate();
    expect(hasher.isCurrent(underOld)).toBe(false);
    expect(hasher.verify(secret, underOld)).toBe(true);
    expect(hasher.verify('csk_sandbox_wrong', underOld)).toBe(false);
    const underNew = hasher.hash(secret);
    expect(underNew.startsWith(`${masterKeyFingerprint(NEW)}:`)).toBe(true);
    expect(hasher.isCurrent(underNew)).toBe(true);
    expect(hasher.verify(secret, underNew)).toBe(true);
    // Named under the new key but made under the old one: refused.
    expect(hasher.verify(secret, `${masterKeyFingerprint(NEW)}:${underOld}`)).toBe(false);
    // Bare (so: under the first key) but made under the new one: refused.
    expect(hasher.verify(secret, underNew.split(':')[1] as string)).toBe(false);
    await retire();
    expect(hasher.verify(secret, underOld)).toBe(false);
    expect(hasher.verify(secret, underNew)).toBe(true);
  });

  it('one-time PIN hashes: a challenge made before the switch verifies after it, not after the retirement', async () => {
    const { keys, rotate, retire } = await replacement();
    const hasher = new OtpHasher(keys.subKeys('otp-hmac'));
    const stored = hasher.hash('challenge-1', '123456');
    await rotate();
    expect(hasher.hash('challenge-1', '123456')).not.toBe(stored);
    expect(hasher.hashes('challenge-1', '123456')).toContain(stored);
    expect(hasher.verify('challenge-1', '123456', stored)).toBe(true);
    expect(hasher.verify('challenge-1', '654321', stored)).toBe(false);
    await retire();
    expect(hasher.hashes('challenge-1', '123456')).not.toContain(stored);
    expect(hasher.verify('challenge-1', '123456', stored)).toBe(false);
  });

  it('known-device proofs and DPoP nonces: made under the old key, accepted until the retirement', async () => {
    const { keys, rotate, retire } = await replacement();
    const clock = fixedClock(T);
    const customer = { profileId: '123456789012', credentialVersion: 1 };
    const cookie = proveKnownDevice(undefined, customer, T, keys.subKeys('known-device'));
    const nonces = createDpopNonces(keys.subKeys('dpop-nonce'), clock);
    const nonce = nonces.issue();
    await rotate();
    expect(nonces.issue()).not.toBe(nonce);
    expect(nonces.check(nonce)).toBe(true);
    expect(knownDeviceOf(cookie, customer, T + 1, keys.subKeys('known-device'))).toBeDefined();
    await retire();
    expect(nonces.check(nonce)).toBe(false);
    expect(nonces.check(nonces.issue())).toBe(true);
    expect(knownDeviceOf(cookie, customer, T + 1, keys.subKeys('known-device'))).toBeUndefined();
  });
});
