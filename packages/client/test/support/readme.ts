import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The code of packages/client/README.md as a merchant copies it: each block
 * the tests run follows an HTML comment naming it, so a test reads the
 * README itself and fails when the README drifts from what works.
 */

export const README = join(dirname(fileURLToPath(import.meta.url)), '../../README.md');

/** The code block after `<!-- {marker}: … -->`, without the indentation of a list item. */
export async function readmeBlock(
  marker: 'minimal consumer' | 'client token' | 'consumer client' | 'minimal fapi consumer' | 'fapi consumer client' | 'fapi keys',
): Promise<string> {
  const text = await readFile(README, 'utf8');
  const match = new RegExp(`^( *)<!-- ${marker}:[^>]*-->\\n *\`\`\`\\w+\\n([\\s\\S]*?)\\n *\`\`\``, 'm').exec(text);
  if (!match) throw new Error(`packages/client/README.md has no "${marker}" block`);
  const indent = match[1] ?? '';
  return (match[2] ?? '')
    .split('\n')
    .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
    .join('\n');
}

/**
 * The README's `npx connect-auth clients create …` line for the consumer, as
 * `connect-auth` arguments, its redirect URI replaced by `redirectUri`.
 */
export async function readmeClientsCreate(redirectUri: string, marker: 'consumer client' | 'fapi consumer client' = 'consumer client'): Promise<string[]> {
  const line = (await readmeBlock(marker)).trim();
  const words = line.split(/\s+/);
  if (words[0] !== 'npx' || words[1] !== 'connect-auth') throw new Error(`not a connect-auth command: ${line}`);
  const args = words.slice(2);
  const at = args.indexOf('--redirect-uri');
  if (at < 0 || args[at + 1] === undefined) throw new Error(`the command names no --redirect-uri: ${line}`);
  args[at + 1] = redirectUri;
  return args;
}

/** A port no one listens on now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A node process with its output collected. */
export interface NodeProcess {
  readonly child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/** Runs `node file` in `cwd` with only PATH and `env` set. */
export function runNode(file: string, cwd: string, env: Record<string, string>): NodeProcess {
  const child = spawn(process.execPath, [file], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Waits until `url` answers (any status), or throws with what the process printed. */
export async function waitForListening(url: string, running: NodeProcess, timeoutMs = 15_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const up = await fetch(url, { method: 'HEAD', redirect: 'manual' }).then(
      () => true,
      () => false,
    );
    if (up) return;
    if (running.child.exitCode !== null || Date.now() > deadline) throw new Error(`${url} did not answer: ${running.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
