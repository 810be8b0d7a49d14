import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openStorage } from '../../src/storage/kysely/open-storage.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated database that `createTestDatabase({ migrated: true })` copies; empty without PostgreSQL. */
    postgresTemplate: string;
  }
}

/**
 * Global set-up of the test run: one database migrated to the newest
 * schema, which each PostgreSQL test copies (`CREATE DATABASE … TEMPLATE`)
 * instead of running every migration again. Dropped when the run ends.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const adminUrl = process.env.CONNECT_TEST_POSTGRES_URL;
  project.provide('postgresTemplate', '');
  if (!adminUrl) return undefined;
  const name = `connect_template_${randomBytes(6).toString('hex')}`;
  await adminStatement(adminUrl, `CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const storage = openStorage({ engine: 'postgres', url: url.href });
  try {
    await storage.migrate();
  } finally {
    await storage.close();
  }
  project.provide('postgresTemplate', name);
  return () => adminStatement(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/** Runs one statement (`CREATE DATABASE`, `DROP DATABASE`) on its own connection to the test server's admin database. */
export async function adminStatement(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
