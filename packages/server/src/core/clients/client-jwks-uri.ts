import type { JSONWebKeySet } from 'jose';
import type { Clock } from '../clock.js';

/**
 * Fetches and caches the keys a client publishes at its `jwks_uri`
 * (docs/operator-guide.md, "FAPI 2.0 clients"):
 *
 * - one GET, no redirect followed, answered within `timeoutMs`, of at most
 *   `maxBytes`, a JSON object with a `keys` array, or it failed;
 * - kept for the `max-age` of its `Cache-Control` (at most
 *   `maxCacheSeconds`; `defaultCacheSeconds` without one), on the injected
 *   clock;
 * - fetched again before that only when an assertion names a `kid` the
 *   cached set lacks (`refresh`), and at most once per `minRefreshSeconds`
 *   per client, whatever the requests: so that no caller can make Connect
 *   hammer a client's server. A failed fetch is not tried again for that
 *   long either;
 * - while fetches fail, expired keys stand in for at most
 *   `maxCacheSeconds` more.
 */
export interface ClientJwksUriFetcher {
  /** The client's keys: cached, or fetched when none are cached or they expired. */
  keys(clientId: string, uri: string): Promise<JSONWebKeySet>;
  /** The client's keys fetched again (an unknown `kid`); `undefined` when the last fetch is too recent. */
  refresh(clientId: string, uri: string): Promise<JSONWebKeySet | undefined>;
}

/** Why a `jwks_uri` gave no keys: said to the operator's log, never to the caller. */
export class JwksUriFetchFailed extends Error {
  override readonly name = 'JwksUriFetchFailed';
}

/** Settings of {@link createClientJwksUriFetcher}; every default is documented where it is set. */
export interface ClientJwksUriFetcherOptions {
  readonly clock: Clock;
  /** Whether `http://` URIs may be fetched (sandbox only); production fetches `https://` only. */
  readonly allowHttp: boolean;
  /** How long a fetch may take, in milliseconds; default 3000. */
  readonly timeoutMs?: number;
  /** The largest key set read, in bytes; default 64 KiB (a few dozen keys). */
  readonly maxBytes?: number;
  /** How long keys are kept without a `max-age`, in seconds; default 300. */
  readonly defaultCacheSeconds?: number;
  /** The longest a `max-age` keeps keys, in seconds; default 3600. */
  readonly maxCacheSeconds?: number;
  /** The shortest time between two fetches for one client, in seconds; default 30. */
  readonly minRefreshSeconds?: number;
  /** The HTTP client; default the global `fetch`. */
  readonly fetch?: typeof fetch;
  /** Told of every failed fetch, also one that expired keys then stand in for (for the operator's log; nothing secret in it). */
  onFetchFailure?(clientId: string, uri: string, reason: string): void;
}

interface Entry {
  readonly clientId: string;
  readonly uri: string;
  keys: JSONWebKeySet | undefined;
  expiresAt: number;
  lastAttemptAt: number;
  lastFailure: JwksUriFetchFailed | undefined;
  inFlight: Promise<JSONWebKeySet> | undefined;
}

