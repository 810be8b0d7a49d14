import { Worker } from 'node:worker_threads';
import { TemporarilyUnavailable } from '../errors.js';

/** scrypt's cost parameters: CPU and memory cost `N`, block size `r`, parallelism `p`. */
export interface ScryptParams {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/**
 * Runs scrypt somewhere: on libuv's thread pool (`scryptOnThreadPool` in
 * `pin.ts`, for a command that hashes one PIN) or on worker threads of
 * their own ({@link startPinHashWorkers}, for the server). Rejects with
 * {@link ScryptRefused} when scrypt refuses the parameters (a damaged
 * stored hash: it matches no PIN), and with `TemporarilyUnavailable` when
 * it could not run scrypt at all (that says nothing about the PIN).
 */
export type PinScrypt = (secret: string, salt: Buffer, keyLength: number, options: ScryptParams & { maxmem: number }) => Promise<Buffer>;

/**
 * What each worker runs: one scrypt at a time, synchronously on the
 * worker's own thread. A scrypt that refuses its input (a damaged stored
 * hash) answers with the error's code and message; anything else the
 * worker might do wrong ends the worker, which its owner sees.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
parentPort.on('message', ({ secret, salt, keyLength, options }) => {
  let key;
  try {
    key = scryptSync(secret, salt, keyLength, options);
  } catch (error) {
    parentPort.postMessage({ refused: { code: String(error && error.code), message: String(error && error.message) } });
    return;
  }
  parentPort.postMessage({ key });
});
`;

/** scrypt refused its input (its parameters, or the memory they need): as `PinScrypt` rejects when the hash cannot be computed. */
export class ScryptRefused extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'ScryptRefused';
    this.code = code;
  }
}

/** PIN hashing threads of their own: `scrypt` for `hashPin` and `verifyPin`, and `close`. */
export interface PinHashWorkers {
  /**
   * scrypt on one of the workers. Rejects with {@link ScryptRefused} when
   * scrypt refuses the parameters, and with `TemporarilyUnavailable` when
   * the worker ended before answering or the workers were closed.
   */
  readonly scrypt: PinScrypt;
  /** How many workers are running now (they start when first needed). */
  readonly running: number;
  /** Ends every worker; a scrypt still running or waiting is rejected. */
  close(): Promise<void>;
}

interface Task {
  readonly message: { secret: string; salt: Uint8Array; keyLength: number; options: ScryptParams & { maxmem: number } };
  readonly resolve: (key: Buffer) => void;
  readonly reject: (error: Error) => void;
}

/** One worker and the scrypt it runs, if any. */
interface Slot {
  readonly worker: Worker;
  task: Task | undefined;
  /** What ended the worker, if it failed. */
  failure: Error | undefined;
}

/**
 * Runs PIN hashes (scrypt, about 100 ms and 32 MiB each) on at most `size`
 * worker threads of their own, instead of on libuv's thread pool, where
 * token signatures and DNS lookups run (docs/operator-guide.md, "Threads").
 * A flood of PIN checks then takes CPU time from signatures, as any work
 * does, but never the threads they wait for. Workers start when first
 * needed and do not keep the process alive while idle; one that ends
 * unexpectedly fails only the hash it was running (503), and the next hash
 * starts a new one.
 *
 * @example
 * const workers = startPinHashWorkers(2);
 * const stored = await hashPin('4829', workers.scrypt);
 * await workers.close();
 */
export function startPinHashWorkers(size: number): PinHashWorkers {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`PIN hash workers must be a whole number from 1, not ${size}`);
  const slots = new Set<Slot>();
  const idle: Slot[] = [];
  const waiting: Task[] = [];
  let closed = false;

  const unavailable = (why: string, cause?: unknown) =>
    new TemporarilyUnavailable('PIN hashing is not available right now; retry shortly', { detail: why, ...(cause === undefined ? {} : { cause }) });

  const start = (): Slot => {
    // Without the process's own options (`-r` preloads): the worker runs scrypt and nothing else.
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
    const slot: Slot = { worker, task: undefined, failure: undefined };
    slots.add(slot);
    worker.unref();
    worker.on('message', (reply: { key?: Uint8Array; refused?: { code: string; message: string } }) => {
      const task = slot.task;
      if (!task) return;
      slot.task = undefined;
      worker.unref();
      if (reply.key) task.resolve(Buffer.from(reply.key.buffer, reply.key.byteOffset, reply.key.byteLength));
      else task.reject(new ScryptRefused(reply.refused?.code ?? 'unknown', reply.refused?.message ?? 'scrypt refused'));
      free(slot);
    });
    // An error event is followed by the exit event: the task fails there, with it.
    worker.on('error', (error) => {
      slot.failure = error;
    });
    worker.on('exit', (code) => {
      slots.delete(slot);
      const at = idle.indexOf(slot);
      if (at !== -1) idle.splice(at, 1);
      const task = slot.task;
      slot.task = undefined;
      if (task) {
        const why = closed ? 'PIN hash workers closed' : `a PIN hash worker ended (exit code ${code}${slot.failure ? `: ${slot.failure.message}` : ''})`;
        task.reject(unavailable(why, slot.failure));
      }
      // A task waiting for a worker gets a new one.
      const next = waiting.shift();
      if (next) dispatch(next);
    });
    return slot;
  };

  const run = (slot: Slot, task: Task) => {
    slot.task = task;
    slot.worker.ref();
    slot.worker.postMessage(task.message);
  };

  const free = (slot: Slot) => {
    const next = waiting.shift();
    if (next) run(slot, next);
    else idle.push(slot);
  };

  // Never throws: a worker that cannot be started (no threads left, a
  // permission model without worker threads) fails the task with 503.
  const dispatch = (task: Task) => {
    if (closed) return task.reject(unavailable('PIN hash workers closed'));
    let slot: Slot | undefined;
    try {
      slot = idle.pop() ?? (slots.size < size ? start() : undefined);
      if (slot) run(slot, task);
      else waiting.push(task);
    } catch (error) {
      if (slot) slot.task = undefined;
      task.reject(unavailable(`a PIN hash worker could not be started: ${error instanceof Error ? error.message : String(error)}`, error));
    }
  };

  return {
    scrypt: (secret, salt, keyLength, options) =>
      new Promise<Buffer>((resolve, reject) => dispatch({ message: { secret, salt: new Uint8Array(salt), keyLength, options }, resolve, reject })),
    get running() {
      return slots.size;
    },
    async close() {
      closed = true;
      for (const task of waiting.splice(0)) task.reject(unavailable('PIN hash workers closed'));
      idle.length = 0;
      await Promise.all([...slots].map((slot) => slot.worker.terminate()));
    },
  };
}
