import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { availableParallelism } from 'node:os';
import pLimit from 'p-limit';
import { TemporarilyUnavailable } from '../errors.js';
import { PIN_CHECK_QUEUE_LIMIT } from '../lifetimes.js';

/** A customer's PIN: 4 to 6 digits. */
export const PIN_PATTERN = /^\d{4,6}$/;

/** Whether `value` has the shape of a PIN. */
export function isValidPin(value: string): boolean {
  return PIN_PATTERN.test(value);
}

// scrypt cost: N=2^15, r=8, p=1 (about 100 ms, 32 MiB) — a PIN is short, so the hash must be slow.
const PARAMS = { N: 32_768, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function scryptAsync(secret: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 128 * params.N * params.r * 2 };
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/**
 * Hashes a PIN with scrypt and a fresh 16-byte salt. Runs on the thread
 * pool, so it does not block other requests. Format:
 * `scrypt$N$r$p$salt$hash` (base64url).
 */
export async function hashPin(pin: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(pin, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Whether `pin` matches `stored` (from {@link hashPin}), compared in constant time. */
export async function verifyPin(pin: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  let actual: Buffer;
  try {
    actual = await scryptAsync(pin, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  } catch {
    // Parameters scrypt refuses (a damaged stored value) match no PIN.
    return false;
  }
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * The bounded queue PIN hashing runs through (scrypt is slow on purpose):
 * `run` starts `work` when a slot is free and rejects at once with
 * `TemporarilyUnavailable` when the queue is full, instead of queueing
 * without limit.
 */
export interface PinCheckQueue {
  /** Takes a place and runs `work` in it: `reserve().run(work)`. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Takes a place in the queue now, or throws `TemporarilyUnavailable` at
   * once when it is full. The place is held until it runs its work (which
   * then waits for its turn) or is released: so a PIN check can be counted
   * in the database only once it is sure to run.
   */
  reserve(): PinCheckPlace;
}

/** A place in the {@link PinCheckQueue}, taken by `reserve()`. */
export interface PinCheckPlace {
  /** Runs `work` in its turn; the place is then used. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** Gives the place back unused (calling it after `run`, or twice, does nothing). */
  release(): void;
}

/** How many PIN checks may run and wait. */
export interface PinCheckQueueOptions {
  /**
   * Checks that run at once; default half the CPUs the process may use
   * (at least 1), so the thread pool keeps threads for token signing.
   */
  readonly concurrency?: number;
  /** Checks that may wait for a turn; default {@link PIN_CHECK_QUEUE_LIMIT}. Past it, new ones are refused. */
  readonly queueLimit?: number;
}

/** Default number of PIN checks that run at once: half the CPUs, at least 1. */
export function defaultPinHashConcurrency(): number {
  return Math.max(1, Math.floor(availableParallelism() / 2));
}

/**
 * A {@link PinCheckQueue} that runs at most `concurrency` PIN checks (each an
 * scrypt hash) at once and lets at most `queueLimit` more wait
 * (docs/journey.md, "PIN guessing"). Each hash
 * holds a thread-pool thread and 32 MiB for about 100 ms, so a flood of PIN
 * checks could otherwise take every thread (and the memory) from the rest
 * of the server. When the queue is full a check is refused at once with
 * `TemporarilyUnavailable` (503) rather than queued without bound; a refused
 * check takes no place in the queue and never runs.
 *
 * @example
 * const queue = createPinCheckQueue();
 * const right = await queue.run(() => verifyPin(pin, customer.pinHash));
 */
export function createPinCheckQueue(options: PinCheckQueueOptions = {}): PinCheckQueue {
  const concurrency = options.concurrency ?? defaultPinHashConcurrency();
  const queueLimit = options.queueLimit ?? PIN_CHECK_QUEUE_LIMIT;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`PIN check concurrency must be a whole number from 1, not ${concurrency}`);
  if (!Number.isInteger(queueLimit) || queueLimit < 0) throw new RangeError(`PIN check queue limit must be a whole number from 0, not ${queueLimit}`);
  const limit = pLimit(concurrency);
  // Places taken but not yet running or waiting in p-limit.
  let reserved = 0;
  const reserve = (): PinCheckPlace => {
    // The counts change synchronously, so no two calls can both take the last place.
    if (limit.activeCount + limit.pendingCount + reserved >= concurrency + queueLimit) {
      throw new TemporarilyUnavailable('too many PIN checks at once; retry shortly', {
        detail: `${limit.activeCount} PIN checks running, ${limit.pendingCount} waiting and ${reserved} about to`,
      });
    }
    reserved++;
    let held = true;
    const giveUp = () => {
      if (held) reserved--;
      held = false;
    };
    return {
      run<T>(work: () => Promise<T>): Promise<T> {
        if (!held) return Promise.reject(new Error('this PIN-check place was used or released'));
        giveUp();
        // p-limit counts it as pending in the same turn, so the place never looks free meanwhile.
        return limit(work);
      },
      release: giveUp,
    };
  };
  return {
    reserve,
    run<T>(work: () => Promise<T>): Promise<T> {
      try {
        return reserve().run(work);
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}
