import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { fixedClock, type FixedClock } from '../../src/core/clock.js';
import { checkPin } from '../../src/core/customers/check-pin.js';
import { parseMobile } from '../../src/core/customers/mobile.js';
import { hashCookieValue, newSession, useSession } from '../../src/core/journey/session.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../src/core/storage/storage.js';
import type { PasskeyRecord } from '../../src/core/passkeys/records.js';
import { testPinCheckQueue } from '../helpers/pin-checks.js';
import type { CliInput } from '../../src/cli/pin-input.js';
import { pipedInput, terminalInput } from './command-line.js';
import { pinSmsAuthentication } from '../../src/core/authentication.js';

/** 2026-01-01T00:00:00Z. */
const T0 = 1_767_225_600;
const MOBILE = '+639171234567';
const PIN = '482915';
const WRONG_PIN = '482916';

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

interface CustomerView {
  profileId: string;
  mobile: string;
  userId: string;
  name: string | null;
  status: string;
  lockedUntil: string | null;
  createdAt: string;
}

const tempDirs: string[] = [];
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

let dataDir: string;
let clock: FixedClock;
/** Everything every run of this test printed, to check no PIN or hash ever appears. */
let printed: string[];

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'connect-cli-customers-'));
  tempDirs.push(dataDir);
  clock = fixedClock(T0);
  printed = [];
});

/** Runs `connect-auth ...argv` in-process on this test's sandbox data folder. */
async function cli(...argv: string[]): Promise<Run> {
  return cliWith({}, ...argv);
}

async function cliWith(env: Record<string, string>, ...argv: string[]): Promise<Run> {
  return cliOn(pipedInput(''), env, ...argv);
}

/** Runs `connect-auth ...argv` with `stdin` as its standard input. */
async function cliOn(stdin: CliInput, env: Record<string, string>, ...argv: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env: { CONNECT_DATA_DIR: dataDir, CONNECT_ENVIRONMENT: 'sandbox', ...env },
    clock,
    stdin,
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  });
  printed.push(stdout, stderr);
  return { code, stdout, stderr };
}

/** Runs a `--json` command that must succeed with exactly one JSON document on stdout. */
async function cliJson<T>(...argv: string[]): Promise<T> {
  const run = await cli(...argv, '--json');
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout.endsWith('\n')).toBe(true);
  return JSON.parse(run.stdout) as T;
}

/** Expects a failed run: the status, nothing on stdout, one line on stderr; returns that line. */
function expectFailure(run: Run, code: number): string {
  expect(run.code).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^connect-auth: [^\n]+\n$/);
  return run.stderr;
}

function createCustomer(mobile = MOBILE, pin = PIN, ...extra: string[]) {
  return cliJson<{ profileId: string; mobile: string; userId: string }>('customers', 'create', '--mobile', mobile, '--pin', pin, ...extra);
}

/** The CLI's own database, opened as the server would (closed after the test). */
async function cliDatabase(): Promise<Storage> {
  const storage = openStorage({ engine: 'sqlite', path: join(dataDir, 'connect-sandbox.db') });
  onTestFinished(() => storage.close());
  return storage;
}

function login(storage: Storage, pin: string) {
  return checkPin(parseMobile(MOBILE)!, pin, { customers: storage.customers, clock, queue: testPinCheckQueue() });
}

/** Starts a session for the customer, as a completed login does; returns the cookie value. */
async function startSession(storage: Storage, profileId: string): Promise<string> {
  const session = newSession(profileId, pinSmsAuthentication(clock.nowSeconds(), 'sign_in_otp'), clock.nowSeconds(), { sessionSeconds: 43_200 });
  await storage.customerSessions.insertCustomerSession(session.record);
  return session.id;
}

function sessionCustomer(storage: Storage, sessionId: string) {
  return useSession(sessionId, { db: storage, clock, lifetimes: { sessionIdleSeconds: 1800 } });
}

