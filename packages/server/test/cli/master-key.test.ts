import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { currentRelease } from '../../src/config/release.js';
import { masterKeyFingerprint } from '../../src/core/keys/master-key.js';
import { SchemaTooNew } from '../../src/core/storage/storage.js';
import { build, type TestApp } from '../helpers/build.js';
import { changeReached } from '../helpers/change-reached.js';
import { openRawDatabase } from '../helpers/raw-database.js';
import { cliWorkspace, expectFailure, tokenOutcome, type CliWorkspace } from './command-line.js';

/**
 * `connect-auth master-key rotate | status | retire` on a SQLite file, with
 * apps on the same file as running servers (docs/operator-guide.md,
 * "Replacing the master key").
 */

const OLD = randomBytes(32);
const NEW = randomBytes(32);
const fp = masterKeyFingerprint;
const b64 = (key: Buffer) => key.toString('base64');
/** The settings of every instance and command while the key is replaced. */
const BOTH = { CONNECT_MASTER_KEY: b64(NEW), CONNECT_PREVIOUS_MASTER_KEY: b64(OLD) };

interface RotateJson {
  switched: boolean;
  writing: string;
  previous: string;
  sealed: Record<string, { already: number; resealed: number; changed: number; unreadable: number }>;
  clientsOnPreviousKey: { id: string; name: string }[];
}
interface StatusJson {
  keys: { fingerprint: string; state: string }[];
  sealedNotUnderWritingKey: Record<string, number> | null;
  clientsNotUnderWritingKey: { id: string }[];
}

/** A workspace whose database was made under OLD, with a client_credentials client. */
async function madeUnderOldKey(): Promise<{ ws: CliWorkspace; client: { id: string; secret: string } }> {
  const ws = cliWorkspace({ env: { CONNECT_MASTER_KEY: b64(OLD) } });
  const created = await ws.cliJson<{ clientId: string; clientSecret: string }>(['clients', 'create', '--name', 'Shop', '--redirect-uri', 'https://shop.example/cb', '--grants', 'client_credentials']);
  // A server has run: the signing keys exist, sealed under OLD.
  const first = await build({ storage: await ws.storage(), masterKey: OLD, clock: ws.clock });
  await first.close();
  return { ws, client: { id: created.clientId, secret: created.clientSecret } };
}

async function instance(ws: CliWorkspace, masterKey: Buffer, previous?: Buffer): Promise<TestApp> {
  return build({ storage: await ws.storage(), masterKey, clock: ws.clock, env: previous ? { CONNECT_PREVIOUS_MASTER_KEY: b64(previous) } : {} });
}

const writingOf = (t: TestApp) => t.services.runtime.masterKeys.writingFingerprint;
const acceptedOf = (t: TestApp) => t.services.runtime.masterKeys.acceptedFingerprints;

