import { Command, Help, Option, type ErrorOptions } from 'commander';
import type { ClientCommandDeps, CommandDeps } from '../compose/command-deps.js';
import type { Config } from '../config/schema.js';
import { MAX_SCOPE_DESCRIPTION_LENGTH } from '../core/clients/manage-clients.js';
import { checkNewMobile } from '../core/customers/manage-customers.js';
import type { MobileNumber } from '../core/customers/mobile.js';
import { auditCommand } from './commands/audit.js';
import { backupCommand, restoreCommand } from './commands/backup.js';
import {
  changeClientStatus,
  createClient,
  listClients,
  rotateSecret,
  showClient,
  updateClient,
  type ClientsOptions,
} from './commands/clients.js';
import {
  createCustomerCommand,
  listCustomersCommand,
  setCustomerLockCommand,
  removePasskeyCommand,
  showCustomerCommand,
} from './commands/customers.js';
import { listKeysCommand, revokeKeyCommand, rotateKeysCommand } from './commands/keys.js';
import { masterKeyStatusCommand, retireMasterKeyCommand, rotateMasterKeyCommand } from './commands/master-key.js';
import { migrateCommand } from './commands/migrate.js';
import { UsageError, type CommandResult } from './commands/output.js';
import { purgeCommand } from './commands/purge.js';
import { readNewPin, type CliInput, type PinOptions } from './pin-input.js';

/**
 * The commands of `connect-auth`, their options and their help: the
 * command line's contract (README, "Command line"; docs/operator-guide.md).
 * What they do lives in `commands/`; how a run reads, prints and exits,
 * in `main.ts`.
 */

/** One run of a command that works on the database. */
export interface Invocation {
  /**
   * Runs once the configuration is loaded and before the database is
   * opened: checks the arguments and reads what the command asks for (a PIN).
   */
  readonly prepare?: (config: Config) => Promise<void>;
  readonly run: (deps: CommandDeps) => Promise<CommandResult>;
}

/** What the commands call on to do their work. */
export interface CliActions {
  /** Runs a command on the database and prints its result, as JSON when `json`. */
  run(invocation: Invocation, json: boolean): Promise<void>;
  /**
   * Runs a command on the configuration alone, without opening the
   * database as the others do (no migration, no master key), and prints its
   * result. `signal` aborts when the process is told to stop (SIGINT, SIGTERM).
   */
  runOnConfig(work: (config: Config, signal: AbortSignal) => Promise<CommandResult>, json: boolean): Promise<void>;
  serve(seedDemo: boolean): Promise<void>;
  version(json: boolean): Promise<void>;
  readonly input: CliInput;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const JSON_OPTION = 'print one JSON document on stdout and nothing else';

/**
 * A command whose usage mistakes (unknown option, missing or extra
 * argument) become a {@link UsageError} that names what it takes, rather
 * than commander's own message and exit.
 */
class CliCommand extends Command {
  /** What to say when a required argument is not given, by argument name. */
  readonly whenMissing = new Map<string, string>();

  override createCommand(name?: string): CliCommand {
    return new CliCommand(name);
  }

