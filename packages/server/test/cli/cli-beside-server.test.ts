import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { logIn as logInOverHttp, requireBuiltCli, runProcess as runProcessIn, serve as serveIn } from '../helpers/processes.js';

/**
 * A `connect-auth` command beside a busy server on the same SQLite file: the
 * server (a real `connect-auth serve` process) logs customers in over HTTP,
 * as a browser does, while 40 write commands run as separate processes, 10 at a time.
 * Every command must succeed and every login too (docs/operator-guide.md).
 */

const REDIRECT_URI = 'https://shop.example/callback';
const PIN = '3817';
/** Logins per customer: under the sandbox budget of one-time PINs per mobile. */
const LOGINS_PER_CUSTOMER = 4;
/** Batches of 10 write commands run at once: 40 commands, half creating customers, half clients. */
const COMMAND_BATCHES = 4;

const dataDir = mkdtempSync(join(tmpdir(), 'connect-beside-'));
const env = { CONNECT_DATA_DIR: dataDir, CONNECT_ENVIRONMENT: 'sandbox' };

beforeAll(requireBuiltCli);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const runProcess = (args: readonly string[]) => runProcessIn({ cwd: dataDir, env }, args);
const serve = () => serveIn({ cwd: dataDir, env });
const logIn = (base: string, address: string, client: { id: string; secret: string }, mobile: string) =>
  logInOverHttp(base, address, client, { mobile, pin: PIN, redirectUri: REDIRECT_URI });

/** The n-th test mobile number (Philippine mobile range). */
function mobileNumber(n: number): string {
  return `+63917${String(n).padStart(7, '0')}`;
}

describe('connect-auth beside a running server on SQLite', () => {
  it('40 write commands, 10 at once, all succeed while the server logs customers in, and every login succeeds', { timeout: 180_000 }, async () => {
    // The client the logins go through, and the first customers, before the server starts.
    let created = '';
    expect(
      await runCli(['clients', 'create', '--name', 'Shop', '--redirect-uri', REDIRECT_URI, '--json'], { env, stdout: (text) => void (created += text) }),
    ).toBe(0);
    const { clientId, clientSecret } = JSON.parse(created) as { clientId: string; clientSecret: string };
    const client = { id: clientId, secret: clientSecret };
    const customers: Array<{ mobile: string; logins: number }> = [];
    for (let n = 1; n <= 4; n++) {
      expect(await runCli(['customers', 'create', '--mobile', mobileNumber(n), '--pin', PIN], { env, stdout: () => {} })).toBe(0);
      customers.push({ mobile: mobileNumber(n), logins: 0 });
    }

    const base = await serve();

    // Logins one after another until the commands are done, each from its own client address.
    let commandsDone = false;
    let loginsDuringCommands = 0;
    const failures: string[] = [];
    const logInUntilDone = async () => {
      for (let n = 1; !commandsDone; n++) {
        const customer = customers.filter((c) => c.logins < LOGINS_PER_CUSTOMER).sort((a, b) => a.logins - b.logins)[0];
        if (!customer) {
          failures.push('every customer has used up its one-time PINs');
          return;
        }
        customer.logins++;
        try {
          await logIn(base, `10.0.${n >> 8}.${n & 0xff}`, client, customer.mobile);
          if (!commandsDone) loginsDuringCommands++;
        } catch (error) {
          failures.push(`${customer.mobile}: ${(error as Error).message}`);
        }
      }
    };
    const logins = logInUntilDone();

    // 40 write commands as separate processes, in batches of 10 at once.
    const results: Array<{ args: string; code: number | null; stderr: string }> = [];
    try {
      for (let batch = 0; batch < COMMAND_BATCHES; batch++) {
        const runs = Array.from({ length: 10 }, (_, i) => {
          const n = batch * 10 + i;
          const args =
            n % 2 === 0
              ? ['customers', 'create', '--mobile', mobileNumber(100 + n), '--pin', PIN, '--name', `Customer ${n}`]
              : ['clients', 'create', '--name', `Shop ${n}`, '--redirect-uri', `https://shop${n}.example/callback`];
          return runProcess(args).then(({ code, stderr }) => {
            results.push({ args: args.join(' '), code, stderr });
            // A customer the command created joins the logins.
            if (code === 0 && args[0] === 'customers') customers.push({ mobile: mobileNumber(100 + n), logins: 0 });
          });
        });
        await Promise.all(runs);
      }
    } finally {
      commandsDone = true;
      await logins;
    }

    expect(results.filter((r) => r.code !== 0)).toEqual([]);
    expect(results).toHaveLength(COMMAND_BATCHES * 10);
    expect(failures).toEqual([]);
    expect(loginsDuringCommands).toBeGreaterThanOrEqual(5);

    // Everything the commands wrote is there.
    let listed = '';
    expect(await runCli(['customers', 'list', '--json'], { env, stdout: (text) => void (listed += text) })).toBe(0);
    expect(JSON.parse(listed)).toHaveLength(4 + COMMAND_BATCHES * 5);
    listed = '';
    expect(await runCli(['clients', 'list', '--json'], { env, stdout: (text) => void (listed += text) })).toBe(0);
    expect(JSON.parse(listed)).toHaveLength(1 + COMMAND_BATCHES * 5);
  });
});
