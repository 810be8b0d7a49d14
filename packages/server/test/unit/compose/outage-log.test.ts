import { describe, expect, it } from 'vitest';
import { createOutageLog, dependencyOf, describeCause } from '../../../src/compose/outage-log.js';
import { StorageUnavailable } from '../../../src/core/storage-errors.js';

/** A sink that keeps each line as pino would write it: level, message and fields. */
function capture() {
  const lines: Array<{ level: 'error' | 'warn'; msg: string } & Record<string, unknown>> = [];
  return {
    lines,
    sink: {
      error: (details: object, msg: string) => lines.push({ level: 'error', msg, ...details }),
      warn: (details: object, msg: string) => lines.push({ level: 'warn', msg, ...details }),
    },
  };
}

/** A clock the test moves: ms. */
function manualClock() {
  let now = 1_000_000;
  return { nowMs: () => now, advance: (ms: number) => void (now += ms) };
}

const refused = () =>
  new StorageUnavailable('the database is unavailable (ECONNREFUSED): connect ECONNREFUSED 10.0.0.5:5432', {
    cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' }),
  });

describe('the log of outages', () => {
  it('a 10-second database outage under load: one line when it starts (with the cause), one every 5 s with the count, one when it ends (with how long)', () => {
    const { lines, sink } = capture();
    const clock = manualClock();
    const outages = createOutageLog(sink, { nowMs: clock.nowMs, reportEveryMs: 5_000 });

    // 40 requests a second for 10 s, every one failing, and the pool's own failures besides.
    for (let tick = 0; tick < 400; tick++) {
      outages.failed('database', refused());
      outages.requestFailed('database', refused());
      clock.advance(25);
    }
    // The partition heals: requests already waiting fail a moment after the first success.
    outages.succeeded('database');
    outages.requestFailed('database', refused());
    clock.advance(1_000);
    outages.succeeded('database');
    outages.succeeded('database');

    expect(lines.map(({ level, msg, outage }) => [level, msg, outage])).toEqual([
      ['error', 'database unreachable', 'started'],
      ['warn', 'database still unreachable', 'ongoing'],
      ['warn', 'database still unreachable', 'ongoing'],
      ['warn', 'database reachable again', 'ended'],
    ]);
    expect(lines[0]).toMatchObject({
      dependency: 'database',
      cause: 'StorageUnavailable: the database is unavailable (ECONNREFUSED): connect ECONNREFUSED 10.0.0.5:5432',
    });
    // Each count covers the failures since the line before; together, every one of them.
    expect(lines[1]).toMatchObject({ dependency: 'database', downForMs: 5_000, failedRequests: 200 });
    // The one after the healing, 10 s in, is the last of the second count: 200 + 201 = every request.
    expect(lines[2]).toMatchObject({ downForMs: 10_000, failedRequests: 201 });
    expect(lines[3]).toMatchObject({ dependency: 'database', downForMs: 10_000, failedRequests: 401, failures: 400 });
    expect(JSON.stringify(lines)).not.toMatch(/"stack"|\bat \S+ \(/);
  });

  it('each dependency has outages of its own; a success of one ends nothing of another', () => {
    const { lines, sink } = capture();
    const clock = manualClock();
    const outages = createOutageLog(sink, { nowMs: clock.nowMs });
    outages.failed('redis', new Error('Command timed out'));
    outages.failed('sms_gateway', new Error('gateway timed out'));
    clock.advance(2_000);
    outages.succeeded('database');
    outages.succeeded('redis');
    expect(lines.map(({ msg }) => msg)).toEqual(['Redis unreachable', 'SMS gateway unreachable', 'Redis reachable again']);
    expect(lines[2]).toMatchObject({ downForMs: 0, failures: 1, failedRequests: 0 });
  });

  it('nothing is written while every operation succeeds', () => {
    const { lines, sink } = capture();
    const outages = createOutageLog(sink);
    for (let i = 0; i < 100; i++) outages.succeeded('database');
    expect(lines).toEqual([]);
  });

  it('a cause is one line: no stack, no password of a URL, the driver codes kept', () => {
    const error = new StorageUnavailable('the database is unavailable (28P01): password authentication failed', {
      cause: Object.assign(new Error('could not reach postgres://connect:s3cret-pass@db.internal:5432/connect\n    at Socket.connect'), { code: '28P01' }),
    });
    const described = describeCause(error);
    expect(described).toBe(
      'StorageUnavailable: the database is unavailable (28P01): password authentication failed <- Error (28P01): could not reach postgres://connect:***@db.internal:5432/connect',
    );
    expect(described).not.toContain('s3cret-pass');
  });

  it('names the dependency a 503 came from: the database by default, Redis when the limits say so', () => {
    expect(dependencyOf(refused())).toBe('database');
    expect(dependencyOf(new Error('wrapped', { cause: new StorageUnavailable('x', { dependency: 'redis' }) }))).toBe('redis');
    expect(dependencyOf(new Error('something else'))).toBeUndefined();
  });
});
