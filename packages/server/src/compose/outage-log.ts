import { monotonicMs } from '../core/clock.js';
import { StorageUnavailable } from '../core/storage-errors.js';

/** What Connect depends on, as the log of outages names it. */
export type Dependency = 'database' | 'redis' | 'sms_gateway';

/** Where the log of outages writes (pino's logger, or a test's). */
export interface OutageLogSink {
  error(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/**
 * The log of dependency outages (docs/operator-guide.md, "When a dependency
 * fails"): one `error` line when an outage starts, with its cause; while it
 * lasts, a `warn` line at most every `reportEveryMs` with the failures since
 * the last line; one `warn` line when it ends, with how long it lasted.
 * Each failing request is counted here instead of being logged with its
 * stack: its own request line says `503`.
 */
export interface OutageLog {
  /** An operation on `dependency` failed because it is unreachable (or too slow). */
  failed(dependency: Dependency, cause: unknown): void;
  /** A request was answered `503` because `dependency` failed: counted, and starts an outage if none is under way. */
  requestFailed(dependency: Dependency, cause: unknown): void;
  /** An operation on `dependency` succeeded: may end its outage. */
  succeeded(dependency: Dependency): void;
}

/** How the log of outages counts and when it speaks. */
export interface OutageLogOptions {
  /** Milliseconds of a clock that only moves forward; default the process's monotonic clock. */
  readonly nowMs?: () => number;
  /** The least time between two lines of one ongoing outage, ms; default 10 s. */
  readonly reportEveryMs?: number;
  /**
   * How long after its last failure a success ends an outage, ms; default
   * 1 s. Requests that were already waiting when a partition healed still
   * fail a moment after the first success; they belong to the same outage.
   */
  readonly settleMs?: number;
}

/** How an ongoing outage of one dependency stands. */
interface Outage {
  readonly startedAt: number;
  lastFailureAt: number;
  lastReportAt: number;
  /** Since the last line. */
  failures: number;
  failedRequests: number;
  /** Since it started. */
  totalFailures: number;
  totalFailedRequests: number;
}

const NAMES: Record<Dependency, string> = { database: 'database', redis: 'Redis', sms_gateway: 'SMS gateway' };

/** Builds the {@link OutageLog} of one instance. */
export function createOutageLog(sink: OutageLogSink, options: OutageLogOptions = {}): OutageLog {
  const now = options.nowMs ?? monotonicMs;
  const reportEveryMs = options.reportEveryMs ?? 10_000;
  const settleMs = options.settleMs ?? 1_000;
  const outages = new Map<Dependency, Outage>();

  const count = (dependency: Dependency, cause: unknown, request: boolean) => {
    const at = now();
    let outage = outages.get(dependency);
    if (!outage) {
      outage = { startedAt: at, lastFailureAt: at, lastReportAt: at, failures: 0, failedRequests: 0, totalFailures: 0, totalFailedRequests: 0 };
      outages.set(dependency, outage);
      sink.error({ dependency, outage: 'started', cause: describeCause(cause) }, `${NAMES[dependency]} unreachable`);
    }
    outage.lastFailureAt = at;
    if (request) {
      outage.failedRequests++;
      outage.totalFailedRequests++;
    } else {
      outage.failures++;
      outage.totalFailures++;
    }
    if (at - outage.lastReportAt >= reportEveryMs) {
      sink.warn(
        {
          dependency,
          outage: 'ongoing',
          downForMs: Math.round(at - outage.startedAt),
          failedRequests: outage.failedRequests,
          failures: outage.failures,
          cause: describeCause(cause),
        },
        `${NAMES[dependency]} still unreachable`,
      );
      outage.lastReportAt = at;
      outage.failures = 0;
      outage.failedRequests = 0;
    }
  };

  return {
    failed: (dependency, cause) => count(dependency, cause, false),
    requestFailed: (dependency, cause) => count(dependency, cause, true),
    succeeded(dependency) {
      // The hot path: one map lookup when nothing is wrong.
      const outage = outages.get(dependency);
      if (!outage) return;
      const at = now();
      if (at - outage.lastFailureAt < settleMs) return;
      outages.delete(dependency);
      sink.warn(
        {
          dependency,
          outage: 'ended',
          downForMs: Math.round(outage.lastFailureAt - outage.startedAt),
          failedRequests: outage.totalFailedRequests,
          failures: outage.totalFailures,
        },
        `${NAMES[dependency]} reachable again`,
      );
    },
  };
}

/** Which dependency an error from the storage or the limits names. */
export function dependencyOf(error: unknown): Dependency | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++) {
    if (cause instanceof StorageUnavailable) return cause.dependency;
  }
  return undefined;
}

/**
 * The cause of a failure on one line, for the log: each error of the chain
 * by type, code and first line of message, never its stack nor the
 * driver's other fields (PostgreSQL's `detail` may quote a row), and with
 * the password of any URL in it masked.
 */
export function describeCause(error: unknown): string {
  const parts: string[] = [];
  for (let cause = error, depth = 0; cause !== undefined && depth < 4; depth++) {
    if (!(cause instanceof Error)) {
      parts.push(String(cause));
      break;
    }
    const code = (cause as { code?: unknown }).code;
    const message = cause.message.split('\n')[0] ?? '';
    const coded = typeof code === 'string' || typeof code === 'number' ? ` (${code})` : '';
    // A wrapper whose message already quotes its cause says it all.
    if (!parts.some((part) => part.includes(message))) parts.push(`${cause.name}${coded}: ${message}`);
    cause = cause.cause;
  }
  return parts
    .join(' <- ')
    .replace(/(\/\/[^\s/:@]*:)[^\s/@]*@/g, '$1***@')
    .slice(0, 500);
}
