/**
 * The server's sweep of expired journeys: every
 * `JOURNEY_PURGE_INTERVAL_SECONDS` by the service's clock, on one instance
 * at a time, apart from the hourly purge, so that the rows anonymous
 * `GET /authorize` requests write are gone within minutes of their expiry
 * (docs/lifetimes.md, "Journeys"). It costs requests nothing: a timer runs
 * it, never a request.
 */
import type { Clock } from '../core/clock.js';
import { JOURNEY_PURGE_INTERVAL_SECONDS, JOURNEY_PURGE_MAX_BATCHES, PURGE_BATCH_SIZE } from '../core/lifetimes.js';
import type { Storage } from '../core/storage/storage.js';
import { failureDetails, type PurgeLog } from './hourly-purge.js';

/** One sweep: how many journeys it deleted, or why it did nothing. */
export type JourneyPurgeRun =
  | { readonly ran: true; readonly deleted: number }
  | { readonly ran: false; readonly reason: 'not_due' | 'locked' | 'failed' | 'running' };

export interface JourneyPurge {
  /** Sweeps when the clock says one is due (the timer calls it); never throws. */
  tick(): Promise<JourneyPurgeRun>;
  /** Sweeps now, due or not; never throws: a failure is logged. */
  runOnce(): Promise<JourneyPurgeRun>;
  /** Stops the timer and waits for a sweep in progress to end. */
  stop(): Promise<void>;
}

export interface JourneyPurgeOptions {
  readonly storage: Pick<Storage, 'runExclusively'>;
  readonly clock: Clock;
  readonly log: PurgeLog;
  /** Seconds, on `clock`, between sweeps; default `JOURNEY_PURGE_INTERVAL_SECONDS`. */
  readonly intervalSeconds?: number;
  /** Rows per statement; default `PURGE_BATCH_SIZE`. */
  readonly batchSize?: number;
  /** Statements per sweep at most; default `JOURNEY_PURGE_MAX_BATCHES`. */
  readonly maxBatches?: number;
  /** Real milliseconds between the timer's looks at the clock; default a tenth of the interval, at most 10 s. `0`: no timer (tests tick). */
  readonly tickMs?: number;
}

/**
 * Starts the sweep. A sweep is due once `intervalSeconds` have passed on
 * the clock since the last one (the first is due at once); the timer looks
 * at the clock often enough that a journey is deleted at most about
 * `intervalSeconds` after it expired. Each sweep deletes in statements of
 * `batchSize` rows, at most `maxBatches` of them, so none runs long; under
 * a flood larger than that the hourly purge and the next sweeps finish the
 * work. The timer is unref'd.
 */
export function startJourneyPurge(options: JourneyPurgeOptions): JourneyPurge {
  const { storage, clock, log } = options;
  const intervalSeconds = options.intervalSeconds ?? JOURNEY_PURGE_INTERVAL_SECONDS;
  const batch = options.batchSize ?? PURGE_BATCH_SIZE;
  const maxBatches = options.maxBatches ?? JOURNEY_PURGE_MAX_BATCHES;
  let current: Promise<JourneyPurgeRun> | undefined;
  let nextDueAt = Number.NEGATIVE_INFINITY;

  const sweep = async (): Promise<JourneyPurgeRun> => {
    try {
      // On the connection that holds the lock: a sweep needs no second one from the pool.
      const outcome = await storage.runExclusively('journey-purge', async ({ authorizationRequests }) => {
        const now = clock.nowSeconds();
        let deleted = 0;
        for (let i = 0; i < maxBatches; i++) {
          const count = await authorizationRequests.deleteExpiredAuthorizationRequests(now, batch);
          deleted += count;
          if (count < batch) break;
        }
        return deleted;
      });
      if (!outcome.ran) return { ran: false, reason: 'locked' };
      // Only sweeps that deleted something are logged: one a minute of nothing would be noise.
      if (outcome.value > 0) log.info({ deleted: outcome.value }, 'expired journeys deleted');
      return { ran: true, deleted: outcome.value };
    } catch (error) {
      log.error(failureDetails(error), 'deleting expired journeys failed; trying again at the next sweep');
      return { ran: false, reason: 'failed' };
    }
  };

  const runOnce = async (): Promise<JourneyPurgeRun> => {
    if (current) return { ran: false, reason: 'running' };
    nextDueAt = clock.nowSeconds() + intervalSeconds;
    current = sweep();
    try {
      return await current;
    } finally {
      current = undefined;
    }
  };

  const tick = async (): Promise<JourneyPurgeRun> => (clock.nowSeconds() < nextDueAt ? { ran: false, reason: 'not_due' } : runOnce());

  const tickMs = options.tickMs ?? Math.min(10_000, Math.max(1000, (intervalSeconds * 1000) / 10));
  const timer = tickMs > 0 ? setInterval(() => void tick(), tickMs) : undefined;
  timer?.unref();
  return {
    tick,
    runOnce,
    async stop() {
      clearInterval(timer);
      await current;
    },
  };
}
