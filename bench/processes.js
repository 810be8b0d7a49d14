// Child processes, ports and CPU accounting shared by the benchmark scripts.
// Every process started here is killed when the script ends, however it ends.
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Every benchmark server and load generator listens and connects here only. */
export const HOST = '127.0.0.1';

/** Linux reports process CPU time in clock ticks (USER_HZ, 100 on Linux). */
const CLOCK_TICKS_PER_SECOND = 100;

const children = new Set();

/** Kills every process started here that is still running. */
export function killAll() {
  for (const child of children) child.kill('SIGKILL');
}

process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping every process\n`);
    killAll();
    process.exit(130);
  });
}

/** Spawns a child that is killed when the benchmark ends; `child.exitState` resolves when it exits. */
export function spawnTracked(command, args, options) {
  const child = spawn(command, args, options);
  children.add(child);
  child.exitState = new Promise((resolve) => {
    const done = (state) => {
      children.delete(child);
      child.exited = state;
      resolve(state);
    };
    child.once('exit', (code, signal) => done({ code, signal }));
    child.once('error', (error) => done({ code: null, signal: null, error: error.message }));
  });
  return child;
}

/** Asks a child to stop (SIGTERM), then kills it if it has not within `graceMs`. */
export async function stop(child, graceMs = 5000) {
  if (child.exited) return child.exited;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  const state = await child.exitState;
  clearTimeout(timer);
  return state;
}

/** Runs a command to completion and returns its stdout; fails with its stderr. */
export function run(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { ...options, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      children.delete(child);
      if (error) reject(new Error(`${[command, ...args].join(' ').slice(0, 200)} failed: ${stderr.trim() || error.message}`));
      else resolve(stdout);
    });
    children.add(child);
  });
}

/** A TCP port free on {@link HOST} right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The environment every server starts from: no inherited Connect or benchmark settings. */
export function cleanEnv() {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('CONNECT_') || name.startsWith('BENCH_')) continue;
    if (['DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST', 'NODE_OPTIONS', 'NODE_ENV'].includes(name)) continue;
    env[name] = value;
  }
  return env;
}

/**
 * CPU time (user + system, all threads) a process has used so far, in ms,
 * from /proc; undefined once it is gone.
 */
export function cpuTimeMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** A whole-number setting from the environment: `fallback` when unset; fails outside `min`-`max`. */
export function wholeNumberSetting(env, name, fallback, min, max) {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) fail(`${name} must be a whole number from ${min} to ${max}, not "${raw}"`);
  return value;
}

/** A script's settings, `read(process.env)`; a bad one ends the run with one line and exit status 2. */
export function readSettings(read) {
  try {
    return read(process.env);
  } catch (error) {
    process.stderr.write(`bench: ${error.message}\n`);
    process.exit(2);
  }
}

/**
 * Runs a script's `main`. A failure ends the run with exit status 1 and every
 * process stopped; an expected one ({@link fail}) is printed as one line.
 */
export function runMain(main) {
  main().catch((error) => {
    process.stderr.write(`\nbench FAILED: ${error.benchFailure ? error.message : (error.stack ?? error)}\n`);
    killAll();
    process.exitCode = 1;
  });
}

/** Ends the run with a failure the scripts print as one line (no stack trace). */
export function fail(message) {
  throw Object.assign(new Error(message), { benchFailure: true });
}

/**
 * The last resort: whatever happens, the run ends after `seconds`, with every
 * process it started stopped. Every step has its own timeout besides.
 */
export function stopAfter(seconds, what) {
  setTimeout(() => {
    process.stderr.write(`\nbench FAILED: still running after ${seconds} s; stopping every ${what}\n`);
    killAll();
    process.exit(1);
  }, seconds * 1000).unref();
}

/**
 * Fails unless `taskset` can pin to both CPUs; the message offers BENCH_PIN=0
 * only where the script can run unpinned.
 */
export async function checkPinning(serverCpu, loadCpu, { canRunUnpinned = true } = {}) {
  // One CPU at a time: taskset accepts a list as long as any CPU in it exists.
  for (const cpu of [serverCpu, loadCpu]) {
    await run('taskset', ['-c', cpu, 'true']).catch((error) =>
      fail(`CPU pinning needs taskset and CPUs ${serverCpu} and ${loadCpu}; CPU ${cpu}: ${error.message}${canRunUnpinned ? '; set BENCH_PIN=0 to run unpinned' : ''}`),
    );
  }
}
