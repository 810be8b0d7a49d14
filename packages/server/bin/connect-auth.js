#!/usr/bin/env node
// The `connect-auth` command. The code lives in dist/, built by `npm run build`
// (which `npm install` runs).
//
// This file is CommonJS (bin/package.json) so that its first lines run
// before anything uses libuv's thread pool: loading an ES module reads its
// file on that pool, which starts it with the size it finds then. The
// server signs tokens there, and runs it with 2 threads unless
// UV_THREADPOOL_SIZE says otherwise (docs/operator-guide.md, "Threads").
'use strict';

// The command: the first argument that is not an option (`connect-auth --json serve` is `serve`).
const command = process.argv.slice(2).find((argument) => !argument.startsWith('-'));
if (command === 'serve' && !process.env.UV_THREADPOOL_SIZE) process.env.UV_THREADPOOL_SIZE = '2';

async function main() {
  let cli;
  try {
    cli = await import('../dist/cli/main.js');
  } catch (error) {
    if (error && error.code === 'ERR_MODULE_NOT_FOUND') {
      process.stderr.write('connect-auth: not built yet; run `npm run build` in the repository root\n');
      process.exit(1);
    }
    throw error;
  }
  // A reader that stops early (`connect-auth --help | head`) is no failure of
  // a command. (A server whose log reader goes away fails as it always did.)
  if (command !== 'serve') {
    process.stdout.on('error', (error) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(process.exitCode ?? 0);
    });
  }
  process.exitCode = await cli.runCli(process.argv.slice(2));
}

main().catch((error) => {
  // As an error thrown at the top of an ES module would: printed, exit status 1.
  process.exitCode = 1;
  throw error;
});
