import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';

/**
 * The previous release of Connect, built from its recorded commit, for
 * tests that run it beside the current code on one database
 * (docs/operator-guide.md, "Upgrading and rolling back").
 *
 * `releases.json` at the repository root lists every release, oldest first:
 * `{"releases":[{"version","commit","date"}, …]}`. The previous release is
 * the last one whose commit is not the checked-out commit. It is checked out
 * in a temporary git worktree (removed afterwards), given the current
 * `node_modules` when its `package-lock.json` is the same (otherwise
 * `npm ci` installs its own), and only the server is built.
 */

const execFileAsync = promisify(execFile);

/** The repository's root folder. */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** One entry of `releases.json`. */
export interface Release {
  readonly version: string;
  readonly commit: string;
  readonly date: string;
}

/** A release built and ready to run. */
export interface BuiltRelease extends Release {
  /** Its `connect-auth` (run with `node`). */
  readonly bin: string;
  /** How long checking it out, installing and building took, ms. */
  readonly buildMs: number;
  /** Whether it got the current `node_modules` (same lockfile) rather than an `npm ci` of its own. */
  readonly sharedModules: boolean;
}

async function git(args: readonly string[], cwd = REPOSITORY_ROOT): Promise<string> {
  const { stdout } = await execFileAsync('git', args, { cwd, maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}

/** Runs a command in `cwd`; throws with its output when it fails. */
async function run(command: string, args: readonly string[], cwd: string): Promise<void> {
  try {
    await execFileAsync(command, args, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NODE_OPTIONS: '' } });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed:\n${`${stdout}\n${stderr}`.trim().slice(-4000)}`, { cause: error });
  }
}

/** Reads `releases.json`; throws naming what is wrong with it. */
export function readReleases(): Release[] {
  const path = join(REPOSITORY_ROOT, 'releases.json');
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as { releases?: unknown };
  if (!Array.isArray(parsed.releases)) throw new Error(`${path}: no "releases" array`);
  return parsed.releases.map((entry: Partial<Release>, i) => {
    if (typeof entry.version !== 'string' || typeof entry.date !== 'string' || typeof entry.commit !== 'string' || !/^[0-9a-f]{40}$/.test(entry.commit)) {
      throw new Error(`${path}: release ${i + 1} needs "version", "date" and a 40-hex "commit"`);
    }
    return { version: entry.version, commit: entry.commit, date: entry.date };
  });
}

/** The last release whose commit is not the checked-out one; throws when there is none. */
export async function previousRelease(): Promise<Release> {
  const head = await git(['rev-parse', 'HEAD']).catch((error: Error) => {
    throw new Error(`${REPOSITORY_ROOT} is not a git clone: the mixed-version tests build the previous release from the repository's history`, { cause: error });
  });
  const release = readReleases().findLast((r) => r.commit !== head);
  if (!release) throw new Error('releases.json lists no release other than the checked-out commit');
  return release;
}

/** The `node_modules` folders of the root and of every workspace that has one. */
function moduleFolders(root: string): string[] {
  const { workspaces = [] } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces?: string[] };
  return ['.', ...workspaces].map((folder) => join(folder, 'node_modules')).filter((folder) => existsSync(join(root, folder)));
}

/**
 * Checks `release` out into `worktree` and builds its server: the current
 * `node_modules` linked in when the lockfiles are the same, else `npm ci`.
 */
async function build(release: Release, worktree: string): Promise<Omit<BuiltRelease, keyof Release | 'buildMs'>> {
  try {
    await git(['cat-file', '-e', `${release.commit}^{commit}`]);
  } catch {
    throw new Error(
      `release ${release.version} (releases.json) is commit ${release.commit}, which this clone does not have: ` +
        'the mixed-version tests need the full history (git fetch --unshallow, or actions/checkout with fetch-depth: 0)',
    );
  }
  await git(['worktree', 'add', '--detach', worktree, release.commit]);
  const lockfile = (root: string) => readFileSync(join(root, 'package-lock.json'), 'utf8');
  const sharedModules = lockfile(worktree) === lockfile(REPOSITORY_ROOT);
  if (sharedModules) {
    // The same dependencies: link the installed ones in (the workspaces' own included).
    for (const folder of moduleFolders(REPOSITORY_ROOT)) {
      if (existsSync(join(worktree, folder, '..'))) symlinkSync(join(REPOSITORY_ROOT, folder), join(worktree, folder), 'dir');
    }
  } else {
    // Its own dependencies, install scripts included (better-sqlite3 builds for this Node.js).
    await run('npm', ['ci', '--no-audit', '--no-fund'], worktree);
  }
  // Only the server and what it references. The release's own CI type-checked
  // it; `--noCheck` emits the same JavaScript in about half the time.
  await run(process.execPath, [join(worktree, 'node_modules/typescript/bin/tsc'), '-b', 'packages/server', '--noCheck'], worktree);
  return { bin: join(worktree, 'packages/server/bin/connect-auth.js'), sharedModules };
}

let built: { release: Promise<BuiltRelease>; folder: string; worktree: string; users: number } | undefined;

/**
 * For a test file: the previous release, built in `beforeAll` (once per test
 * run, however many blocks use it) and removed with its worktree after the
 * last block that uses it. `release()` is for use inside tests.
 */
export function usePreviousRelease(): { release(): BuiltRelease } {
  let ready: BuiltRelease | undefined;
  beforeAll(async () => {
    if (!built) {
      const folder = mkdtempSync(join(tmpdir(), 'connect-release-'));
      const worktree = join(folder, 'connect');
      const release = (async () => {
        const wanted = await previousRelease();
        const started = performance.now();
        const result = await build(wanted, worktree);
        return { ...wanted, ...result, buildMs: performance.now() - started };
      })();
      built = { release, folder, worktree, users: 0 };
    }
    built.users += 1;
    ready = await built.release;
  }, 600_000);
  afterAll(async () => {
    if (!built || --built.users > 0) return;
    const { folder, worktree } = built;
    built = undefined;
    // `--force`: the build output and the linked node_modules are untracked
    // files; git removes the links, never what they point to.
    const removed = await git(['worktree', 'remove', '--force', worktree]).then(() => true, () => false);
    rmSync(folder, { recursive: true, force: true });
    // A worktree git could not remove (it never finished checking out): forget it once its folder is gone.
    if (!removed) await git(['worktree', 'prune']);
  }, 60_000);
  return {
    release() {
      if (!ready) throw new Error('usePreviousRelease: the previous release is not built (for use inside tests)');
      return ready;
    },
  };
}