/** Fails when any output of this test shows the PIN or its stored hash. */
async function expectNoSecretPrinted(storage?: Storage): Promise<void> {
  const hashes = storage ? (await storage.customers.listCustomers()).map((c) => c.pinHash) : [];
  for (const text of printed) {
    // Profile IDs are 12 random digits: take them out before looking for the PIN's digits.
    const withoutIds = text.replace(/\b\d{12}\b/g, '<profile id>');
    expect(withoutIds).not.toContain(PIN);
    expect(withoutIds).not.toContain(WRONG_PIN);
    expect(text).not.toMatch(/scrypt/i);
    expect(text).not.toMatch(/pinHash|pin_hash/i);
    for (const hash of hashes) {
      expect(text).not.toContain(hash);
      expect(text).not.toContain(hash.split('$').at(-1));
      expect(text).not.toContain(hash.split('$').at(-2));
    }
  }
}

describe('customers create', () => {
  it('prints exactly {profileId, mobile, userId}: a 12-digit profile ID and the masked mobile', async () => {
    const created = await createCustomer(MOBILE, PIN, '--name', 'Juan dela Cruz');
    expect(Object.keys(created).sort()).toEqual(['mobile', 'profileId', 'userId']);
    expect(created).toEqual({ profileId: expect.stringMatching(/^[1-9]\d{11}$/), mobile: MOBILE, userId: '+63******4567' });
    await expectNoSecretPrinted(await cliDatabase());
  });

  it('normalises the mobile to E.164 and stores the customer active with the PIN hashed', async () => {
    const created = await createCustomer('+63 917 123-4567', '0042');
    expect(created.mobile).toBe(MOBILE);
    const storage = await cliDatabase();
    const stored = await storage.customers.findCustomer(created.profileId);
    expect(stored).toMatchObject({ mobile: MOBILE, status: 'active', name: null, createdAt: T0, pinAttempts: 0, lockedUntil: null });
    expect(stored?.pinHash).toMatch(/^scrypt\$/);
    expect((await login(storage, '0042')).ok).toBe(true);
  });

  it('gives every customer its own profile ID', async () => {
    const a = await createCustomer('+639171234567');
    const b = await createCustomer('+639171234568');
    expect(a.profileId).not.toBe(b.profileId);
  });

  it('prints text for people without --json, never the PIN', async () => {
    const run = await cli('customers', 'create', '--mobile', MOBILE, '--pin', PIN);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/profile ID:\s+[1-9]\d{11}\n/);
    expect(run.stdout).toContain('+63******4567');
    await expectNoSecretPrinted(await cliDatabase());
  });

  it('refuses a mobile registered already, in any spelling, with one line on stderr and exit 1', async () => {
    await createCustomer();
    for (const spelling of [MOBILE, '+63 (917) 123-4567']) {
      const line = expectFailure(await cli('customers', 'create', '--mobile', spelling, '--pin', PIN, '--json'), 1);
      expect(line).toContain('registered already');
    }
    expect(await cliJson<CustomerView[]>('customers', 'list')).toHaveLength(1);
  });

  it.each([
    ['6666', 'one digit or a short group of digits repeated (like 1111 or 1212)'],
    ['345678', 'digits in order (like 1234 or 9876)'],
    ['2580', 'it is one of the most common PINs'],
  ])('refuses the weak PIN %s with one line naming the rule, never the PIN, exit 1; creates nothing', async (pin, rule) => {
    const run = await cli('customers', 'create', '--mobile', MOBILE, '--pin', pin);
    expect(expectFailure(run, 1)).toBe(`connect-auth: PIN is too easy to guess: ${rule}; choose another\n`);
    expect(run.stderr).not.toContain(pin);
    expect(await cliJson<CustomerView[]>('customers', 'list')).toEqual([]);
  });

  it('refuses a mobile of a country CONNECT_SMS_COUNTRIES does not list, and a satellite number, with one line; creates nothing', async () => {
    const line = expectFailure(await cliWith({ CONNECT_SMS_COUNTRIES: 'SG' }, 'customers', 'create', '--mobile', MOBILE, '--pin', PIN), 1);
    expect(line).toContain('CONNECT_SMS_COUNTRIES');
    expect(expectFailure(await cli('customers', 'create', '--mobile', '+881631234567', '--pin', PIN), 1)).toContain('belongs to no country');
    expect(await cliJson<CustomerView[]>('customers', 'list')).toEqual([]);
    const run = await cliWith({ CONNECT_SMS_COUNTRIES: 'PH,SG' }, 'customers', 'create', '--mobile', MOBILE, '--pin', PIN, '--json');
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { mobile: string }).mobile).toBe(MOBILE);
  });

  it('a bad CONNECT_SMS_COUNTRIES stops the command with one line naming it', async () => {
    const line = expectFailure(await cliWith({ CONNECT_SMS_COUNTRIES: 'PH,XX' }, 'customers', 'create', '--mobile', MOBILE, '--pin', PIN), 1);
    expect(line).toMatch(/CONNECT_SMS_COUNTRIES.*"XX"/);
  });

  it.each([['123'], ['1234567'], ['12ab'], ['12 34'], ['-1234']])('refuses the PIN %j and creates nothing', async (pin) => {
    const run = await cli('customers', 'create', '--mobile', MOBILE, `--pin=${pin}`, '--json');
    expect(expectFailure(run, 1)).toMatch(/PIN must be 4 to 6 digits/);
    expect(run.stderr).not.toContain(pin);
    expect(await cliJson<CustomerView[]>('customers', 'list')).toEqual([]);
  });

  it.each([['09171234567'], ['639171234567'], ['+63917123'], ['+63 2 8123 4567'], ['not a number']])(
    'refuses the mobile %j and creates nothing',
    async (mobile) => {
      const run = await cli('customers', 'create', `--mobile=${mobile}`, '--pin', PIN, '--json');
      expect(expectFailure(run, 1)).toMatch(/mobile must be a valid mobile number/);
      expect(await cliJson<CustomerView[]>('customers', 'list')).toEqual([]);
      await expectNoSecretPrinted();
    },
  );

  it('requires --mobile, and a PIN from somewhere (usage, exit 2)', async () => {
    expect(expectFailure(await cli('customers', 'create', '--pin', PIN), 2)).toMatch(/--mobile is required/);
    expect(expectFailure(await cli('customers', 'create', '--mobile', MOBILE), 2)).toMatch(/give --pin-stdin/);
  });
});

