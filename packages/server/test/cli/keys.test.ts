import { beforeEach, describe, expect, it } from 'vitest';
import { isoTime } from '../../src/cli/commands/output.js';
import { KEY_RETIREMENT_MARGIN_SECONDS } from '../../src/core/lifetimes.js';
import { T0 } from '../helpers/build.js';
import { cliWorkspace, expectFailure, type CliWorkspace } from './command-line.js';

interface KeyView {
  kid: string;
  alg: string;
  use: 'sig' | 'enc';
  status: string;
  createdAt: string;
  activatesAt: string;
  verifyUntil?: string;
}

interface RotateView extends KeyView {
  encryptionKid: string;
}

interface RevokeView {
  kid: string;
  status: 'revoked';
  alreadyRevoked: boolean;
  cancelledRotation: boolean;
  revoked: string[];
}

/** The default publication delay: `CONNECT_JWKS_MAX_AGE` (300) + `KEY_PUBLICATION_MARGIN_SECONDS` (5). */
const DELAY = 305;

let ws: CliWorkspace;

beforeEach(() => {
  ws = cliWorkspace();
});

const list = () => ws.cliJson<KeyView[]>(['keys', 'list']);
async function statusOf(kid: string): Promise<string | undefined> {
  return (await list()).find((k) => k.kid === kid)?.status;
}

/** A database with the first keys (as a first server start makes them), and a rotation pending. */
async function pendingRotation(): Promise<{ first: KeyView[]; next: RotateView }> {
  await ws.cliJson(['keys', 'rotate']);
  const first = await list();
  ws.clock.advance(10);
  const next = await ws.cliJson<RotateView>(['keys', 'rotate']);
  return { first, next };
}

describe('keys list', () => {
  it('lists no keys before any exist', async () => {
    expect(await list()).toEqual([]);
  });

  it('shows every key with its derived status, creation and activation', async () => {
    const { first, next } = await pendingRotation();
    const listed = await list();
    expect(listed).toHaveLength(4);
    for (const key of listed) {
      expect(Object.keys(key).sort()).toEqual(
        ['activatesAt', 'alg', 'createdAt', 'kid', 'status', 'use', ...(key.verifyUntil ? ['verifyUntil'] : [])].sort(),
      );
    }
    expect(listed.find((k) => k.kid === next.kid)).toEqual({
      kid: next.kid,
      alg: 'ES256',
      use: 'sig',
      status: 'next',
      createdAt: isoTime(T0 + 10),
      activatesAt: isoTime(T0 + 10 + DELAY),
    });
    expect(listed.find((k) => k.kid === next.encryptionKid)).toMatchObject({ alg: 'A256GCM', use: 'enc', status: 'next' });
    for (const old of first) {
      expect(listed.find((k) => k.kid === old.kid)).toMatchObject({
        status: 'active',
        activatesAt: isoTime(T0),
        verifyUntil: isoTime(T0 + 10 + DELAY + 604_800 + KEY_RETIREMENT_MARGIN_SECONDS),
      });
    }
    const text = (await ws.cli(['keys', 'list'])).stdout;
    expect(text).toContain(`${next.kid}  ES256  sig  next     created ${isoTime(T0 + 10)}  activates ${isoTime(T0 + 10 + DELAY)}`);
  });
});

