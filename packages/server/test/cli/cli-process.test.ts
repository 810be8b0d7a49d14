import { spawn, spawnSync } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { checkPin } from '../../src/core/customers/check-pin.js';
import { parseMobile } from '../../src/core/customers/mobile.js';
import { testPinCheckQueue } from '../helpers/pin-checks.js';
import { requireBuiltCli } from '../helpers/processes.js';
import { cliWorkspace, type CliWorkspace } from './command-line.js';

/**
 * `connect-auth` as its own process, as an operator runs it: help and a
 * usage mistake, a PIN on a real pipe, and the PIN prompt on a real
 * terminal (a pseudo-terminal that util-linux's `script` opens). The rest
 * of the command line is tested in-process (help.test.ts, customers.test.ts).
 */

const BIN = fileURLToPath(new URL('../../bin/connect-auth.js', import.meta.url));
const MOBILE = '+639171234567';
const PIN = '482915';
const HAS_SCRIPT = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

if (!HAS_SCRIPT && process.env.CI) throw new Error('`script` (util-linux) is needed in CI for the terminal tests of connect-auth');

beforeAll(requireBuiltCli);

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `connect-auth ...args` on the workspace's data folder; `stdin`: what a pipe feeds it (`null`: /dev/null). */
function run(w: CliWorkspace, args: readonly string[], stdin: string | null = null): Promise<Exit> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: w.dataDir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...w.env },
    stdio: [stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => void (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  if (stdin !== null) child.stdin?.end(stdin);
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/**
 * Runs `connect-auth ...args` on a terminal of its own and, each time the
 * screen shows `prompt`, types `keys`. Resolves with the status and the
 * screen (stdout and stderr both).
 */
async function runOnTerminal(w: CliWorkspace, args: readonly string[], typing: ReadonlyArray<{ prompt: RegExp; keys: string }>): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, BIN, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    cwd: w.dataDir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'dumb', ...w.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => void (screen += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (screen += chunk));
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  let shown = 0;
  for (const { prompt, keys } of typing) {
    const deadline = performance.now() + 20_000;
    while (!prompt.test(screen.slice(shown))) {
      if (performance.now() > deadline) throw new Error(`no ${prompt} on the terminal within 20 s; it shows ${JSON.stringify(screen)}`);
      await delay(20);
    }
    shown = screen.length;
    child.stdin.write(keys);
  }
  const code = await closed;
  return { code, screen };
}

describe('connect-auth as a process', () => {
  it('help <command> prints the help on stdout and exits 0', async () => {
    const exit = await run(cliWorkspace(), ['help', 'customers', 'create']);
    expect(exit).toMatchObject({ code: 0, stderr: '' });
    expect(exit.stdout).toMatch(/^Usage: connect-auth customers create \[options\]\n\nregister a customer/);
    expect(exit.stdout).toContain('--pin-stdin');
  });

  it('an unknown command: exit 2, one line naming the commands, no stack trace', async () => {
    const exit = await run(cliWorkspace(), ['customer', 'create']);
    expect(exit).toEqual({
      code: 2,
      stdout: '',
      stderr: 'connect-auth: unknown command "customer"; the commands are serve, migrate, clients, customers, keys, master-key, audit, purge, backup, restore; see connect-auth --help\n',
    });
  });

  it('--pin-stdin takes the PIN from a pipe', async () => {
    const w = cliWorkspace();
    const exit = await run(w, ['customers', 'create', '--mobile', MOBILE, '--pin-stdin', '--json'], `${PIN}\n`);
    expect(exit).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(exit.stdout)).toMatchObject({ mobile: MOBILE });
    expect(await pinWorks(w, PIN)).toBe(true);
  });

  it('without --pin-stdin a pipe is not read: exit 2, nothing created', async () => {
    const w = cliWorkspace();
    const exit = await run(w, ['customers', 'create', '--mobile', MOBILE], `${PIN}\n`);
    expect(exit).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'connect-auth: the PIN is asked on a terminal, and standard input is none: give --pin-stdin and the PIN on standard input; see connect-auth customers create --help\n',
    });
    expect(await w.cliJson(['customers', 'list'])).toEqual([]);
  });
});

describe.skipIf(!HAS_SCRIPT)('the PIN prompt on a terminal', () => {
  it('asks twice without echo, takes a corrected entry, and creates the customer', async () => {
    const w = cliWorkspace();
    const { code, screen } = await runOnTerminal(w, ['customers', 'create', '--mobile', MOBILE, '--json'], [
      // A typo rubbed out with backspace.
      { prompt: /PIN \(4 to 6 digits\): $/, keys: `48299\x7f\x7f915\r` },
      { prompt: /PIN again: $/, keys: `${PIN}\r` },
    ]);
    expect(code).toBe(0);
    // Nothing typed shows: not the digits, not a mask.
    expect(screen.slice(0, screen.indexOf('{'))).toBe('PIN (4 to 6 digits): \r\nPIN again: \r\n');
    expect(JSON.parse(screen.slice(screen.indexOf('{')))).toMatchObject({ mobile: MOBILE });
    expect(await pinWorks(w, PIN)).toBe(true);
  });

  it('two different entries: exit 1, one line, nothing created', async () => {
    const w = cliWorkspace();
    const { code, screen } = await runOnTerminal(w, ['customers', 'create', '--mobile', MOBILE], [
      { prompt: /PIN \(4 to 6 digits\): $/, keys: `${PIN}\r` },
      { prompt: /PIN again: $/, keys: '482916\r' },
    ]);
    expect({ code, screen }).toEqual({ code: 1, screen: 'PIN (4 to 6 digits): \r\nPIN again: \r\nconnect-auth: the two PINs differ; nothing changed\r\n' });
    expect(await w.cliJson(['customers', 'list'])).toEqual([]);
  });

  it('Ctrl-C at the prompt: exit 130, nothing created', async () => {
    const w = cliWorkspace();
    const { code, screen } = await runOnTerminal(w, ['customers', 'create', '--mobile', MOBILE], [{ prompt: /PIN \(4 to 6 digits\): $/, keys: '48\x03' }]);
    expect({ code, screen }).toEqual({ code: 130, screen: 'PIN (4 to 6 digits): \r\nconnect-auth: interrupted; nothing changed\r\n' });
    expect(await w.cliJson(['customers', 'list'])).toEqual([]);
  });
});

/** Whether the customer the process created (on its own clock) logs in with `pin`. */
async function pinWorks(w: CliWorkspace, pin: string): Promise<boolean> {
  const storage = await w.storage();
  return (await checkPin(parseMobile(MOBILE)!, pin, { customers: storage.customers, clock: systemClock, queue: testPinCheckQueue() })).ok;
}
