import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { previousRelease, REPOSITORY_ROOT, requireCommit, type RecordedRelease } from './releases.js';

/**
 * The previous release of Connect, built from its recorded commit, for
 * tests that run it beside the current code on one database
 * (docs/operator-guide.md, "Upgrading and rolling back").
 *
 * `releases.json` at the repository root lists every release, oldest first
 * (test/helpers/releases.ts reads it and names the previous one). It is
 * checked out in a temporary git worktree (removed afterwards), given the
 * current `node_modules` when its `package-lock.json` installs the same
 * packages (otherwise `npm ci` installs its own), and only the server is
 * built.
 */

const execFileAsync = promisify(execFile);

/** A release built and ready to run. */
export interface BuiltRelease extends RecordedRelease {
  /** Its `connect-auth` (run with `node`). */
  readonly bin: string;
  /** How long checking it out, installing and building took, ms. */
  readonly buildMs: number;
  /** Whether it got the current `node_modules` (the same dependencies) rather than an `npm ci` of its own. */
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

/**
 * What `package-lock.json` installs: its entries under `node_modules/`. The
 * workspaces' own entries are left out, since every release changes their
 * `version` and nothing installed.
 */
function installedPackages(root: string): string {
  const { packages = {} } = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages?: Record<string, unknown> };
  return JSON.stringify(Object.entries(packages).filter(([path]) => path.includes('node_modules/')));
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
async function build(release: RecordedRelease, worktree: string): Promise<Omit<BuiltRelease, keyof RecordedRelease | 'buildMs'>> {
  requireCommit(release.commit);
  await git(['worktree', 'add', '--detach', worktree, release.commit]);
  const sharedModules = installedPackages(worktree) === installedPackages(REPOSITORY_ROOT);
  if (sharedModules) {
    // The same dependencies: link the installed ones in (the workspaces' own folders included).
    for (const folder of moduleFolders(REPOSITORY_ROOT)) {
      if (existsSync(join(worktree, folder, '..'))) symlinkSync(join(REPOSITORY_ROOT, folder), join(worktree, folder), 'dir');
    }
  } else {
    // Other dependencies: its own, install scripts included (better-sqlite3 builds for this Node.js).
    await run('npm', ['ci', '--no-audit', '--no-fund'], worktree);
  }
  // Only the server and what it references. The release's own CI type-checked
  // it; `--noCheck` emits the same JavaScript in about half the time.
  await run(process.execPath, [join(worktree, 'node_modules/typescript/bin/tsc'), '-b', 'packages/server', '--noCheck'], worktree);
  // From 0.2.0 on, the build records its commit for `--version` and the metrics (docs/upgrades.md, "Releases").
  const buildInfo = join(worktree, 'packages/server/scripts/build-info.mjs');
  if (existsSync(buildInfo)) await run(process.execPath, [buildInfo], worktree);
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
        const wanted = previousRelease();
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
