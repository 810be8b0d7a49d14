import { describe, expect, it } from 'vitest';
import { T0 } from '../helpers/build.js';
import { cliWorkspace, expectFailure, parseOneDocument, requestToken, tokenOutcome, type CliWorkspace } from './command-line.js';
import { changeReached } from '../helpers/change-reached.js';

/**
 * `clients rotate-secret ID [--grace SECONDS]`: the new secret works at
 * once; the previous one keeps working until the grace period ends (default
 * CONNECT_SECRET_ROTATION_GRACE, 86400 s), then is refused. Time only moves
 * through the injected clock.
 */

const REDIRECT_URI = 'https://shop.example/callback';
const OK = 200;
const REFUSED = '401 invalid_client';

interface Created {
  clientId: string;
  clientSecret: string;
}

async function createClient(w: CliWorkspace): Promise<Created> {
  return w.cliJson<Created>(['clients', 'create', '--name', 'Acme Shop', '--redirect-uri', REDIRECT_URI, '--grants', 'client_credentials']);
}

async function rotate(w: CliWorkspace, id: string, ...extra: string[]): Promise<Created> {
  const rotated = await w.cliJson<Created>(['clients', 'rotate-secret', id, ...extra]);
  expect(Object.keys(rotated).sort()).toEqual(['clientId', 'clientSecret']);
  expect(rotated.clientId).toBe(id);
  expect(rotated.clientSecret).toMatch(/^csk_sandbox_[A-Za-z0-9_-]{43}$/);
  return rotated;
}

function iso(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().replace('.000Z', 'Z');
}

describe('rotate-secret with a grace period', () => {
  it.each([
    ['the default grace (86400 s)', [] as string[], {}, 86_400],
    ['CONNECT_SECRET_ROTATION_GRACE=120', [], { CONNECT_SECRET_ROTATION_GRACE: '120' }, 120],
    ['--grace 60', ['--grace', '60'], {}, 60],
    ['--grace 60 over CONNECT_SECRET_ROTATION_GRACE=120', ['--grace', '60'], { CONNECT_SECRET_ROTATION_GRACE: '120' }, 60],
    ['--grace 1', ['--grace', '1'], {}, 1],
  ])('%s: both secrets work until grace - 1; at grace the old one is refused and the new one works', async (_name, flags, extraEnv, grace) => {
    const w = cliWorkspace({ env: extraEnv });
    const created = await createClient(w);
    w.clock.advance(100);
    const rotatedAt = w.clock.nowSeconds();
    const rotated = await rotate(w, created.clientId, ...flags);
    expect(rotated.clientSecret).not.toBe(created.clientSecret);

    const t = await w.app();
    const both = async () => [await tokenOutcome(t, created.clientId, created.clientSecret), await tokenOutcome(t, created.clientId, rotated.clientSecret)];
    expect(await both()).toEqual([OK, OK]);
    w.clock.set(rotatedAt + grace - 1);
    expect(await both()).toEqual([OK, OK]);
    w.clock.set(rotatedAt + grace);
    expect(await both()).toEqual([REFUSED, OK]);
    w.clock.advance(86_400 * 30);
    expect(await both()).toEqual([REFUSED, OK]);

    const stored = await (await w.storage()).clients.findClient(created.clientId);
    expect(stored?.previousSecretExpiresAt).toBe(rotatedAt + grace);
  });

  it('the old secret refused after the grace period gets the same answer as any wrong secret', async () => {
    const w = cliWorkspace();
    const created = await createClient(w);
    await rotate(w, created.clientId, '--grace', '60');
    const t = await w.app();
    w.clock.advance(60);
    const old = await requestToken(t, created.clientId, created.clientSecret);
    const wrong = await requestToken(t, created.clientId, `csk_sandbox_${'A'.repeat(43)}`);
    expect(old.statusCode).toBe(401);
    expect(old.json()).toEqual(wrong.json());
    expect(old.headers['www-authenticate']).toBe(wrong.headers['www-authenticate']);
  });

  it('--grace 0: the old secret stops at once', async () => {
    const w = cliWorkspace();
    const created = await createClient(w);
    const rotated = await rotate(w, created.clientId, '--grace', '0');
    const t = await w.app();
    expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(REFUSED);
    expect(await tokenOutcome(t, created.clientId, rotated.clientSecret)).toBe(OK);
    const stored = await (await w.storage()).clients.findClient(created.clientId);
    expect(stored).toMatchObject({ previousSecretHash: null, previousSecretExpiresAt: null });
  });

  it('--grace 0 while a server is running: the old secret it just verified is refused within a second', async () => {
    const w = cliWorkspace();
    const created = await createClient(w);
    const t = await w.app();
    // Verified, so the running server holds the client and recognises the secret without a new HMAC.
    expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(OK);
    const rotated = await rotate(w, created.clientId, '--grace', '0');
    // The running app is another instance: the change reaches it within a second.
    await changeReached(async () => (await tokenOutcome(t, created.clientId, created.clientSecret)) === REFUSED);
    expect(await tokenOutcome(t, created.clientId, rotated.clientSecret)).toBe(OK);
    expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(REFUSED);
  });

  it('CONNECT_SECRET_ROTATION_GRACE=0 makes rotations end the old secret at once', async () => {
    const w = cliWorkspace({ env: { CONNECT_SECRET_ROTATION_GRACE: '0' } });
    const created = await createClient(w);
    const rotated = await rotate(w, created.clientId);
    const t = await w.app();
    expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(REFUSED);
    expect(await tokenOutcome(t, created.clientId, rotated.clientSecret)).toBe(OK);
  });

  it('a second rotation ends the first old secret at once; the second old one gets its own grace', async () => {
    const w = cliWorkspace();
    const created = await createClient(w);
    const first = await rotate(w, created.clientId);
    w.clock.advance(3600);
    const secondAt = w.clock.nowSeconds();
    const second = await rotate(w, created.clientId, '--grace', '600');

    const t = await w.app();
    const all = async () => [
      await tokenOutcome(t, created.clientId, created.clientSecret),
      await tokenOutcome(t, created.clientId, first.clientSecret),
      await tokenOutcome(t, created.clientId, second.clientSecret),
    ];
    expect(await all()).toEqual([REFUSED, OK, OK]);
    w.clock.set(secondAt + 599);
    expect(await all()).toEqual([REFUSED, OK, OK]);
    w.clock.set(secondAt + 600);
    expect(await all()).toEqual([REFUSED, REFUSED, OK]);
  });

  it('a second rotation with --grace 0 ends every earlier secret at once', async () => {
    const w = cliWorkspace();
    const created = await createClient(w);
    const first = await rotate(w, created.clientId);
    const second = await rotate(w, created.clientId, '--grace', '0');
    const t = await w.app();
    expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(REFUSED);
    expect(await tokenOutcome(t, created.clientId, first.clientSecret)).toBe(REFUSED);
    expect(await tokenOutcome(t, created.clientId, second.clientSecret)).toBe(OK);
  });

  it('a running server takes the new secret within a second, and keeps the old one working exactly for the grace', async () => {
    const w = cliWorkspace();
    const created = await createClient(w);
    const t = await w.app();
    // The server has read (and cached) the client before the rotation.
    expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(OK);
    const rotated = await rotate(w, created.clientId, '--grace', '60');
    await changeReached(async () => (await tokenOutcome(t, created.clientId, rotated.clientSecret)) === OK);
    expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(OK);
    w.clock.advance(59);
    expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(OK);
    w.clock.advance(1);
    expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(REFUSED);
    expect(await tokenOutcome(t, created.clientId, rotated.clientSecret)).toBe(OK);
  });

  it('a disabled client is refused with either secret during the grace period', async () => {
    const w = cliWorkspace();
    const created = await createClient(w);
    const rotated = await rotate(w, created.clientId, '--grace', '600');
    await w.cliJson(['clients', 'disable', created.clientId]);
    const t = await w.app();
    expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(REFUSED);
    expect(await tokenOutcome(t, created.clientId, rotated.clientSecret)).toBe(REFUSED);
  });
});