describe('master-key rotate and retire while servers run', () => {
  it('every instance writes under the new key within a second of rotate, and refuses the old one within a second of retire', async () => {
    const { ws, client } = await madeUnderOldKey();
    const onlyOld = await instance(ws, OLD);
    const both = await instance(ws, NEW, OLD);
    // Before: both configured, the old key still writes, so the instance given only the old key keeps working.
    expect(writingOf(both)).toBe(fp(OLD));
    const { keys } = await ws.cliJson<StatusJson>(['master-key', 'status'], BOTH);
    expect(Object.fromEntries(keys.map((k) => [k.fingerprint, k.state]))).toEqual({ [fp(OLD)]: 'writing', [fp(NEW)]: 'next' });
    for (const t of [onlyOld, both]) expect(await tokenOutcome(t, client.id, client.secret)).toBe(200);

    const rotated = await ws.cliJson<RotateJson>(['master-key', 'rotate'], BOTH);
    expect(rotated).toMatchObject({ switched: true, writing: fp(NEW), previous: fp(OLD), clientsOnPreviousKey: [{ id: client.id, name: 'Shop' }] });
    expect(rotated.sealed['signing-key']).toEqual({ already: 0, resealed: 2, changed: 0, unreadable: 0 });
    await changeReached(async () => writingOf(both) === fp(NEW));
    const audit = (await ws.auditEvents()).filter((e) => e.type === 'master_key.rotated');
    expect(audit).toMatchObject([{ subject: fp(NEW), details: { from: fp(OLD) } }]);

    // The secret hashed under the old key works, and is hashed again under the new one at its use.
    expect(await tokenOutcome(both, client.id, client.secret)).toBe(200);
    const stored = await (await ws.storage()).clients.findClient(client.id);
    expect(stored?.secretHash.startsWith(`${fp(NEW)}:`)).toBe(true);
    const status = await ws.cliJson<StatusJson>(['master-key', 'status'], BOTH);
    expect(status.sealedNotUnderWritingKey).toEqual({ 'signing-key': 0, 'idempotent-response': 0, 'refresh-reuse': 0 });
    expect(status.clientsNotUnderWritingKey).toEqual([]);

    // A server started now, with both keys or with the new one only, opens the re-sealed keys.
    const started = await instance(ws, NEW);
    expect(await tokenOutcome(started, client.id, client.secret)).toBe(200);
    // Rate-limit counters keep their names: the rotation gives no mobile or address a fresh budget.
    expect(started.services.runtime.limitKey).toEqual(onlyOld.services.runtime.limitKey);
    expect(started.services.runtime.csrfKey).toEqual(onlyOld.services.runtime.csrfKey);

    expect(await ws.cliJson(['master-key', 'retire'], BOTH)).toMatchObject({ retired: fp(OLD), clientsCutOff: [] });
    await changeReached(async () => acceptedOf(both).length === 1);
    expect(acceptedOf(both)).toEqual([fp(NEW)]);
    expect(await tokenOutcome(both, client.id, client.secret)).toBe(200);
    // The retired key starts nothing any more.
    await expect(instance(ws, OLD)).rejects.toThrow(`CONNECT_MASTER_KEY (${fp(OLD)}) was retired`);
  });

  it('an interrupted rotation, run again, finishes', async () => {
    const { ws } = await madeUnderOldKey();
    const storage = await ws.storage();
    const both = await instance(ws, NEW, OLD);
    // The run that was interrupted got as far as the switch, and re-sealed nothing.
    const carried = await both.services.runtime.masterKeys.sealCarriedFor(both.services.runtime.masterKeys.current);
    expect(await storage.masterKeys.switchWritingMasterKey(fp(OLD), fp(NEW), carried, ws.clock.nowSeconds())).toBe(true);
    expect((await ws.cliJson<StatusJson>(['master-key', 'status'], BOTH)).sealedNotUnderWritingKey?.['signing-key']).toBe(2);
    // Retiring without the previous key now would leave them unreadable: refused.
    const refused = expectFailure(await ws.cli(['master-key', 'retire'], { CONNECT_MASTER_KEY: b64(NEW) }), 1);
    expect(refused).toBe(
      'connect-auth: 2 signing or encryption key(s) are not yet under the writing master key; run master-key retire with CONNECT_PREVIOUS_MASTER_KEY set, so that they are re-sealed first\n',
    );

    const again = await ws.cliJson<RotateJson>(['master-key', 'rotate'], BOTH);
    expect(again).toMatchObject({ switched: false, writing: fp(NEW) });
    expect(again.sealed['signing-key']).toEqual({ already: 0, resealed: 2, changed: 0, unreadable: 0 });
    const thrice = await ws.cliJson<RotateJson>(['master-key', 'rotate'], BOTH);
    expect(thrice.sealed['signing-key']).toEqual({ already: 2, resealed: 0, changed: 0, unreadable: 0 });
    expect((await ws.cliJson<StatusJson>(['master-key', 'status'], BOTH)).sealedNotUnderWritingKey?.['signing-key']).toBe(0);
  });

  it('retire is refused, naming the clients, while a secret is hashed only under the previous key; --force cuts them off', async () => {
    const { ws, client } = await madeUnderOldKey();
    await ws.cliJson(['master-key', 'rotate'], BOTH);
    const refused = expectFailure(await ws.cli(['master-key', 'retire'], BOTH), 1);
    expect(refused).toBe(
      `connect-auth: 1 client secret(s) are still hashed under the previous master key: ${client.id} (Shop); they move at their next authentication (or clients rotate-secret); --force cuts them off\n`,
    );
    const { keys } = await ws.cliJson<StatusJson>(['master-key', 'status'], BOTH);
    expect(Object.fromEntries(keys.map((k) => [k.fingerprint, k.state]))).toEqual({ [fp(OLD)]: 'previous', [fp(NEW)]: 'writing' });

    const both = await instance(ws, NEW, OLD);
    expect(await ws.cliJson(['master-key', 'retire', '--force'], BOTH)).toMatchObject({ retired: fp(OLD), clientsCutOff: [{ id: client.id }] });
    await changeReached(async () => acceptedOf(both).length === 1);
    expect(await tokenOutcome(both, client.id, client.secret)).toBe('401 invalid_client');
    const rotatedSecret = await ws.cliJson<{ clientSecret: string }>(['clients', 'rotate-secret', client.id, '--grace', '0'], BOTH);
    await changeReached(async () => (await tokenOutcome(both, client.id, rotatedSecret.clientSecret)) === 200);
  });
});

