import { availableParallelism } from 'node:os';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPinCheckQueue, hashPin, isValidPin, PIN_HASH_COST, scryptOnThreadPool, verifyPin, type PinCheckQueue } from '../../../src/core/customers/pin.js';
import { TemporarilyUnavailable } from '../../../src/core/errors.js';
import { testPinCheckQueue } from '../../helpers/pin-checks.js';
import { TEST_PIN_HASH_COST } from '../../helpers/pin-hash.js';

const FORMAT = /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/;

/** Replaces one `$`-separated part of a stored hash. */
function withPart(stored: string, index: number, value: string): string {
  const parts = stored.split('$');
  parts[index] = value;
  return parts.join('$');
}

/** Flips the first character of a base64url string to another valid one. */
function flipFirst(value: string): string {
  return (value.startsWith('A') ? 'B' : 'A') + value.slice(1);
}

describe('customer PIN hashing', () => {
  it('accepts 4 to 6 digits only', () => {
    for (const pin of ['0000', '1234', '12345', '123456']) expect(isValidPin(pin), pin).toBe(true);
    for (const pin of ['', '123', '1234567', '12a4', ' 1234', '1234 ', '١٢٣٤', '12.4', '+1234']) expect(isValidPin(pin), pin).toBe(false);
  });

  it('hashes as scrypt$N$r$p$salt$hash and never contains the PIN', async () => {
    const stored = await hashPin('482915');
    expect(stored).toMatch(FORMAT);
    expect(stored).not.toContain('482915');
  });

  it('names its cost in the hash, and a hash is verified at the cost it names (the lower one tests set customers up with)', async () => {
    const stored = await hashPin('4829', scryptOnThreadPool, TEST_PIN_HASH_COST);
    expect(stored).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPin('4829', stored)).toBe(true);
    expect(await verifyPin('4828', stored)).toBe(false);
    // The same salt at Connect's own cost is another hash: the cost is part of what is compared.
    expect(await verifyPin('4829', withPart(stored, 1, String(PIN_HASH_COST.N)))).toBe(false);
  });

  it("the server's queue hashes the PINs customers set at Connect's own cost, unless it is given another", async () => {
    const own = testPinCheckQueue();
    expect(await own.run((pins) => pins.hash('4829'))).toMatch(FORMAT);
    const stored = await testPinCheckQueue({ hashCost: TEST_PIN_HASH_COST }).run((pins) => pins.hash('4829'));
    expect(stored.split('$').slice(1, 4)).toEqual(['1024', '8', '1']);
    expect(await own.run((pins) => pins.verify('4829', stored))).toBe(true);
  });

  it('salts every hash: two hashes of one PIN differ in salt and hash, and both verify', async () => {
    const [a, b] = await Promise.all([hashPin('4829'), hashPin('4829')]);
    expect(a).not.toBe(b);
    expect(a.split('$')[4]).not.toBe(b.split('$')[4]);
    expect(a.split('$')[5]).not.toBe(b.split('$')[5]);
    expect(await verifyPin('4829', a)).toBe(true);
    expect(await verifyPin('4829', b)).toBe(true);
  });

  it('verifies the right PIN and refuses a wrong one', async () => {
    const stored = await hashPin('0042');
    expect(await verifyPin('0042', stored)).toBe(true);
    for (const wrong of ['0043', '042', '00420', '42', '', '0042 ']) expect(await verifyPin(wrong, stored), wrong).toBe(false);
  });

  it('refuses the right PIN against a tampered or malformed hash, without throwing', async () => {
    const stored = await hashPin('7391');
    const tampered = [
      withPart(stored, 5, flipFirst(stored.split('$')[5] ?? '')),
      withPart(stored, 4, flipFirst(stored.split('$')[4] ?? '')),
      withPart(stored, 0, 'bcrypt'),
      withPart(stored, 1, '16384'),
      withPart(stored, 1, 'x'),
      withPart(stored, 1, '3'),
      withPart(stored, 2, '0'),
      withPart(stored, 5, ''),
      withPart(stored, 5, (stored.split('$')[5] ?? '').slice(0, 20)),
      stored.split('$').slice(0, 5).join('$'),
      '',
      'scrypt',
    ];
    for (const value of tampered) await expect(verifyPin('7391', value), value).resolves.toBe(false);
  });
});

