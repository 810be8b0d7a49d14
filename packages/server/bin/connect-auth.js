#!/usr/bin/env node
// The `connect-auth` command. The code lives in dist/, built by `npm run build`
// (which `npm install` runs).
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
process.exitCode = await cli.runCli(process.argv.slice(2));
