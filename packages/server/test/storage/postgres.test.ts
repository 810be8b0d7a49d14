import { describe } from 'vitest';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { createTestDatabase, noticePostgresSkipped, postgresAdminUrl, type TestDatabase } from '../helpers/postgres.js';
import { describeStorageContract } from './contract.js';

noticePostgresSkipped('storage contract');

describe.skipIf(!postgresAdminUrl)('postgres', () => {
  const databases = new Map<Storage, TestDatabase>();
  describeStorageContract('postgres', {
    async open() {
      const database = await createTestDatabase({ migrated: true });
      const storage = openStorage({ engine: 'postgres', url: database.url });
      databases.set(storage, database);
      return storage;
    },
    async dispose(storage) {
      const database = databases.get(storage);
      databases.delete(storage);
      await storage.close();
      await database?.drop();
    },
  });
});