describe('rotate-secret output', () => {
  it('--json is exactly {clientId, clientSecret}', async () => {
    const w = cliWorkspace();
    const created = await createClient(w);
    const run = await w.cli(['clients', 'rotate-secret', created.clientId, '--grace', '60', '--json']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const rotated = parseOneDocument(run.stdout) as Record<string, unknown>;
    expect(rotated).toEqual({ clientId: created.clientId, clientSecret: expect.stringMatching(/^csk_sandbox_[A-Za-z0-9_-]{43}$/) });
    expect(run.stdout).not.toContain(created.clientSecret);
  });

  it('the text says until when the previous secret works, and shows the new one once', async () => {
    const w = cliWorkspace();
    const created = await createClient(w);
    w.clock.advance(30);
    const run = await w.cli(['clients', 'rotate-secret', created.clientId, '--grace', '90']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain(`The previous secret keeps working until ${iso(T0 + 30 + 90)}.`);
    const secret = /client secret:\s+(\S+)/.exec(run.stdout)?.[1];
    expect(secret).toMatch(/^csk_sandbox_/);
    expect(run.stdout.split(secret as string)).toHaveLength(2);
    expect(run.stdout).not.toContain(created.clientSecret);

    const now = await w.cli(['clients', 'rotate-secret', created.clientId, '--grace', '0']);
    expect(now.stdout).toContain('The previous secret no longer works.');
  });
});

describe('rotate-secret refuses a bad grace period', () => {
  it.each([['abc'], ['-1'], ['1.5'], ['60s'], [''], [' 60'], ['1e3'], ['0x10'], ['2592001']])(
    '--grace=%j exits 2 with one line, and the client keeps its secret',
    async (value) => {
      const w = cliWorkspace();
      const created = await createClient(w);
      const before = await (await w.storage()).clients.findClient(created.clientId);
      const events = await w.auditEvents();
      const line = expectFailure(await w.cli(['clients', 'rotate-secret', created.clientId, `--grace=${value}`, '--json']), 2);
      expect(line).toMatch(/--grace must be a whole number of seconds from 0 to 2592000/);
      expect(await (await w.storage()).clients.findClient(created.clientId)).toEqual(before);
      expect(await w.auditEvents()).toEqual(events);
      const t = await w.app();
      expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(OK);
    },
  );

  it('--grace 2592000 (30 days) is the longest accepted', async () => {
    const w = cliWorkspace();
    const created = await createClient(w);
    await rotate(w, created.clientId, '--grace', '2592000');
    const stored = await (await w.storage()).clients.findClient(created.clientId);
    expect(stored?.previousSecretExpiresAt).toBe(T0 + 2_592_000);
  });

  it.each([['abc'], ['-1'], ['1.5']])('CONNECT_SECRET_ROTATION_GRACE=%j stops the command with one line naming it', async (value) => {
    const w = cliWorkspace();
    const created = await createClient(w);
    const line = expectFailure(await w.cli(['clients', 'rotate-secret', created.clientId], { CONNECT_SECRET_ROTATION_GRACE: value }), 'non-zero');
    expect(line).toContain('CONNECT_SECRET_ROTATION_GRACE');
    const t = await w.app();
    expect(await tokenOutcome(t, created.clientId, created.clientSecret)).toBe(OK);
  });
});