  override error(message: string, options?: ErrorOptions): never {
    throw new UsageError(describeMistake(this, message.replace(/^error: /, ''), options?.code), { command: commandPath(this) });
  }
}

/** The `connect-auth` program: a new one for each run, as commander keeps what it parsed. */
export function buildProgram(actions: CliActions): Command {
  const program = new CliCommand('connect-auth')
    .usage('<command> [options]')
    .description('Connect: token issuance and customer authorization.')
    // Commander prints no error of its own: CliCommand.error describes it, and main.ts prints it.
    .configureOutput({ writeOut: actions.stdout, writeErr: actions.stderr, outputError: () => {} })
    .exitOverride()
    .enablePositionalOptions()
    .helpOption('-h, --help', 'show this help')
    .helpCommand('help [command...]', 'show the help of a command')
    .option('--json', JSON_OPTION)
    .option('-v, --version', 'print the release and its commit');

  addServe(program, actions);
  addMigrate(program, actions);
  addClients(program, actions);
  addCustomers(program, actions);
  addKeys(program, actions);
  addMasterKey(program, actions);
  addAudit(program, actions);
  addPurge(program, actions);
  addBackup(program, actions);

  // Set after the commands are made, so that they do not inherit it: only
  // the root and the groups take any word, to say which command is unknown.
  for (const cmd of program.commands) if (cmd.commands.length > 0) cmd.allowExcessArguments(true);
  program.allowExcessArguments(true).action(async (options: { json?: boolean; version?: boolean }, cmd: Command) => {
    if (cmd.args.length > 0) throw new UsageError(unknownCommand(program, cmd.args[0] as string));
    if (options.version) return actions.version(options.json ?? false);
    program.outputHelp();
  });
  // The root's help lists every command by its full name (`clients create`).
  program.configureHelp({
    visibleCommands: (cmd) => Help.prototype.visibleCommands.call(new Help(), cmd).flatMap((c) => (c.commands.length > 0 ? c.commands : [c])),
    subcommandTerm: commandTerm,
  });
  program.addHelpText(
    'after',
    `
Every command takes --json and -h/--help; "connect-auth help <command>" shows
a command's options and examples. The configuration comes from environment
variables (CONNECT_ENVIRONMENT, DATABASE_URL, CONNECT_MASTER_KEY, ...; see the
README). Exit status: 0 on success, 1 when the command fails, 2 on a usage
mistake; a failure prints one line on stderr.

Examples:
  $ connect-auth clients create --name "Acme Shop" --redirect-uri https://acme.example/callback
  $ connect-auth customers create --mobile +639171234567
  $ connect-auth help clients rotate-secret`,
  );
  return program;
}

function addServe(program: CliCommand, actions: CliActions): void {
  const serve = program
    .command('serve')
    .description('run the server (migrates the database first)')
    .option('--seed-demo', 'create the demo client and customer if missing, and print them (sandbox only; what npm start runs)')
    .option('--json', 'accepted as by every command; the server logs JSON lines anyway')
    .action((options: { seedDemo?: boolean }) => actions.serve(options.seedDemo ?? false));
  details(serve, 'Listens on HOST:PORT (default 127.0.0.1:3000; PORT=0 picks a free port) until SIGTERM or SIGINT. On SIGTERM /readyz answers 503 at once and the server keeps serving for CONNECT_SHUTDOWN_DELAY seconds (production 5, sandbox 0; SIGINT skips it), then stops listening and lets requests in flight finish within CONNECT_SHUTDOWN_GRACE. Under a supervisor run it without npm (exec node_modules/.bin/connect-auth serve), so that the signal reaches the server.');
  examples(serve, ['connect-auth serve', 'PORT=8080 HOST=0.0.0.0 connect-auth serve', 'connect-auth serve --seed-demo']);
}

function addMigrate(program: CliCommand, actions: CliActions): void {
  const migrate = program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .option('--json', JSON_OPTION)
    .action((_options: unknown, cmd: Command) => actions.run({ run: async (deps) => migrateCommand(deps.migrate) }, json(cmd)));
  details(migrate, 'Lists the migrations it applied, or says that none was pending. serve migrates too, before it listens.');
  examples(migrate, ['connect-auth migrate', 'DATABASE_URL=postgres://connect@db.internal:5432/connect connect-auth migrate --json']);
}

function addClients(program: CliCommand, actions: CliActions): void {
  const clients = group(program, 'clients', 'register and manage API consumers and resource servers', 'create, list, show, update, disable, enable, rotate-secret');
  const run = (cmd: Command, work: (deps: ClientCommandDeps, options: ClientsOptions) => Promise<CommandResult>) =>
    actions.run({ run: (deps) => work(deps.clients, cmd.opts<ClientsOptions>()) }, json(cmd));

  const create = clients
    .command('create')
    .description('register a client and print its secret once')
    .option('--name <NAME>', "the client's name, shown to customers (required)")
    .option('--redirect-uri <URL>', 'where customers return after authorizing, exactly as registered (required unless --resource-server)')
    .option('--grants <G1,G2>', 'grants it may use: client_credentials, authorization_code, refresh_token (default: client_credentials,authorization_code)')
    .option('--require-pkce', 'require PKCE (RFC 7636) in its authorization requests (default: off)')
    .option('--scopes <"S1 S2">', 'the OAuth scopes it may obtain (RFC 6749 section 3.3), separated by spaces: at most 20, each at most 64 printable ASCII characters without spaces, double quotes or backslashes; a token request without scope gets them all (default: none)')
    .option('--resource-server', 'register one of the platform\'s APIs instead: it checks access tokens at /introspect and obtains none')
    .option('--profile <PROFILE>', 'the rules it is held to: standard, or fapi2 (the FAPI 2.0 Security Profile: no secret, private_key_jwt only, PKCE required; needs --jwks or --jwks-uri) (default: standard)')
    .option('--jwks <FILE>', 'a JSON file with a JWK Set of its public keys for private_key_jwt (ES256, PS256 or EdDSA; no private or symmetric keys; a kid on each when several)')
    .option('--jwks-uri <URL>', 'where the client publishes its JWK Set instead: https:// (in sandbox also http://localhost, 127.0.0.1 or [::1])');
  refuseBoth(create, 'jwks', 'jwks-uri');
  deliveryOptions(create);
  create.option('--json', JSON_OPTION).action((_options: unknown, cmd: Command) => run(cmd, createClient));
  details(
    create,
    'Prints the client ID and the secret; the secret is shown only now (stored only as a hash). With --recipient-email, --recipient-key and --out (all three) the credentials go only into FILE, OpenPGP-encrypted to that public key, and nothing prints the secret. A fapi2 client gets no secret at all: it authenticates with private_key_jwt, with the keys of --jwks or --jwks-uri.',
  );
  examples(create, [
    'connect-auth clients create --name "Acme Shop" --redirect-uri https://acme.example/callback',
    'connect-auth clients create --name "Acme Shop" --redirect-uri https://acme.example/cb --grants client_credentials,authorization_code,refresh_token --require-pkce',
    'connect-auth clients create --name "Acme Shop" --redirect-uri https://acme.example/cb --scopes "payments:read profile"',
    'connect-auth clients create --name "Payments API" --resource-server',
    'connect-auth clients create --name "Acme Bank" --redirect-uri https://bank.acme.example/cb --profile fapi2 --jwks acme-bank-keys.json',
    'connect-auth clients create --name "Acme Bank" --redirect-uri https://bank.acme.example/cb --profile fapi2 --jwks-uri https://bank.acme.example/jwks.json',
    'connect-auth clients create --name "Acme Shop" --redirect-uri https://acme.example/cb --recipient-email keys@acme.example --recipient-key acme.asc --out acme-credentials.asc',
  ]);

  const list = clients
    .command('list')
    .description('list the clients of this environment')
    .option('--json', `${JSON_OPTION} (an array of clients)`)
    .action((_options: unknown, cmd: Command) => run(cmd, (deps) => listClients(deps)));
  examples(list, ['connect-auth clients list', 'connect-auth clients list --json']);

  const show = withId(clients.command('show').description('show one client (never its secret)'))
    .option('--json', JSON_OPTION)
    .action((id: string, _options: unknown, cmd: Command) => run(cmd, (deps) => showClient(deps, id)));
  examples(show, ['connect-auth clients show cid_sandbox_Xq3…']);

  const update = withId(clients.command('update').description("change a client's settings: redirect URI, grants, PKCE, scopes, profile, keys"))
    .option('--redirect-uri <URL>', 'the new redirect URI')
    .option('--grants <G1,G2>', 'the new grants: client_credentials, authorization_code, refresh_token')
    .option('--require-pkce', 'require PKCE from now on')
    .option('--no-require-pkce', 'stop requiring PKCE')
    .option('--scopes <"S1 S2">', 'replace its scopes (RFC 6749 section 3.3); "" removes them all')
    .option(
      '--scope-description <SCOPE=TEXT>',
      `what SCOPE lets the client do, as customers read it on the consent page (one of its scopes; at most ${MAX_SCOPE_DESCRIPTION_LENGTH} characters, no control characters); repeat for more scopes; SCOPE= (empty) goes back to the default wording`,
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option('--profile <PROFILE>', 'standard or fapi2; to fapi2, its secret (and any previous one) stops at once and PKCE becomes required; it needs keys')
    .option('--jwks <FILE>', 'replace its keys with the JWK Set in FILE (to rotate: first both keys, then the new one only)')
    .option('--jwks-uri <URL>', 'fetch its keys from URL instead (replaces registered keys)')
    .option('--json', JSON_OPTION)
    .action((id: string, _options: unknown, cmd: Command) => run(cmd, (deps, options) => updateClient(deps, id, options)));
  refuseBoth(update, 'require-pkce', 'no-require-pkce');
  refuseBoth(update, 'jwks', 'jwks-uri');
  details(
    update,
    'Give at least one option; what is not given stays as it is. A resource server has none of these settings. A scope without a description is shown to customers in the default wording of the page\'s language (English or Filipino); a description is shown as written, in either language. Removing a scope with --scopes removes its description.',
  );
  examples(update, [
    'connect-auth clients update cid_sandbox_Xq3… --redirect-uri https://acme.example/v2/callback',
    'connect-auth clients update cid_sandbox_Xq3… --grants client_credentials,authorization_code,refresh_token --no-require-pkce',
    'connect-auth clients update cid_sandbox_Xq3… --scopes "payments:read payments:write"',
    'connect-auth clients update cid_sandbox_Xq3… --profile fapi2 --jwks acme-keys.json',
    'connect-auth clients update cid_sandbox_Xq3… --scope-description "payments:read=See your payment history" --scope-description "payments:write=Send payments for you"',
  ]);

  const disable = withId(clients.command('disable').description('stop a client from authenticating and end every token it holds'))
    .option('--json', JSON_OPTION)
    .action((id: string, _options: unknown, cmd: Command) => run(cmd, (deps) => changeClientStatus(deps, id, 'disabled')));
  details(
    disable,
    'Ends its client tokens, the customer tokens of its sessions and its unredeemed codes on every running server within a second. Disabling a disabled client changes nothing.',
  );
  examples(disable, ['connect-auth clients disable cid_sandbox_Xq3…']);

  const enable = withId(clients.command('enable').description('allow a disabled client again; no token the disable ended comes back'))
    .option('--json', JSON_OPTION)
    .action((id: string, _options: unknown, cmd: Command) => run(cmd, (deps) => changeClientStatus(deps, id, 'active')));
  examples(enable, ['connect-auth clients enable cid_sandbox_Xq3…']);

  const rotate = withId(clients.command('rotate-secret').description('issue a new secret, printed once; the old one keeps working for a grace period'))
    .option('--grace <SECONDS>', 'how long the previous secret keeps working, 0 to 2592000; 0 ends it at once (default: CONNECT_SECRET_ROTATION_GRACE, 86400)');
  deliveryOptions(rotate);
  rotate.option('--json', JSON_OPTION).action((id: string, _options: unknown, cmd: Command) => run(cmd, (deps, options) => rotateSecret(deps, id, options)));
  examples(rotate, [
    'connect-auth clients rotate-secret cid_sandbox_Xq3…',
    'connect-auth clients rotate-secret cid_sandbox_Xq3… --grace 0   # a leaked secret: the old one stops now',
  ]);
}

function addCustomers(program: CliCommand, actions: CliActions): void {
  const customers = group(program, 'customers', 'register and manage customers', 'create, list, show, lock, unlock, passkeys');

  const create = customers
    .command('create')
    .description('register a customer with a mobile number and a PIN')
    .option('--mobile <E164>', 'the mobile number in international format, e.g. +639171234567 (required)')
    .option('--pin-stdin', 'read the PIN from the first line of standard input')
    .option('--pin <DIGITS>', 'the PIN on the command line (shell history and the process list keep it: prefer the prompt or --pin-stdin)')
    .option('--name <NAME>', "the customer's name (optional)")
    .option('--json', JSON_OPTION)
    .action((options: PinOptions & { mobile?: string; name?: string }, cmd: Command) => {
      let pin = '';
      let mobile: MobileNumber | undefined;
      return actions.run(
        {
          async prepare(config) {
            if (!options.mobile) throw new UsageError('--mobile is required');
            // The mobile is checked before the PIN is asked for; whether it is registered already, when the customer is inserted.
            mobile = checkNewMobile(options.mobile, config.smsCountries);
            pin = await readNewPin(options, actions.input);
          },
          run: (deps) => createCustomerCommand(deps.customers, { mobile, pin, name: options.name }),
        },
        json(cmd),
      );
    });
  details(
    create,
    'Without --pin or --pin-stdin the PIN is asked on the terminal, twice, without echo. The PIN has 4 to 6 digits and must not be too easy to guess (1111, 1212, 1234, 2580 ... are refused), as at registration.',
  );
  examples(create, [
    'connect-auth customers create --mobile +639171234567 --name "Juan dela Cruz"   # asks for the PIN',
    'printf \'%s\\n\' "$PIN" | connect-auth customers create --mobile +639171234567 --pin-stdin --json',
  ]);

  const list = customers
    .command('list')
    .description('list the customers of this environment')
    .option('--json', `${JSON_OPTION} (an array of customers)`)
    .action((_options: unknown, cmd: Command) => actions.run({ run: (deps) => listCustomersCommand(deps.customers) }, json(cmd)));
  examples(list, ['connect-auth customers list']);

  const reference = (cmd: CliCommand): CliCommand => {
    cmd.whenMissing.set('PROFILE_ID|E164', 'a profile ID or mobile number is required');
    return cmd.argument('<PROFILE_ID|E164>', 'the 12-digit profile ID, or the mobile number in international format');
  };
  const show = reference(customers.command('show').description('show one customer, the clients they approved and their passkeys'))
    .option('--json', JSON_OPTION)
    .action((ref: string, _options: unknown, cmd: Command) => actions.run({ run: (deps) => showCustomerCommand(deps.customers, ref) }, json(cmd)));
  examples(show, ['connect-auth customers show +639171234567', 'connect-auth customers show 585676066295 --json']);

  const lock = reference(customers.command('lock').description('stop a customer from logging in and end their sessions and tokens'))
    .option('--json', JSON_OPTION)
    .action((ref: string, _options: unknown, cmd: Command) => actions.run({ run: (deps) => setCustomerLockCommand(deps.customers, ref, true) }, json(cmd)));
  details(
    lock,
    'Ends every login session, token session (refresh and access tokens) and unredeemed code of the customer, cancels every sign-in of theirs that has not reached its code, removes their approvals of clients and suspends their passkeys, on every running server within a second. Locking a locked customer changes nothing.',
  );
  examples(lock, ['connect-auth customers lock 585676066295']);

  const unlock = reference(customers.command('unlock').description('let a customer log in again, also after too many wrong PINs'))
    .option('--json', JSON_OPTION)
    .action((ref: string, _options: unknown, cmd: Command) => actions.run({ run: (deps) => setCustomerLockCommand(deps.customers, ref, false) }, json(cmd)));
  details(
    unlock,
    'The passkeys the lock suspended work again (remove first any you do not trust: customers passkeys remove). Nothing else the lock ended comes back: clients send the customer through /authorize again.',
  );
  examples(unlock, ['connect-auth customers unlock +639171234567']);

  const passkeys = group(customers, 'passkeys', "manage a customer's passkeys", 'remove');
  const remove = reference(passkeys.command('remove').description('remove one passkey of a customer: it no longer signs in (sessions it made stay; customers lock ends them)'));
  remove.whenMissing.set('CREDENTIAL_ID', 'a credential ID is required (see customers show)');
  remove
    .argument('<CREDENTIAL_ID>', 'the credential ID of the passkey, as customers show lists it')
    .option('--json', JSON_OPTION)
    .action((ref: string, credentialId: string, _options: unknown, cmd: Command) =>
      actions.run({ run: (deps) => removePasskeyCommand(deps.customers, ref, credentialId) }, json(cmd)),
    );
  details(remove, 'The customer signs in with their PIN and an SMS code instead, and may add a passkey again.');
  examples(remove, ['connect-auth customers passkeys remove 585676066295 Kx3f…']);
}

function addKeys(program: CliCommand, actions: CliActions): void {
  const keys = group(program, 'keys', 'list, rotate and revoke the signing and encryption keys', 'list, rotate, revoke');

  const list = keys
    .command('list')
    .description('list the keys with their status: next, active, retired, expired or revoked')
    .option('--json', `${JSON_OPTION} (an array of {kid, alg, use, status, createdAt, ...})`)
    .action((_options: unknown, cmd: Command) => actions.run({ run: (deps) => listKeysCommand(deps.keys) }, json(cmd)));
  examples(list, ['connect-auth keys list']);

  const rotate = keys
    .command('rotate')
    .description('publish new keys now; they sign once every cached copy of the JWKS has expired')
    .option('--now', 'activate the pending keys, or new ones, at once (an emergency: verifiers may not know them yet)')
    .option('--json', JSON_OPTION)
    .action((options: { now?: boolean }, cmd: Command) => actions.run({ run: (deps) => rotateKeysCommand(deps.keys, options) }, json(cmd)));
  details(
    rotate,
    'The new keys are in the JWKS at once (status next) and sign after CONNECT_JWKS_MAX_AGE + 5 s; old keys verify until their tokens expire. Refused while a rotation is pending, unless --now.',
  );
  examples(rotate, ['connect-auth keys rotate', 'connect-auth keys rotate --now']);

  const revoke = keys
    .command('revoke')
    .description('take a key out of the JWKS and refuse every token it signed or encrypted')
    .argument('<KID>', 'the key ID, as keys list shows it (it may begin with -)')
    .option('--json', JSON_OPTION)
    .action((kid: string, _options: unknown, cmd: Command) => actions.run({ run: (deps) => revokeKeyCommand(deps.keys, kid) }, json(cmd)));
  revoke.whenMissing.set('KID', 'keys revoke needs the kid of the key (see keys list)');
  details(revoke, 'Revoking a pending key cancels its rotation; the current signing key cannot be revoked (keys rotate --now first).');
  examples(revoke, ['connect-auth keys revoke 8Fq2xY…', 'connect-auth keys revoke -- -8Fq2xY…   # a kid that begins with -']);
}

function addAudit(program: CliCommand, actions: CliActions): void {
  const audit = program
    .command('audit')
    .description('read the audit log: admin actions and security events, oldest first')
    .option('--since <WHEN>', 'an ISO date or time (2026-11-01, 2026-11-01T08:00:00Z) or a duration back from now (90m, 24h, 7d) (default: 24h)')
    .option('--type <TYPE>', 'only events of this type, e.g. client.created, customer.locked')
    .option('--limit <N>', 'at most the newest N events, 1 to 100000 (default: 1000)')
    .option('--json', JSON_OPTION)
    .action((options: { since?: string; type?: string; limit?: string }, cmd: Command) => actions.run({ run: (deps) => auditCommand(deps.audit, options) }, json(cmd)));
  examples(audit, ['connect-auth audit', 'connect-auth audit --since 7d --type client.secret_rotated --json']);
}

function addPurge(program: CliCommand, actions: CliActions): void {
  const purge = program
    .command('purge')
    .description('delete what has expired, and audit events past CONNECT_AUDIT_RETENTION_DAYS')
    .option('--json', JSON_OPTION)
    .action((_options: unknown, cmd: Command) => actions.run({ run: (deps) => purgeCommand(deps.purge, actions.stderr) }, json(cmd)));
  details(
    purge,
    'Deletes expired codes, sessions, one-time PIN challenges, token records and stored /tokens responses in batches, and prints how many of each. The server runs the same purge every hour.',
  );
  examples(purge, ['connect-auth purge', 'connect-auth purge --json']);
}

function addBackup(program: CliCommand, actions: CliActions): void {
  const backup = program
    .command('backup')
    .description('copy the embedded SQLite database into a file, consistently, while servers run')
    .option('--out <FILE>', 'the backup file to write (required); replaced only once the new backup is complete')
    .option('--json', JSON_OPTION)
    .action((options: { out?: string }, cmd: Command) => actions.runOnConfig((config, signal) => backupCommand(config, options, actions.stderr, signal), json(cmd)));
  details(
    backup,
    "Copies the database of DATABASE_URL (or CONNECT_DATA_DIR) as it is at one moment, with SQLite's online backup, while servers go on reading and writing it. The copy is written beside FILE and renamed to FILE only when complete, so a failed or interrupted backup leaves no partial file. A large database reports its progress on stderr. The backup holds the signing keys sealed under the master key and secrets keyed by it: keep the master key, and never in the same place as the backups. On PostgreSQL use pg_dump or continuous archiving instead (docs/operator-guide.md, \"Backups and restores\").",
  );
  examples(backup, ['connect-auth backup --out /backups/connect-$(date -u +%Y%m%dT%H%M%SZ).db', 'connect-auth backup --out /backups/connect.db --json']);

  const restore = program
    .command('restore')
    .description('put a backup of the embedded database in place, where no database is yet')
    .option('--from <FILE>', 'the backup file, as connect-auth backup wrote it (required)')
    .option('--json', JSON_OPTION)
    .action((options: { from?: string }, cmd: Command) => actions.runOnConfig((config) => restoreCommand(config, options, actions.stderr), json(cmd)));
  details(
    restore,
    'Checks that FILE is whole (PRAGMA integrity_check) and a Connect database of CONNECT_ENVIRONMENT, then puts it at the path of DATABASE_URL (or CONNECT_DATA_DIR). Refused when a database is already there: stop its servers and move it aside first. serve then starts on it as usual, migrating a backup of an older release; it needs the master key the backup was taken under.',
  );
  examples(restore, ['connect-auth restore --from /backups/connect.db', 'connect-auth restore --from /backups/connect.db --json   # with CONNECT_DATA_DIR or DATABASE_URL set as for serve']);
}

function addMasterKey(program: CliCommand, actions: CliActions): void {
  const masterKey = group(program, 'master-key', 'replace the master key while servers run', 'rotate, status, retire');

  const rotate = masterKey
    .command('rotate')
    .description('make CONNECT_MASTER_KEY the writing key and re-seal stored values under it')
    .option('--json', JSON_OPTION)
    .action((_options: unknown, cmd: Command) =>
      actions.run({ run: (deps) => rotateMasterKeyCommand(deps.masterKey, actions.stderr) }, json(cmd)),
    );
  details(
    rotate,
    'Run with CONNECT_MASTER_KEY set to the new key and CONNECT_PREVIOUS_MASTER_KEY to the key being replaced, once every server runs with both. Every running server writes under the new key within a second and keeps accepting the previous one until master-key retire. Stored keys and sealed values are re-sealed row by row: an interrupted run is simply run again. Client secrets cannot be re-keyed without the secret: each is hashed again under the new key at its next successful authentication. See docs/operator-guide.md, "Replacing the master key".',
  );
  examples(rotate, [
    'connect-auth master-key rotate          # CONNECT_MASTER_KEY=<new>, CONNECT_PREVIOUS_MASTER_KEY=<old>',
    'connect-auth master-key rotate --json   # again after an interruption: it finishes',
  ]);

  const status = masterKey
    .command('status')
    .description('list the master keys and what still depends on one other than the writing key')
    .option('--json', JSON_OPTION)
    .action((_options: unknown, cmd: Command) => actions.run({ run: (deps) => masterKeyStatusCommand(deps.masterKey) }, json(cmd)));
  details(status, 'Keys are shown by fingerprint, never the key. States: writing, next (configured, not yet rotated to), previous (still accepted), retired.');
  examples(status, ['connect-auth master-key status']);

  const retire = masterKey
    .command('retire')
    .description('stop accepting the previous master key on every server within a second')
    .option('--force', 'retire even while client secrets are hashed only under the previous key (those clients are cut off)')
    .option('--json', JSON_OPTION)
    .action((options: { force?: boolean }, cmd: Command) =>
      actions.run({ run: (deps) => retireMasterKeyCommand(deps.masterKey, options) }, json(cmd)),
    );
  details(
    retire,
    'Re-seals first anything still sealed under the previous key, then records it as retired. Refused, naming the clients, while a client secret is still hashed only under it, unless --force. Afterwards remove CONNECT_PREVIOUS_MASTER_KEY from the configuration.',
  );
  examples(retire, ['connect-auth master-key retire          # with the same two settings as rotate', 'connect-auth master-key retire --force']);
}

/** A command of commands (`clients`): without one, or with an unknown one, a usage mistake that lists them. */
function group(program: CliCommand, name: string, description: string, commands: string): CliCommand {
  const cmd = program.command(name).description(description).helpCommand('help [command]', 'show the help of a command');
  cmd.action((_options: unknown, self: Command) => {
    const [word] = self.args;
    throw new UsageError(word === undefined ? `${name} needs a command: ${commands}` : unknownCommand(cmd, word));
  });
  return cmd;
}

/** The `<ID>` of a clients command. */
function withId(cmd: CliCommand): CliCommand {
  cmd.whenMissing.set('ID', 'a client ID is required');
  return cmd.argument('<ID>', 'the client ID (cid_…)');
}

/** The options that deliver the credentials encrypted (docs/operator-guide.md, "Delivering credentials encrypted"). */
function deliveryOptions(cmd: Command): void {
  for (const [flags, description] of [
    ['--recipient-email <E>', "the recipient's email address, as in their OpenPGP key"],
    ['--recipient-key <FILE>', "the recipient's OpenPGP public key (armored or binary)"],
    ['--out <FILE>', 'the encrypted credentials file to write; nothing prints the secret'],
  ] as const) {
    cmd.addOption(new Option(flags, description).helpGroup('Encrypted delivery (all three together):'));
  }
}

/** Refuses a command given both `--a` and `--b` (a flag and its negation set the same value, the last one winning). */
function refuseBoth(cmd: Command, a: string, b: string): void {
  const given = new Set<string>();
  cmd.on(`option:${a}`, () => given.add(a));
  cmd.on(`option:${b}`, () => given.add(b));
  cmd.hook('preAction', () => {
    if (given.size === 2) throw new UsageError(`give --${a} or --${b}, not both`);
  });
}

/** Whether `--json` was given to the command (or before it, to connect-auth). */
function json(cmd: Command): boolean {
  return cmd.optsWithGlobals<{ json?: boolean }>().json ?? false;
}

function details(cmd: Command, text: string): void {
  cmd.addHelpText('after', `\n${wrap(text, 78)}`);
}

function examples(cmd: Command, lines: readonly string[]): void {
  cmd.addHelpText('after', `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}`);
}

function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  return [...lines, line].join('\n');
}

/** `clients create`: the words of a command after `connect-auth`. */
export function commandPath(cmd: Command): string {
  const words: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) words.unshift(c.name());
  return words.join(' ');
}

