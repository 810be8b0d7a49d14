import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { TurnBatchedDestination } from '../../../src/http/log-destination.js';
import { createLogger } from '../../../src/http/logger.js';

/** A destination that records each write it receives. */
function recordingTarget() {
  const writes: string[] = [];
  return { writes, target: { write: (text: string) => void writes.push(text) } };
}

function setup() {
  const { writes, target } = recordingTarget();
  const logger = createLogger({ level: 'info', destination: new TurnBatchedDestination(target) });
  const lines = () => writes.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, writes, lines };
}

describe('TurnBatchedDestination', () => {
  it('writes the lines logged in one turn of the event loop together, once that turn ends', async () => {
    const { logger, writes, lines } = setup();
    logger.info({ n: 1 }, 'first');
    logger.info({ n: 2 }, 'second');
    logger.warn({ n: 3 }, 'third');
    expect(writes).toEqual([]);

    await nextTurn();
    expect(writes).toHaveLength(1);
    expect(lines().map((line) => [line.n, line.msg])).toEqual([
      [1, 'first'],
      [2, 'second'],
      [3, 'third'],
    ]);

    logger.info({ n: 4 }, 'next turn');
    await nextTurn();
    expect(writes).toHaveLength(2);
    expect(lines().at(-1)).toMatchObject({ n: 4, msg: 'next turn' });
  });

  it('writes an error or fatal line at once, after the lines held before it', async () => {
    const { logger, writes, lines } = setup();
    logger.info('held');
    logger.error({ err: new Error('boom') }, 'failed');
    expect(writes).toHaveLength(1);
    expect(lines().map((line) => line.msg)).toEqual(['held', 'failed']);

    logger.info('after');
    logger.fatal('fatal');
    expect(writes).toHaveLength(2);
    expect(lines().map((line) => line.msg)).toEqual(['held', 'failed', 'after', 'fatal']);

    // Nothing is left for the end of the turn.
    await nextTurn();
    expect(writes).toHaveLength(2);
  });

  it('writes at once when the held lines pass 16 KiB', () => {
    const { logger, writes, lines } = setup();
    const filler = 'x'.repeat(1000);
    let logged = 0;
    while (writes.length === 0 && logged < 100) {
      logger.info({ filler }, 'line');
      logged += 1;
    }
    expect(writes).toHaveLength(1);
    expect(writes[0]!.length).toBeGreaterThan(16 * 1024);
    expect(writes[0]!.length).toBeLessThan(16 * 1024 + 1200);
    expect(lines()).toHaveLength(logged);
  });

  it('holds nothing when nothing is logged, and flush() with nothing held writes nothing', async () => {
    const { writes, target } = recordingTarget();
    const destination = new TurnBatchedDestination(target);
    destination.flush();
    await nextTurn();
    expect(writes).toEqual([]);
  });

  describe('in a process that ends before the turn does', () => {
    const built = fileURLToPath(new URL('../../../dist/http/log-destination.js', import.meta.url));
    const serverPackage = fileURLToPath(new URL('../../../', import.meta.url));

    /** Runs `body` in a new Node process with `logger` logging to its stdout through the built destination. */
    async function runLogging(body: string): Promise<{ stdout: string; code: number | null }> {
      if (!existsSync(built)) throw new Error('the server is not built: run `npm run build` first (the root `npm test` does)');
      const script = [
        `import { pino } from 'pino';`,
        `import { TurnBatchedDestination } from ${JSON.stringify(built)};`,
        `const logger = pino({}, new TurnBatchedDestination(pino.destination({ dest: 1, sync: true })));`,
        body,
      ].join('\n');
      try {
        const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: serverPackage });
        return { stdout, code: 0 };
      } catch (error) {
        const failed = error as { stdout: string; code: number | null };
        return { stdout: failed.stdout, code: failed.code };
      }
    }

    it('writes the held lines when process.exit() is called', async () => {
      const { stdout, code } = await runLogging(`logger.info('one'); logger.info('two'); process.exit(3);`);
      expect(code).toBe(3);
      expect(stdout.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['one', 'two']);
    });

    it('writes the held lines when an uncaught exception ends the process', async () => {
      const { stdout, code } = await runLogging(`logger.info('before the crash'); throw new Error('crash');`);
      expect(code).toBe(1);
      expect(stdout).toContain('"msg":"before the crash"');
    });
  });
});
