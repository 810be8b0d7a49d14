import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidGrant } from '../../src/core/errors.js';
import { Conflict, NotFound, StorageUnavailable } from '../../src/core/storage-errors.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { clientRecord } from '../helpers/client-record.js';
import type { Customer } from '../../src/core/customers/customer.js';

/** Opens a storage for one test and reaches its database behind its back. */
export interface FailureFactory {
  /** A fresh, migrated storage. */
  open(): Promise<Storage>;
  dispose?(storage: Storage): Promise<void>;
  /** Runs SQL on the same database over a connection of its own. */
  exec(sql: string): Promise<void>;
  /** Makes the database refuse every insert into `table` (a trigger that raises an error). */
  refuseInserts(table: string): Promise<void>;
  /** The driver's error code for such a refused insert. */
  readonly refusedCode: string;
}

const T = 1_767_225_600;

function customer(overrides: Partial<Customer> = {}): Customer {
  return {
    profileId: '123456789012',
    mobile: '+639171234567',
    name: null,
    pinHash: 'scrypt$32768$8$1$salt$hash',
    status: 'active',
    pinAttempts: 0,
    lockedUntil: null,
    credentialVersion: 0,
    createdAt: T,
    updatedAt: T,
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

/** The driver error behind a `StorageUnavailable`. */
function driverCode(error: unknown): unknown {
  expect(error).toBeInstanceOf(StorageUnavailable);
  const cause = (error as StorageUnavailable).cause;
  expect(cause).toBeInstanceOf(Error);
  expect(cause).not.toBeInstanceOf(StorageUnavailable);
  return (cause as { code?: unknown }).code;
}

/**
 * What every engine does when its database fails: a driver error surfaces
 * as `StorageUnavailable` (its cause the driver's error), a duplicate key
 * still as `Conflict`, and a failed transaction writes nothing.
 */
export function describeStorageFailures(engine: string, factory: FailureFactory): void {
  describe(`storage failures: ${engine}`, () => {
    let storage: Storage;

    beforeEach(async () => {
      storage = await factory.open();
    });

    afterEach(async () => {
      await factory.dispose?.(storage);
    });

    it('a write the database refuses surfaces as StorageUnavailable, with the driver error as cause', async () => {
      await factory.refuseInserts('clients');
      const error = await rejection(storage.clients.insertClient(clientRecord()));
      expect(driverCode(error)).toBe(factory.refusedCode);
      expect((error as Error).message).toBe(`the database is unavailable (${factory.refusedCode}): refused by the test`);
      expect(await storage.clients.findClient('cid_sandbox_acme')).toBeUndefined();
    });

    it('a read of a broken database surfaces as StorageUnavailable', async () => {
      await factory.exec('DROP TABLE sms_outbox');
      const error = await rejection(storage.outbox.listOutboxMessages('+639171234567', 10));
      expect(driverCode(error)).toEqual(expect.any(String));
    });

    it('a duplicate key is still Conflict, never StorageUnavailable', async () => {
      await storage.clients.insertClient(clientRecord());
      await expect(storage.clients.insertClient(clientRecord())).rejects.toBeInstanceOf(Conflict);
      await storage.customers.insertCustomer(customer());
      // A unique index that is not the primary key.
      await expect(storage.customers.insertCustomer(customer({ profileId: '999999999999' }))).rejects.toBeInstanceOf(Conflict);
      await expect(
        storage.transaction(async (tx) => {
          await tx.customers.insertCustomer(customer({ profileId: '888888888888' }));
        }),
      ).rejects.toBeInstanceOf(Conflict);
    });

    it('a transaction refused midway surfaces as StorageUnavailable and writes nothing', async () => {
      await factory.refuseInserts('signing_keys');
      const error = await rejection(
        storage.transaction(async (tx) => {
          await tx.clients.insertClient(clientRecord());
          await tx.customers.insertCustomer(customer());
          await tx.keys.insertKey({
            kid: 'kid-1',
            alg: 'ES256',
            use: 'sig',
            status: 'active',
            publicJwk: '{}',
            sealedPrivateJwk: 'sealed',
            createdAt: T,
            generation: 1,
            activatesAt: T,
            retiredAt: null,
            verifyUntil: null,
          });
        }),
      );
      expect(driverCode(error)).toBe(factory.refusedCode);
      expect(await storage.clients.findClient('cid_sandbox_acme')).toBeUndefined();
      expect(await storage.customers.findCustomer('123456789012')).toBeUndefined();
      // The storage goes on working.
      await storage.clients.insertClient(clientRecord());
      expect(await storage.clients.findClient('cid_sandbox_acme')).toBeDefined();
    });

    it('once closed, every operation fails with StorageUnavailable', async () => {
      await storage.close();
      await expect(storage.clients.findClient('cid_sandbox_acme')).rejects.toBeInstanceOf(StorageUnavailable);
      await expect(storage.transaction((tx) => tx.clients.insertClient(clientRecord()))).rejects.toBeInstanceOf(StorageUnavailable);
      await expect(storage.ping()).rejects.toBeInstanceOf(StorageUnavailable);
    });

    it("the work's own errors pass through a transaction unchanged, and it writes nothing", async () => {
      const own = new InvalidGrant('not this time');
      await expect(
        storage.transaction(async (tx) => {
          await tx.clients.insertClient(clientRecord());
          throw own;
        }),
      ).rejects.toBe(own);
      const notFound = await rejection(
        storage.transaction(async (tx) => {
          await tx.clients.insertClient(clientRecord());
          await tx.customers.updateCustomer('000000000000', { name: 'Nobody' }, T);
        }),
      );
      expect(notFound).toBeInstanceOf(NotFound);
      expect(await storage.clients.findClient('cid_sandbox_acme')).toBeUndefined();
    });
  });
}