/** `clients show <ID>`, for the root's list of every command. */
function commandTerm(cmd: Command): string {
  const args = cmd.registeredArguments.map((arg) => (arg.required ? `<${arg.name()}>` : `[${arg.name()}${arg.variadic ? '...' : ''}]`));
  return [commandPath(cmd) || cmd.name(), ...args].join(' ');
}

function unknownCommand(parent: Command, word: string): string {
  const names = parent.commands.map((c) => c.name());
  const scope = parent.parent ? `${commandPath(parent)} ` : '';
  return `unknown ${scope}command ${JSON.stringify(word)}; the ${scope}commands are ${names.join(', ')}`;
}

/** Every option of `cmd` as typed, with help: `--json, --help`. */
function optionList(cmd: Command): string {
  return [...cmd.options.map((o) => o.long ?? o.short ?? o.flags), '--help'].join(', ');
}

function rootOf(cmd: Command): Command {
  let root = cmd;
  while (root.parent) root = root.parent;
  return root;
}

function everyCommand(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap(everyCommand)];
}

/** One line for a usage mistake commander found, naming what the command takes. */
function describeMistake(cmd: CliCommand, message: string, code: string | undefined): string {
  const where = commandPath(cmd) || 'connect-auth';
  if (code === 'commander.unknownOption') {
    const flag = /unknown option '([^']*)'/.exec(message)?.[1] ?? '';
    const name = flag.split('=')[0] as string;
    if (flag.includes('=') && cmd.options.some((o) => o.long === name && o.isBoolean())) return `${name} takes no value`;
    const elsewhere = everyCommand(rootOf(cmd)).filter((c) => c !== cmd && c.options.some((o) => o.long === name || o.short === name));
    if (cmd.commands.length > 0 && elsewhere.some((c) => c.parent === cmd)) {
      return `${name} goes after the command: connect-auth ${where} <command> ${name}`;
    }
    if (elsewhere.length > 0) return `${name} is an option of ${elsewhere.map((c) => commandPath(c) || 'connect-auth').join(', ')} only; ${where} takes ${optionList(cmd)}`;
    const suggestion = /\(Did you mean (\S+)\?\)/.exec(message)?.[1];
    // The option's name only: what followed `=` may be a PIN or a secret typed into the wrong option.
    return `unknown option '${name}' for ${where}${suggestion ? ` (did you mean ${suggestion}?)` : ''}; its options are ${optionList(cmd)}`;
  }
  if (code === 'commander.excessArguments') {
    const args = cmd.registeredArguments.map((arg) => `<${arg.name()}>`);
    return `too many arguments for ${where}: it takes ${args.length > 0 ? `only ${args.join(' ')}` : 'none'}`;
  }
  if (code === 'commander.missingArgument') {
    const name = /missing required argument '([^']*)'/.exec(message)?.[1] ?? '';
    return cmd.whenMissing.get(name) ?? `${where} needs <${name}>`;
  }
  if (code === 'commander.optionMissingArgument') {
    const flags = /option '([^']*)' argument missing/.exec(message)?.[1] ?? 'the option';
    return `${flags} needs a value`;
  }
  return message.split('\n')[0] ?? message;
}
