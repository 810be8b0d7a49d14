import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import pLimit from 'p-limit';
import { TemporarilyUnavailable } from '../errors.js';
import { PIN_CHECK_QUEUE_LIMIT } from '../lifetimes.js';
import { ScryptRefused, startPinHashWorkers, type PinHashWorkers, type PinScrypt, type ScryptParams } from './pin-hash-workers.js';

/** A customer's PIN: 4 to 6 digits. */
export const PIN_PATTERN = /^\d{4,6}$/;

/** Whether `value` has the shape of a PIN. */
export function isValidPin(value: string): boolean {
  return PIN_PATTERN.test(value);
}

/** scrypt's cost for every PIN Connect hashes: N=2^15, r=8, p=1 (about 100 ms, 32 MiB) — a PIN is short, so the hash must be slow. */
export const PIN_HASH_COST: ScryptParams = { N: 32_768, r: 8, p: 1 };
const KEY_LENGTH = 32;

/** scrypt on libuv's thread pool (Node's asynchronous `crypto.scrypt`); whatever scrypt refuses rejects as `ScryptRefused`. */
export const scryptOnThreadPool: PinScrypt = (secret, salt, keyLength, options) =>
  new Promise((resolve, reject) => {
    const refused = (error: unknown) => {
      const code = (error as { code?: unknown }).code;
      reject(new ScryptRefused(typeof code === 'string' ? code : 'unknown', error instanceof Error ? error.message : String(error)));
    };
    try {
      scrypt(secret, salt, keyLength, options, (error, key) => (error ? refused(error) : resolve(key)));
    } catch (error) {
      refused(error);
    }
  });

/** The options of one scrypt with `params`: room for its 128·N·r bytes, twice over. */
function scryptOptions(params: ScryptParams): ScryptParams & { maxmem: number } {
  return { N: params.N, r: params.r, p: params.p, maxmem: 128 * params.N * params.r * 2 };
}

/**
 * Hashes a PIN with scrypt and a fresh 16-byte salt, on `run` (by default
 * libuv's thread pool; the server's PIN checks use worker threads of their
 * own: {@link createPinCheckQueue}). Format: `scrypt$N$r$p$salt$hash`
 * (base64url): the hash names its cost, which {@link verifyPin} uses.
 * Connect always hashes at {@link PIN_HASH_COST}; only tests that set up
 * customers pass a lower `cost`.
 */
