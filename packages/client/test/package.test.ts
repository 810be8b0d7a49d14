import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// What `npm pack` would publish: declarations, code, README, a license, and source maps that carry their sources.
const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

async function packedFiles(): Promise<string[]> {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PACKAGE_DIR });
  const [pack] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
  return (pack?.files ?? []).map((f) => f.path);
}

interface Manifest {
  license?: string;
  exports: Record<string, Record<string, string> | string>;
  types?: string;
  files?: string[];
  dependencies?: Record<string, string>;
  publishConfig?: { access?: string; provenance?: boolean };
  sideEffects?: boolean;
}

describe('the published package', () => {
  it('is built by npm pack and npm publish themselves (prepack): a checkout without dist/ packs the SDK', async () => {
    // A copy of the package without dist/, in the repository's layout (the base tsconfig two levels up,
    // the repository's node_modules for TypeScript), outside the repository.
    const root = await mkdtemp(join(tmpdir(), 'connect-sdk-prepack-'));
    try {
      const copy = join(root, 'packages/client');
      await mkdir(copy, { recursive: true });
      for (const entry of ['src', 'package.json', 'tsconfig.json', 'README.md', 'LICENSE']) await cp(join(PACKAGE_DIR, entry), join(copy, entry), { recursive: true });
      await cp(join(PACKAGE_DIR, '../../tsconfig.base.json'), join(root, 'tsconfig.base.json'));
      await symlink(join(PACKAGE_DIR, '../../node_modules'), join(root, 'node_modules'), 'dir');
      const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json'], { cwd: copy });
      const [pack] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
      const files = (pack?.files ?? []).map((f) => f.path);
      expect(files).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/index.js.map']));
      expect(files.filter((f) => f.startsWith('dist/') && f.endsWith('.js')).length).toBe((await packedFiles()).filter((f) => f.startsWith('dist/') && f.endsWith('.js')).length);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 120_000);

  it('ships only the built output, README.md, LICENSE and package.json', async () => {
    const files = await packedFiles();
    const manifest = JSON.parse(await readFile(join(PACKAGE_DIR, 'package.json'), 'utf8')) as Manifest;
    const entry = manifest.exports['.'] as Record<string, string>;
    expect(Object.keys(entry)).toEqual(['types', 'import']);
    for (const target of [...Object.values(entry), manifest.types ?? '']) expect(files).toContain(posix.normalize(target));
    expect(files.filter((f) => !f.startsWith('dist/')).sort()).toEqual(['LICENSE', 'README.md', 'package.json']);
    expect(files).not.toContain('dist/.tsbuildinfo');
    expect(files.filter((f) => f.startsWith('dist/') && !/\.(js|d\.ts|js\.map)$/.test(f))).toEqual([]);
  }, 60_000);

  it('is public, Apache-2.0 licensed, without side effects, and needs only jose at run time', async () => {
    const manifest = JSON.parse(await readFile(join(PACKAGE_DIR, 'package.json'), 'utf8')) as Manifest;
    expect(manifest).toMatchObject({ license: 'Apache-2.0', publishConfig: { access: 'public', provenance: true }, sideEffects: false });
    // One runtime dependency, for JWS (client assertions, DPoP proofs): jose 6, which runs on Node.js 20.19+.
    expect(manifest.dependencies ?? {}).toEqual({ jose: expect.stringMatching(/^\^6\.\d+\.\d+$/) });
    const license = await readFile(join(PACKAGE_DIR, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^Copyright \d{4} Connect contributors\n/);
    expect(license).toContain('Apache License\n                           Version 2.0, January 2004');
    expect(license).toContain('END OF TERMS AND CONDITIONS');
  });

  it('has source maps that carry their sources, since src/ is not shipped', async () => {
    const files = await packedFiles();
    const maps = files.filter((f) => f.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(10);
    for (const map of maps) {
      const { sources, sourcesContent } = JSON.parse(await readFile(join(PACKAGE_DIR, map), 'utf8')) as { sources: string[]; sourcesContent?: Array<string | null> };
      expect(sourcesContent?.length, map).toBe(sources.length);
      expect(sourcesContent?.every((text) => typeof text === 'string' && text.length > 0), map).toBe(true);
    }
  }, 60_000);
});
