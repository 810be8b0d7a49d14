import { pino, type DestinationStream, type Logger } from 'pino';

/** pino's `error` level: lines at this level or above are written at once. */
const URGENT_LEVEL = 50;

/** Lines held for one turn beyond this many characters are written at once. */
const MAX_PENDING_CHARS = 16 * 1024;

/** Destinations holding lines, written out if the process exits first. */
const pending = new Set<TurnBatchedDestination>();
let exitHookInstalled = false;

/**
 * A pino destination that writes the lines logged during one turn of the
 * event loop together, with one `write(2)` on `target` when that turn ends
 * (a `setImmediate`), instead of one per line.
 *
 * Under load one turn completes several requests (about 8 in the token
 * benchmark), and system calls are dear on virtual machines: there a
 * `write(2)` of one request line took 2-2.5 µs even in a tight loop, and
 * writing the lines of a turn together made Connect answer about 5% more
 * token requests (bench/README.md).
 * Lines are held for the rest of the current turn only (microseconds, a
 * millisecond under heavy load) and never beyond:
 * - `error` and `fatal` lines are written at once, with everything before them;
 * - more than 16 KiB of lines are written at once;
 * - when the process exits (`process.exit()`, an uncaught exception, the end
 *   of the event loop) whatever is held is written first.
 * Only a process killed outright (SIGKILL, an abort) can lose the lines of
 * its last turn.
 */
export class TurnBatchedDestination implements DestinationStream {
  /**
   * Asks pino for each line's level (`lastLevel`) before `write`. pino sets
   * the other `last*` fields too; they are declared so that every instance
   * has them from the start.
   */
  readonly [pino.symbols.needsMetadataGsym] = true as const;
  lastLevel = 0;
  lastTime = '';
  lastMsg = '';
  lastObj: object = {};
  lastLogger: Logger | undefined;

  readonly #target: DestinationStream;
  #lines = '';
  #scheduled = false;
  readonly #endOfTurn = () => {
    this.#scheduled = false;
    this.flush();
  };

  /** @param target receives the lines, several at a time (pino's synchronous `pino.destination()`). */
  constructor(target: DestinationStream) {
    this.#target = target;
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', flushAll);
    }
  }

  write(line: string): void {
    if (this.#lines === '') pending.add(this);
    this.#lines += line;
    if (this.lastLevel >= URGENT_LEVEL || this.#lines.length > MAX_PENDING_CHARS) {
      this.flush();
    } else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#endOfTurn);
    }
  }

  /** Writes the lines held so far, if any. */
  flush(): void {
    pending.delete(this);
    if (this.#lines === '') return;
    const lines = this.#lines;
    this.#lines = '';
    this.#target.write(lines);
  }
}

function flushAll(): void {
  for (const destination of pending) destination.flush();
}