describe('keys rotate', () => {
  it('on an empty database makes keys that are active at once', async () => {
    const first = await ws.cliJson<RotateView>(['keys', 'rotate']);
    expect(first).toEqual({
      kid: expect.any(String),
      alg: 'ES256',
      use: 'sig',
      status: 'active',
      createdAt: '2026-01-01T00:00:00Z',
      activatesAt: '2026-01-01T00:00:00Z',
      encryptionKid: expect.any(String),
    });
    expect((await list()).map((k) => k.status)).toEqual(['active', 'active']);
  });

  it('publishes new keys as next; they become active after the max-age of the JWKS plus 5 s, and the old ones retire', async () => {
    const { first, next } = await pendingRotation();
    expect(next).toMatchObject({ status: 'next', createdAt: isoTime(T0 + 10), activatesAt: isoTime(T0 + 10 + DELAY) });
    ws.clock.set(T0 + 10 + DELAY - 1);
    expect(await statusOf(next.kid)).toBe('next');
    ws.clock.set(T0 + 10 + DELAY);
    const listed = await list();
    expect(listed.filter((k) => k.status === 'active').map((k) => k.kid).sort()).toEqual([next.kid, next.encryptionKid].sort());
    for (const old of first) expect(listed.find((k) => k.kid === old.kid)?.status).toBe('retired');
  });

  it('the publication delay follows CONNECT_JWKS_MAX_AGE', async () => {
    const env = { CONNECT_JWKS_MAX_AGE: '60' };
    await ws.cliJson(['keys', 'rotate'], env);
    const next = await ws.cliJson<RotateView>(['keys', 'rotate'], env);
    expect(next.activatesAt).toBe(isoTime(T0 + 65));
    const line = expectFailure(await ws.cli(['keys', 'rotate'], { CONNECT_JWKS_MAX_AGE: '86401' }), 1);
    expect(line).toBe('connect-auth: CONNECT_JWKS_MAX_AGE must be between 1 and 86400, not 86401\n');
  });

  it('is refused while a rotation is pending, in one line naming the pending key and when it activates', async () => {
    const { next } = await pendingRotation();
    const before = await list();
    ws.clock.advance(30);
    const line = expectFailure(await ws.cli(['keys', 'rotate']), 1);
    expect(line).toBe(
      `connect-auth: a rotation is pending: key ${next.kid} becomes the signing key at ${next.activatesAt} (in ${DELAY - 30} s); ` +
        'run keys rotate --now to activate it at once\n',
    );
    expect(await list()).toEqual(before);
  });

  it('--now activates the pending keys at once', async () => {
    const { first, next } = await pendingRotation();
    ws.clock.advance(5);
    const run = await ws.cli(['keys', 'rotate', '--now']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^pending signing key ${next.kid} \\(ES256\\) and its token encryption key are active now; `));
    const listed = await list();
    expect(listed.find((k) => k.kid === next.kid)).toMatchObject({ status: 'active', activatesAt: isoTime(T0 + 15) });
    expect(listed.find((k) => k.kid === next.encryptionKid)?.status).toBe('active');
    for (const old of first) expect(listed.find((k) => k.kid === old.kid)?.status).toBe('retired');
    expect(listed).toHaveLength(4);
  });

  it('--now with nothing pending makes new keys that are active at once', async () => {
    await ws.cliJson(['keys', 'rotate']);
    ws.clock.advance(5);
    const now = await ws.cliJson<RotateView>(['keys', 'rotate', '--now']);
    expect(now).toMatchObject({ status: 'active', activatesAt: isoTime(T0 + 5) });
    const listed = await list();
    expect(listed.filter((k) => k.status === 'active').map((k) => k.kid).sort()).toEqual([now.kid, now.encryptionKid].sort());
    expect(listed.filter((k) => k.status === 'retired')).toHaveLength(2);
  });

  it('a retired key shows expired once every token it signed has expired, not before', async () => {
    const ttls = { CONNECT_CODE_TTL: '300', CONNECT_ACCESS_TOKEN_TTL: '600', CONNECT_REFRESH_TOKEN_TTL: '1200' };
    const old = await ws.cliJson<RotateView>(['keys', 'rotate'], ttls);
    await ws.cliJson(['keys', 'rotate'], ttls);
    const listed = (await ws.cliJson<KeyView[]>(['keys', 'list'], ttls)).find((k) => k.kid === old.kid);
    // It signs until the new key activates; its last token lives the longest lifetime (1200 s) after that.
    const verifyUntil = T0 + DELAY + 1200 + KEY_RETIREMENT_MARGIN_SECONDS;
    expect(listed?.verifyUntil).toBe(isoTime(verifyUntil));
    ws.clock.set(verifyUntil - 1);
    expect(await statusOf(old.kid)).toBe('retired');
    ws.clock.set(verifyUntil);
    expect(await statusOf(old.kid)).toBe('expired');
  });

  it('the key a running app created is listed, and the app switches to the rotated-in key at its activation', async () => {
    await ws.cliJson(['migrate']);
    const t = await ws.app();
    const serverKid = t.keyRing.signingKey().kid;
    expect((await list()).filter((k) => k.use === 'sig')).toEqual([expect.objectContaining({ kid: serverKid, status: 'active' })]);
    const rotated = await ws.cliJson<RotateView>(['keys', 'rotate']);
    await t.keyRing.reload();
    expect(t.keyRing.signingKey().kid).toBe(serverKid);
    ws.clock.set(T0 + DELAY);
    expect(t.keyRing.signingKey().kid).toBe(rotated.kid);
    expect(await statusOf(serverKid)).toBe('retired');
  });
});

describe('keys revoke', () => {
  it('revokes a retired key: it is listed as revoked and leaves the JWKS; revoking it again changes nothing', async () => {
    const { first, next } = await pendingRotation();
    ws.clock.set(T0 + 10 + DELAY);
    const old = first.find((k) => k.use === 'sig')!;
    const t = await ws.app();
    expect(t.keyRing.jwks().keys.map((k) => k.kid)).toContain(old.kid);

    const revoked = await ws.cliJson<RevokeView>(['keys', 'revoke', old.kid]);
    expect(revoked).toEqual({ kid: old.kid, status: 'revoked', alreadyRevoked: false, cancelledRotation: false, revoked: [old.kid] });
    expect(await statusOf(old.kid)).toBe('revoked');
    expect((await list()).find((k) => k.kid === old.kid)).not.toHaveProperty('verifyUntil');
    await t.keyRing.reload();
    expect(t.keyRing.jwks().keys.map((k) => k.kid)).toEqual([next.kid]);

    const again = await ws.cli(['keys', 'revoke', old.kid]);
    expect(again).toMatchObject({ code: 0, stderr: '', stdout: `key ${old.kid} was revoked already; nothing changed\n` });
    expect(await ws.cliJson<RevokeView>(['keys', 'revoke', old.kid])).toMatchObject({ alreadyRevoked: true, revoked: [] });
    expect((await ws.auditEvents()).filter((e) => e.type === 'keys.revoked')).toHaveLength(1);
  });

  it.each(['sig', 'enc'] as const)('refuses the current %s key in one line, changing nothing', async (use) => {
    await ws.cliJson(['keys', 'rotate']);
    const current = (await list()).find((k) => k.use === use)!;
    const role = use === 'sig' ? 'signing' : 'encryption';
    const line = expectFailure(await ws.cli(['keys', 'revoke', current.kid]), 1);
    expect(line).toBe(`connect-auth: key ${current.kid} is the current ${role} key; run keys rotate --now first, then revoke it\n`);
    expect(await statusOf(current.kid)).toBe('active');
  });

  it('refuses an unknown kid in one line', async () => {
    await ws.cliJson(['keys', 'rotate']);
    const line = expectFailure(await ws.cli(['keys', 'revoke', 'no-such-kid']), 1);
    expect(line).toBe('connect-auth: no key has kid "no-such-kid"; keys list shows every key\n');
  });

  it('revoking a pending key cancels the rotation: the current keys stay active with no end', async () => {
    const { first, next } = await pendingRotation();
    const revoked = await ws.cliJson<RevokeView>(['keys', 'revoke', next.kid]);
    expect(revoked).toEqual({
      kid: next.kid,
      status: 'revoked',
      alreadyRevoked: false,
      cancelledRotation: true,
      revoked: [next.kid, next.encryptionKid],
    });
    ws.clock.advance(86_400 * 30);
    const listed = await list();
    for (const old of first) expect(listed.find((k) => k.kid === old.kid)).toEqual({ ...old, status: 'active' });
    expect(listed.filter((k) => k.status === 'revoked').map((k) => k.kid).sort()).toEqual([next.kid, next.encryptionKid].sort());
    // A new rotation may start.
    expect((await ws.cliJson<RotateView>(['keys', 'rotate'])).status).toBe('next');
  });
});

describe('audit', () => {
  it('records keys.rotated with the activation, keys.activated and keys.revoked', async () => {
    await ws.cliJson(['keys', 'rotate']);
    const first = await list();
    ws.clock.advance(1);
    const next = await ws.cliJson<RotateView>(['keys', 'rotate']);
    ws.clock.advance(1);
    await ws.cliJson(['keys', 'rotate', '--now']);
    ws.clock.advance(1);
    await ws.cliJson(['keys', 'revoke', first.find((k) => k.use === 'sig')!.kid]);
    const events = (await ws.auditEvents()).filter((e) => e.type.startsWith('keys.'));
    expect(events.map((e) => [e.type, e.subject, e.details])).toEqual([
      ['keys.rotated', first.find((k) => k.use === 'sig')!.kid, { activates_at: isoTime(T0), encryption_kid: first.find((k) => k.use === 'enc')!.kid, created: true }],
      ['keys.rotated', next.kid, { activates_at: isoTime(T0 + 1 + DELAY), encryption_kid: next.encryptionKid, created: true }],
      ['keys.activated', next.kid, { activates_at: isoTime(T0 + 2), encryption_kid: next.encryptionKid, created: false }],
      ['keys.revoked', first.find((k) => k.use === 'sig')!.kid, { use: 'sig', cancelled_rotation: false, also_revoked: null }],
    ]);
  });
});

describe('keys revoke with a kid that begins with -', () => {
  it('takes it as the kid, not as an option', async () => {
    const line = expectFailure(await ws.cli(['keys', 'revoke', '-8Fq_unknown-kid']), 1);
    expect(line).toBe('connect-auth: no key has kid "-8Fq_unknown-kid"; keys list shows every key\n');
    const json = expectFailure(await ws.cli(['keys', 'revoke', '--json', '--8Fq']), 1);
    expect(json).toBe('connect-auth: no key has kid "--8Fq"; keys list shows every key\n');
    // --json before the command, as with every other command.
    const before = expectFailure(await ws.cli(['--json', 'keys', 'revoke', '-8Fq_unknown-kid']), 1);
    expect(before).toBe('connect-auth: no key has kid "-8Fq_unknown-kid"; keys list shows every key\n');
  });
});

describe('usage', () => {
  it('--help describes rotate --now and revoke', async () => {
    const help = (await ws.cli(['--help'])).stdout;
    expect(help).toMatch(/^ {2}keys rotate +publish new keys now/m);
    expect(help).toMatch(/^ {2}keys revoke <KID> +take a key out of the JWKS/m);
    expect((await ws.cli(['keys', 'rotate', '--help'])).stdout).toMatch(/^ {2}--now +activate the pending keys, or new ones, at once/m);
    expect((await ws.cli(['keys', 'revoke', '--help'])).stdout).toMatch(/^Usage: connect-auth keys revoke \[options\] <KID>$/m);
  });

  it('every keys command prints exactly one JSON document with --json', async () => {
    await ws.cliJson(['keys', 'rotate']);
    await ws.cliJson(['keys', 'rotate', '--now']);
    await ws.cliJson(['keys', 'list']);
  });
});
