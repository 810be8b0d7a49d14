import { isatty, type ReadStream } from 'node:tty';
import { checkNewPin, CustomerValidationError } from '../core/customers/manage-customers.js';
import { Interrupted, UsageError } from './commands/output.js';

/**
 * Standard input as `connect-auth` reads it. A PIN is read from here, so
 * that it need not be typed on the command line, where shell history and
 * the process list would keep it.
 */
export interface CliInput {
  /** Whether standard input is a terminal. */
  readonly isTerminal: boolean;
  /**
   * The first line of standard input without its line ending (`\n` or
   * `\r\n`); `undefined` when standard input ends before any character.
   * Reads no more than {@link MAX_LINE} characters of it.
   */
  readLine(): Promise<string | undefined>;
  /**
   * Shows `prompt` and reads one line from the terminal without echoing
   * it. Ctrl-C rejects with {@link Interrupted}.
   */
  readHidden(prompt: string): Promise<string>;
}

/** More than any PIN: a longer first line is cut here (and is then no PIN). */
export const MAX_LINE = 1024;

/** The process's standard input; the prompts go to standard error, so that standard output holds only the command's output. */
export function processInput(): CliInput {
  let terminal: HiddenLineReader | undefined;
  return {
    get isTerminal() {
      return isatty(0);
    },
    readLine: () => readFirstLine(process.stdin),
    readHidden(prompt) {
      terminal ??= new HiddenLineReader(process.stdin as ReadStream, (text) => void process.stderr.write(text));
      return terminal.read(prompt);
    },
  };
}

/** Standard input that is no terminal (a pipe or a file), read from `stream`. */
export function streamInput(stream: NodeJS.ReadableStream): CliInput {
  return {
    isTerminal: false,
    readLine: () => readFirstLine(stream),
    readHidden: () => Promise.reject(new Error('standard input is no terminal')),
  };
}

/** How `customers create` was told to get the PIN. */
export interface PinOptions {
  /** `--pin DIGITS`: on the command line. */
  readonly pin?: string | undefined;
  /** `--pin-stdin`: the first line of standard input. */
  readonly pinStdin?: boolean | undefined;
}

/**
 * The PIN of a new customer (docs/operator-guide.md, "Customers"): the
 * value of `--pin`; with `--pin-stdin` the first line of standard input;
 * otherwise asked twice on the terminal, without echo. Checked as
 * registration checks a PIN: 4 to 6 digits, not too easy to guess.
 *
 * @throws UsageError for `--pin` with `--pin-stdin`, or when the PIN would
 *   have to be asked but standard input is no terminal.
 * @throws CustomerValidationError when no PIN came, the two entries differ,
 *   or the PIN is refused; the message never repeats the PIN.
 */
export async function readNewPin(options: PinOptions, input: CliInput): Promise<string> {
  if (options.pin !== undefined && options.pinStdin) throw new UsageError('give --pin or --pin-stdin, not both');
  if (options.pin !== undefined) {
    checkNewPin(options.pin);
    return options.pin;
  }
  if (options.pinStdin) {
    const line = input.isTerminal ? await input.readHidden('PIN: ') : await input.readLine();
    if (!line) throw new CustomerValidationError('no PIN on standard input: --pin-stdin reads the PIN from its first line');
    checkNewPin(line);
    return line;
  }
  if (!input.isTerminal) {
    throw new UsageError('the PIN is asked on a terminal, and standard input is none: give --pin-stdin and the PIN on standard input');
  }
  const pin = await input.readHidden('PIN (4 to 6 digits): ');
  if (!pin) throw new CustomerValidationError('no PIN entered; nothing changed');
  checkNewPin(pin);
  if ((await input.readHidden('PIN again: ')) !== pin) throw new CustomerValidationError('the two PINs differ; nothing changed');
  return pin;
}

/** Reads up to the first line break of `stream`, then lets go of it. */
async function readFirstLine(stream: NodeJS.ReadableStream): Promise<string | undefined> {
  let text: string | undefined;
  stream.setEncoding('utf8');
  // Leaving the loop early destroys the stream: nothing more is read from it.
  for await (const chunk of stream as AsyncIterable<string>) {
    text = (text ?? '') + chunk;
    const end = text.indexOf('\n');
    if (end >= 0 || text.length >= MAX_LINE) {
      text = text.slice(0, end >= 0 ? end : MAX_LINE);
      break;
    }
  }
  return text?.replace(/\r$/, '');
}

/**
 * Reads lines from a terminal in raw mode, so that nothing typed is
 * echoed. Keys typed ahead of the next prompt (a paste of two lines) are
 * kept for it.
 */
class HiddenLineReader {
  private pending = '';

  constructor(
    private readonly terminal: ReadStream,
    private readonly write: (text: string) => void,
  ) {}

  read(prompt: string): Promise<string> {
    return new Promise((resolve, reject) => {
      let line = '';
      const wasRaw = this.terminal.isRaw;
      const finish = (error?: Error) => {
        this.terminal.off('data', onData);
        this.terminal.setRawMode(wasRaw);
        this.terminal.pause();
        this.write('\n');
        if (error) reject(error);
        else resolve(line);
      };
      const onData = (chunk: string) => {
        const keys = this.pending + chunk;
        this.pending = '';
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i] as string;
          if (key === '\r' || key === '\n') {
            // A \r\n pair is one line break.
            this.pending = keys.slice(key === '\r' && keys[i + 1] === '\n' ? i + 2 : i + 1);
            return finish();
          }
          if (key === '\u0003') return finish(new Interrupted('interrupted; nothing changed'));
          if (key === '\u0004' && line === '') return finish();
          if (key === '\u007f' || key === '\b') line = line.slice(0, -1);
          else if (key >= ' ' && line.length < MAX_LINE) line += key;
        }
      };
      // Raw before the prompt shows: keys typed at it are never echoed.
      this.terminal.setRawMode(true);
      this.write(prompt);
      this.terminal.setEncoding('utf8');
      this.terminal.on('data', onData);
      this.terminal.resume();
      if (this.pending) onData('');
    });
  }
}
