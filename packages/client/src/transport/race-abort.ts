import { abortedBy } from './send-request.js';

/**
 * Waits for a shared `promise` on behalf of one caller: the caller's abort
 * rejects its own wait with `Aborted` but leaves the shared work running for
 * the other callers (single-flight requests).
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortedBy(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortedBy(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
