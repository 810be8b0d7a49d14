import { CommanderError, type Command } from 'commander';
import { currentRelease } from '../config/release.js';
import { ConfigError, loadConfig, unknownSettings } from '../config/load.js';
import { ClientValidationError } from '../core/clients/manage-clients.js';
import { CustomerValidationError } from '../core/customers/manage-customers.js';
import { DeliveryError } from '../delivery/credentials-file.js';
import { KeyOperationRefused } from '../core/keys/key-rotation.js';
import { MasterKeyRefused } from '../core/keys/master-key-rotation.js';
import { systemClock, type Clock } from '../core/clock.js';
import { openComposition } from '../compose/compose.js';
import { StorageError, StorageUnavailable } from '../core/storage-errors.js';
import { describeDatabaseFailure } from '../storage/kysely/database-failures.js';
import { BackupError } from '../storage/kysely/sqlite-backup.js';
import type { DatabaseLocation } from '../core/storage/storage.js';
import { Interrupted, UsageError } from './commands/output.js';
import { processInput, type CliInput } from './pin-input.js';
import { buildProgram, commandPath, type CliActions } from './program.js';

/** Where a CLI run reads its configuration and input and writes its output. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly clock: Clock;
  /** Standard input: where `customers create` reads a PIN not given with `--pin`. */
  readonly stdin: CliInput;
}

/**
 * Runs one `connect-auth` command and returns its exit status: 0 on success,
 * 1 on failure, 2 on a usage mistake, 130 when a prompt was interrupted. A
 * failure prints one line on stderr; bad configuration prints one line per
 * problem (see {@link describeConfigProblems}). With `--json` too, failures
 * go to stderr as text and nothing to stdout.
 */
export async function runCli(argv: readonly string[], io: Partial<CliIo> = {}): Promise<number> {
  const out = io.stdout ?? ((text: string) => void process.stdout.write(text));
  const err = io.stderr ?? ((text: string) => void process.stderr.write(text));
  const env = io.env ?? process.env;
  const clock = io.clock ?? systemClock;
  let ran: Command | undefined;

  const actions: CliActions = {
    stdout: out,
    stderr: err,
    input: io.stdin ?? processInput(),
    async run(invocation, json) {
      const config = loadConfig(env);
      await invocation.prepare?.(config);
      const composition = await openComposition(config, clock);
      try {
        const result = await invocation.run(composition.commands);
        out(json ? `${JSON.stringify(result.json, null, 2)}\n` : result.text);
      } finally {
        await composition.close();
      }
    },
    async runOnConfig(work, json) {
      const config = loadConfig(env);
      const stopping = new AbortController();
      const stop = () => stopping.abort(new Error('interrupted'));
      process.once('SIGINT', stop).once('SIGTERM', stop);
      try {
        const result = await work(config, stopping.signal);
        out(json ? `${JSON.stringify(result.json, null, 2)}\n` : result.text);
      } finally {
        process.off('SIGINT', stop).off('SIGTERM', stop);
      }
    },
    async serve(seedDemo) {
      // Loaded only here: the other commands start without the server's code.
      const { main: serve } = await import('../http/server.js');
      await serve({ env, seedDemo, clock });
    },
    async version(json) {
      const { version, commit } = currentRelease();
      out(json ? `${JSON.stringify({ version, commit })}\n` : `connect-auth ${version} (commit ${commit})\n`);
    },
  };
  // Before the configuration is read, so that a misspelt variable is named even when it leaves a problem.
  for (const warning of unknownSettings(env)) err(`connect-auth: warning: ${warning}\n`);
  const program = buildProgram(actions);
  program.hook('preAction', (_program, command) => void (ran = command));

  try {
    const help = helpTarget(program, argv);
    if (help) help.outputHelp();
    else await program.parseAsync(kidsAsOperands(argv), { from: 'user' });
    return 0;
  } catch (error) {
    // --help: commander has printed the help and stops the parse this way.
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof UsageError) {
      const command = error.command ?? (ran ? commandPath(ran) : '');
      err(`connect-auth: ${oneLine(error.message)}; see connect-auth ${command ? `${command} ` : ''}--help\n`);
      return 2;
    }
    if (error instanceof Interrupted) {
      err(`connect-auth: ${error.message}\n`);
      return 130;
    }
    if (error instanceof ConfigError && error.problems.length > 1) {
      err(describeConfigProblems(error.problems));
      return 1;
    }
    err(`connect-auth: ${oneLine(describeFailure(error, env))}\n`);
    return 1;
  }
}

