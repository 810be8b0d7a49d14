import { fetchClientToken, type ClientToken } from '../flows/client-credentials.js';
import { resolveOptions, type ConnectOptions, type RequestOptions, type ResolvedOptions } from '../transport/connect-options.js';
import { raceAbort } from '../transport/race-abort.js';
import { fetchWithToken, replayable } from '../transport/token-fetch.js';
import { withRetry } from '../transport/retry.js';
import { scopeParameter, type ScopeInput } from '../flows/scope.js';

/** Options of a {@link ClientCredentialsProvider}. */
export type ClientCredentialsProviderOptions = ConnectOptions & ClientCredentialsProviderSettings;

/** What a {@link ClientCredentialsProvider} adds to the {@link ConnectOptions}. */
export interface ClientCredentialsProviderSettings {
  /**
   * Renew the token this many seconds before it expires; default 60. For a
   * token that lives shorter than twice this margin, half its lifetime is
   * used instead, so a short-lived token is still reused.
   */
  readonly renewBeforeSeconds?: number;
  /**
   * The scopes every token of this provider asks for; default none named,
   * which Connect answers with every scope of the client. One provider per
   * set of scopes.
   */
  readonly scope?: ScopeInput | undefined;
}

/** The default renewal margin, in seconds. */
export const DEFAULT_RENEW_BEFORE_SECONDS = 60;

/**
 * Keeps a client-credentials access token (docs/consumer-guide.md, "When to
 * renew which token", first row):
 * reuses it while valid, renews it shortly before it expires, and asks
 * Connect once however many callers want a token at the same moment.
 * Transient failures (network errors, timeouts, 5xx, 429 with
 * `Retry-After`) are retried with bounded backoff; OAuth errors such as
 * `invalid_client` are thrown at once. With `dpop` on, the token is bound
 * to the DPoP key (`tokenType: 'DPoP'`); {@link ClientCredentialsProvider.fetch}
 * presents it either way.
 *
 * @example
 * const provider = new ClientCredentialsProvider({ authUrl, clientId, clientSecret });
 * const { accessToken } = await provider.getToken();
 */
export class ClientCredentialsProvider {
  readonly #options: ResolvedOptions;
  readonly #renewBefore: number;
  readonly #scope: string | undefined;
  #token: ClientToken | undefined;
  #pending: Promise<ClientToken> | undefined;

  constructor(options: ClientCredentialsProviderOptions) {
    this.#options = resolveOptions(options);
    this.#renewBefore = options.renewBeforeSeconds ?? DEFAULT_RENEW_BEFORE_SECONDS;
    if (!Number.isFinite(this.#renewBefore) || this.#renewBefore < 0) throw new TypeError('renewBeforeSeconds must be zero or more');
    this.#scope = scopeParameter(options.scope);
  }

  /**
   * A valid token: the cached one, or a new one from Connect. Concurrent
   * callers share one request; a caller's `signal` cancels only its own wait.
   */
  getToken(request: RequestOptions = {}): Promise<ClientToken> {
    const cached = this.#token;
    if (cached && this.#options.clock.nowSeconds() < cached.expiresAt - renewalMargin(cached.expiresIn, this.#renewBefore)) {
      return Promise.resolve(cached);
    }
    if (!this.#pending) {
      const pending = withRetry(() => fetchClientToken(this.#options, undefined, this.#scope), this.#options.retry).then(
        (token) => {
          this.#token = token;
          return token;
        },
      );
      this.#pending = pending;
      // Cleared whatever the outcome; the rejection itself reaches every caller.
      pending.then(
        () => this.#clear(pending),
        () => this.#clear(pending),
      );
    }
    return raceAbort(this.#pending, request.signal);
  }

  /**
   * Calls one of your own APIs with the client token: `Authorization:
   * Bearer …`, or for a DPoP-bound token `Authorization: DPoP …` with a
   * proof (`htm`, `htu`, `ath`, the API's latest nonce), and returns its
   * response. A `401` asking for a DPoP nonce is answered once with it; any
   * other `401` makes the provider get a new token and send the request
   * once more (when its body can be sent again), whose answer is returned
   * as it is. Errors of the API call itself (network) are `fetch`'s own.
   *
   * @example
   * const response = await provider.fetch(`${apiUrl}/payments`, { method: 'POST', body });
   */
  async fetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
    const signal = init.signal ?? undefined;
    const token = await this.getToken({ signal });
    const first = await fetchWithToken(this.#options, input, init, token);
    if (first.status !== 401) return first;
    if (this.#token?.accessToken === token.accessToken) this.invalidate();
    const renewed = await this.getToken({ signal });
    if (!replayable(init.body)) return first;
    await first.body?.cancel();
    return fetchWithToken(this.#options, input, init, renewed);
  }

  /** Forgets the cached token, e.g. after an API refused it (401 `invalid_token`). */
  invalidate(): void {
    this.#token = undefined;
  }

  #clear(pending: Promise<ClientToken>): void {
    if (this.#pending === pending) this.#pending = undefined;
  }
}

/** The renewal margin for a token of `lifetime` seconds: the configured one, at most half the lifetime. */
export function renewalMargin(lifetime: number, renewBefore: number): number {
  return Math.min(renewBefore, Math.floor(lifetime / 2));
}