describe('master-key: bad input is one line and changes nothing', () => {
  const third = randomBytes(32);
  const cases: { description: string; env: () => Record<string, string>; args: string[]; line: string | RegExp }[] = [
    {
      description: 'rotate without CONNECT_PREVIOUS_MASTER_KEY',
      env: () => ({ CONNECT_MASTER_KEY: b64(OLD) }),
      args: ['master-key', 'rotate'],
      line: 'connect-auth: master-key rotate needs CONNECT_PREVIOUS_MASTER_KEY (the key being replaced) beside CONNECT_MASTER_KEY (the new one)\n',
    },
    {
      description: 'a previous key equal to the current one',
      env: () => ({ CONNECT_MASTER_KEY: b64(OLD), CONNECT_PREVIOUS_MASTER_KEY: b64(OLD) }),
      args: ['master-key', 'rotate'],
      line: 'connect-auth: CONNECT_PREVIOUS_MASTER_KEY is the same key as CONNECT_MASTER_KEY; it must be the key being replaced\n',
    },
    {
      description: 'a malformed previous key',
      env: () => ({ CONNECT_MASTER_KEY: b64(NEW), CONNECT_PREVIOUS_MASTER_KEY: 'not-a-key' }),
      args: ['master-key', 'rotate'],
      line: 'connect-auth: CONNECT_PREVIOUS_MASTER_KEY must be 32 random bytes in base64 (e.g. openssl rand -base64 32)\n',
    },
    {
      description: 'a previous key the database does not know',
      env: () => ({ CONNECT_MASTER_KEY: b64(NEW), CONNECT_PREVIOUS_MASTER_KEY: b64(third) }),
      args: ['master-key', 'rotate'],
      line: /^connect-auth: CONNECT_PREVIOUS_MASTER_KEY \([\w-]{22}\) is not a master key of this database; it writes under [\w-]{22}\n$/,
    },
    {
      description: 'a new key alone, unknown to the database',
      env: () => ({ CONNECT_MASTER_KEY: b64(NEW) }),
      args: ['master-key', 'status'],
      line: /^connect-auth: CONNECT_MASTER_KEY \([\w-]{22}\) is not a master key of this database, which writes under [\w-]{22} \(to replace the key, set CONNECT_PREVIOUS_MASTER_KEY too\)\n$/,
    },
    {
      description: 'retire before any rotation',
      env: () => BOTH,
      args: ['master-key', 'retire'],
      line: `connect-auth: CONNECT_MASTER_KEY (${fp(NEW)}) is not the master key this database writes under (${fp(OLD)}); run master-key rotate first\n`,
    },
  ];
  for (const { description, env, args, line } of cases) {
    it(description, async () => {
      const { ws } = await madeUnderOldKey();
      const before = await (await ws.storage()).masterKeys.listMasterKeys();
      const failed = expectFailure(await ws.cli(args, env()), 1);
      if (typeof line === 'string') expect(failed).toBe(line);
      else expect(failed).toMatch(line);
      for (const key of [OLD, NEW, third]) expect(failed).not.toContain(b64(key));
      const after = await (await ws.storage()).masterKeys.listMasterKeys();
      expect(after.filter((k) => k.state !== 'next')).toEqual(before.filter((k) => k.state !== 'next'));
    });
  }

  it('rotate when the configured previous key is no longer the writing one', async () => {
    const { ws } = await madeUnderOldKey();
    await ws.cliJson(['master-key', 'rotate'], BOTH);
    const failed = expectFailure(await ws.cli(['master-key', 'rotate'], { CONNECT_MASTER_KEY: b64(third), CONNECT_PREVIOUS_MASTER_KEY: b64(OLD) }), 1);
    // Refused at start: neither configured key is the writing one.
    expect(failed).toBe(
      `connect-auth: neither CONNECT_MASTER_KEY (${fp(third)}) nor CONNECT_PREVIOUS_MASTER_KEY (${fp(OLD)}) is the master key this database writes under (${fp(NEW)})\n`,
    );
    const states = (await (await ws.storage()).masterKeys.listMasterKeys()).map((k) => [k.fingerprint, k.state]);
    expect(states).toContainEqual([fp(NEW), 'writing']);
    expect(states).toContainEqual([fp(OLD), 'previous']);
  });
});

