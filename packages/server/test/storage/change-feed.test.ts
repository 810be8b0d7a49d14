import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ChangeFeed, Heard } from '../../src/core/changes/change-feed.js';
import { generateSigningKey } from '../../src/core/keys/key-ring.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { clientRecord } from '../helpers/client-record.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../helpers/postgres.js';
import { startTcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import { CHANGE_SIGNAL_PING_MS } from '../../src/core/lifetimes.js';

/** Every warning of this file's process (node-postgres warns once per process, from whichever test). */
const warnings: string[] = [];
process.on('warning', (warning) => void warnings.push(warning.message));

const T0 = 1_800_000_000;

/** Polls `condition` (asking the feed, as a cache would) until it holds or `ms` pass; returns how long it took. */
async function within(ms: number, feed: ChangeFeed, condition: () => boolean): Promise<number> {
  const started = Date.now();
  for (;;) {
    feed.isCurrent();
    if (condition()) return Date.now() - started;
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function listen(feed: ChangeFeed): Heard[] {
  const heard: Heard[] = [];
  feed.onChange((h) => heard.push(h));
  return heard;
}

const changesOf = (heard: Heard[]) => heard.filter((h): h is Exclude<Heard, 'all'> => h !== 'all');

/**
 * Two "instances" on one database: `writer` changes records, `reader`'s feed
 * must hear each change that matters, and nothing for what does not.
 */
function feedSuite(engine: string, open: () => Promise<{ writer: Storage; reader: Storage }>) {
  describe(`the change signal on ${engine}`, () => {
    const opened = async () => {
      const { writer, reader } = await open();
      const feed = reader.openChangeFeed();
      onTestFinished(() => feed.close());
      await within(5000, feed, () => feed.isCurrent());
      return { writer, reader, feed, heard: listen(feed) };
    };

    it('announces a client change, a token session revocation or refresh, a customer lock and a key change to another instance', async () => {
      const { writer, feed, heard } = await opened();
      const client = clientRecord({ id: 'cid_a', createdAt: T0 });
      await writer.clients.insertClient(client);
      await writer.clients.updateClient('cid_a', { status: 'disabled' }, T0);
      await writer.customers.insertCustomer({
        profileId: '100000000001', mobile: '+639171234567', name: null, pinHash: 'x', status: 'active',
        pinAttempts: 0, lockedUntil: null, credentialVersion: 0, createdAt: T0, updatedAt: T0,
      });
      await writer.customers.updateCustomer('100000000001', { status: 'locked' }, T0);
      await writer.tokenSessions.insertTokenSession({
        sid: 's1', clientId: 'cid_a', profileId: '100000000001', codeHash: null, refreshJti: 'r', accessJti: 'a1',
        createdAt: T0, refreshExpiresAt: T0 + 100, accessExpiresAt: T0 + 10, revokedAt: null, authentication: null,
      });
      await writer.tokenSessions.replaceAccessToken('s1', { clientId: 'cid_a', refreshJti: 'r', accessJti: 'a2', accessExpiresAt: T0 + 20, now: T0 });
      await writer.tokenSessions.revokeTokenSession('s1', T0);
      await writer.keys.insertKey(await generateSigningKey(new Uint8Array(32), { now: T0, generation: 1, activatesAt: T0 }));

      const expected = [
        { kind: 'client', key: 'cid_a' },
        { kind: 'client', key: 'cid_a' },
        { kind: 'customer', key: '100000000001' },
        { kind: 'session', key: 's1' },
        { kind: 'session', key: 's1' },
        { kind: 'keys', key: '' },
      ];
      await within(1000, feed, () => changesOf(heard).length >= expected.length);
      expect(changesOf(heard)).toEqual(expected);
    });

    it('announces nothing for what no cache holds, nor for a change rolled back', async () => {
      const { writer, feed, heard } = await opened();
      await writer.customers.insertCustomer({
        profileId: '100000000002', mobile: '+639171234568', name: null, pinHash: 'x', status: 'active',
        pinAttempts: 0, lockedUntil: null, credentialVersion: 0, createdAt: T0, updatedAt: T0,
      });
      // A wrong PIN counted: the status is unchanged.
      await writer.customers.updateCustomer('100000000002', { pinAttempts: 1 }, T0);
      await expect(
        writer.transaction(async (tx) => {
          await tx.clients.insertClient(clientRecord({ id: 'cid_b', createdAt: T0 }));
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      // A marker after both, so that waiting for it proves they were not announced.
      await writer.clients.insertClient(clientRecord({ id: 'cid_marker', createdAt: T0 }));
      await within(1000, feed, () => changesOf(heard).length >= 1);
      expect(changesOf(heard)).toEqual([{ kind: 'client', key: 'cid_marker' }]);
    });

    it('a change made in a transaction is announced only when it commits', async () => {
      const { writer, feed, heard } = await opened();
      let inside = -1;
      await writer.transaction(async (tx) => {
        await tx.clients.insertClient(clientRecord({ id: 'cid_c', createdAt: T0 }));
        await new Promise((resolve) => setTimeout(resolve, 100));
        feed.isCurrent();
        inside = changesOf(heard).length;
      });
      expect(inside).toBe(0);
      await within(1000, feed, () => changesOf(heard).length === 1);
    });
  });
}

feedSuite('SQLite (two connections to one file)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'connect-feed-'));
  const path = join(dir, 'connect.db');
  const writer = openStorage({ engine: 'sqlite', path });
  await writer.migrate();
  const reader = openStorage({ engine: 'sqlite', path });
  onTestFinished(async () => {
    await reader.close();
    await writer.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { writer, reader };
});

describe('the change signal of SQLite in one connection', () => {
  it('hears the changes its own connection commits (a :memory: database)', async () => {
    const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
    await storage.migrate();
    onTestFinished(() => storage.close());
    const feed = storage.openChangeFeed();
    const heard = listen(feed);
    expect(feed.isCurrent()).toBe(true);
    await storage.clients.insertClient(clientRecord({ id: 'cid_m', createdAt: T0 }));
    expect(feed.isCurrent()).toBe(true);
    expect(heard).toEqual([{ kind: 'client', key: 'cid_m' }]);
  });

  it('is not current inside a transaction of its connection', async () => {
    const storage = openStorage({ engine: 'sqlite', path: ':memory:' });
    await storage.migrate();
    onTestFinished(() => storage.close());
    const feed = storage.openChangeFeed();
    const heard = listen(feed);
    // Current just before: the transaction that begins next is seen at once, not at the next poll.
    expect(feed.isCurrent()).toBe(true);
    const inside: boolean[] = [];
    await storage.transaction(async (tx) => {
      inside.push(feed.isCurrent());
      await tx.clients.insertClient(clientRecord({ id: 'cid_t', createdAt: T0 }));
      inside.push(feed.isCurrent());
    });
    expect(inside).toEqual([false, false]);
    expect(heard).toEqual([]);
    expect(feed.isCurrent()).toBe(true);
    expect(heard).toEqual([{ kind: 'client', key: 'cid_t' }]);
  });
});

if (postgresAdminUrl) {
  const pg = usePostgresStorage();
  feedSuite('PostgreSQL (two pools on one database)', async () => {
    const writer = pg.open();
    await writer.migrate();
    return { writer, reader: pg.open() };
  });

  describe('the change signal of PostgreSQL when its connection fails', () => {
    const db = usePostgresStorage();

    /** A feed whose connection goes through a proxy the test can break, and a storage on the same database that writes directly. */
    async function proxiedFeed() {
      const migrated = db.open();
      await migrated.migrate();
      const target = new URL(db.databaseUrl());
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      onTestFinished(() => proxy.close());
      const reader = openStorage({ engine: 'postgres', url: throughProxy(db.databaseUrl(), proxy) });
      onTestFinished(() => reader.close());
      const feed = reader.openChangeFeed();
      onTestFinished(() => feed.close());
      await within(5000, feed, () => feed.isCurrent());
      const heard = listen(feed);
      return { migrated, proxy, feed, heard };
    }

    it('a broken connection: not current within a second, everything flushed, and current again by itself once the database is back', async () => {
      const { migrated, proxy, feed, heard } = await proxiedFeed();

      await proxy.cut();
      const lapse = await within(2000, feed, () => !feed.isCurrent());
      expect(lapse).toBeLessThanOrEqual(1100);
      expect(heard).toContain('all');

      // A change while the signal is down is never heard, so it must not be trusted: caches start afresh.
      await migrated.clients.insertClient(clientRecord({ id: 'cid_during', createdAt: T0 }));
      await proxy.restore();
      await within(10_000, feed, () => feed.isCurrent());
      expect(heard.filter((h) => h === 'all')).toHaveLength(2);
      await migrated.clients.updateClient('cid_during', { status: 'disabled' }, T0);
      await within(1000, feed, () => changesOf(heard).some((c) => c.key === 'cid_during'));
    });

    it('a quiet instance (no cache asking) still drops what it holds when the connection breaks, and is not current before it listens again', async () => {
      const { migrated, proxy, feed, heard } = await proxiedFeed();
      await proxy.cut();
      // Nobody asks isCurrent(): the flush must come by itself.
      const started = Date.now();
      while (!heard.includes('all')) {
        if (Date.now() - started > 1100) throw new Error('no flush within a second');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(feed.isCurrent()).toBe(false);
      await migrated.clients.insertClient(clientRecord({ id: 'cid_quiet', createdAt: T0 }));
      await proxy.restore();
      await within(10_000, feed, () => feed.isCurrent());
      // Current again only through a new LISTEN: a change now is heard.
      await migrated.clients.updateClient('cid_quiet', { status: 'disabled' }, T0);
      await within(1000, feed, () => changesOf(heard).some((c) => c.key === 'cid_quiet'));
    });

    it('a silent loss (the connection open, nothing arriving): not current within a second, then a new connection', async () => {
      const { migrated, proxy, feed, heard } = await proxiedFeed();

      proxy.silence();
      const lapse = await within(2000, feed, () => !feed.isCurrent());
      expect(lapse).toBeLessThanOrEqual(1100);
      // While no answer arrives, no ping is queued behind the one still waiting (pg refuses a query on a busy client from 9.0 on).
      await new Promise((resolve) => setTimeout(resolve, 5 * CHANGE_SIGNAL_PING_MS));
      expect(warnings.filter((message) => message.includes('already executing a query'))).toEqual([]);
      await migrated.clients.insertClient(clientRecord({ id: 'cid_silent', createdAt: T0 }));
      await proxy.restore();
      await within(15_000, feed, () => feed.isCurrent());
      await migrated.clients.updateClient('cid_silent', { status: 'disabled' }, T0);
      await within(1000, feed, () => changesOf(heard).some((c) => c.key === 'cid_silent'));
    });
  });
} else {
  noticePostgresSkipped('change signal on PostgreSQL');
}
