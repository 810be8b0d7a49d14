/**
 * The source of "now" for every expiry rule.
 *
 * Core and storage code never read the system time themselves; they receive a
 * `Clock` so that tests can move time explicitly and so that SQLite and
 * PostgreSQL compare timestamps computed in one place.
 */
export interface Clock {
  /** Current time as whole seconds since the UNIX epoch. */
  nowSeconds(): number;
}

/** The real clock, backed by the system time. */
export const systemClock: Clock = {
  nowSeconds: () => Math.floor(Date.now() / 1000),
};

/** A clock that only moves when told to. */
export interface FixedClock extends Clock {
  /** Moves the clock forward (or backward, with a negative value) by `seconds`. */
  advance(seconds: number): void;
  /** Sets the clock to an absolute time in epoch seconds. */
  set(epochSeconds: number): void;
}

/**
 * A clock for tests: starts at `start` (epoch seconds) and moves only through
 * `advance` / `set`.
 *
 * @example
 * const clock = fixedClock(1_700_000_000);
 * clock.advance(3600);
 */
export function fixedClock(start: number): FixedClock {
  let now = Math.floor(start);
  return {
    nowSeconds: () => now,
    advance(seconds) {
      now += Math.floor(seconds);
    },
    set(epochSeconds) {
      now = Math.floor(epochSeconds);
    },
  };
}

/** The clock's "now" as a `Date`, for libraries that take one (jose's `currentDate`). */
export function clockDate(clock: Clock): Date {
  return new Date(clock.nowSeconds() * 1000);
}

/**
 * Milliseconds on a monotonic timer, for how long infrastructure waited (a
 * change signal's confirmation), never for an expiry rule: it does not
 * follow the injected clock, and it never jumps when the system time is set.
 */
export function monotonicMs(): number {
  return performance.now();
}

/** Epoch seconds as ISO 8601 in UTC, to the second (`2026-01-01T00:00:00Z`), for messages. */
export function isoSeconds(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().replace('.000Z', 'Z');
}
