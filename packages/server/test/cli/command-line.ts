import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { expect, onTestFinished } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { Interrupted } from '../../src/cli/commands/output.js';
import { streamInput, type CliInput } from '../../src/cli/pin-input.js';
import { MASTER_KEY_FILE } from '../../src/config/master-key-file.js';
import type { AuditRecord } from '../../src/core/audit/audit-log.js';
import { fixedClock, type FixedClock } from '../../src/core/clock.js';
import { openStorage } from '../../src/storage/kysely/open-storage.js';
import type { Storage } from '../../src/core/storage/storage.js';
import { basicAuth, build, form, T0, type TestApp } from '../helpers/build.js';

/**
 * Runs `connect-auth` in-process on a throw-away sandbox data folder with an
 * injected clock, and reaches the same database the way `serve` would.
 */

/** What one `connect-auth` run produced. */
export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A sandbox data folder and the commands run on it. */
export interface CliWorkspace {
  readonly dataDir: string;
  readonly env: Record<string, string>;
  readonly clock: FixedClock;
  /** Everything every run printed, stdout and stderr. */
  readonly printed: string[];
  /** Runs `connect-auth ...argv`; standard input is `stdin`, by default an empty pipe. */
  cli(argv: readonly string[], extraEnv?: Record<string, string>, stdin?: CliInput): Promise<Run>;
  /** Runs a `--json` command that must succeed with exactly one JSON document on stdout; returns it. */
  cliJson<T = Record<string, unknown>>(argv: readonly string[], extraEnv?: Record<string, string>): Promise<T>;
  /** The storage of the CLI's database (opened once, closed when the test ends). */
  storage(): Promise<Storage>;
  /** Every audit event recorded so far, oldest first. */
  auditEvents(): Promise<AuditRecord[]>;
  /** The sandbox master key the CLI generated into the data folder. */
  masterKey(): Buffer;
  /** A fresh app on the CLI's database and master key, as `serve` builds it, on the same clock. */
  app(): Promise<TestApp>;
}

/** A new sandbox data folder, removed when the test ends. */
export function cliWorkspace(options: { clock?: FixedClock; env?: Record<string, string> } = {}): CliWorkspace {
  const dataDir = mkdtempSync(join(tmpdir(), 'connect-cli-'));
  const env = { CONNECT_DATA_DIR: dataDir, CONNECT_ENVIRONMENT: 'sandbox', ...options.env };
  const clock = options.clock ?? fixedClock(T0);
  const printed: string[] = [];
  let storage: Storage | undefined;
  onTestFinished(async () => {
    await storage?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const workspace: CliWorkspace = {
    dataDir,
    env,
    clock,
    printed,
    async cli(argv, extraEnv = {}, stdin = pipedInput('')) {
      let stdout = '';
      let stderr = '';
      const code = await runCli(argv, {
        env: { ...env, ...extraEnv },
        clock,
        stdin,
        stdout: (text) => void (stdout += text),
        stderr: (text) => void (stderr += text),
      });
      printed.push(stdout, stderr);
      return { code, stdout, stderr };
    },
    async cliJson<T>(argv: readonly string[], extraEnv: Record<string, string> = {}) {
      const run = await workspace.cli([...argv, '--json'], extraEnv);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      return parseOneDocument(run.stdout) as T;
    },
    async storage() {
      if (!storage) {
        storage = openStorage({ engine: 'sqlite', path: join(dataDir, 'connect-sandbox.db') });
        await storage.migrate();
      }
      return storage;
    },
    async auditEvents() {
      return (await workspace.storage()).audit.listAuditEvents({ limit: 100_000 });
    },
    masterKey() {
      const key = Buffer.from(readFileSync(join(dataDir, MASTER_KEY_FILE), 'utf8').trim(), 'base64');
      expect(key).toHaveLength(32);
      return key;
    },
    async app() {
      return build({ storage: await workspace.storage(), masterKey: workspace.masterKey(), clock });
    },
  };
  return workspace;
}

/** Standard input that is a pipe holding `text`. */
export function pipedInput(text: string): CliInput {
  return streamInput(Readable.from([Buffer.from(text)]));
}

/** A terminal on which the operator types one of `entries` at each prompt (Ctrl-C: `'^C'`); `prompts` records what was asked. */
export function terminalInput(entries: readonly string[]): CliInput & { readonly prompts: string[] } {
  const typed = [...entries];
  const prompts: string[] = [];
  return {
    isTerminal: true,
    prompts,
    readLine: () => Promise.reject(new Error('a terminal is read with readHidden')),
    async readHidden(prompt) {
      prompts.push(prompt);
      const entry = typed.shift();
      if (entry === undefined) throw new Error(`nothing typed at the prompt ${JSON.stringify(prompt)}`);
      if (entry === '^C') throw new Interrupted('interrupted; nothing changed');
      return entry;
    },
  };
}

/** Parses stdout that must hold one JSON document and nothing else (JSON.parse refuses trailing text). */
export function parseOneDocument(stdout: string): unknown {
  expect(stdout.endsWith('\n')).toBe(true);
  return JSON.parse(stdout);
}

/** Expects a failed run: the status, nothing on stdout, exactly one line on stderr; returns that line. */
export function expectFailure(run: Run, code: number | 'non-zero'): string {
  if (code === 'non-zero') expect(run.code).not.toBe(0);
  else expect(run.code).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^connect-auth: [^\n]+\n$/);
  return run.stderr;
}

/** `POST /token` with `grant_type=client_credentials`, the client authenticated by HTTP Basic. */
export function requestToken(t: TestApp, clientId: string, clientSecret: string) {
  return t.app.inject({
    method: 'POST',
    url: '/token',
    headers: { authorization: basicAuth(clientId, clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
    payload: form({ grant_type: 'client_credentials' }),
  });
}

/** The status `POST /token` answers for these credentials, with the error code when refused. */
export async function tokenOutcome(t: TestApp, clientId: string, clientSecret: string): Promise<number | string> {
  const res = await requestToken(t, clientId, clientSecret);
  if (res.statusCode === 200) return 200;
  return `${res.statusCode} ${res.json<{ error: string }>().error}`;
}
