import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compareVersions } from '../../src/storage/kysely/schema-releases.js';

/** The repository's root folder. */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** One recorded release (`releases.json` at the repository's root). */
export interface RecordedRelease {
  readonly version: string;
  readonly commit: string;
  readonly date: string;
}

/** Every recorded release, oldest first. */
export function recordedReleases(): RecordedRelease[] {
  const { releases } = JSON.parse(readFileSync(new URL('releases.json', `file://${REPOSITORY_ROOT}`), 'utf8')) as { releases: RecordedRelease[] };
  return releases;
}

/** This checkout's version (the server package's). */
export function currentVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** The newest recorded release older than this checkout's version. */
export function previousRelease(): RecordedRelease {
  const older = recordedReleases().filter((r) => compareVersions(r.version, currentVersion()) < 0);
  const previous = older.sort((a, b) => compareVersions(a.version, b.version)).at(-1);
  if (!previous) throw new Error(`releases.json records no release older than ${currentVersion()}`);
  return previous;
}

/** Runs git in the repository; throws with git's own message. */
export function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: REPOSITORY_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Fails clearly when the checkout lacks the commit (a shallow clone, a tarball). */
export function requireCommit(commit: string): void {
  try {
    git('cat-file', '-e', `${commit}^{commit}`);
  } catch {
    throw new Error(`commit ${commit} of a recorded release is not in this checkout: the release tests need a full git clone (git fetch --unshallow)`);
  }
}
