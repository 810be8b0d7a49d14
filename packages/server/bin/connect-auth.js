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
// A reader that stops early (`connect-auth --help | head`) is no failure of
// a command. (A server whose log reader goes away fails as it always did.)
if (process.argv[2] !== 'serve') {
  process.stdout.on('error', (error) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}
process.exitCode = await cli.runCli(process.argv.slice(2));
