import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Rules of the codebase's shape that a compiler does not check.
const SRC = join(import.meta.dirname, '../../src');
const REPO = join(import.meta.dirname, '../../../..');
/** The source folders whose comments may cite only the project's own docs pages (and RFCs). */
const CITING_SOURCES = [SRC, join(REPO, 'packages/client/src')];

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

/** An import of a file: a package as written, or a path under `src/` (without extension). */
type Import = { readonly kind: 'package'; readonly name: string } | { readonly kind: 'local'; readonly path: string };

/** What a file imports (static and dynamic imports, re-exports). */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/\bfrom\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g)].map((m) => (m[1] ?? m[2]) as string);
  return specifiers.map((s) =>
    s.startsWith('.') ? { kind: 'local', path: relative(SRC, resolve(dirname(file), s)).replace(/\.js$/, '') } : { kind: 'package', name: s },
  );
}

/** Folder-to-folder import arrows of `src/` (a file's folder is the directory it sits in; `.` is `src/` itself). */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, dirname(file)) || '.';
    for (const entry of importsOf(file)) {
      if (entry.kind !== 'local' || entry.path.startsWith('..')) continue;
      const to = dirname(entry.path);
      if (to === from) continue;
      graph.set(from, (graph.get(from) ?? new Set()).add(to));
    }
  }
  return graph;
}

/** The strongly connected groups of more than one folder (Tarjan): each is a circle of imports. */
function circles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    order.set(node, index);
    low.set(node, index++);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node) as number, order.get(next) as number));
      }
    }
    if (low.get(node) === order.get(node)) {
      const group: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop() as string;
        group.push(member);
      } while (member !== node);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const node of new Set([...graph.keys(), ...[...graph.values()].flatMap((s) => [...s])])) if (!order.has(node)) visit(node);
  return found;
}

/** Citations of documents that are not in the repository: the contract, the style guide, the original specification. */
const FOREIGN_CITATION = /\bCONTRACT\.md\b|\bSTYLE\.md\b|\bseed\s*(?:§|section|spec)|\bseed\/\d/i;

/** A file's text with comment continuations (`\n * `, `\n // `) joined, so a citation wrapped over lines reads as one. */
function joinedComments(text: string): string {
  return text.replace(/\n\s*(?:\*(?!\/)|\/\/)\s?/g, ' ');
}

/**
 * What a text cites of `docs/`: every `docs/<page>.md`, and every section
 * named right after one (`docs/journey.md, "PIN guessing"`).
 */
function docsCitations(text: string): { page: string; section?: string }[] {
  const joined = joinedComments(text);
  return [...joined.matchAll(/\bdocs\/([\w-]+\.md)(?:,\s*"([^"]+)")?/g)].map((m) =>
    m[2] === undefined ? { page: m[1] as string } : { page: m[1] as string, section: m[2].replace(/\s+/g, ' ') },
  );
}

