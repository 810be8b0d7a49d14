import { readFileSync } from 'node:fs';

/** Which release of Connect this is (docs/upgrades.md, "Releases"). */
export interface Release {
  /** The package version, e.g. `0.2.0`. */
  readonly version: string;
  /**
   * The commit it was built from (40 hex digits, with `-modified` when the
   * working tree had uncommitted changes), or `unknown` for a build made
   * outside a git checkout without `CONNECT_BUILD_COMMIT`.
   */
  readonly commit: string;
}

let cached: Release | undefined;

/**
 * This build's release: the version from the server package's
 * `package.json` and the commit that `npm run build` recorded in
 * `dist/build-info.json` (packages/server/scripts/build-info.mjs).
 */
export function currentRelease(): Release {
  if (cached) return cached;
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  let commit = 'unknown';
  try {
    const info = JSON.parse(readFileSync(new URL('../../dist/build-info.json', import.meta.url), 'utf8')) as { commit?: unknown };
    if (typeof info.commit === 'string' && info.commit !== '') commit = info.commit;
  } catch {
    // Built without the build script (a bare `tsc`): the commit is not known.
  }
  cached = { version: pkg.version, commit };
  return cached;
}
