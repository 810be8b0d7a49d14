import { afterAll, describe } from 'vitest';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import { createTestDatabase, emptyTables, noticePostgresSkipped, postgresAdminUrl, type TestDatabase } from '../helpers/postgres.js';
import { describeStorageContract } from './contract.js';

noticePostgresSkipped('storage contract');

describe.skipIf(!postgresAdminUrl)('postgres', () => {
  // One migrated database for the file, emptied before each test: the same
  // fresh state as a new copy of the template (whose tables hold no rows
  // besides the migrations' own), for a truncate instead of a create and a
  // drop of a whole database per test.
  let database: Promise<TestDatabase> | undefined;
  afterAll(async () => {
    await (await database)?.drop();
  });

  describeStorageContract('postgres', {
    async open() {
      database ??= createTestDatabase({ migrated: true });
      const { url } = await database;
      await emptyTables(url);
      return openStorage({ engine: 'postgres', url });
    },
  });
});