/** The headings of a docs page, without their `#`s and any numbering (`## 5. SMS delivery` → `SMS delivery`). */
function headingsOf(page: string): string[] {
  return [...readFileSync(join(REPO, 'docs', page), 'utf8').matchAll(/^#{1,6}\s+(?:\d+\.\s+)?(.+?)\s*$/gm)].map((m) => m[1] as string);
}

/** Every citation of `docs/` in the given folders that names a missing page or a section the page does not have. */
function brokenDocsCitations(dirs: readonly string[]): string[] {
  return dirs.flatMap((dir) =>
    sourceFiles(dir).flatMap((file) =>
      docsCitations(readFileSync(file, 'utf8')).flatMap(({ page, section }) => {
        const where = relative(REPO, file);
        if (!existsSync(join(REPO, 'docs', page))) return [`${where}: docs/${page} does not exist`];
        if (section !== undefined && !headingsOf(page).includes(section)) return [`${where}: docs/${page} has no section "${section}"`];
        return [];
      }),
    ),
  );
}

describe('architecture', () => {
  it('no folders import each other in a circle', () => {
    expect(circles(folderGraph())).toEqual([]);
  });

  it('finds a circle when there is one (the check itself works)', () => {
    const graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(circles(graph)).toEqual([['a', 'b', 'c']]);
  });

  it('the journey imports only core: Node built-ins and modules under core/ (its types and storage ports)', () => {
    const outside = sourceFiles(join(SRC, 'core/journey')).flatMap((file) =>
      importsOf(file)
        .filter((entry) => (entry.kind === 'package' ? !entry.name.startsWith('node:') : !entry.path.startsWith('core/')))
        .map((entry) => `${relative(SRC, file)} imports ${entry.kind === 'package' ? entry.name : entry.path}`),
    );
    expect(outside).toEqual([]);
  });

  it('grants do not import the journey: the token endpoint stands without the hosted pages', () => {
    const journey = sourceFiles(join(SRC, 'core/grants')).flatMap((file) =>
      importsOf(file).flatMap((entry) =>
        entry.kind === 'local' && (entry.path === 'core/journey' || entry.path.startsWith('core/journey/')) ? [`${relative(SRC, file)} imports ${entry.path}`] : [],
      ),
    );
    expect(journey).toEqual([]);
  });

  it('steps do not import each other: only steps/index.ts imports steps, all of them', () => {
    const STEPS = 'core/journey/steps';
    const steps = sourceFiles(join(SRC, STEPS)).map((file) => relative(SRC, file).replace(/\.ts$/, ''));
    const index = `${STEPS}/index`;
    const crossing = steps
      .filter((step) => step !== index)
      .flatMap((step) => importsOf(join(SRC, `${step}.ts`)).flatMap((entry) => (entry.kind === 'local' && entry.path.startsWith(`${STEPS}/`) ? [`${step} imports ${entry.path}`] : [])));
    expect(crossing).toEqual([]);
    const listed = importsOf(join(SRC, `${index}.ts`)).flatMap((entry) => (entry.kind === 'local' && entry.path.startsWith(`${STEPS}/`) ? [entry.path] : []));
    expect(listed.sort()).toEqual(steps.filter((step) => step !== index).sort());
  });

  it('core imports nothing of Fastify, Kysely, the SQL drivers or the HTTP layer', () => {
    expect(offenders('core', /from '(fastify|@fastify\/[^']+|kysely|pg|better-sqlite3|pino)'|from '\.\.\/(\.\.\/)?http\//)).toEqual([]);
  });

  it('core and config import nothing from storage: the ports and their rules are core/storage/storage.ts, storage implements them', () => {
    for (const dir of ['core', 'config']) {
      const fromStorage = sourceFiles(join(SRC, dir)).flatMap((file) =>
        importsOf(file).flatMap((entry) => (entry.kind === 'local' && entry.path.startsWith('storage/') ? [`${relative(SRC, file)} imports ${entry.path}`] : [])),
      );
      expect(fromStorage, dir).toEqual([]);
    }
  });

  it('one file opens SQLite files: the embedded engine picks its driver in one place', () => {
    expect(offenders('', /'(better-sqlite3|node:sqlite)'/)).toEqual(['storage/kysely/embedded-sqlite.ts']);
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

  it('no source file cites CONTRACT.md, STYLE.md or the original specification: comments cite docs/ pages or RFCs', () => {
    const citing = CITING_SOURCES.flatMap((dir) =>
      sourceFiles(dir)
        .filter((file) => FOREIGN_CITATION.test(readFileSync(file, 'utf8')))
        .map((file) => relative(REPO, file)),
    );
    expect(citing).toEqual([]);
  });

  it('recognises a foreign citation and leaves the demo seeding alone (the check itself works)', () => {
    for (const text of ['(CONTRACT.md §6)', '(seed §3.5)', 'the Seed section 4.3', 'see STYLE.md', 'seed/000_a43d96bd7b00dc40.txt']) {
      expect(FOREIGN_CITATION.test(text), text).toBe(true);
    }
    for (const text of ['serve --seed-demo', 'seedDemo: true', 'demo data seeded', 'RFC 6749 §4.1.2', '(docs/journey.md, "PIN guessing")']) {
      expect(FOREIGN_CITATION.test(text), text).toBe(false);
    }
  });

  it('every docs/ page a source comment cites exists, and so does every section it names', () => {
    expect(CITING_SOURCES.flatMap((dir) => sourceFiles(dir)).length).toBeGreaterThan(50);
    expect(brokenDocsCitations(CITING_SOURCES)).toEqual([]);
  });

  it('reads a docs citation wrapped over comment lines, and its section (the check itself works)', () => {
    const text = `/**\n * The login (docs/journey.md, "PIN\n * guessing") and docs/lifetimes.md; see also\n * docs/no-such-page.md, "Nowhere".\n */`;
    expect(docsCitations(text)).toEqual([
      { page: 'journey.md', section: 'PIN guessing' },
      { page: 'lifetimes.md' },
      { page: 'no-such-page.md', section: 'Nowhere' },
    ]);
    expect(headingsOf('hosted-login.md')).toContain('SMS delivery');
    expect(headingsOf('journey.md')).toContain('PIN guessing');
  });

  it('migrations never import application code', () => {
    expect(offenders('storage/kysely/migrations', /from '\.\.\/\.\.\/|from '\.\.\/(?!migrations)/)).toEqual([]);
  });
});

/** The consumer SDK's sources; its layers, lowest first: a file imports only from its own layer or a lower one. */
const SDK_SRC = join(REPO, 'packages/client/src');
const SDK_LAYERS = ['transport', 'flows', 'stateful'] as const;

/** File-to-file import arrows under `root` (paths relative to it, without extension); type-only imports count. */
function fileGraph(root: string): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(root)) {
    const from = relative(root, file).replace(/\.ts$/, '');
    const to = importsOf(file)
      .flatMap((entry) => (entry.kind === 'local' ? [relative(root, resolve(SRC, entry.path))] : []))
      .filter((path) => !path.startsWith('..') && path !== from);
    graph.set(from, new Set(to));
  }
  return graph;
}

/** A file's layer: the index of its top folder in `layers`; a file at the root (`index.ts`) sits above them all, an unknown folder at -1. */
function layerOf(path: string, layers: readonly string[]): number {
  return path.includes('/') ? layers.indexOf(path.split('/')[0] as string) : layers.length;
}

/** Every arrow of the file graph under `root` that points from a lower layer to a higher one, or leaves a file outside the layers. */
function layerViolations(root: string, layers: readonly string[]): string[] {
  return [...fileGraph(root)].flatMap(([from, targets]) =>
    layerOf(from, layers) < 0
      ? [`${from} is in no layer`]
      : [...targets].filter((to) => layerOf(to, layers) > layerOf(from, layers)).map((to) => `${from} imports ${to}`),
  );
}

/** A folder of planted `.ts` files (name → text) for checking the checks; removed after `use`. */
function withPlanted<T>(files: Record<string, string>, use: (root: string) => T): T {
  const root = mkdtempSync(join(tmpdir(), 'connect-architecture-'));
  try {
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, name)), { recursive: true });
      writeFileSync(join(root, name), text);
    }
    return use(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('architecture: files and the SDK layers', () => {
  it('no files import each other in a circle, in the server or the SDK (type-only imports count)', () => {
    expect(circles(fileGraph(SRC))).toEqual([]);
    expect(circles(fileGraph(SDK_SRC))).toEqual([]);
  });

  it('finds a circle of files, type-only imports included (the check itself works)', () => {
    const found = withPlanted(
      {
        'x/a.ts': "import type { B } from '../y/b.js';\nexport type A = B;\n",
        'y/b.ts': "import { c } from './c.js';\nexport type B = typeof c;\n",
        'y/c.ts': "export type { A } from '../x/a.js';\nexport const c = 1;\n",
        'y/d.ts': "import { c } from './c.js';\nexport const d = c;\n",
      },
      (root) => circles(fileGraph(root)),
    );
    expect(found).toEqual([['x/a', 'y/b', 'y/c']]);
  });

  it('the SDK imports only downward: stateful/ → flows/ → transport/, and index.ts above them', () => {
    expect(readdirSync(SDK_SRC).sort()).toEqual(['flows', 'index.ts', 'stateful', 'transport']);
    expect(layerViolations(SDK_SRC, SDK_LAYERS)).toEqual([]);
  });

  it('finds an import from a lower layer to a higher one, and a file in no layer (the check itself works)', () => {
    const found = withPlanted(
      {
        'index.ts': "export { f } from './flows/f.js';\n",
        'transport/t.ts': "import type { F } from '../flows/f.js';\nexport type T = F;\n",
        'flows/f.ts': "import { s } from '../stateful/s.js';\nexport type F = string;\nexport const f = s;\n",
        'stateful/s.ts': "export const s = 1;\nexport { f } from '../flows/f.js';\n",
        'misc/m.ts': 'export const m = 1;\n',
      },
      (root) => layerViolations(root, SDK_LAYERS),
    );
    expect(found.sort()).toEqual(['flows/f imports stateful/s', 'misc/m is in no layer', 'transport/t imports flows/f']);
  });
});
