import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/load.js';
import { ClientValidationError } from '../core/clients/manage-clients.js';
import { CustomerValidationError } from '../core/customers/manage-customers.js';
import { DeliveryError } from '../delivery/credentials-file.js';
import { KeyOperationRefused } from '../core/keys/key-rotation.js';
import { systemClock, type Clock } from '../core/clock.js';
import { openRuntime, type Runtime } from '../compose/runtime.js';
import { StorageError, StorageUnavailable } from '../core/storage-errors.js';
import { auditCommand } from './commands/audit.js';
import { changeClientStatus, createClient, listClients, rotateSecret, showClient, updateClient } from './commands/clients.js';
import { createCustomerCommand, listCustomersCommand, setCustomerLockCommand, showCustomerCommand } from './commands/customers.js';
import { purgeCommand } from './commands/purge.js';
import { listKeysCommand, revokeKeyCommand, rotateKeysCommand } from './commands/keys.js';
import { UsageError, type CommandResult } from './commands/output.js';

/** Where a CLI run reads its configuration and writes its output. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly clock: Clock;
}

const HELP = `Usage: connect-auth <command> [options]

Connect: token issuance and customer authorization.

Commands:
  serve [--seed-demo]               run the server (migrates the database first);
                                    --seed-demo creates the sandbox demo client
  migrate                           apply database migrations and exit
  clients create --name N --redirect-uri URL [--grants G1,G2] [--require-pkce]
                 [--scopes "S1 S2"]
                                    register an API consumer; prints its secret once
  clients create --name N --resource-server
                                    register one of the platform's APIs: it checks every
                                    access token at /introspect and can obtain none
  clients list                      list clients
  clients show ID                   show one client
  clients update ID [--redirect-uri URL] [--grants G1,G2] [--require-pkce | --no-require-pkce]
                    [--scopes "S1 S2"]
                                    change a client; --scopes replaces its scopes ("": none)
  clients disable ID                stop a client from authenticating; ends every token it
                                    holds (a disabled client: nothing changes)
  clients enable ID                 allow it again; no token the disable ended comes back
  clients rotate-secret ID [--grace SECONDS]
                                    issue a new secret (printed once); the old one keeps
                                    working for the grace period (default 24 h; 0: stops now)
  With --recipient-email E --recipient-key FILE --out FILE, clients create and
  clients rotate-secret write the credentials only to FILE, OpenPGP-encrypted to
  the recipient's public key, and print no secret.
  customers create --mobile E164 --pin DIGITS [--name N]
                                    register a customer (PIN: 4 to 6 digits)
  customers list                    list customers
  customers show PROFILE_ID|E164    show one customer and the clients they approved
  customers lock PROFILE_ID|E164    stop a customer from logging in; ends their sessions,
                                    tokens and unredeemed codes and removes their approvals
                                    of clients (a locked customer: nothing changes)
  customers unlock PROFILE_ID|E164  allow it again (also lifts a wrong-PIN lockout);
                                    nothing the lock ended comes back
  keys list                         list signing and encryption keys: status (next, active,
                                    retired, expired, revoked), activation, end of verifying
  keys rotate [--now]               publish new keys now; they sign once every cached copy of
                                    the JWKS has expired (CONNECT_JWKS_MAX_AGE + 5 s); old keys
                                    verify until their tokens expire. Refused while a rotation
                                    is pending. --now: activate the pending keys, or new ones,
                                    at once (emergency: verifiers may not know them yet)
  keys revoke KID                   take a key out of the JWKS and refuse every token it signed
                                    or encrypted; revoking a pending key cancels its rotation;
                                    the current key cannot be revoked (rotate --now first)
  audit [--since WHEN] [--type TYPE] [--limit N]
                                    read the audit log (WHEN: 2026-11-01, 24h, 7d; default 24h)
  purge                             delete what has expired (codes, sessions, one-time PIN
                                    challenges, token records, stored /tokens responses) and
                                    audit events older than CONNECT_AUDIT_RETENTION_DAYS, in
                                    batches; prints how many of each (the server also does
                                    this every hour)

Options:
  --json                            machine-readable output: one JSON document on stdout
  -h, --help                        show this help
  -v, --version                     show the version

Grants: client_credentials, authorization_code, refresh_token
  (default for new clients: client_credentials,authorization_code)

Scopes: the OAuth scopes a client may obtain (RFC 6749 section 3.3), separated by
  spaces: at most 20, each at most 64 printable ASCII characters without spaces,
  double quotes or backslashes (e.g. --scopes "payments:read profile"). A token
  request without scope gets them all; default for new clients: none.

Configuration comes from environment variables (CONNECT_ENVIRONMENT, DATABASE_URL,
CONNECT_MASTER_KEY, ...); see the README.
`;

const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  'seed-demo': { type: 'boolean' },
  name: { type: 'string' },
  'redirect-uri': { type: 'string' },
  grants: { type: 'string' },
  'require-pkce': { type: 'boolean' },
  'no-require-pkce': { type: 'boolean' },
  'resource-server': { type: 'boolean' },
  scopes: { type: 'string' },
  mobile: { type: 'string' },
  pin: { type: 'string' },
  'recipient-email': { type: 'string' },
  'recipient-key': { type: 'string' },
  out: { type: 'string' },
  grace: { type: 'string' },
  since: { type: 'string' },
  type: { type: 'string' },
  limit: { type: 'string' },
  now: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parse>['values'];

function parse(argv: readonly string[]) {
  return parseArgs({ args: kidsAsPositionals(argv), options: OPTIONS, allowPositionals: true, strict: true });
}

/**
 * A `kid` is base64url and may begin with `-` (`-8Fq…`): after `keys
 * revoke`, an argument that begins with `-` and is none of the options is
 * the kid, never an unknown option.
 */