describe('customers create: the PIN off the command line', () => {
  const created = (run: Run) => {
    expect(run).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(run.stdout) as { profileId: string; mobile: string };
  };

  it.each([
    ['a line', `${PIN}\n`],
    ['a line ended by CRLF', `${PIN}\r\n`],
    ['no line break at all', PIN],
    ['more lines after it', `${PIN}\nsomething else\n`],
  ])('--pin-stdin reads the first line of standard input: %s', async (_case, text) => {
    const { profileId } = created(await cliOn(pipedInput(text), {}, 'customers', 'create', '--mobile', MOBILE, '--pin-stdin', '--json'));
    const storage = await cliDatabase();
    expect((await storage.customers.findCustomer(profileId))?.mobile).toBe(MOBILE);
    expect((await login(storage, PIN)).ok).toBe(true);
    await expectNoSecretPrinted(storage);
  });

  it.each([
    ['empty', ''],
    ['an empty first line', `\n${PIN}\n`],
  ])('--pin-stdin with standard input %s: exit 1, one line, nothing created', async (_case, text) => {
    const run = await cliOn(pipedInput(text), {}, 'customers', 'create', '--mobile', MOBILE, '--pin-stdin');
    expect(expectFailure(run, 1)).toBe('connect-auth: no PIN on standard input: --pin-stdin reads the PIN from its first line\n');
    expect(await cliJson<CustomerView[]>('customers', 'list')).toEqual([]);
  });

  it.each([
    ['6666', /too easy to guess: one digit or a short group/],
    ['123456', /too easy to guess: digits in order/],
    ['2580', /too easy to guess: it is one of the most common PINs/],
    ['48261', null],
    ['12ab', /PIN must be 4 to 6 digits/],
    [` ${PIN}`, /PIN must be 4 to 6 digits/],
    ['4'.repeat(5000), /PIN must be 4 to 6 digits/],
  ])('--pin-stdin %j is checked as at registration', async (pin, refusal) => {
    const run = await cliOn(pipedInput(`${pin}\n`), {}, 'customers', 'create', '--mobile', MOBILE, '--pin-stdin', '--json');
    if (refusal === null) {
      created(run);
      return;
    }
    expect(expectFailure(run, 1)).toMatch(refusal);
    expect(run.stderr).not.toContain(pin.trim());
    expect(await cliJson<CustomerView[]>('customers', 'list')).toEqual([]);
  });

  it('--pin with --pin-stdin is a usage mistake, and reads nothing', async () => {
    const stdin = pipedInput(`${PIN}\n`);
    const run = await cliOn(stdin, {}, 'customers', 'create', '--mobile', MOBILE, '--pin', PIN, '--pin-stdin');
    expect(expectFailure(run, 2)).toBe('connect-auth: give --pin or --pin-stdin, not both; see connect-auth customers create --help\n');
    expect(await stdin.readLine()).toBe(PIN);
  });

  it('without --pin or --pin-stdin, on standard input that is no terminal: exit 2 saying what to give', async () => {
    const stdin = pipedInput(`${PIN}\n`);
    const run = await cliOn(stdin, {}, 'customers', 'create', '--mobile', MOBILE, '--json');
    expect(expectFailure(run, 2)).toBe(
      'connect-auth: the PIN is asked on a terminal, and standard input is none: give --pin-stdin and the PIN on standard input; see connect-auth customers create --help\n',
    );
    // Nothing was read: a PIN on a pipe is taken only when --pin-stdin says so.
    expect(await stdin.readLine()).toBe(PIN);
    expect(await cliJson<CustomerView[]>('customers', 'list')).toEqual([]);
  });

  it('on a terminal, asks for the PIN twice and creates the customer', async () => {
    const terminal = terminalInput([PIN, PIN]);
    const { profileId } = created(await cliOn(terminal, {}, 'customers', 'create', '--mobile', MOBILE, '--name', 'Juan', '--json'));
    expect(terminal.prompts).toEqual(['PIN (4 to 6 digits): ', 'PIN again: ']);
    const storage = await cliDatabase();
    expect(await storage.customers.findCustomer(profileId)).toMatchObject({ mobile: MOBILE, name: 'Juan' });
    expect((await login(storage, PIN)).ok).toBe(true);
    await expectNoSecretPrinted(storage);
  });

  it('on a terminal, --pin-stdin asks once', async () => {
    const terminal = terminalInput([PIN]);
    created(await cliOn(terminal, {}, 'customers', 'create', '--mobile', MOBILE, '--pin-stdin', '--json'));
    expect(terminal.prompts).toEqual(['PIN: ']);
  });

  it.each([
    ['two different PINs', [PIN, WRONG_PIN], 'connect-auth: the two PINs differ; nothing changed\n', 2],
    ['a weak PIN (refused before it is asked again)', ['1212'], /^connect-auth: PIN is too easy to guess: one digit or a short group/, 1],
    ['a PIN of 3 digits', ['482'], 'connect-auth: PIN must be 4 to 6 digits\n', 1],
    ['nothing', [''], 'connect-auth: no PIN entered; nothing changed\n', 1],
  ] as const)('on a terminal, %s: exit 1, nothing created', async (_case, typed, message, prompts) => {
    const terminal = terminalInput(typed);
    const run = await cliOn(terminal, {}, 'customers', 'create', '--mobile', MOBILE);
    if (typeof message === 'string') expect(expectFailure(run, 1)).toBe(message);
    else expect(expectFailure(run, 1)).toMatch(message);
    expect(terminal.prompts).toHaveLength(prompts);
    expect(await cliJson<CustomerView[]>('customers', 'list')).toEqual([]);
    await expectNoSecretPrinted();
  });

  it('on a terminal, Ctrl-C at the prompt: exit 130, nothing created', async () => {
    const run = await cliOn(terminalInput(['^C']), {}, 'customers', 'create', '--mobile', MOBILE);
    expect(expectFailure(run, 130)).toBe('connect-auth: interrupted; nothing changed\n');
    expect(await cliJson<CustomerView[]>('customers', 'list')).toEqual([]);
  });

  it('a bad mobile, or one of a country not allowed, is refused before the PIN is asked', async () => {
    for (const [env, mobile, message] of [
      [{}, '09171234567', /mobile must be a valid mobile number/],
      [{ CONNECT_SMS_COUNTRIES: 'SG' }, MOBILE, /CONNECT_SMS_COUNTRIES does not list/],
    ] as const) {
      const terminal = terminalInput([PIN, PIN]);
      expect(expectFailure(await cliOn(terminal, env, 'customers', 'create', '--mobile', mobile), 1)).toMatch(message);
      expect(terminal.prompts).toEqual([]);
    }
  });

  it('a mobile registered already is refused after the PIN is asked, in the step that inserts', async () => {
    await createCustomer();
    const run = await cliOn(terminalInput([PIN, PIN]), {}, 'customers', 'create', '--mobile', MOBILE);
    expect(expectFailure(run, 1)).toMatch(/registered already/);
  });
});

