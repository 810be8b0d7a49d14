import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
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

describe('the SQLite file', () => {
  it('a new database and its -wal and -shm files are readable by their owner only (0600); an existing file keeps its mode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-sqlite-mode-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'connect.db');
    const storage = openStorage({ engine: 'sqlite', path });
    try {
      await storage.migrate();
      const mode = (file: string) => statSync(file).mode & 0o777;
      expect(mode(path)).toBe(0o600);
      for (const suffix of ['-wal', '-shm']) {
        expect(existsSync(`${path}${suffix}`), suffix).toBe(true);
        expect(mode(`${path}${suffix}`), suffix).toBe(0o600);
      }
    } finally {
      await storage.close();
    }
    const kept = join(dir, 'kept.db');
    writeFileSync(kept, '');
    chmodSync(kept, 0o640);
    const other = openStorage({ engine: 'sqlite', path: kept });
    await other.close();
    expect(statSync(kept).mode & 0o777).toBe(0o640);
  });
});
