import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import { describeStorageContract } from './contract.js';

describeStorageContract('sqlite (memory)', {
  open: async () => openStorage({ engine: 'sqlite', path: ':memory:' }),
});

const dirs: string[] = [];
describeStorageContract('sqlite (file)', {
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'connect-sqlite-'));
    dirs.push(dir);
    return openStorage({ engine: 'sqlite', path: join(dir, 'nested', 'connect.db') });
  },
  async dispose() {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  },
});