describe('customers list and show', () => {
  it('lists customers as a JSON array, oldest first, without any PIN hash', async () => {
    expect(await cliJson<CustomerView[]>('customers', 'list')).toEqual([]);
    const first = await createCustomer('+639171234567', PIN, '--name', 'Juan');
    clock.advance(60);
    const second = await createCustomer('+447911123456', '7305');
    const list = await cliJson<CustomerView[]>('customers', 'list');
    expect(list).toEqual([
      { profileId: first.profileId, mobile: '+639171234567', userId: '+63******4567', name: 'Juan', status: 'active', lockedUntil: null, createdAt: '2026-01-01T00:00:00Z' },
      { profileId: second.profileId, mobile: '+447911123456', userId: '+44******3456', name: null, status: 'active', lockedUntil: null, createdAt: '2026-01-01T00:01:00Z' },
    ]);
    await expectNoSecretPrinted(await cliDatabase());
  });

  it('shows one customer by profile ID and by E.164 mobile in any spelling', async () => {
    const created = await createCustomer(MOBILE, PIN, '--name', 'Juan');
    const byId = await cliJson<CustomerView>('customers', 'show', created.profileId);
    expect(byId).toEqual({
      profileId: created.profileId,
      mobile: MOBILE,
      userId: '+63******4567',
      name: 'Juan',
      status: 'active',
      lockedUntil: null,
      createdAt: '2026-01-01T00:00:00Z',
      approvedClients: [],
      passkeys: [],
    });
    expect(await cliJson<CustomerView>('customers', 'show', MOBILE)).toEqual(byId);
    expect(await cliJson<CustomerView>('customers', 'show', '+63 917 123 4567')).toEqual(byId);
    const text = await cli('customers', 'show', created.profileId);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(created.profileId);
    await expectNoSecretPrinted(await cliDatabase());
  });

  it('refuses an unknown customer with exit 1 and a missing reference with exit 2', async () => {
    await createCustomer();
    expect(expectFailure(await cli('customers', 'show', '100000000000'), 1)).toMatch(/no customer 100000000000/);
    expect(expectFailure(await cli('customers', 'show', '+639179999999'), 1)).toMatch(/no customer/);
    expect(expectFailure(await cli('customers', 'lock', '+639179999999'), 1)).toMatch(/no customer/);
    expectFailure(await cli('customers', 'show'), 2);
  });
});