export async function hashPin(pin: string, run: PinScrypt = scryptOnThreadPool, cost: ScryptParams = PIN_HASH_COST): Promise<string> {
  const salt = randomBytes(16);
  const hash = await run(pin, salt, KEY_LENGTH, scryptOptions(cost));
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/**
 * Whether `pin` matches `stored` (from {@link hashPin}), compared in
 * constant time, with scrypt on `run` (as {@link hashPin}). Rejects when
 * scrypt could not run at all (`TemporarilyUnavailable`): that is no
 * answer about the PIN.
 */
export async function verifyPin(pin: string, stored: string, run: PinScrypt = scryptOnThreadPool): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  let actual: Buffer;
  try {
    actual = await run(pin, Buffer.from(salt, 'base64url'), KEY_LENGTH, scryptOptions({ N: Number(n), r: Number(r), p: Number(p) }));
  } catch (error) {
    // Parameters scrypt refuses (a damaged stored value) match no PIN;
    // a hash that could not run at all is no answer (503, never "wrong PIN").
    if (error instanceof ScryptRefused) return false;
    throw error;
  }
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Hashes and checks PINs with one scrypt: what a place in the {@link PinCheckQueue} runs its work with. */
export interface PinHashing {
  /** {@link hashPin} */
  hash(pin: string): Promise<string>;
  /** {@link verifyPin} */
  verify(pin: string, stored: string): Promise<boolean>;
}

/**
 * The bounded queue PIN hashing runs through (scrypt is slow on purpose):
 * `run` starts `work` when a slot is free and rejects at once with
 * `TemporarilyUnavailable` when the queue is full, instead of queueing
 * without limit.
 */
export interface PinCheckQueue {
  /** Takes a place and runs `work` in it: `reserve().run(work)`. */
  run<T>(work: (pins: PinHashing) => Promise<T>): Promise<T>;
  /**
   * Takes a place in the queue now, or throws `TemporarilyUnavailable` at
   * once when it is full. The place is held until it runs its work (which
   * then waits for its turn) or is released: so a PIN check can be counted
   * in the database only once it is sure to run.
   */
  reserve(): PinCheckPlace;
  /** Ends the queue's PIN hash workers (the server's shutdown); work run later is refused with 503. */
  close(): Promise<void>;
}

/** A place in the {@link PinCheckQueue}, taken by `reserve()`. */
export interface PinCheckPlace {
  /** Runs `work` in its turn, with the queue's PIN hashing; the place is then used. */
  run<T>(work: (pins: PinHashing) => Promise<T>): Promise<T>;
  /** Gives the place back unused (calling it after `run`, or twice, does nothing). */
  release(): void;
}

/** How many PIN checks may run and wait. */
export interface PinCheckQueueOptions {
  /**
   * Checks that run at once, each on a worker thread of its own; default
   * half the CPUs the process may use (at least 1), so that a flood of PIN
   * checks leaves CPU time for everything else.
   */
  readonly concurrency?: number;
  /** Checks that may wait for a turn; default {@link PIN_CHECK_QUEUE_LIMIT}. Past it, new ones are refused. */
  readonly queueLimit?: number;
  /**
   * Where the hashes run; default `concurrency` worker threads of the
   * queue's own (`pin-hash-workers.ts`), started when first needed and
   * ended by `close()`.
   */
  readonly scrypt?: PinScrypt;
  /** The cost new PINs are hashed at; default {@link PIN_HASH_COST}. Only tests set servers up with a lower one. */
  readonly hashCost?: ScryptParams;
}

/** Default number of PIN checks that run at once: half the CPUs, at least 1. */
export function defaultPinHashConcurrency(): number {
  return Math.max(1, Math.floor(availableParallelism() / 2));
}

/**
 * A {@link PinCheckQueue} that runs at most `concurrency` PIN checks (each an
 * scrypt hash) at once and lets at most `queueLimit` more wait
 * (docs/journey.md, "PIN guessing"). Each hash holds a thread and 32 MiB
 * for about 100 ms, so a flood of PIN checks could otherwise take every
 * CPU (and the memory) from the rest of the server; the hashes run on
 * worker threads of their own, never on the libuv thread pool where token
 * signatures wait (docs/operator-guide.md, "Threads"). When the queue is
 * full a check is refused at once with `TemporarilyUnavailable` (503)
 * rather than queued without bound; a refused check takes no place in the
 * queue and never runs.
 *
 * @example
 * const queue = createPinCheckQueue();
 * const right = await queue.run((pins) => pins.verify(pin, customer.pinHash));
 */
export function createPinCheckQueue(options: PinCheckQueueOptions = {}): PinCheckQueue {
  const concurrency = options.concurrency ?? defaultPinHashConcurrency();
  const queueLimit = options.queueLimit ?? PIN_CHECK_QUEUE_LIMIT;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`PIN check concurrency must be a whole number from 1, not ${concurrency}`);
  if (!Number.isInteger(queueLimit) || queueLimit < 0) throw new RangeError(`PIN check queue limit must be a whole number from 0, not ${queueLimit}`);
  let workers: PinHashWorkers | undefined;
  const scrypt = options.scrypt ?? (workers = startPinHashWorkers(concurrency)).scrypt;
  const pins: PinHashing = { hash: (pin) => hashPin(pin, scrypt, options.hashCost), verify: (pin, stored) => verifyPin(pin, stored, scrypt) };
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
      run<T>(work: (pins: PinHashing) => Promise<T>): Promise<T> {
        if (!held) return Promise.reject(new Error('this PIN-check place was used or released'));
        giveUp();
        // p-limit counts it as pending in the same turn, so the place never looks free meanwhile.
        return limit(() => work(pins));
      },
      release: giveUp,
    };
  };
  return {
    reserve,
    run<T>(work: (pins: PinHashing) => Promise<T>): Promise<T> {
      try {
        return reserve().run(work);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    close: async () => {
      await workers?.close();
    },
  };
}
