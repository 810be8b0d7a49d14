import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { StorageUnavailable } from '../../src/core/storage-errors.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import { DatabaseTimeout } from '../../src/storage/kysely/postgres.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { clientRecord } from '../helpers/client-record.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl, type TestDatabase } from '../helpers/postgres.js';
import { startTcpProxy, throughProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { describeStorageFailures } from './failures.js';

noticePostgresSkipped('storage failures');

/** Runs SQL on `url` over a connection of its own. */
async function execOn(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe.skipIf(!postgresAdminUrl)('postgres', () => {
  const databases = new Map<Storage, TestDatabase>();
  let current: TestDatabase | undefined;
  describeStorageFailures('postgres', {
    async open() {
      current = await createTestDatabase();
      const storage = openStorage({ engine: 'postgres', url: current.url });
      databases.set(storage, current);
      await storage.migrate();
      return storage;
    },
    async dispose(storage) {
      const database = databases.get(storage);
      databases.delete(storage);
      await storage.close();
      await database?.drop();
    },
    exec: (sql) => execOn((current as TestDatabase).url, sql),
    async refuseInserts(table) {
      await execOn(
        (current as TestDatabase).url,
        `CREATE OR REPLACE FUNCTION refuse_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
         CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION refuse_insert();`,
      );
    },
    refusedCode: 'P0001',
  });

  describe('postgres: the connection to the database fails', () => {
    let database: TestDatabase;
    let direct: Storage;
    let proxy: TcpProxy;

    beforeEach(async () => {
      database = await createTestDatabase();
      direct = openStorage({ engine: 'postgres', url: database.url });
      await direct.migrate();
    });

    afterEach(async () => {
      await direct.close();
      await database.drop();
    });

    /** A storage on the same database through a proxy the test can break; closed when the test ends. */
    async function throughBreakableProxy(timeoutMs?: number): Promise<Storage> {
      const target = new URL(database.url);
      const started = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      proxy = started;
      const storage = openStorage({ engine: 'postgres', url: throughProxy(database.url, started) }, { timeoutMs });
      onTestFinished(async () => {
        await storage.close();
        await started.close();
      });
      return storage;
    }

    it('a lost connection surfaces as StorageUnavailable, and the storage recovers by itself once the database is back', async () => {
      const storage = await throughBreakableProxy();
      await storage.clients.insertClient(clientRecord());

      await proxy.cut();
      // The pooled connection breaks; a new one is refused.
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = await storage.clients.findClient('cid_sandbox_acme').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StorageUnavailable);
        expect((error as StorageUnavailable).cause).toBeInstanceOf(Error);
      }
      await expect(storage.ping()).rejects.toBeInstanceOf(StorageUnavailable);

      await proxy.restore();
      expect(await storage.clients.findClient('cid_sandbox_acme')).toBeDefined();
      await expect(storage.ping()).resolves.toBeUndefined();
    });

    it('a connection lost in the middle of a transaction surfaces as StorageUnavailable and writes nothing', async () => {
      // The connection drops while the transaction holds it between two
      // queries: pg then emits 'error' on the client, which would end the
      // process (an uncaught exception, failing this run) without a listener.
      const storage = await throughBreakableProxy();
      const error = await storage
        .transaction(async (tx) => {
          await tx.clients.insertClient(clientRecord());
          await proxy.cut();
          await tx.clients.insertClient(clientRecord({ id: 'cid_sandbox_second' }));
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageUnavailable);

      await proxy.restore();
      expect(await direct.clients.findClient('cid_sandbox_acme')).toBeUndefined();
      expect(await storage.clients.findClient('cid_sandbox_acme')).toBeUndefined();
      expect(await direct.clients.listClients()).toEqual([]);
    });

    it('a database that does not answer a new connection in time surfaces as StorageUnavailable', async () => {
      const storage = await throughBreakableProxy(200);
      await proxy.stall();
      const error = await storage.clients.findClient('cid_sandbox_acme').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageUnavailable);
      expect(String((error as StorageUnavailable).cause)).toMatch(/timeout/i);

      await proxy.restore();
      expect(await storage.clients.findClient('cid_sandbox_acme')).toBeUndefined();
    });

    it('a database that hears nothing (a silent network): a query fails after the timeout, measured by Connect, and its connection is closed', async () => {
      const storage = await throughBreakableProxy(300);
      await storage.clients.insertClient(clientRecord());
      proxy.silence();
      const started = performance.now();
      const error = await storage.clients.findClient('cid_sandbox_acme').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageUnavailable);
      expect((error as StorageUnavailable).cause).toBeInstanceOf(DatabaseTimeout);
      // Not a measure of speed: a bound that tells "gave up" from "waited for an answer that never comes".
      expect(performance.now() - started).toBeLessThan(300 + 1000);
      expect(storage.poolStats()?.total).toBe(0);

      await proxy.restore();
      expect((await storage.clients.findClient('cid_sandbox_acme'))?.id).toBe('cid_sandbox_acme');
    });

    it('a connection Connect gave up on is reset, not closed gracefully: nothing still unsent on it reaches the database once the network heals', async () => {
      const storage = await throughBreakableProxy(300);
      await storage.ping();
      proxy.silence();
      const error = await storage.clients.insertClient(clientRecord()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageUnavailable);
      expect((error as StorageUnavailable).cause).toBeInstanceOf(DatabaseTimeout);
      // A graceful close leaves the kernel retransmitting what the silent
      // network has not acknowledged, then delivering it once the network
      // heals: the database would run a statement (a COMMIT, a code exchange)
      // that Connect answered 503 for. A reset drops it.
      await proxy.restore();
      await vi.waitFor(() => expect(proxy.openSockets()).toBe(0), { timeout: 10_000, interval: 20 });
      expect(proxy.clientEnds()).toEqual(['reset']);
    });

    it('migrating a new database over a distant network takes longer than CONNECT_DB_TIMEOUT_MS in all and still succeeds: each of its statements is bounded, not the whole', async () => {
      const fresh = await createTestDatabase();
      onTestFinished(() => fresh.drop());
      const target = new URL(fresh.url);
      const distant = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) }, { latencyMs: 15 });
      const storage = openStorage({ engine: 'postgres', url: throughProxy(fresh.url, distant) }, { timeoutMs: 1000 });
      onTestFinished(async () => {
        await storage.close();
        await distant.close();
      });
      const started = performance.now();
      const applied = await storage.migrate();
      // More than the bound of one transaction (the timeout and a quarter of a second) in all.
      expect(performance.now() - started).toBeGreaterThan(1250);
      expect(applied.length).toBeGreaterThan(10);
      expect(await storage.clients.listClients()).toEqual([]);
    });

    it('a transaction is bounded as a whole: one still open after the timeout fails, writes nothing, and its connection is closed', async () => {
      const storage = openStorage({ engine: 'postgres', url: database.url }, { timeoutMs: 300, maxConnections: 1 });
      onTestFinished(() => storage.close());
      const error = await storage
        .transaction(async (tx) => {
          await tx.clients.insertClient(clientRecord());
          // Each statement is quick; the transaction as a whole is not.
          await new Promise((resolve) => setTimeout(resolve, 600));
          await tx.clients.insertClient(clientRecord({ id: 'cid_sandbox_second' }));
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageUnavailable);
      expect((error as StorageUnavailable).cause).toBeInstanceOf(DatabaseTimeout);
      expect(await direct.clients.listClients()).toEqual([]);
      // The one connection of the pool was closed, not returned mid-transaction: the next operation gets a fresh one.
      await storage.clients.insertClient(clientRecord());
      expect((await direct.clients.findClient('cid_sandbox_acme'))?.id).toBe('cid_sandbox_acme');
    });

    it('the pool holds CONNECT_DB_POOL_SIZE connections: one more request waits for a free one at most the timeout, then fails', async () => {
      await direct.clients.insertClient(clientRecord());
      const storage = openStorage({ engine: 'postgres', url: database.url }, { timeoutMs: 300, maxConnections: 1 });
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      // The advisory lock's connection, held as long as its work runs, is the pool's only one.
      const holders = [storage.runExclusively('purge', () => held)];
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = performance.now();
      const error = await storage.clients.findClient('cid_sandbox_acme').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StorageUnavailable);
      expect(String((error as StorageUnavailable).cause)).toMatch(/timeout/i);
      // Not a measure of speed: a bound that tells "gave up" from "waited for the holders".
      expect(performance.now() - started).toBeLessThan(3000);
      release();
      await Promise.all(holders);
      expect((await storage.clients.findClient('cid_sandbox_acme'))?.id).toBe('cid_sandbox_acme');
      await storage.close();
    });

    it('a row lock or a statement not done in time fails as StorageUnavailable instead of waiting on', async () => {
      await direct.clients.insertClient(clientRecord());
      const storage = openStorage({ engine: 'postgres', url: database.url }, { timeoutMs: 200 });
      // Another session holds the client's row.
      const holder = new pg.Client({ connectionString: database.url });
      holder.on('error', () => {});
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`SELECT * FROM clients WHERE id = 'cid_sandbox_acme' FOR UPDATE`);
        const started = performance.now();
        const error = await storage.clients.updateClient('cid_sandbox_acme', { name: 'Renamed' }, 1).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StorageUnavailable);
        // lock_timeout or statement_timeout, whichever PostgreSQL notices first (before Connect's own bound).
        expect(['55P03', '57014']).toContain((error as { cause?: { code?: string } }).cause?.code);
        // Not a measure of speed: a bound that tells "gave up" from "waited for the holder".
        expect(performance.now() - started).toBeLessThan(4000);
        await holder.query('ROLLBACK');
        expect((await storage.clients.updateClient('cid_sandbox_acme', { name: 'Renamed' }, 1)).name).toBe('Renamed');
      } finally {
        await holder.end();
        await storage.close();
      }
    });
  });
});