/** Hashes and checks PINs through `queue`, the way the server's PIN checks do. */
interface PinHasher {
  hash(pin: string): Promise<string>;
  verify(pin: string, stored: string): Promise<boolean>;
}

function hasherOver(queue: PinCheckQueue, inner: PinHasher): PinHasher {
  return { hash: (pin) => queue.run(() => inner.hash(pin)), verify: (pin, stored) => queue.run(() => inner.verify(pin, stored)) };
}

/** Real scrypt underneath, counting the hashes that have started and run at once. */
function watchedScrypt() {
  const watch = { started: 0, running: 0, mostAtOnce: 0 };
  const around = async <T>(work: () => Promise<T>): Promise<T> => {
    watch.started++;
    watch.running++;
    watch.mostAtOnce = Math.max(watch.mostAtOnce, watch.running);
    try {
      return await work();
    } finally {
      watch.running--;
    }
  };
  const inner: PinHasher = {
    hash: (pin) => around(() => hashPin(pin)),
    verify: (pin, stored) => around(() => verifyPin(pin, stored)),
  };
  return { inner, watch };
}

/** Whether `promise` has settled by the time the calls queued before this one have run. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('bounded PIN hashing', () => {
  let stored: string;
  beforeAll(async () => {
    stored = await hashPin('2468');
  });

  it('runs at most `concurrency` hashes at once and gives every caller its own right answer', async () => {
    const { inner, watch } = watchedScrypt();
    const pins = hasherOver(createPinCheckQueue({ concurrency: 2, queueLimit: 10 }), inner);
    const guesses = ['2468', '0000', '2468', '1357', '2468', '2469', '9999', '2468'];
    const [answers, newHash] = await Promise.all([Promise.all(guesses.map((pin) => pins.verify(pin, stored))), pins.hash('8642')]);
    expect(answers).toEqual(guesses.map((pin) => pin === '2468'));
    expect(watch.started).toBe(9);
    expect(watch.mostAtOnce).toBe(2);
    expect(await verifyPin('8642', newHash)).toBe(true);
  });

  it('refuses a hash at once with 503 temporarily_unavailable when the queue is full, and never runs it', async () => {
    const { inner, watch } = watchedScrypt();
    const pins = hasherOver(createPinCheckQueue({ concurrency: 1, queueLimit: 2 }), inner);
    const admitted = [pins.verify('2468', stored), pins.verify('1111', stored), pins.hash('1234')];
    const refused = pins.verify('2468', stored);
    // Refused before the first hash (about 100 ms of scrypt) has finished.
    expect(await settledYet(refused)).toBe(true);
    expect(await settledYet(admitted[0]!)).toBe(false);
    const error = await refused.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemporarilyUnavailable);
    expect(error).toMatchObject({ status: 503, error: 'temporarily_unavailable' });
    await expect(pins.hash('1234')).rejects.toBeInstanceOf(TemporarilyUnavailable);

    const [right, wrong, hashed] = await Promise.all(admitted);
    expect([right, wrong]).toEqual([true, false]);
    expect(await verifyPin('1234', hashed as string)).toBe(true);
    expect(watch.started).toBe(3);
    expect(watch.mostAtOnce).toBe(1);
  });

  it('keeps no place for refused or failed hashes: once the queue drains its whole capacity is back', async () => {
    const { inner, watch } = watchedScrypt();
    const failing: PinHasher = { hash: inner.hash, verify: (pin, value) => (pin === 'fail' ? Promise.reject(new Error('scrypt failed')) : inner.verify(pin, value)) };
    const pins = hasherOver(createPinCheckQueue({ concurrency: 1, queueLimit: 1 }), failing);

    const first = [pins.verify('2468', stored), pins.verify('fail', stored)];
    const refusals = await Promise.allSettled(Array.from({ length: 10 }, () => pins.verify('2468', stored)));
    expect(refusals.every((r) => r.status === 'rejected' && r.reason instanceof TemporarilyUnavailable)).toBe(true);
    const [right, failed] = await Promise.allSettled(first);
    expect(right).toEqual({ status: 'fulfilled', value: true });
    expect(failed).toMatchObject({ status: 'rejected', reason: { message: 'scrypt failed' } });

    // Both places are free again: two hashes are admitted, a third is not.
    const second = [pins.verify('2468', stored), pins.verify('0000', stored)];
    await expect(pins.verify('2468', stored)).rejects.toBeInstanceOf(TemporarilyUnavailable);
    expect(await Promise.all(second)).toEqual([true, false]);
    expect(watch.started).toBe(3);
  });

  it('by default runs half the CPUs at once (at least 1) and lets 32 more wait', async () => {
    const concurrency = Math.max(1, Math.floor(availableParallelism() / 2));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let running = 0;
    let mostAtOnce = 0;
    const held: PinHasher = {
      hash: async () => '',
      async verify() {
        mostAtOnce = Math.max(mostAtOnce, ++running);
        await gate;
        running--;
        return true;
      },
    };
    const pins = hasherOver(createPinCheckQueue(), held);
    const admitted = Array.from({ length: concurrency + 32 }, () => pins.verify('2468', stored));
    await expect(pins.verify('2468', stored)).rejects.toBeInstanceOf(TemporarilyUnavailable);
    release();
    expect(await Promise.all(admitted)).toEqual(admitted.map(() => true));
    expect(mostAtOnce).toBe(concurrency);
  });

  it('hashes and verifies with real scrypt by default, on worker threads of its own', async () => {
    const queue = testPinCheckQueue();
    const hashed = await queue.run((pins) => pins.hash('5050'));
    expect(hashed).toMatch(FORMAT);
    expect(await verifyPin('5050', hashed)).toBe(true);
    expect(await queue.run((pins) => pins.verify('5050', hashed))).toBe(true);
    expect(await queue.run((pins) => pins.verify('5051', hashed))).toBe(false);
    expect(await queue.run((pins) => pins.verify('5050', stored))).toBe(false);
    expect(await queue.run((pins) => pins.verify('2468', stored))).toBe(true);
  });

  it('holds a reserved place until it runs or is released: a reserved place is never handed to another check', async () => {
    const queue = createPinCheckQueue({ concurrency: 1, queueLimit: 1 });
    const first = queue.reserve();
    const second = queue.reserve();
    expect(() => queue.reserve()).toThrow(TemporarilyUnavailable);
    await expect(queue.run(async () => 'refused')).rejects.toBeInstanceOf(TemporarilyUnavailable);
    second.release();
    second.release();
    const third = queue.reserve();
    expect(() => queue.reserve()).toThrow(TemporarilyUnavailable);
    expect(await Promise.all([first.run(async () => 1), third.run(async () => 3)])).toEqual([1, 3]);
    // Used places are free again; a used or released place runs nothing more.
    await expect(first.run(async () => 'again')).rejects.toThrow(/used or released/);
    await expect(second.run(async () => 'again')).rejects.toThrow(/used or released/);
    expect(await queue.run(async () => 'free')).toBe('free');
  });

  it('refuses a concurrency below 1 or a negative queue limit', () => {
    for (const options of [{ concurrency: 0 }, { concurrency: 1.5 }, { queueLimit: -1 }, { queueLimit: Number.NaN }]) {
      expect(() => createPinCheckQueue(options), JSON.stringify(options)).toThrow(RangeError);
    }
  });
});
