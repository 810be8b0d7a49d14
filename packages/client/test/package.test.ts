import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// What `npm pack` would publish: declarations, code, a license, and source maps whose sources are in the package.
const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

async function packedFiles(): Promise<string[]> {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PACKAGE_DIR });
  const [pack] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
  return (pack?.files ?? []).map((f) => f.path);
}

describe('the published package', () => {
  it('ships the entry points, a license, and source maps that resolve inside the package', async () => {
    const files = await packedFiles();
    const manifest = JSON.parse(await readFile(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> };
    for (const target of Object.values(manifest.exports['.'] ?? {})) expect(files).toContain(posix.normalize(target));
    expect(files).toContain('LICENSE');
    expect(files).not.toContain('dist/.tsbuildinfo');
    expect(files.some((f) => f.startsWith('test'))).toBe(false);

    const maps = files.filter((f) => f.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(10);
    for (const map of maps) {
      const { sources, sourceRoot } = JSON.parse(await readFile(join(PACKAGE_DIR, map), 'utf8')) as { sources: string[]; sourceRoot?: string };
      for (const source of sources) {
        const resolved = posix.normalize(posix.join(posix.dirname(map), sourceRoot ?? '', source));
        expect(files, `${map} names ${source}`).toContain(resolved);
      }
    }
  }, 60_000);
});
