/** One request seen by a {@link recordingFetch}. */
export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Headers;
  readonly body: string;
}

/** What a recording fetch does with a request: pass it on (default), or fail it. */
export type Intercept = (request: SeenRequest, n: number) => 'forward' | 'fail' | 'fail-after-forwarding' | Promise<'forward' | 'fail' | 'fail-after-forwarding'>;

/**
 * A `fetch` that records every request and passes it to the real one.
 * `intercept` may make it throw as a network failure would, before the
 * request leaves ('fail') or after the server has answered ('fail-after-forwarding':
 * the answer is lost on the way back). `answers` keeps the JSON bodies that
 * were lost that way.
 */
export function recordingFetch(intercept?: Intercept) {
  const requests: SeenRequest[] = [];
  const lostAnswers: unknown[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const seen: SeenRequest = {
      method: init?.method ?? 'GET',
      path: url.pathname,
      headers: new Headers(init?.headers),
      body: typeof init?.body === 'string' ? init.body : '',
    };
    requests.push(seen);
    const action = intercept ? await intercept(seen, requests.length) : 'forward';
    if (action === 'fail') throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
    const response = await fetch(input, init);
    if (action === 'fail-after-forwarding') {
      lostAnswers.push(await response.json());
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
    }
    return response;
  };
  return {
    fetch: wrapped,
    requests,
    lostAnswers,
    /** Requests to `path` (and, when given, with `grant_type` in the form body). */
    count(path: string, grantType?: string): number {
      return requests.filter((r) => r.path === path && (grantType === undefined || new URLSearchParams(r.body).get('grant_type') === grantType)).length;
    },
  };
}

/** A `sleep` for `RetryOptions` that records the delays and returns at once. */
export function recordingSleep() {
  const delays: number[] = [];
  return {
    delays,
    sleep: async (ms: number) => {
      delays.push(ms);
    },
  };
}
