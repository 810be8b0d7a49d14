import type { Clock } from './clock.js';
import {
  Aborted,
  errorForCode,
  InvalidResponse,
  NetworkError,
  TemporarilyUnavailable,
  Timeout,
  type ConnectError,
  type ConnectErrorOptions,
} from './errors.js';

/** How requests are sent (internal). */
export interface HttpSettings {
  readonly fetch: typeof fetch;
  readonly timeoutMs: number;
  readonly clock: Clock;
}

/** One request to Connect (internal). */
export interface HttpRequest {
  readonly method: 'GET' | 'POST';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** A 2xx with an empty body is a success (`/revoke`). */
  readonly allowEmpty?: boolean;
  /** Sees the headers of every answer, success or error (a `DPoP-Nonce` to keep). */
  readonly onHeaders?: ((headers: Headers) => void) | undefined;
}

/** A successful answer whose body is a JSON object (internal). */
export interface JsonAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Readonly<Record<string, unknown>>;
}

/**
 * Sends one request and reads a JSON object back. Every failure becomes a
 * `ConnectError`: `Timeout` after `timeoutMs`, `Aborted` when the caller's
 * signal fires, `NetworkError` when Connect cannot be reached, Connect's
 * own error code for an OAuth error answer, and `InvalidResponse` for
 * anything that is not Connect's (an HTML page from a proxy, garbage).
 */
export async function sendRequest(request: HttpRequest, settings: HttpSettings, signal?: AbortSignal): Promise<JsonAnswer> {
  const url = new URL(request.url);
  const endpoint = `${request.method} ${url.origin}${url.pathname}`;
  if (signal?.aborted) throw abortedBy(signal, endpoint);
  const timeout = AbortSignal.timeout(settings.timeoutMs);
  const combined = signal ? anySignal([timeout, signal]) : timeout;

  let response: Response;
  let text: string;
  try {
    response = await settings.fetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      // A token endpoint never redirects; following one could send the body elsewhere.
      redirect: 'manual',
      signal: combined,
    });
    // The same signal bounds reading the body, so a server that stalls mid-body times out too.
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw abortedBy(signal, endpoint);
    if (timeout.aborted) throw new Timeout(`no answer within ${settings.timeoutMs} ms`, { endpoint, cause: error });
    throw new NetworkError(`could not reach Connect${networkDetail(error)}`, { endpoint, cause: error });
  }

  request.onHeaders?.(response.headers);
  const context: ConnectErrorOptions = {
    endpoint,
    status: response.status,
    retryAfter: parseRetryAfter(response.headers.get('retry-after'), settings.clock),
  };
  const json = parseJson(text);
  if (response.status >= 200 && response.status < 300) {
    if (request.allowEmpty && text.trim() === '') return { status: response.status, headers: response.headers, body: {} };
    if (!isObject(json)) throw new InvalidResponse(`expected a JSON object, got ${describeBody(response, text)}`, context);
    return { status: response.status, headers: response.headers, body: json };
  }
  throw errorAnswer(response, text, json, context);
}

function errorAnswer(response: Response, text: string, json: unknown, context: ConnectErrorOptions): ConnectError {
  if (isObject(json) && typeof json.error === 'string') {
    const description = typeof json.error_description === 'string' && json.error_description !== '' ? json.error_description : json.error;
    const known = errorForCode(json.error, description, context);
    if (known) return known;
    return new InvalidResponse(`unknown error code "${printable(json.error)}"`, context);
  }
  // A proxy or load balancer in front of Connect: busy is busy, whatever the body.
  if (response.status === 429) return new TemporarilyUnavailable('too many requests', context);
  if (response.status === 503) return new TemporarilyUnavailable('service unavailable', context);
  return new InvalidResponse(`expected a JSON error, got ${describeBody(response, text)}`, context);
}

/**
 * `Retry-After` in seconds (RFC 9110 §10.2.3): delay-seconds, or an
 * HTTP-date measured against the injected clock.
 */
export function parseRetryAfter(value: string | null, clock: Clock): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil(at / 1000 - clock.nowSeconds()));
}

/** Combines signals; `AbortSignal.any` where the runtime has it. */
export function anySignal(signals: readonly AbortSignal[]): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([...signals]);
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true, signal: controller.signal });
  }
  return controller.signal;
}

/** The error for a caller's abort; `cause` is the signal's reason. */
export function abortedBy(signal: AbortSignal, endpoint?: string): Aborted {
  return new Aborted('the caller aborted the request', { endpoint, cause: signal.reason });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeBody(response: Response, text: string): string {
  const type = response.headers.get('content-type')?.split(';')[0]?.trim() || 'no content type';
  if (text.trim() === '') return `an empty body (${type})`;
  if (/html/i.test(type) || /^\s*</.test(text)) return `an HTML page (${type})`;
  return `a body that is not a JSON object (${type})`;
}

function networkDetail(error: unknown): string {
  // undici: TypeError('fetch failed') with the system error as its cause.
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  return code ? ` (${printable(code)})` : '';
}

function printable(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, '?').slice(0, 60);
}