/** A {@link ClientJwksUriFetcher} with its cache in this process. */
export function createClientJwksUriFetcher(options: ClientJwksUriFetcherOptions): ClientJwksUriFetcher {
  const timeoutMs = options.timeoutMs ?? 3000;
  const maxBytes = options.maxBytes ?? 64 * 1024;
  const defaultCacheSeconds = options.defaultCacheSeconds ?? 300;
  const maxCacheSeconds = options.maxCacheSeconds ?? 3600;
  const minRefreshSeconds = options.minRefreshSeconds ?? 30;
  const doFetch = options.fetch ?? fetch;
  const { clock } = options;
  const entries = new Map<string, Entry>();

  const entryOf = (clientId: string, uri: string): Entry => {
    const existing = entries.get(clientId);
    // A client whose URI changed starts afresh.
    if (existing && existing.uri === uri) return existing;
    const entry: Entry = { clientId, uri, keys: undefined, expiresAt: 0, lastAttemptAt: Number.NEGATIVE_INFINITY, lastFailure: undefined, inFlight: undefined };
    entries.set(clientId, entry);
    return entry;
  };

  const load = (entry: Entry): Promise<JSONWebKeySet> => {
    if (entry.inFlight) return entry.inFlight;
    entry.lastAttemptAt = clock.nowSeconds();
    entry.inFlight = fetchKeys(entry.uri)
      .then(({ keys, maxAge }) => {
        entry.keys = keys;
        entry.lastFailure = undefined;
        entry.expiresAt = clock.nowSeconds() + Math.min(maxAge ?? defaultCacheSeconds, maxCacheSeconds);
        return keys;
      })
      .catch((error: unknown) => {
        const failure = error instanceof JwksUriFetchFailed ? error : new JwksUriFetchFailed(describe(error));
        entry.lastFailure = failure;
        options.onFetchFailure?.(entry.clientId, entry.uri, failure.message);
        throw failure;
      })
      .finally(() => {
        entry.inFlight = undefined;
      });
    return entry.inFlight;
  };

  const tooSoon = (entry: Entry) => clock.nowSeconds() - entry.lastAttemptAt < minRefreshSeconds;
  // Expired keys stand in while the URI fails, for at most maxCacheSeconds past their expiry.
  const stale = (entry: Entry) => (entry.keys && clock.nowSeconds() < entry.expiresAt + maxCacheSeconds ? entry.keys : undefined);

  async function fetchKeys(uri: string): Promise<{ keys: JSONWebKeySet; maxAge: number | undefined }> {
    const url = new URL(uri);
    if (url.protocol !== 'https:' && !(options.allowHttp && url.protocol === 'http:')) {
      throw new JwksUriFetchFailed(`${url.protocol} is not fetched here; jwks_uri must be https`);
    }
    let response: Response;
    try {
      response = await doFetch(url, { redirect: 'error', signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
    } catch (error) {
      throw new JwksUriFetchFailed(error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : describe(error));
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {});
      throw new JwksUriFetchFailed(`answered ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > maxBytes) {
      await response.body?.cancel().catch(() => {});
      throw new JwksUriFetchFailed(`its answer is over ${maxBytes} bytes`);
    }
    const text = await readCapped(response, maxBytes, timeoutMs);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new JwksUriFetchFailed('its answer is not JSON');
    }
    const keys = (parsed as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys) || !keys.every((key) => key !== null && typeof key === 'object' && !Array.isArray(key))) {
      throw new JwksUriFetchFailed('its answer is not a JWK Set (an object with a keys array of objects)');
    }
    return { keys: { keys } as JSONWebKeySet, maxAge: maxAgeOf(response.headers.get('cache-control')) };
  }

  return {
    async keys(clientId, uri) {
      const entry = entryOf(clientId, uri);
      if (entry.keys && entry.expiresAt > clock.nowSeconds()) return entry.keys;
      if (entry.inFlight) return entry.inFlight;
      if (tooSoon(entry)) {
        // Expired keys serve until the next fetch is allowed; a failed fetch is not retried before then.
        const kept = stale(entry);
        if (kept) return kept;
        throw entry.lastFailure ?? new JwksUriFetchFailed('fetched too recently');
      }
      try {
        return await load(entry);
      } catch (error) {
        // The last keys that were fetched serve while the client's server is unreachable.
        const kept = stale(entry);
        if (kept) return kept;
        throw error;
      }
    },
    async refresh(clientId, uri) {
      const entry = entryOf(clientId, uri);
      if (entry.inFlight) return entry.inFlight;
      if (tooSoon(entry)) return undefined;
      return load(entry);
    },
  };
}

/** The body as text, refusing more than `maxBytes` however it is sent (chunked, no length). */
async function readCapped(response: Response, maxBytes: number, timeoutMs: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  const deadline = setTimeout(() => void reader.cancel().catch(() => {}), timeoutMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        throw new JwksUriFetchFailed(`its answer is over ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
  } catch (error) {
    throw error instanceof JwksUriFetchFailed ? error : new JwksUriFetchFailed(describe(error));
  } finally {
    clearTimeout(deadline);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The `max-age` of a `Cache-Control` header, in seconds; `0` for `no-store`/`no-cache`. */
function maxAgeOf(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/(?:^|,)\s*no-(?:store|cache)\s*(?:,|$)/i.test(header)) return 0;
  const match = /(?:^|,)\s*max-age\s*=\s*"?(\d{1,10})"?\s*(?:,|$)/i.exec(header);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const code = cause && typeof cause === 'object' && 'code' in cause ? ` (${String((cause as { code: unknown }).code)})` : '';
    return `${error.message}${code}`;
  }
  return String(error);
}
