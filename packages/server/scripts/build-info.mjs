#!/usr/bin/env node
// Records the commit this build was made from in dist/build-info.json, read
// by `connect-auth --version` and the `connect_build_info` metric
// (docs/upgrades.md, "Releases"). CONNECT_BUILD_COMMIT names it for a build
// made outside a git checkout.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';

const dist = new URL('../dist/', import.meta.url);
const git = (...args) => execFileSync('git', args, { cwd: new URL('..', import.meta.url), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();

let commit = process.env.CONNECT_BUILD_COMMIT?.trim() || '';
if (!commit) {
  try {
    commit = git('rev-parse', 'HEAD');
    if (git('status', '--porcelain', '--untracked-files=no') !== '') commit += '-modified';
  } catch {
    commit = 'unknown';
  }
}
mkdirSync(dist, { recursive: true });
writeFileSync(new URL('build-info.json', dist), `${JSON.stringify({ commit })}\n`);
