import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// Rules of the codebase's shape that a compiler does not check.
const SRC = join(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

function offenders(dir: string, pattern: RegExp): string[] {
  return sourceFiles(join(SRC, dir))
    .filter((file) => pattern.test(readFileSync(file, 'utf8')))
    .map((file) => relative(SRC, file));
}

describe('architecture', () => {
  it('core imports nothing of Fastify, Kysely, the SQL drivers or the HTTP layer', () => {
    expect(offenders('core', /from '(fastify|@fastify\/[^']+|kysely|pg|better-sqlite3|pino)'|from '\.\.\/(\.\.\/)?http\//)).toEqual([]);
  });

  it('core and storage never read the system clock or the environment', () => {
    expect(offenders('core', /Date\.now\(|new Date\(|process\.env/).filter((f) => f !== 'core/clock.ts')).toEqual([]);
    expect(offenders('storage', /Date\.now\(|new Date\(|process\.env|NOW\(\)|CURRENT_TIMESTAMP/i)).toEqual([]);
  });

  it('only config/ reads process.env', () => {
    const readers = sourceFiles(SRC)
      .filter((file) => /process\.env/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(readers.filter((f) => !f.startsWith('config/') && f !== 'cli/main.ts')).toEqual([]);
  });

  it('migrations never import application code', () => {
    expect(offenders('storage/kysely/migrations', /from '\.\.\/\.\.\/|from '\.\.\/(?!migrations)/)).toEqual([]);
  });
});
