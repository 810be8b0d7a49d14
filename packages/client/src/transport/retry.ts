import { ConnectError, InvalidResponse, NetworkError, ServerError, TemporarilyUnavailable, Timeout } from './errors.js';
import { abortedBy } from './send-request.js';

/**
 * Retries of transient failures: network errors, timeouts, 5xx and 429.
 * OAuth errors such as `invalid_client` are never retried.
 */
export interface RetryOptions {
  /** Attempts in all, the first included; default 3 (1 turns retries off). */
  readonly attempts?: number;
  /** The first backoff delay; doubled at each retry. Default 200 ms. */
  readonly baseDelayMs?: number;
  /**
   * The longest wait between attempts, default 10,000 ms. A `Retry-After`
   * longer than this is not waited for: the error is thrown at once, with
   * `retryAfter` set.
   */
  readonly maxDelayMs?: number;
  /** Spread backoff delays randomly over their upper half; default true. */
  readonly jitter?: boolean;
  /** Waits `ms`; rejects when `signal` fires. Tests pass one that records and returns at once. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Whether trying the same request again may succeed. */
export function isTransient(error: unknown): boolean {
  if (error instanceof NetworkError || error instanceof Timeout) return true;
  if (error instanceof ServerError || error instanceof TemporarilyUnavailable) return true;
  // A gateway's HTML error page in front of Connect.
  return error instanceof InvalidResponse && error.status !== undefined && (error.status >= 500 || error.status === 429);
}

/**
 * Runs `operation` until it succeeds, fails for good, or the attempts run
 * out. Between attempts it waits `Retry-After` when the answer had one,
 * otherwise an exponential backoff bounded by `maxDelayMs`.
 */
export async function withRetry<T>(operation: (attempt: number) => Promise<T>, options: RetryOptions, signal?: AbortSignal): Promise<T> {
  const attempts = Math.max(1, Math.floor(options.attempts ?? 3));
  const baseDelayMs = options.baseDelayMs ?? 200;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  const sleep = options.sleep ?? defaultSleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt);
    } catch (error) {
      if (attempt >= attempts || !isTransient(error)) throw error;
      const retryAfter = error instanceof ConnectError ? error.retryAfter : undefined;
      let delay: number;
      if (retryAfter !== undefined) {
        delay = retryAfter * 1000;
        if (delay > maxDelayMs) throw error;
      } else {
        const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
        delay = options.jitter === false ? backoff : backoff / 2 + Math.random() * (backoff / 2);
      }
      if (signal?.aborted) throw abortedBy(signal);
      await sleep(Math.round(delay), signal);
      if (signal?.aborted) throw abortedBy(signal);
    }
  }
}

/** `setTimeout` as a promise that rejects with `Aborted` when the signal fires. */
export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortedBy(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedBy(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