describe('master-key: what a later release or a wrong key must not do', () => {
  it('a database from before master keys were recorded takes as its first only the key its signing keys open', async () => {
    const { ws, client } = await madeUnderOldKey();
    // As a database of 0.2.0 is: signing keys sealed under OLD, no master key recorded.
    const storage = await ws.storage();
    for (const record of await storage.masterKeys.listMasterKeys()) expect(record.state).toBe('writing');
    const raw = await openRawDatabase({ engine: 'sqlite', path: join(ws.dataDir, 'connect-sandbox.db') });
    await raw.exec('delete from master_keys');
    await raw.close();
    const wrong = expectFailure(await ws.cli(['master-key', 'status'], { CONNECT_MASTER_KEY: b64(NEW) }), 1);
    expect(wrong).toBe(`connect-auth: CONNECT_MASTER_KEY (${fp(NEW)}) does not open this database's signing keys: is it the key this database was created with?\n`);
    expect(await storage.masterKeys.listMasterKeys()).toEqual([]);
    // The right key is recorded and works.
    const { keys } = await ws.cliJson<StatusJson>(['master-key', 'status'], { CONNECT_MASTER_KEY: b64(OLD) });
    expect(keys).toEqual([expect.objectContaining({ fingerprint: fp(OLD), state: 'writing' })]);
    const t = await instance(ws, OLD);
    expect(await tokenOutcome(t, client.id, client.secret)).toBe(200);
    await t.close();
  });

  it('a second rotation is refused while the key of the first is still accepted: retire it first', async () => {
    const { ws } = await madeUnderOldKey();
    await ws.cliJson(['master-key', 'rotate'], BOTH);
    const third = randomBytes(32);
    const failed = expectFailure(await ws.cli(['master-key', 'rotate'], { CONNECT_MASTER_KEY: b64(third), CONNECT_PREVIOUS_MASTER_KEY: b64(NEW) }), 1);
    expect(failed).toBe(`connect-auth: master key ${fp(OLD)} of the rotation before is still accepted: finish that replacement with master-key retire first; nothing changed\n`);
    const states = Object.fromEntries((await (await ws.storage()).masterKeys.listMasterKeys()).map((k) => [k.fingerprint, k.state]));
    expect(states).toEqual({ [fp(OLD)]: 'previous', [fp(NEW)]: 'writing', [fp(third)]: 'next' });
  });

  it('after a rotation, a release that knows one master key only may no longer start on the database', async () => {
    const { ws } = await madeUnderOldKey();
    await ws.cliJson(['master-key', 'rotate'], BOTH);
    const storage = await ws.storage();
    await expect(storage.migrate({ version: '0.2.0', now: 1 })).rejects.toThrow(
      new SchemaTooNew(`this database was migrated by Connect ${currentRelease().version}, whose schema needs Connect ${currentRelease().version} or newer; this is Connect 0.2.0: start a newer release (docs/upgrades.md)`),
    );
  });
});
