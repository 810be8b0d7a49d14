import { existsSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliWorkspace, expectFailure } from './command-line.js';

/** Every command with sub-commands, and the commands under it. */
const GROUPS = {
  clients: ['create', 'list', 'show', 'update', 'disable', 'enable', 'rotate-secret'],
  customers: ['create', 'list', 'show', 'lock', 'unlock'],
  keys: ['list', 'rotate', 'revoke'],
  'master-key': ['rotate', 'status', 'retire'],
} as const;

/** Every command that does something, by its words. */
const COMMANDS: ReadonlyArray<readonly string[]> = [
  ['serve'],
  ['migrate'],
  ...Object.entries(GROUPS).flatMap(([group, subs]) => subs.map((sub) => [group, sub])),
  ['audit'],
  ['purge'],
  ['backup'],
  ['restore'],
];

describe('--help on every command and sub-command', () => {
  it.each(COMMANDS.map((words) => [words.join(' '), words]))('%s --help: usage, a one-line description, its options, examples', async (_name, words) => {
    const w = cliWorkspace();
    const run = await w.cli([...words, '--help']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const [usage, blank, description, ...rest] = run.stdout.split('\n');
    expect(usage).toMatch(new RegExp(`^Usage: connect-auth ${words.join(' ')} \\[options\\]( <[A-Z_|0-9]+>)?$`));
    expect(blank).toBe('');
    expect(description).toMatch(/^[a-z].{10,78}$/);
    expect(rest[0]).toBe('');
    const text = rest.join('\n');
    expect(text).toMatch(/^Options:$/m);
    expect(text).toMatch(/^ {2}--json {2,}\S/m);
    expect(text).toMatch(/^ {2}-h, --help {2,}show this help$/m);
    const examples = text.slice(text.indexOf('\nExamples:\n'));
    expect(examples.length).toBeGreaterThan(0);
    expect(examples).toContain(`  $ connect-auth ${words.join(' ')}`);
    // Nothing read the configuration or opened a database.
    expect(readdirSync(w.dataDir)).toEqual([]);
  });

  it.each(Object.entries(GROUPS))('%s --help lists its commands, each with its description', async (group, subs) => {
    const run = await cliWorkspace().cli([group, '--help']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(new RegExp(`^Usage: connect-auth ${group} \\[options\\] \\[command\\]\\n\\n[a-z]`));
    for (const sub of subs) expect(run.stdout).toMatch(new RegExp(`^ {2}${sub} (\\[options\\] )?(<[^>]+> )?\\s+[a-z]`, 'm'));
    expect(run.stdout).toMatch(/^ {2}help \[command\] +show the help of a command$/m);
  });

  it('connect-auth --help lists every command by its full name, with its description', async () => {
    const run = await cliWorkspace().cli(['--help']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    for (const words of COMMANDS) expect(run.stdout).toMatch(new RegExp(`^ {2}${words.join(' ')}( <[^>]+>)? +[a-z]`, 'm'));
    expect(run.stdout).toMatch(/^ {2}--json +print one JSON document/m);
    expect(run.stdout).toMatch(/^ {2}-v, --version +print the release and its commit$/m);
    expect(run.stdout).toMatch(/Exit status: 0 on success, 1 when the command fails, 2 on a usage\nmistake/);
    expect(run.stdout).toMatch(/^Examples:\n {2}\$ connect-auth /m);
  });

  it('customers create --help tells how the PIN is read and that --pin stays in shell history', async () => {
    const { stdout } = await cliWorkspace().cli(['customers', 'create', '--help']);
    expect(stdout).toMatch(/^ {2}--pin-stdin +read the PIN from the first line of standard input$/m);
    expect(stdout).toMatch(/^ {2}--pin <DIGITS> +the PIN on the command line \(shell history/m);
    expect(stdout).toMatch(/Without --pin or --pin-stdin the PIN is asked on the terminal, twice, without\necho/);
    expect(stdout).toContain('$ printf \'%s\\n\' "$PIN" | connect-auth customers create --mobile +639171234567 --pin-stdin --json');
  });

  it('option defaults are in the help', async () => {
    const w = cliWorkspace();
    expect((await w.cli(['clients', 'create', '--help'])).stdout).toMatch(/\(default:\s+client_credentials,authorization_code\)/);
    expect((await w.cli(['clients', 'rotate-secret', '--help'])).stdout).toMatch(/\(default:\s+CONNECT_SECRET_ROTATION_GRACE, 86400\)/);
    expect((await w.cli(['audit', '--help'])).stdout).toMatch(/\(default: 24h\)/);
  });
});

describe('connect-auth help <command>', () => {
  it.each(COMMANDS.map((words) => [words.join(' '), words]))('help %s is %s --help, and so is -h', async (_name, words) => {
    const w = cliWorkspace();
    const help = await w.cli(['help', ...words]);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toBe((await w.cli([...words, '--help'])).stdout);
    expect(help.stdout).toBe((await w.cli([...words, '-h'])).stdout);
  });

  it('help, help alone and no command at all print the overview', async () => {
    const w = cliWorkspace();
    const overview = (await w.cli(['--help'])).stdout;
    for (const argv of [['help'], [], ['-h']]) expect(await w.cli(argv)).toEqual({ code: 0, stdout: overview, stderr: '' });
  });

  it('a group answers help for its commands too: clients help create', async () => {
    const w = cliWorkspace();
    expect(await w.cli(['clients', 'help', 'create'])).toEqual({ code: 0, stdout: (await w.cli(['clients', 'create', '--help'])).stdout, stderr: '' });
    expect((await w.cli(['help', 'keys'])).stdout).toBe((await w.cli(['keys', '--help'])).stdout);
  });

  it('help for a command that does not exist: exit 2, naming the commands there are', async () => {
    const w = cliWorkspace();
    expect(expectFailure(await w.cli(['help', 'frobnicate']), 2)).toBe(
      'connect-auth: no command "frobnicate"; the commands are serve, migrate, clients, customers, keys, master-key, audit, purge, backup, restore; see connect-auth --help\n',
    );
    expect(expectFailure(await w.cli(['help', 'clients', 'remove']), 2)).toBe(
      'connect-auth: no clients command "remove"; the clients commands are create, list, show, update, disable, enable, rotate-secret; see connect-auth clients --help\n',
    );
  });
});

describe('usage mistakes name what is valid, in one line, exit 2', () => {
  it.each([
    [['frobnicate'], 'unknown command "frobnicate"; the commands are serve, migrate, clients, customers, keys, master-key, audit, purge, backup, restore; see connect-auth --help'],
    [['customers'], 'customers needs a command: create, list, show, lock, unlock, passkeys; see connect-auth customers --help'],
    [['customers', 'delete', '+639171234567'], 'unknown customers command "delete"; the customers commands are create, list, show, lock, unlock, passkeys; see connect-auth customers --help'],
    [
      ['clients', 'create', '--name', 'Acme', '--grant', 'client_credentials'],
      "unknown option '--grant' for clients create (did you mean --grants?); its options are --name, --redirect-uri, --grants, --require-pkce, --scopes, --resource-server, --profile, --jwks, --jwks-uri, --recipient-email, --recipient-key, --out, --json, --help; see connect-auth clients create --help",
    ],
    // A value given to a mistyped option (a PIN, say) is never repeated.
    [
      ['customers', 'create', '--mobile', '+639171234567', '--pn=482913'],
      "unknown option '--pn' for customers create; its options are --mobile, --pin-stdin, --pin, --name, --json, --help; see connect-auth customers create --help",
    ],
    [['--frobnicate'], "unknown option '--frobnicate' for connect-auth; its options are --json, --version, --help; see connect-auth --help"],
    [['customers', 'list', '--mobile', '+639171234567'], '--mobile is an option of customers create only; customers list takes --json, --help; see connect-auth customers list --help'],
    [['keys', '--json', 'list'], '--json goes after the command: connect-auth keys <command> --json; see connect-auth keys --help'],
    [['clients', 'show'], 'a client ID is required; see connect-auth clients show --help'],
    [['clients', 'show', 'a', 'b'], 'too many arguments for clients show: it takes only <ID>; see connect-auth clients show --help'],
    [['customers', 'create', '--mobile'], '--mobile <E164> needs a value; see connect-auth customers create --help'],
    [['purge', '--json=true'], '--json takes no value; see connect-auth purge --help'],
    [['clients', 'update', 'cid_sandbox_x', '--require-pkce', '--no-require-pkce'], 'give --require-pkce or --no-require-pkce, not both; see connect-auth clients update --help'],
  ])('%j', async (argv, message) => {
    const w = cliWorkspace();
    expect(expectFailure(await w.cli(argv), 2)).toBe(`connect-auth: ${message}\n`);
    expect(existsSync(`${w.dataDir}/connect-sandbox.db`)).toBe(false);
  });
});