/**
 * The command whose help `help` asks for: `connect-auth help clients
 * create`, `connect-auth clients help create`. `undefined` when the words
 * ask for no help.
 *
 * @throws UsageError when a word names no command.
 */
function helpTarget(program: Command, argv: readonly string[]): Command | undefined {
  let command = program;
  let i = 0;
  for (; i < argv.length; i++) {
    const sub = command.commands.find((c) => c.name() === argv[i]);
    if (!sub) break;
    command = sub;
  }
  if (argv[i] !== 'help' || command.commands.length === 0) return undefined;
  for (const word of argv.slice(i + 1).filter((arg) => !arg.startsWith('-'))) {
    const sub = command.commands.find((c) => c.name() === word);
    if (!sub) {
      const scope = commandPath(command);
      throw new UsageError(`no ${scope ? `${scope} ` : ''}command ${JSON.stringify(word)}; the ${scope ? `${scope} ` : ''}commands are ${command.commands.map((c) => c.name()).join(', ')}`, {
        command: scope,
      });
    }
    command = sub;
  }
  return command;
}

/**
 * A `kid` is base64url and may begin with `-` (`-8Fq…`): after `keys
 * revoke`, an argument that begins with `-` and is none of its options is
 * the kid, never an unknown option.
 */
function kidsAsOperands(argv: readonly string[]): string[] {
  const flags = new Set(['--json', '-h', '--help']);
  // The command comes after any global flags (`connect-auth --json keys revoke -8Fq…`).
  const at = argv.findIndex((arg) => !flags.has(arg));
  if (at === -1 || argv[at] !== 'keys' || argv[at + 1] !== 'revoke' || argv.includes('--')) return [...argv];
  const isKid = (arg: string) => arg.startsWith('-') && !flags.has(arg.split('=')[0] as string);
  const rest = argv.slice(at + 2);
  return [...argv.slice(0, at + 2), ...rest.filter((arg) => !isKid(arg)), '--', ...rest.filter(isKid)];
}

function describeFailure(error: unknown, env: Readonly<Record<string, string | undefined>>): string {
  // A database failure carries the driver's error, and its code, as its cause.
  const code = ((error instanceof StorageUnavailable ? error.cause : error) as { code?: string } | null)?.code;
  if (error instanceof StorageUnavailable || code === 'ECONNREFUSED' || code === 'ENOTFOUND') {
    const described = describeDatabaseFailure(code, databaseOf(env));
    if (described) return described;
  }
  if (
    error instanceof ConfigError ||
    error instanceof ClientValidationError ||
    error instanceof CustomerValidationError ||
    error instanceof DeliveryError ||
    error instanceof KeyOperationRefused ||
    error instanceof BackupError ||
    error instanceof MasterKeyRefused ||
    error instanceof StorageError
  ) {
    return error.message;
  }
  if (code === 'EADDRINUSE') return `${listenAddress(error) ?? 'the port'} is in use: set PORT to a free port (PORT=0 picks one)`;
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? 'failed';
}

/** The database the configuration names, if it can be read. */
function databaseOf(env: Readonly<Record<string, string | undefined>>): DatabaseLocation | undefined {
  try {
    return loadConfig(env).database;
  } catch {
    return undefined;
  }
}

/** `host:port` of a listener that could not bind (`[::1]:3000` for IPv6). */
function listenAddress(error: unknown): string | undefined {
  const { address, port } = (error ?? {}) as { address?: unknown; port?: unknown };
  if (typeof address !== 'string' || typeof port !== 'number') return undefined;
  return `${address.includes(':') ? `[${address}]` : address}:${port}`;
}

/**
 * Several configuration problems: a line that counts them, then each
 * problem on its own indented line, so all of them can be fixed in one go
 * (docs/operator-guide.md, "Configuration").
 */
function describeConfigProblems(problems: readonly string[]): string {
  return [`connect-auth: the configuration has ${problems.length} problems:`, ...problems.map((problem) => `  ${oneLine(problem)}`), ''].join('\n');
}

/** Failures are reported on one line, even when they quote an argument that holds a line break. */
function oneLine(message: string): string {
  return message.replace(/\s*[\r\n]+\s*/g, ' ');
}