describe('customers lock and unlock', () => {
  it('lock stops every login with "disabled" and ends the customer\'s sessions', async () => {
    const created = await createCustomer();
    const storage = await cliDatabase();
    const customer = await storage.customers.findCustomer(created.profileId);
    const sessionId = await startSession(storage, customer!.profileId);
    expect(await sessionCustomer(storage, sessionId)).toBeDefined();

    clock.advance(100);
    const locked = await cliJson<CustomerView>('customers', 'lock', created.profileId);
    expect(locked).toMatchObject({ profileId: created.profileId, status: 'locked' });

    expect(await login(storage, PIN)).toEqual({ ok: false, reason: 'disabled' });
    expect(await sessionCustomer(storage, sessionId)).toBeUndefined();
    expect((await storage.customerSessions.findCustomerSession(hashCookieValue(sessionId)))?.endedAt).toBe(T0 + 100);
    expect((await cliJson<CustomerView>('customers', 'show', MOBILE)).status).toBe('locked');

    // Unlocking lets the customer log in again; the ended session stays ended.
    expect(await cliJson<CustomerView>('customers', 'unlock', MOBILE)).toMatchObject({ status: 'active', lockedUntil: null });
    expect((await login(storage, PIN)).ok).toBe(true);
    expect(await sessionCustomer(storage, sessionId)).toBeUndefined();
    await expectNoSecretPrinted(storage);
  });

  it('unlock also lifts a lockout from wrong PINs at once', async () => {
    await createCustomer();
    const storage = await cliDatabase();
    for (let i = 0; i < 4; i++) await login(storage, WRONG_PIN);
    expect(await login(storage, WRONG_PIN)).toEqual({ ok: false, reason: 'locked', until: T0 + 900, justLocked: true });
    expect(await cliJson<CustomerView>('customers', 'show', MOBILE)).toMatchObject({ status: 'active', lockedUntil: '2026-01-01T00:15:00Z' });

    clock.advance(60);
    expect(await cliJson<CustomerView>('customers', 'unlock', MOBILE)).toMatchObject({ status: 'active', lockedUntil: null });
    expect((await login(storage, PIN)).ok).toBe(true);
    await expectNoSecretPrinted(storage);
  });

  it('unlock clears the count of wrong PINs too', async () => {
    await createCustomer();
    const storage = await cliDatabase();
    for (let i = 0; i < 4; i++) await login(storage, WRONG_PIN);
    await cliJson('customers', 'unlock', MOBILE);
    for (let i = 0; i < 4; i++) expect(await login(storage, WRONG_PIN)).toEqual({ ok: false, reason: 'invalid' });
    expect(await login(storage, WRONG_PIN)).toMatchObject({ ok: false, reason: 'locked' });
  });
});

