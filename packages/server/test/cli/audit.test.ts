import { userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/core/audit/audit-log.js';
import { AUDIT_EVENT_TYPES } from '../../src/core/audit/audit-log.js';
import { T0 } from '../helpers/build.js';
import { cliWorkspace, expectFailure, type CliWorkspace } from './command-line.js';

/**
 * The audit log of admin actions (CLI) and `connect-auth audit`, which reads
 * it: every change an operator makes is one event with time, actor, subject
 * and outcome, and never a secret, PIN or hash.
 */

const ACTOR = `cli:${userInfo().username}`;
const REDIRECT_URI = 'https://shop.example/callback';
const MOBILE = '+639171234567';
const PIN = '482915';

/** One event as `audit --json` prints it. */
interface EventView {
  at: string;
  type: string;
  actor: string;
  subject: string | null;
  outcome: string;
  details: Record<string, unknown>;
  requestId: string | null;
}

function iso(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().replace('.000Z', 'Z');
}

/** `audit --json ...options`: the events, checked to have exactly the documented fields. */
async function audit(w: CliWorkspace, ...options: string[]): Promise<EventView[]> {
  const events = await w.cliJson<EventView[]>(['audit', ...options]);
  expect(Array.isArray(events)).toBe(true);
  for (const event of events) expect(Object.keys(event).sort()).toEqual(['actor', 'at', 'details', 'outcome', 'requestId', 'subject', 'type']);
  return events;
}

/** Runs an admin command that must succeed, and returns the events it added. */
async function recorded(w: CliWorkspace, argv: string[]): Promise<{ result: Record<string, unknown>; events: AuditRecord[] }> {
  const before = (await w.auditEvents()).length;
  const result = await w.cliJson(argv);
  return { result, events: (await w.auditEvents()).slice(before) };
}

describe('admin actions are recorded', () => {
  it('every admin command records exactly one event: time, actor, subject and outcome', async () => {
    const w = cliWorkspace();
    const step = async (argv: string[]) => {
      w.clock.advance(10);
      return recorded(w, argv);
    };

    const create = await step(['clients', 'create', '--name', 'Acme Shop', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials']);
    const clientId = create.result.clientId as string;
    const customer = await step(['customers', 'create', '--mobile', MOBILE, '--pin', PIN]);
    const profileId = customer.result.profileId as string;
    const steps = [
      { run: create, type: 'client.created', subject: clientId, details: { name: 'Acme Shop', delivered_to: null } },
      {
        run: await step(['clients', 'update', clientId, '--grants', 'client_credentials,authorization_code,refresh_token']),
        type: 'client.updated',
        subject: clientId,
        details: { redirect_uri: REDIRECT_URI, grants: 'client_credentials authorization_code refresh_token', require_pkce: false, scopes: '' },
      },
      { run: await step(['clients', 'disable', clientId]), type: 'client.disabled', subject: clientId },
      { run: await step(['clients', 'enable', clientId]), type: 'client.enabled', subject: clientId },
      {
        run: await step(['clients', 'rotate-secret', clientId, '--grace', '60']),
        type: 'client.secret_rotated',
        subject: clientId,
        details: { grace_seconds: 60, delivered_to: null },
      },
      { run: customer, type: 'customer.created', subject: profileId },
      { run: await step(['customers', 'lock', profileId]), type: 'customer.locked', subject: profileId },
      { run: await step(['customers', 'unlock', MOBILE]), type: 'customer.unlocked', subject: profileId },
    ];
    const keys = await step(['keys', 'rotate']);
    steps.push({ run: keys, type: 'keys.rotated', subject: keys.result.kid as string });

    for (const { run, type, subject, ...rest } of steps) {
      expect(run.events, type).toHaveLength(1);
      const [event] = run.events;
      expect(event).toMatchObject({ type, actor: ACTOR, subject, outcome: 'success' });
      if ('details' in rest) expect(event?.details).toEqual(rest.details);
    }
    // Each event carries the time of its command (10 s apart, in the order run).
    const all = await w.auditEvents();
    expect(all.map((e) => e.type)).toEqual([
      'client.created',
      'customer.created',
      'client.updated',
      'client.disabled',
      'client.enabled',
      'client.secret_rotated',
      'customer.locked',
      'customer.unlocked',
      'keys.rotated',
    ]);
    expect(all.map((e) => e.at)).toEqual(all.map((_e, i) => T0 + 10 * (i + 1)));

    // `audit` shows the same events.
    const shown = await audit(w);
    expect(shown).toEqual(
      all.map((e) => ({ at: iso(e.at), type: e.type, actor: ACTOR, subject: e.subject, outcome: 'success', details: e.details ?? {}, requestId: null })),
    );
  });

  it('never records a client secret, a secret hash, a PIN or a PIN hash', async () => {
    const w = cliWorkspace();
    const created = await w.cliJson<{ clientId: string; clientSecret: string }>(['clients', 'create', '--name', 'Acme', '--redirect-uri', REDIRECT_URI]);
    const before = await (await w.storage()).clients.findClient(created.clientId);
    const rotated = await w.cliJson<{ clientSecret: string }>(['clients', 'rotate-secret', created.clientId]);
    const after = await (await w.storage()).clients.findClient(created.clientId);
    const again = await w.cliJson<{ clientSecret: string }>(['clients', 'rotate-secret', created.clientId, '--grace', '0']);
    const customer = await w.cliJson<{ profileId: string }>(['customers', 'create', '--mobile', MOBILE, '--pin', PIN, '--name', 'Juan']);
    await w.cliJson(['customers', 'lock', customer.profileId]);
    await w.cliJson(['customers', 'unlock', customer.profileId]);
    const pinHash = (await (await w.storage()).customers.findCustomer(customer.profileId))?.pinHash;

    const secrets = [created.clientSecret, rotated.clientSecret, again.clientSecret, before?.secretHash, after?.secretHash, after?.previousSecretHash, pinHash, w.masterKey().toString('base64')];
    expect(secrets.every((s) => typeof s === 'string' && s.length >= 20)).toBe(true);
    const serialized = JSON.stringify(await w.auditEvents());
    expect((await w.auditEvents()).length).toBe(6);
    for (const secret of secrets) expect(serialized).not.toContain(secret);
    expect(serialized).not.toContain(PIN);
    expect(serialized).not.toContain('csk_');
    const shown = await w.cli(['audit']);
    for (const secret of secrets) expect(shown.stdout).not.toContain(secret);
    expect(shown.stdout).not.toContain(PIN);
  });

  it('reads and refused commands record nothing', async () => {
    const w = cliWorkspace();
    const created = await w.cliJson<{ clientId: string }>(['clients', 'create', '--name', 'Acme', '--redirect-uri', REDIRECT_URI]);
    const customer = await w.cliJson<{ profileId: string }>(['customers', 'create', '--mobile', MOBILE, '--pin', PIN]);
    const events = await w.auditEvents();
    expect(events).toHaveLength(2);

    for (const argv of [
      ['clients', 'list'],
      ['clients', 'show', created.clientId],
      ['customers', 'list'],
      ['customers', 'show', customer.profileId],
      ['keys', 'list'],
      ['migrate'],
      ['audit'],
    ]) {
      expect((await w.cli([...argv, '--json'])).code).toBe(0);
    }
    for (const argv of [
      ['clients', 'create', '--name', 'Acme', '--redirect-uri', 'https://shop.example/cb#x'],
      ['clients', 'update', created.clientId, '--redirect-uri', 'javascript:alert(1)'],
      ['clients', 'update', created.clientId],
      ['clients', 'disable', 'cid_sandbox_nope'],
      ['clients', 'rotate-secret', 'cid_sandbox_nope'],
      ['clients', 'rotate-secret', created.clientId, '--grace', 'soon'],
      ['customers', 'create', '--mobile', MOBILE, '--pin', '135790'],
      ['customers', 'create', '--mobile', '+639181234321', '--pin', '12'],
      ['customers', 'lock', '+639189999999'],
    ]) {
      expectFailure(await w.cli(argv), 'non-zero');
    }
    expect(await w.auditEvents()).toEqual(events);
  });
});

describe('connect-auth audit', () => {
  /** A workspace with one `client.created` event at T0. */
  async function withEventAtT0() {
    const w = cliWorkspace();
    const created = await w.cliJson<{ clientId: string }>(['clients', 'create', '--name', 'Acme', '--redirect-uri', REDIRECT_URI]);
    return { w, clientId: created.clientId };
  }

  it('shows the last 24 hours by default', async () => {
    const { w, clientId } = await withEventAtT0();
    expect(await audit(w)).toEqual([
      { at: '2026-01-01T00:00:00Z', type: 'client.created', actor: ACTOR, subject: clientId, outcome: 'success', details: { name: 'Acme', delivered_to: null }, requestId: null },
    ]);
    w.clock.set(T0 + 86_400);
    expect(await audit(w)).toHaveLength(1);
    w.clock.set(T0 + 86_401);
    expect(await audit(w)).toEqual([]);
    const text = await w.cli(['audit']);
    expect(text).toEqual({ code: 0, stdout: `no audit events since ${iso(T0 + 1)}\n`, stderr: '' });
  });

  it('--since an ISO date or time', async () => {
    const { w } = await withEventAtT0();
    w.clock.set(T0 + 30 * 86_400);
    expect(await audit(w)).toEqual([]);
    expect(await audit(w, '--since', '2026-01-01')).toHaveLength(1);
    expect(await audit(w, '--since', '2025-12-31')).toHaveLength(1);
    expect(await audit(w, '--since', '2026-01-01T00:00:00Z')).toHaveLength(1);
    expect(await audit(w, '--since', '2026-01-01T00:00:01Z')).toEqual([]);
    expect(await audit(w, '--since', '2026-01-01T08:00:00+08:00')).toHaveLength(1);
    expect(await audit(w, '--since', '2026-01-02')).toEqual([]);
  });

  it('--since a duration back from now', async () => {
    const { w } = await withEventAtT0();
    w.clock.set(T0 + 3 * 3600);
    await w.cliJson(['keys', 'rotate']);
    w.clock.set(T0 + 4 * 3600);
    const types = async (since: string) => (await audit(w, '--since', since)).map((e) => e.type);
    expect(await types('2h')).toEqual(['keys.rotated']);
    expect(await types('1h')).toEqual(['keys.rotated']);
    expect(await types('59m')).toEqual([]);
    expect(await types('3599s')).toEqual([]);
    expect(await types('4h')).toEqual(['client.created', 'keys.rotated']);
    expect(await types('239m')).toEqual(['keys.rotated']);
    expect(await types('14400s')).toEqual(['client.created', 'keys.rotated']);
    expect(await types('1d')).toEqual(['client.created', 'keys.rotated']);
  });

  it('--type keeps one kind of event', async () => {
    const { w, clientId } = await withEventAtT0();
    await w.cliJson(['clients', 'disable', clientId]);
    await w.cliJson(['clients', 'create', '--name', 'Beta', '--redirect-uri', REDIRECT_URI]);
    const created = await audit(w, '--type', 'client.created');
    expect(created.map((e) => e.type)).toEqual(['client.created', 'client.created']);
    expect((await audit(w, '--type', 'client.disabled')).map((e) => e.subject)).toEqual([clientId]);
    expect(await audit(w, '--type', 'keys.rotated')).toEqual([]);
    expect(await audit(w, '--type', 'client.created', '--since', '2026-01-02')).toEqual([]);
  });

  it('--limit shows the newest that many, listed oldest first', async () => {
    const { w, clientId } = await withEventAtT0();
    for (let i = 0; i < 4; i++) {
      w.clock.advance(2);
      await w.cliJson(['clients', i % 2 === 0 ? 'disable' : 'enable', clientId]);
    }
    const all = await audit(w);
    expect(all.map((e) => e.type)).toEqual(['client.created', 'client.disabled', 'client.enabled', 'client.disabled', 'client.enabled']);
    expect(await audit(w, '--limit', '2')).toEqual(all.slice(3));
    expect(await audit(w, '--limit', '1', '--type', 'client.enabled')).toEqual([all[4]]);
    expect(await audit(w, '--limit', '100000')).toEqual(all);
  });

  it('prints one line per event for people: time, type, outcome, actor, subject, details', async () => {
    const { w, clientId } = await withEventAtT0();
    w.clock.advance(5);
    await w.cliJson(['clients', 'rotate-secret', clientId, '--grace', '60']);
    const run = await w.cli(['audit']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^2026-01-01T00:00:00Z\\s+client\\.created\\s+success\\s+${ACTOR}\\s+${clientId}\\s+name=Acme delivered_to=null$`));
    expect(lines[1]).toMatch(new RegExp(`^2026-01-01T00:00:05Z\\s+client\\.secret_rotated\\s+success\\s+${ACTOR}\\s+${clientId}\\s+grace_seconds=60 delivered_to=null$`));
  });

  it.each([['yesterday'], ['2h30m'], ['-2h'], ['2h '], ['2026'], ['2026-13-45'], ['2026-02-30'], ['2026-01-01T25:00:00Z'], [''], ['2026-01-01garbage']])(
    '--since=%j exits 2 with one line',
    async (value) => {
      const { w } = await withEventAtT0();
      const line = expectFailure(await w.cli(['audit', `--since=${value}`, '--json']), 2);
      expect(line).toMatch(/--since must be an ISO date or time .* or a duration/);
    },
  );

  it.each([['client.deleted'], ['CLIENT.CREATED'], ['client'], ['']])('--type=%j exits 2 with one line listing the types', async (value) => {
    const { w } = await withEventAtT0();
    const line = expectFailure(await w.cli(['audit', `--type=${value}`, '--json']), 2);
    expect(line).toContain(`unknown --type ${JSON.stringify(value)}`);
    for (const type of AUDIT_EVENT_TYPES) expect(line).toContain(type);
  });

  it.each([['0'], ['-1'], ['1.5'], ['abc'], ['100001'], ['']])('--limit=%j exits 2 with one line', async (value) => {
    const { w } = await withEventAtT0();
    const line = expectFailure(await w.cli(['audit', `--limit=${value}`, '--json']), 2);
    expect(line).toMatch(/--limit must be a whole number from 1 to 100000/);
  });

  it('takes no arguments', async () => {
    const { w } = await withEventAtT0();
    expect(expectFailure(await w.cli(['audit', 'today']), 2)).toMatch(/too many arguments for audit/);
  });
});

describe('audit: the request that caused an event', () => {
  it('--json and the text show the request ID an event was recorded with', async () => {
    const w = cliWorkspace();
    expect(await audit(w)).toEqual([]); // creates the database
    const storage = await w.storage();
    await storage.audit.insertAuditEvent({
      id: '000000000001000001aaaaaaaaaaaa',
      at: T0,
      type: 'client.authentication_failed',
      actor: 'ip:192.0.2.7',
      subject: 'cid_sandbox_x',
      outcome: 'failure',
      details: { method: 'client_secret_basic' },
      requestId: 'lb-7f3a:42',
    });
    expect(await audit(w)).toEqual([
      { at: '2026-01-01T00:00:00Z', type: 'client.authentication_failed', actor: 'ip:192.0.2.7', subject: 'cid_sandbox_x', outcome: 'failure', details: { method: 'client_secret_basic' }, requestId: 'lb-7f3a:42' },
    ]);
    expect((await w.cli(['audit'])).stdout).toContain('request=lb-7f3a:42');
  });
});

describe('stored values on the operator terminal', () => {
  const HOSTILE = 'evil\u001b[2J\u001b[31m\n2026-01-01T00:00:00Z  client.secret_rotated         success cli:root  acme\u2028\u0007';
  const ESCAPED = 'evil\\x1b[2J\\x1b[31m\\x0a2026-01-01T00:00:00Z  client.secret_rotated         success cli:root  acme\\u2028\\x07';

  /** No control character (nor line separator) left in `text` but the newline at the end of each line. */
  const expectPrintable = (text: string) => expect(text.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);

  it('audit prints a claimed client ID holding escape sequences and newlines as visible escapes, on its own line', async () => {
    const w = cliWorkspace();
    const storage = await w.storage();
    await storage.audit.insertAuditEvent({
      id: 'hostile-event',
      at: T0,
      type: 'client.authentication_failed',
      actor: 'ip:203.0.113.7',
      subject: HOSTILE,
      outcome: 'failure',
      details: { method: 'client_secret_basic', reason: `bad\u001b[0m\r` },
    });
    const run = await w.cli(['audit']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expectPrintable(run.stdout);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`ip:203.0.113.7  ${ESCAPED}  method=client_secret_basic reason=bad\\x1b[0m\\x0d`);
    // JSON output keeps the value itself (JSON escapes it).
    expect((await audit(w))[0]?.subject).toBe(HOSTILE);
  });

  it('clients list and clients show print a stored name holding them as visible escapes', async () => {
    const w = cliWorkspace();
    const created = await w.cliJson<{ clientId: string }>(['clients', 'create', '--name', 'Acme', '--redirect-uri', REDIRECT_URI]);
    const storage = await w.storage();
    await storage.clients.updateClient(created.clientId, { name: HOSTILE }, T0 + 1);
    for (const argv of [['clients', 'list'], ['clients', 'show', created.clientId]]) {
      const run = await w.cli(argv);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expectPrintable(run.stdout);
      expect(run.stdout).toContain(ESCAPED);
    }
    expect((await w.cliJson<{ name: string }>(['clients', 'show', created.clientId])).name).toBe(HOSTILE);
  });
});
