import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll } from 'vitest';
import { build, type TestApp } from './build.js';
import { usePostgresStorage } from './postgres.js';
import { openRawDatabase, type RawDatabase } from './raw-database.js';

/**
 * App instances on one database, for tests that send the same request many
 * times at once: the apps (one or two instances), one of them as `t`, and
 * the test's own connection to that database.
 */
export interface Instances {
  readonly apps: readonly FastifyInstance[];
  readonly t: TestApp;
  readonly raw: RawDatabase;
}

/** For a test file: one instance on a SQLite file of its own, removed when the file's tests end. */
export function useSqliteInstances(prefix: string): () => Promise<Instances> {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    const database = { engine: 'sqlite', path: join(dir, 'connect.db') } as const;
    const t = await build({ database });
    return { apps: [t.app], t, raw: await openRawDatabase(database) };
  };
}

/**
 * For a `describe` block on PostgreSQL (a fresh database per test): one
 * instance, or two sharing a master key and a clock, on one shared storage
 * or each with its own connection pool.
 */
export function usePostgresInstances(): { one(): Promise<Instances>; two(options?: { shared?: boolean }): Promise<Instances> } {
  const { open, databaseUrl } = usePostgresStorage();
  const raw = () => openRawDatabase({ engine: 'postgres', url: databaseUrl() });
  return {
    async one() {
      const t = await build({ storage: open() });
      return { apps: [t.app], t, raw: await raw() };
    },
    async two({ shared = false } = {}) {
      const masterKey = randomBytes(32);
      const storage = open();
      const a = await build({ storage, masterKey });
      const b = await build({ storage: shared ? storage : open(), masterKey, clock: a.clock });
      return { apps: [a.app, b.app], t: a, raw: await raw() };
    },
  };
}
