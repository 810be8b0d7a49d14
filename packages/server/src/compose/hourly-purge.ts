/**
 * The server's own purge: the one `connect-auth purge` runs, every hour, on
 * one instance at a time (docs/operator-guide.md, "Retention").
 */
import { StorageUnavailable } from '../core/storage-errors.js';
import { describeCause } from './outage-log.js';
import type { Clock } from '../core/clock.js';
import { PURGE_FIRST_RUN_SECONDS, PURGE_INTERVAL_SECONDS } from '../core/lifetimes.js';
import { purgeExpired, type PurgeCounts, type PurgeKind } from '../core/retention/purge.js';
import type { Storage } from '../core/storage/storage.js';

/** Where the purge reports (the server's logger). */
export interface PurgeLog {
  info(details: object, message: string): void;
  error(details: object, message: string): void;
}

/**
 * How a failed purge or sweep is logged: an unavailable database (expected
 * now and then, and logged once as an outage) by its cause, without a
 * stack; anything else in full.
 */
export function failureDetails(error: unknown): object {
  return error instanceof StorageUnavailable ? { cause: describeCause(error) } : { err: error };
}

/** One run: what it deleted, or why it did nothing. */
export type PurgeRun = { readonly ran: true; readonly deleted: PurgeCounts } | { readonly ran: false; readonly reason: 'locked' | 'failed' | 'running' };

export interface HourlyPurge {
  /** Runs the purge now (the timer calls it); never throws: a failure is logged. */
  runOnce(): Promise<PurgeRun>;
  /** Stops the timer and waits for a run in progress to end. */
  stop(): Promise<void>;
}

export interface HourlyPurgeOptions {
  readonly storage: Pick<Storage, 'runExclusively'>;
  readonly clock: Clock;
  readonly log: PurgeLog;
  readonly sessionIdleSeconds: number;
  readonly auditRetentionDays: number;
  /** Milliseconds between runs; default an hour. */
  readonly intervalMs?: number;
  /** Rows per statement; default the purge's own. */
  readonly batchSize?: number;
  /** Told after every batch (tests). */
  readonly onProgress?: (kind: PurgeKind, deletedSoFar: number) => void;
}

/**
 * Starts the hourly purge: the first run a minute after start (or an
 * interval, when shorter), then one every interval. The timer is unref'd (it never keeps the process alive);
 * `stop()` ends it.
 */
export function startHourlyPurge(options: HourlyPurgeOptions): HourlyPurge {
  const { storage, log } = options;
  let current: Promise<PurgeRun> | undefined;

  const purge = async (): Promise<PurgeRun> => {
    try {
      // On the connection that holds the lock: the purge needs no second one from the pool.
      const outcome = await storage.runExclusively('purge', (stores) =>
        purgeExpired(stores, {
          now: options.clock.nowSeconds(),
          sessionIdleSeconds: options.sessionIdleSeconds,
          auditRetentionDays: options.auditRetentionDays,
          ...(options.batchSize ? { batchSize: options.batchSize } : {}),
          onProgress: (kind, soFar) => {
            options.onProgress?.(kind, soFar);
            if (soFar % 10_000 === 0) log.info({ kind, deleted: soFar }, 'purge in progress');
          },
        }),
      );
      if (!outcome.ran) {
        log.info({}, 'purge skipped: another instance is purging');
        return { ran: false, reason: 'locked' };
      }
      log.info({ deleted: outcome.value }, 'purge done');
      return { ran: true, deleted: outcome.value };
    } catch (error) {
      log.error(failureDetails(error), 'purge failed; trying again at the next hour');
      return { ran: false, reason: 'failed' };
    }
  };

  const runOnce = async (): Promise<PurgeRun> => {
    if (current) return { ran: false, reason: 'running' };
    current = purge();
    try {
      return await current;
    } finally {
      current = undefined;
    }
  };

  const intervalMs = options.intervalMs ?? PURGE_INTERVAL_SECONDS * 1000;
  let timer: NodeJS.Timeout | undefined;
  // The first run soon after start, so servers restarted more often than
  // hourly still purge; then one every interval.
  const first = setTimeout(() => {
    void runOnce();
    timer = setInterval(() => void runOnce(), intervalMs);
    timer.unref();
  }, Math.min(intervalMs, PURGE_FIRST_RUN_SECONDS * 1000));
  first.unref();
  return {
    runOnce,
    async stop() {
      clearTimeout(first);
      clearInterval(timer);
      await current;
    },
  };
}