describe('customers: passkeys', () => {
  function passkey(profileId: string, credentialId: string, overrides: Partial<PasskeyRecord> = {}): PasskeyRecord {
    return {
      credentialId,
      profileId,
      userHandle: 'opaque-handle',
      publicKey: 'pQECAyYgASFYIA',
      signCount: 0,
      transports: ['internal'],
      aaguid: null,
      name: null,
      createdAt: T0,
      lastUsedAt: null,
      heldUntil: null,
      suspendedAt: null,
      ...overrides,
    };
  }

  interface PasskeyView {
    credentialId: string;
    createdAt: string;
    lastUsedAt: string | null;
    heldUntil: string | null;
    suspended: boolean;
  }

  it('show lists the passkeys: created, last used, held until (while held), suspended; never the key or the user handle', async () => {
    const created = await createCustomer();
    const storage = await cliDatabase();
    await storage.passkeys.insertPasskey(passkey(created.profileId, 'cred-held', { heldUntil: T0 + 86_400 }));
    await storage.passkeys.insertPasskey(passkey(created.profileId, 'cred-used', { createdAt: T0 + 1, lastUsedAt: T0 + 60, heldUntil: T0 - 1 }));
    const shown = await cliJson<{ passkeys: PasskeyView[] }>('customers', 'show', MOBILE);
    expect(shown.passkeys).toEqual([
      { credentialId: 'cred-held', createdAt: '2026-01-01T00:00:00Z', lastUsedAt: null, heldUntil: '2026-01-02T00:00:00Z', suspended: false },
      { credentialId: 'cred-used', createdAt: '2026-01-01T00:00:01Z', lastUsedAt: '2026-01-01T00:01:00Z', heldUntil: null, suspended: false },
    ]);
    const text = await cli('customers', 'show', MOBILE);
    expect(text.stdout).toMatch(/passkey: +cred-held \(created 2026-01-01T00:00:00Z, last used never, held until 2026-01-02T00:00:00Z\)/);
    expect(text.stdout).toMatch(/passkey: +cred-used \(created 2026-01-01T00:00:01Z, last used 2026-01-01T00:01:00Z\)/);
    for (const out of printed) {
      expect(out).not.toContain('opaque-handle');
      expect(out).not.toContain('pQECAyYgASFYIA');
    }
  });

  it('passkeys remove deletes one passkey of the customer, audited; an unknown one is NotFound (exit 1)', async () => {
    const created = await createCustomer();
    const other = await createCustomer('+639179876543');
    const storage = await cliDatabase();
    await storage.passkeys.insertPasskey(passkey(created.profileId, 'cred-1'));
    await storage.passkeys.insertPasskey(passkey(created.profileId, 'cred-2'));
    await storage.passkeys.insertPasskey(passkey(other.profileId, 'cred-other'));

    const removed = await cliJson<{ removedPasskey: string; passkeys: PasskeyView[] }>('customers', 'passkeys', 'remove', created.profileId, 'cred-1');
    expect(removed.removedPasskey).toBe('cred-1');
    expect(removed.passkeys.map((p) => p.credentialId)).toEqual(['cred-2']);
    expect(await storage.passkeys.findPasskey('cred-1')).toBeUndefined();
    const events = await storage.audit.listAuditEvents({ type: 'customer.passkey_removed', limit: 10 });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ subject: created.profileId, outcome: 'success', details: { credential_id: 'cred-1' } });
    expect(events[0]?.actor).toMatch(/^cli:/);

    expect(expectFailure(await cli('customers', 'passkeys', 'remove', MOBILE, 'cred-1'), 1)).toMatch(/has no passkey cred-1/);
    expect(expectFailure(await cli('customers', 'passkeys', 'remove', MOBILE, 'cred-other'), 1)).toMatch(/has no passkey cred-other/);
    expect(await storage.passkeys.findPasskey('cred-other')).toBeDefined();
    expect(expectFailure(await cli('customers', 'passkeys', 'remove', '+639170000000', 'cred-2'), 1)).toMatch(/no customer/);
    expect(expectFailure(await cli('customers', 'passkeys', 'remove', MOBILE), 2)).toMatch(/credential ID is required/);
    expectFailure(await cli('customers', 'passkeys'), 2);
    expect(await storage.audit.listAuditEvents({ type: 'customer.passkey_removed', limit: 10 })).toHaveLength(1);
  });

  it('lock suspends the passkeys in its transaction, and unlock restores them', async () => {
    const created = await createCustomer();
    const storage = await cliDatabase();
    await storage.passkeys.insertPasskey(passkey(created.profileId, 'cred-1'));
    clock.advance(100);
    const locked = await cliJson<{ passkeys: PasskeyView[]; ended: { passkeys: number } }>('customers', 'lock', MOBILE);
    expect(locked.ended.passkeys).toBe(1);
    expect(locked.passkeys).toMatchObject([{ credentialId: 'cred-1', suspended: true }]);
    expect((await storage.passkeys.findPasskey('cred-1'))?.suspendedAt).toBe(T0 + 100);
    expect(await storage.passkeys.recordPasskeyUse('cred-1', { signCount: 1, now: T0 + 101 })).toBe(false);
    const [event] = await storage.audit.listAuditEvents({ type: 'customer.locked', limit: 1 });
    expect(event?.details).toMatchObject({ passkeys_suspended: 1 });
    expect((await cli('customers', 'show', MOBILE)).stdout).toContain('suspended by the lock');

    const again = await cliJson<{ alreadyLocked: boolean; ended: { passkeys: number } }>('customers', 'lock', MOBILE);
    expect(again).toMatchObject({ alreadyLocked: true, ended: { passkeys: 0 } });

    // A passkey added while the customer was locked (a registration finishing after the lock) is suspended by locking again.
    await storage.passkeys.insertPasskey(passkey(created.profileId, 'cred-late'));
    const relocked = await cliJson<{ alreadyLocked: boolean; ended: { passkeys: number } }>('customers', 'lock', MOBILE);
    expect(relocked).toMatchObject({ alreadyLocked: true, ended: { passkeys: 1 } });
    expect(await storage.passkeys.recordPasskeyUse('cred-late', { signCount: 1, now: T0 + 101 })).toBe(false);
    await storage.passkeys.removePasskey(created.profileId, 'cred-late');

    const unlocked = await cliJson<{ passkeys: PasskeyView[] }>('customers', 'unlock', MOBILE);
    expect(unlocked.passkeys).toMatchObject([{ credentialId: 'cred-1', suspended: false }]);
    expect(await storage.passkeys.recordPasskeyUse('cred-1', { signCount: 1, now: T0 + 102 })).toBe(true);
  });
});
