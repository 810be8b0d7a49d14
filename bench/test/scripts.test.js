// Every benchmark script loads: its imports resolve and it reads its
// settings. A script run with a setting it refuses stops before it starts
// anything, with one line and exit status 2, so this costs a fraction of a
// second per script. (The benchmarks themselves are run by hand, not here.)
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BENCH = fileURLToPath(new URL('..', import.meta.url));

function runScript(script, env) {
  return new Promise((resolve) => {
    const base = { ...process.env };
    delete base.PORT;
    execFile(process.execPath, [script], { cwd: BENCH, env: { ...base, ...env }, timeout: 15_000 }, (error, _stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stderr });
    });
  });
}

describe('benchmark scripts', () => {
  it.each(['token-bench.js', 'paired.js', 'instructions.js', 'customer-bench.js', 'fapi-token.js', 'pin-flood.js', 'rolling-restart.js'])('%s loads and refuses a bad setting with one line', async (script) => {
    const { code, stderr } = await runScript(script, { BENCH_CONNECTIONS: '0' });
    expect(stderr.trim()).toMatch(/^bench: BENCH_CONNECTIONS must be a whole number from 1 to \d+, not "0"$/);
    expect(code).toBe(2);
  });

  it.each([
    ['ceiling-server.js', /ceiling-server: PORT, BENCH_CLIENT_ID and BENCH_CLIENT_SECRET are required/],
    ['oidc-provider-server.js', /oidc-provider-server: PORT, BENCH_CLIENT_ID and BENCH_CLIENT_SECRET are required/],
    ['load.js', /load\.js: url must be http:\/\/127\.0\.0\.1:<port>/],
  ])('%s loads and refuses to start without its settings', async (script, message) => {
    const { code, stderr } = await runScript(script, {});
    expect(stderr).toMatch(message);
    expect(code).toBe(2);
  });

  it('pin-flood.js refuses a BENCH_CONNECT_ROOT with no built Connect in it', async () => {
    const { code, stderr } = await runScript('pin-flood.js', { BENCH_CONNECT_ROOT: BENCH });
    expect(stderr.trim()).toBe(`bench: BENCH_CONNECT_ROOT: no built Connect in ${BENCH.replace(/\/$/, '')} (run npm ci and npm run build there)`);
    expect(code).toBe(2);
  });

  it('paired.js refuses connect@ a checkout with no built Connect in it, and @ on any other server', async () => {
    const unbuilt = await runScript('paired.js', { BENCH_PAIR: `ceiling,connect@${BENCH}` });
    expect(unbuilt.stderr.trim()).toBe(`bench: BENCH_PAIR: no built Connect in ${BENCH.replace(/\/$/, '')}`);
    expect(unbuilt.code).toBe(2);
    const other = await runScript('paired.js', { BENCH_PAIR: `ceiling@${BENCH},connect` });
    expect(other.stderr.trim()).toBe('bench: BENCH_PAIR: only connect takes @<checkout>, not ceiling');
    expect(other.code).toBe(2);
  });

  it('token-bench.js names a part of the ceiling it does not know, and the ones it does', async () => {
    const { code, stderr } = await runScript('token-bench.js', { BENCH_CEILING_WITH: 'log,warmup' });
    expect(stderr.trim()).toBe('bench: BENCH_CEILING_WITH: unknown part "warmup"; known: log, headers, startup');
    expect(code).toBe(2);
  });

  it('paired.js names a server it does not know', async () => {
    const { code, stderr } = await runScript('paired.js', { BENCH_PAIR: 'ceiling,nginx' });
    expect(stderr.trim()).toBe('bench: BENCH_PAIR: unknown server "nginx"; known: connect, oidc-provider, ceiling');
    expect(code).toBe(2);
  });
});
