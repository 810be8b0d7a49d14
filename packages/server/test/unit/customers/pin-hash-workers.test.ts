import { execFile, execFileSync } from 'node:child_process';
import { randomBytes, scryptSync } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { onTestFinished, describe, expect, it } from 'vitest';
import { TemporarilyUnavailable } from '../../../src/core/errors.js';
import { ScryptRefused, startPinHashWorkers } from '../../../src/core/customers/pin-hash-workers.js';
import { createPinCheckQueue, hashPin, verifyPin } from '../../../src/core/customers/pin.js';
import { checkPin } from '../../../src/core/customers/check-pin.js';
import { fixedClock } from '../../../src/core/clock.js';
import { createCustomer } from '../../../src/core/customers/manage-customers.js';
import { parseMobile } from '../../../src/core/customers/mobile.js';
import { openStorage } from '../../../src/storage/kysely/open-storage.js';

/** The PIN hash's own cost (about 100 ms, 32 MiB). */
const PIN_COST = { N: 32_768, r: 8, p: 1, maxmem: 128 * 32_768 * 8 * 2 };

function workers(size: number) {
  const started = startPinHashWorkers(size);
  onTestFinished(() => started.close());
  return started;
}

describe('PIN hash workers', () => {
  it("give scrypt's own key, starting a worker only when needed and never more than their number", async () => {
    const pool = workers(2);
    expect(pool.running).toBe(0);
    const salts = [randomBytes(16), randomBytes(16), randomBytes(16)];
    const keys = await Promise.all(salts.map((salt, i) => pool.scrypt(`12${i}4`, salt, 32, PIN_COST)));
    expect(pool.running).toBe(2);
    keys.forEach((key, i) => expect(key.equals(scryptSync(`12${i}4`, salts[i]!, 32, PIN_COST)), `key ${i}`).toBe(true));
    const stored = await hashPin('7391', pool.scrypt);
    expect(await verifyPin('7391', stored)).toBe(true);
    expect(await verifyPin('7391', stored, pool.scrypt)).toBe(true);
    expect(await verifyPin('7392', stored, pool.scrypt)).toBe(false);
  });

  it('answer parameters scrypt refuses with ScryptRefused, which matches no PIN, and go on working', async () => {
    const pool = workers(1);
    const refused = await pool.scrypt('1234', randomBytes(16), 32, { N: 3, r: 8, p: 1, maxmem: PIN_COST.maxmem }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ScryptRefused);
    expect(refused).toMatchObject({ code: 'ERR_CRYPTO_INVALID_SCRYPT_PARAMS' });
    const stored = await hashPin('4826', pool.scrypt);
    expect(await verifyPin('4826', stored.replace('$32768$', '$3$'), pool.scrypt)).toBe(false);
    expect(await verifyPin('4826', stored, pool.scrypt)).toBe(true);
  });

  it.skipIf(process.platform !== 'linux')("run beside libuv's thread pool: a PIN is hashed while every pool thread is held", { timeout: 40_000 }, async () => {
    const pool = workers(1);
    // Opening a FIFO for reading waits, in a pool thread, until it has a
    // writer: 16 opens hold every thread of the pool (4 unless
    // UV_THREADPOOL_SIZE says more) until the test lets them go.
    const dir = mkdtempSync(join(tmpdir(), 'connect-pool-'));
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    let settled = 0;
    const held = Array.from({ length: 16 }, () => open(fifo, 'r').finally(() => void settled++));
    onTestFinished(async () => {
      // Read and write at once, which never waits (Linux): every open still waiting completes.
      const writer = openSync(fifo, 'r+');
      for (const handle of await Promise.all(held)) await handle.close();
      closeSync(writer);
      rmSync(dir, { recursive: true, force: true });
    });

    // On the pool, the hash would wait for a thread until the test ends.
    const outcome = await Promise.race([hashPin('2580', pool.scrypt), delay(20_000, 'still waiting for a pool thread', { ref: false })]);
    expect(outcome).toMatch(/^scrypt\$/);
    expect(settled).toBe(0);
    expect(await verifyPin('2580', outcome, pool.scrypt)).toBe(true);
    expect(settled).toBe(0);
  });

  it('once closed, refuse hashes running and waiting with 503 temporarily_unavailable, which verifyPin passes on: no answer about the PIN', async () => {
    const pool = workers(1);
    const stored = await hashPin('1357');
    const running = verifyPin('1357', stored, pool.scrypt);
    const waiting = verifyPin('2468', stored, pool.scrypt);
    const outcomes = Promise.allSettled([running, waiting]);
    // The first hash is handed to the worker at once; the second waits for it.
    await pool.close();
    for (const outcome of await outcomes) {
      expect(outcome.status).toBe('rejected');
      const reason = (outcome as PromiseRejectedResult).reason as unknown;
      expect(reason).toBeInstanceOf(TemporarilyUnavailable);
      expect(reason).toMatchObject({ status: 503, error: 'temporarily_unavailable' });
    }
    await expect(hashPin('1357', pool.scrypt)).rejects.toBeInstanceOf(TemporarilyUnavailable);
    expect(pool.running).toBe(0);
  });

  it('that cannot start (here Node.js forbids worker threads) fail with 503: a right PIN is never a wrong one, and the process goes on', async () => {
    const built = (file: string) => fileURLToPath(new URL(`../../../dist/core/customers/${file}`, import.meta.url));
    if (!existsSync(built('pin.js'))) throw new Error('the server is not built: run `npm run build` first (the root `npm test` does)');
    const script = [
      `const { startPinHashWorkers } = await import(${JSON.stringify(built('pin-hash-workers.js'))});`,
      `const { hashPin, verifyPin, scryptOnThreadPool } = await import(${JSON.stringify(built('pin.js'))});`,
      `const stored = await hashPin('1234', scryptOnThreadPool);`,
      `const workers = startPinHashWorkers(1);`,
      `for (const attempt of [() => verifyPin('1234', stored, workers.scrypt), () => hashPin('1234', workers.scrypt)]) {`,
      `  const outcome = await attempt().then((value) => ({ value }), (error) => ({ name: error.constructor.name, status: error.status, detail: error.detail }));`,
      `  process.stdout.write(JSON.stringify(outcome) + '\\n');`,
      `}`,
    ].join('\n');
    // Node.js's permission model without --allow-worker (`--permission` from 22.13 on).
    const flag = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';
    const { stdout } = await promisify(execFile)(process.execPath, [flag, '--allow-fs-read=*', '--no-warnings', '--input-type=module', '-e', script]);
    const outcomes = stdout.trim().split('\n').map((line) => JSON.parse(line) as unknown);
    const refused = { name: 'TemporarilyUnavailable', status: 503, detail: expect.stringContaining('a PIN hash worker could not be started') as unknown };
    expect(outcomes).toEqual([refused, refused]);
  });

  it('that fail make a PIN check answer 503, never "wrong PIN"; the attempt stays counted, as when a server stops mid-check', async () => {
    const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
    onTestFinished(() => storage.close());
    await storage.migrate();
    const clock = fixedClock(1_900_000_000);
    await createCustomer({ mobile: '+639171234567', pin: '4826' }, { customers: storage.customers, clock });
    const failing = () => Promise.reject(new TemporarilyUnavailable('PIN hashing is not available right now; retry shortly'));
    const queue = createPinCheckQueue({ scrypt: failing });
    const checked = checkPin(parseMobile('+639171234567')!, '4826', { customers: storage.customers, clock, queue });
    // No answer: the caller throws the failure (503); `login.ts` does.
    expect(await checked).toEqual({ ok: false, reason: 'unchecked', error: expect.any(TemporarilyUnavailable) as unknown });
    expect((await storage.customers.findCustomerByMobile('+639171234567'))?.pinAttempts).toBe(1);
  });

  it('refuse a size that is not a whole number from 1', () => {
    for (const size of [0, -1, 1.5, Number.NaN]) expect(() => startPinHashWorkers(size), String(size)).toThrow(RangeError);
  });
});
