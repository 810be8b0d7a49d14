import { systemClock, type Clock } from './clock.js';
import type { RetryOptions } from './retry.js';

/** Where Connect is, who the consumer is, and how requests behave. */
export interface ConnectOptions {
  /** Connect's `{auth_url}` (for `/token`, `/authorize`, `/revoke`), e.g. `https://auth.sandbox.example`. */
  readonly authUrl: string;
  /** Connect's `{base_url}` (for `POST /tokens`); default: `authUrl`. */
  readonly baseUrl?: string;
  /** The client ID issued at onboarding (one per environment). */
  readonly clientId: string;
  /** The client secret; sent only in the `Authorization` header, never in a message or log. */
  readonly clientSecret: string;
  /** Give up on one attempt after this many milliseconds; default 10,000. */
  readonly timeoutMs?: number;
  /** A `fetch` to use instead of the global one (one that goes through a proxy, a test wrapper). */
  readonly fetch?: typeof fetch;
  /** The source of "now" for expiry decisions; default the system clock. */
  readonly clock?: Clock;
  /** Retries of transient failures, where a retry is safe. */
  readonly retry?: RetryOptions;
}

/** Options of one call. */
export interface RequestOptions {
  /** Cancels the call; it then rejects with `Aborted` (code `aborted`). */
  readonly signal?: AbortSignal | undefined;
}

/** The default timeout of one attempt, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** {@link ConnectOptions} with defaults filled in and URLs checked (internal). */
export interface ResolvedOptions {
  readonly authUrl: string;
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly timeoutMs: number;
  readonly fetch: typeof fetch;
  readonly clock: Clock;
  readonly retry: RetryOptions;
}

/**
 * Fills in defaults and checks the options; a mistake here is a programming
 * error, so it throws a `TypeError` at once rather than a `ConnectError` later.
 */
export function resolveOptions(options: ConnectOptions): ResolvedOptions {
  const authUrl = checkUrl('authUrl', options.authUrl);
  const baseUrl = options.baseUrl === undefined ? authUrl : checkUrl('baseUrl', options.baseUrl);
  if (typeof options.clientId !== 'string' || options.clientId === '') throw new TypeError('clientId is required');
  if (typeof options.clientSecret !== 'string' || options.clientSecret === '') throw new TypeError('clientSecret is required');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new TypeError('timeoutMs must be a positive number of milliseconds');
  const givenFetch = options.fetch;
  return {
    authUrl,
    baseUrl,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    timeoutMs,
    // Looked up at call time, and called unbound (browsers refuse fetch with a foreign `this`).
    fetch: givenFetch ?? ((input, init) => fetch(input, init)),
    clock: options.clock ?? systemClock,
    retry: options.retry ?? {},
  };
}

/** An http(s) URL without a trailing slash, query or fragment. */
export function checkUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`${name} must be an absolute http(s) URL`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash || url.username || url.password) {
    throw new TypeError(`${name} must be an http(s) URL without credentials, query or fragment`);
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * The `Authorization` header of `client_secret_basic`. RFC 6749 §2.3.1:
 * ID and secret are form-encoded before the Basic encoding.
 */
export function basicAuthorization(clientId: string, clientSecret: string): string {
  // After percent-encoding the pair is ASCII, which btoa takes as it is.
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${btoa(`${encode(clientId)}:${encode(clientSecret)}`)}`;
}