function kidsAsPositionals(argv: readonly string[]): string[] {
  if (argv[0] !== 'keys' || argv[1] !== 'revoke' || argv.includes('--')) return [...argv];
  const flags = new Set(Object.entries(OPTIONS).flatMap(([name, option]) => [`--${name}`, ...('short' in option ? [`-${option.short}`] : [])]));
  const isKid = (arg: string) => arg.startsWith('-') && !flags.has(arg.split('=')[0] as string);
  const rest = argv.slice(2);
  return [...argv.slice(0, 2), ...rest.filter((arg) => !isKid(arg)), '--', ...rest.filter(isKid)];
}

/**
 * Runs one `connect-auth` command and returns its exit status: 0 on success,
 * 1 on failure, 2 on a usage mistake. A failure prints one line on stderr;
 * bad configuration prints one line per problem (see {@link describeConfigProblems}).
 * With `--json` too, failures go to stderr as text and nothing to stdout.
 */
export async function runCli(argv: readonly string[], io: Partial<CliIo> = {}): Promise<number> {
  const out = io.stdout ?? ((text: string) => void process.stdout.write(text));
  const err = io.stderr ?? ((text: string) => void process.stderr.write(text));
  const env = io.env ?? process.env;
  const clock = io.clock ?? systemClock;

  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    // Node's parseArgs appends a long hint about '--' to unknown options; the first sentence says it all.
    err(`connect-auth: ${oneLine((error as Error).message).split('. ')[0]}; see connect-auth --help\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.version) {
    out(values.json ? `${JSON.stringify({ version: await version() })}\n` : `${await version()}\n`);
    return 0;
  }
  if (values.help || positionals.length === 0) {
    out(HELP);
    return 0;
  }

  const [command, sub, id, ...extra] = positionals;
  try {
    if (command === 'serve') {
      if (positionals.length > 1) throw new UsageError(`serve takes no arguments`);
      // Loaded only here: the other commands start without the server's code.
      const { main: serve } = await import('../http/server.js');
      await serve({ env, seedDemo: values['seed-demo'] ?? false, clock });
      return 0;
    }
    const action = resolve(command as string, sub, id, values, extra, err);
    const config = loadConfig(env);
    const runtime = await openRuntime(config, clock);
    try {
      const result = await action(runtime);
      out(values.json ? `${JSON.stringify(result.json, null, 2)}\n` : result.text);
      return 0;
    } finally {
      await runtime.storage.close();
    }
  } catch (error) {
    if (error instanceof UsageError) {
      err(`connect-auth: ${oneLine(error.message)}; see connect-auth --help\n`);
      return 2;
    }
    if (error instanceof ConfigError && error.problems.length > 1) {
      err(describeConfigProblems(error.problems));
      return 1;
    }
    err(`connect-auth: ${oneLine(describeFailure(error))}\n`);
    return 1;
  }
}

function resolve(
  command: string,
  sub: string | undefined,
  id: string | undefined,
  values: Values,
  extra: string[],
  progress: (text: string) => void,
): (runtime: Runtime) => Promise<CommandResult> {
  const noMore = (allowed: number) => {
    const given = [sub, id, ...extra].filter((p) => p !== undefined).length;
    if (given > allowed) throw new UsageError(`too many arguments for ${command}${sub ? ` ${sub}` : ''}`);
  };
  if (values.now && !(command === 'keys' && sub === 'rotate')) throw new UsageError('--now is an option of keys rotate only');
  if (values['resource-server'] && !(command === 'clients' && sub === 'create')) {
    throw new UsageError('--resource-server is an option of clients create only (a client cannot change its kind)');
  }
  if (values.scopes !== undefined && !(command === 'clients' && (sub === 'create' || sub === 'update'))) {
    throw new UsageError('--scopes is an option of clients create and clients update only');
  }
  if (command === 'migrate') {
    noMore(0);
    return async (runtime) => ({ json: { migrated: true, engine: runtime.storage.engine }, text: `database is up to date (${runtime.storage.engine})\n` });
  }
  if (command === 'clients') {
    switch (sub) {
      case 'create':
        noMore(1);
        return (runtime) => createClient(runtime, values);
      case 'list':
        noMore(1);
        return (runtime) => listClients(runtime);
      case 'show':
        noMore(2);
        return (runtime) => showClient(runtime, id);
      case 'update':
        noMore(2);
        return (runtime) => updateClient(runtime, id, values);
      case 'disable':
      case 'enable':
        noMore(2);
        return (runtime) => changeClientStatus(runtime, id, sub === 'disable' ? 'disabled' : 'active');
      case 'rotate-secret':
        noMore(2);
        return (runtime) => rotateSecret(runtime, id, values);
      default:
        throw new UsageError(sub ? `unknown clients command "${sub}"` : 'clients needs a command: create, list, show, update, disable, enable, rotate-secret');
    }
  }
  if (command === 'purge') {
    noMore(0);
    return (runtime) => purgeCommand(runtime, progress);
  }
  if (command === 'audit') {
    noMore(0);
    return (runtime) => auditCommand(runtime, values);
  }
  if (command === 'customers') {
    switch (sub) {
      case 'create':
        noMore(1);
        return (runtime) => createCustomerCommand(runtime, values);
      case 'list':
        noMore(1);
        return (runtime) => listCustomersCommand(runtime);
      case 'show':
        noMore(2);
        return (runtime) => showCustomerCommand(runtime, id);
      case 'lock':
      case 'unlock':
        noMore(2);
        return (runtime) => setCustomerLockCommand(runtime, id, sub === 'lock');
      default:
        throw new UsageError(sub ? `unknown customers command "${sub}"` : 'customers needs a command: create, list, show, lock, unlock');
    }
  }
  if (command === 'keys') {
    switch (sub) {
      case 'list':
        noMore(1);
        return (runtime) => listKeysCommand(runtime);
      case 'rotate':
        noMore(1);
        return (runtime) => rotateKeysCommand(runtime, values);
      case 'revoke':
        noMore(2);
        if (!id) throw new UsageError('keys revoke needs the kid of the key (see keys list)');
        return (runtime) => revokeKeyCommand(runtime, id);
      default:
        throw new UsageError(sub ? `unknown keys command "${sub}"` : 'keys needs a command: list, rotate, revoke');
    }
  }
  throw new UsageError(`unknown command "${command}"`);
}

function describeFailure(error: unknown): string {
  // A database failure carries the driver's error, and its code, as its cause.
  const code = ((error instanceof StorageUnavailable ? error.cause : error) as { code?: string } | null)?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === '3D000' || code === '28P01') {
    return `cannot reach the database (${code}): check DATABASE_URL`;
  }
  if (
    error instanceof ConfigError ||
    error instanceof ClientValidationError ||
    error instanceof CustomerValidationError ||
    error instanceof DeliveryError ||
    error instanceof KeyOperationRefused ||
    error instanceof StorageError
  ) {
    return error.message;
  }
  if (code === 'EADDRINUSE') return 'the port is in use: set PORT to a free port (PORT=0 picks one)';
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? 'failed';
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

async function version(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
