import { ClientCredentialsProvider, DEFAULT_RENEW_BEFORE_SECONDS, renewalMargin } from './client-credentials-provider.js';
import { resolveOptions, type ConnectOptions, type RequestOptions, type ResolvedOptions } from '../transport/connect-options.js';
import type { CustomerTokens } from '../flows/customer-tokens.js';
import { InvalidGrant, ReauthorizationRequired, type ReauthorizationReason } from '../transport/errors.js';
import { exchangeCodeWith } from '../flows/exchange-code.js';
import { parseCallback, type AuthorizationCallback } from '../flows/parse-callback.js';
import { raceAbort } from '../transport/race-abort.js';
import { fetchWithToken, replayable } from '../transport/token-fetch.js';
import { refreshAtToken, refreshAtTokens, type RefreshEndpoint } from './refresh-customer-token.js';
import { revokeWith } from '../flows/revoke-token.js';
import type { ScopeInput } from '../flows/scope.js';
import { authorizationRequest, type PendingAuthorization } from '../flows/start-authorization.js';
import { parseStepUpChallenge, type StepUpDecision } from '../flows/step-up-challenge.js';
import { MemoryTokenStore, type TokenStore } from './token-store.js';

/** Per-customer parameters of an authorization request. */
export interface AuthorizationParams {
  /** `login` forces a new login; `none` never shows a page. */
  readonly prompt?: 'login' | 'none' | undefined;
  /** The customer's mobile number (E.164), prefilled and fixed on the login page. */
  readonly userId?: string | undefined;
  /** The scopes to ask for; default every scope of the client. */
  readonly scope?: ScopeInput | undefined;
  /** `acr_values`: the sign-in strength to ask for (a step-up's, `stepUpAuthorization`). */
  readonly acrValues?: readonly string[] | undefined;
  /** `max_age`: the most seconds since the customer last signed in (a step-up's). */
  readonly maxAge?: number | undefined;
}

/**
 * The decision for an API's step-up challenge, with the authorization it
 * calls for ready: send the customer's browser to `authorization.url` and
 * keep its `state` and `codeVerifier` until the callback.
 */
export interface StepUpAuthorization extends StepUpDecision {
  readonly authorization: PendingAuthorization;
}

/** Options of a {@link CustomerTokenManager}. */
export type CustomerTokenManagerOptions = ConnectOptions & CustomerTokenManagerSettings;

/** What a {@link CustomerTokenManager} adds to the {@link ConnectOptions}. */
export interface CustomerTokenManagerSettings {
  /** The redirect URI registered for the client. */
  readonly redirectUri: string;
  /** Where tokens are kept; default a {@link MemoryTokenStore}. */
  readonly store?: TokenStore | undefined;
  /** Refresh at `/token` (default) or at `{base_url}/tokens`. */
  readonly refreshVia?: RefreshEndpoint | undefined;
  /** For `refreshVia: 'tokens'`: the client token source; default one built from these options. */
  readonly clientCredentials?: ClientCredentialsProvider | undefined;
  /** Refresh an access token this many seconds before it expires (at most half its lifetime); default 60. */
  readonly renewBeforeSeconds?: number | undefined;
  /** The parameters of the authorization URL a `ReauthorizationRequired` carries for a customer. */
  readonly authorizationParams?: ((customerKey: string) => AuthorizationParams | undefined) | undefined;
}

/** A customer just linked: who it is and the tokens now stored. */
export interface LinkedCustomer {
  /** The masked mobile number. */
  readonly userId: string;
  /** The customer's unique numeric ID. */
  readonly profileId: string;
  /** The tokens stored under the customer key. */
  readonly tokens: CustomerTokens;
}

/**
 * Keeps each customer's tokens usable, by the rules of docs/consumer-guide.md,
 * "When to renew which token":
 *
 * - a valid access token (not within the renewal margin) is used as it is;
 * - an access token expired or about to expire, with a valid refresh token,
 *   is refreshed at `/token` or `/tokens` (as configured), and the new one
 *   stored; concurrent callers for one customer share that one refresh;
 * - when the refresh token has expired too (or Connect refuses it), the
 *   tokens are deleted and `ReauthorizationRequired` is thrown, carrying a
 *   ready authorization URL with its state and PKCE verifier.
 *
 * @example
 * const manager = new CustomerTokenManager({ authUrl, clientId, clientSecret, redirectUri });
 * // "Link my account":
 * const pending = await manager.startAuthorization();
 * // at the redirect URI:
 * await manager.completeAuthorization(userKey, request.url, pending);
 * // whenever an API call needs it:
 * const accessToken = await manager.getAccessToken(userKey);
 */
export class CustomerTokenManager {
  /** The token store in use. */
  readonly store: TokenStore;
  readonly #options: ResolvedOptions;
  readonly #redirectUri: string;
  readonly #via: RefreshEndpoint;
  readonly #clientCredentials: ClientCredentialsProvider | undefined;
  readonly #renewBefore: number;
  readonly #authorizationParams: CustomerTokenManagerOptions['authorizationParams'];
  readonly #refreshing = new Map<string, Promise<CustomerTokens>>();

  constructor(options: CustomerTokenManagerOptions) {
    this.#options = resolveOptions(options);
    if (!options.redirectUri) throw new TypeError('redirectUri is required');
    this.#redirectUri = options.redirectUri;
    this.store = options.store ?? new MemoryTokenStore();
    this.#via = options.refreshVia ?? 'token';
    this.#clientCredentials = options.clientCredentials ?? (this.#via === 'tokens' ? new ClientCredentialsProvider(options) : undefined);
    this.#renewBefore = options.renewBeforeSeconds ?? DEFAULT_RENEW_BEFORE_SECONDS;
    this.#authorizationParams = options.authorizationParams;
  }

  /**
   * A new authorization request for this client (`state` and PKCE S256
   * included; pushed to `POST /par` and bound to the DPoP key as the
   * options say, see `startAuthorization`). A pushed request's URL is
   * accepted for 60 seconds: make it when the customer is sent there.
   */
  startAuthorization(params: AuthorizationParams & { readonly state?: string } = {}, request: RequestOptions = {}): Promise<PendingAuthorization> {
    const { authUrl, clientId } = this.#options;
    return authorizationRequest(this.#options, { authUrl, clientId, redirectUri: this.#redirectUri, ...params }, request.signal);
  }

  /**
   * Finishes a link at the redirect URI: checks the callback against what
   * was kept ({@link parseCallback}), exchanges the code and stores the
   * tokens under `customerKey`.
   */
  async completeAuthorization(
    customerKey: string,
    callbackUrl: string | URL,
    pending: Pick<PendingAuthorization, 'state' | 'codeVerifier'>,
    request: RequestOptions = {},
  ): Promise<LinkedCustomer> {
    const callback: AuthorizationCallback = parseCallback(callbackUrl, { state: pending.state, issuer: this.#options.authUrl });
    const grant = { code: callback.code, redirectUri: this.#redirectUri, codeVerifier: pending.codeVerifier };
    const tokens = await exchangeCodeWith(this.#options, grant, request.signal);
    await this.store.set(customerKey, tokens);
    return { userId: callback.userId, profileId: callback.profileId, tokens };
  }

  /** A usable customer access token; see {@link CustomerTokenManager.getTokens}. */
  async getAccessToken(customerKey: string, request: RequestOptions = {}): Promise<string> {
    return (await this.getTokens(customerKey, request)).accessToken;
  }

  /**
   * The customer's tokens with a usable access token, refreshed first when
   * needed.
   *
   * @throws ReauthorizationRequired when nothing is stored or the refresh
   *   token is expired or refused; other `ConnectError`s when Connect cannot
   *   be reached (the stored tokens are kept then).
   */
  async getTokens(customerKey: string, request: RequestOptions = {}): Promise<CustomerTokens> {
    const refreshing = this.#refreshing.get(customerKey);
    if (refreshing) return raceAbort(refreshing, request.signal);
    const tokens = await this.store.get(customerKey);
    if (tokens && this.#fresh(tokens)) return tokens;
    return this.#shared(customerKey, false, request);
  }

  /**
   * Calls an API with the customer's access token (`Authorization: Bearer`,
   * or for DPoP-bound tokens `Authorization: DPoP` with a proof carrying
   * `ath` and the API's latest nonce) and returns its response. A `401`
   * asking for a DPoP nonce (`WWW-Authenticate: DPoP
   * error="use_dpop_nonce"` with `DPoP-Nonce`) is answered once with the
   * nonce first. When the API answers 401, the token is
   * renewed once (a refresh shared with every other caller for this
   * customer; a caller whose rejected token was already replaced just takes
   * the new one) and the request is sent once more with it. The answer to
   * that second attempt is returned as it is, 401 included: the token was
   * just renewed, so the API refuses it for another reason. A 401 that is
   * a step-up challenge (RFC 9470) is returned at once, with no refresh:
   * pass it to {@link CustomerTokenManager.stepUpAuthorization}.
   *
   * A body that cannot be sent twice (a `ReadableStream`, an async
   * iterable) is never sent again: on 401 the token is still renewed, so
   * your own retry uses the new one, and the 401 is returned.
   *
   * @throws ReauthorizationRequired when the tokens cannot be renewed;
   *   other `ConnectError`s when Connect cannot be reached. Errors of the
   *   API call itself (network) are `fetch`'s own.
   */
  async fetch(customerKey: string, input: string | URL, init: RequestInit = {}): Promise<Response> {
    const signal = init.signal ?? undefined;
    const tokens = await this.getTokens(customerKey, { signal });
    const first = await fetchWithToken(this.#options, input, init, tokens);
    if (first.status !== 401) return first;
    // A step-up challenge (RFC 9470): a refreshed token keeps the sign-in it had, so no refresh helps.
    if (isStepUpChallenge(first)) return first;
    const renewed = await this.#renewRejected(customerKey, tokens.accessToken, signal);
    if (!replayable(init.body)) return first;
    await first.body?.cancel();
    return fetchWithToken(this.#options, input, init, renewed);
  }

  /** Tokens other than `rejected`: those another caller already got, or new ones. */
  async #renewRejected(customerKey: string, rejected: string, signal: AbortSignal | undefined): Promise<CustomerTokens> {
    const running = this.#refreshing.get(customerKey);
    if (running) {
      const tokens = await raceAbort(running, signal);
      if (tokens.accessToken !== rejected) return tokens;
    }
    const stored = await this.store.get(customerKey);
    if (stored && stored.accessToken !== rejected && this.#fresh(stored)) return stored;
    return this.#shared(customerKey, true, { signal });
  }

  /**
   * The decision for an API's answer that is a step-up challenge (RFC 9470
   * §3; {@link parseStepUpChallenge}): send the customer through the
   * authorization with the challenge's `acr_values` and `max_age`, with the
   * authorization ready (the customer's `authorizationParams` plus those,
   * and `prompt=login`: a silent sign-in would keep the old sign-in).
   * The stored tokens are kept: they still serve every other request.
   *
   * @returns `undefined` when the answer is no step-up challenge.
   * @throws InvalidResponse when it says `insufficient_user_authentication` in a malformed challenge.
   *
   * @example
   * const response = await customers.fetch(user.id, `${apiUrl}/payouts`, { method: 'POST' });
   * const stepUp = await customers.stepUpAuthorization(user.id, response);
   * if (stepUp) {
   *   session.pending = { state: stepUp.authorization.state, codeVerifier: stepUp.authorization.codeVerifier };
   *   return redirect(stepUp.authorization.url);
   * }
   */
  async stepUpAuthorization(customerKey: string, answer: Response | string | null | undefined): Promise<StepUpAuthorization | undefined> {
    const decision = parseStepUpChallenge(answer);
    if (!decision) return undefined;
    const params = this.#authorizationParams?.(customerKey) ?? {};
    // A silent sign-in would hand back the session's old sign-in, as a refresh does: a step-up asks for a new one.
    const authorization = await this.startAuthorization({ ...params, prompt: 'login', acrValues: decision.acrValues, maxAge: decision.maxAge });
    return { ...decision, authorization };
  }

  /** Refreshes now, whatever the access token's expiry (joins a refresh already running). */
  refresh(customerKey: string, request: RequestOptions = {}): Promise<CustomerTokens> {
    return this.#shared(customerKey, true, request);
  }

  /** Revokes the customer's refresh token at Connect (ending the session) and deletes the stored tokens. */
  async unlink(customerKey: string, request: RequestOptions = {}): Promise<void> {
    const tokens = await this.store.get(customerKey);
    // Without a refresh token (no refresh_token grant), the access token is all there is to end.
    if (tokens) await revokeWith(this.#options, tokens.refreshToken ?? tokens.accessToken, request);
    await this.store.delete(customerKey);
  }

  #fresh(tokens: CustomerTokens): boolean {
    const margin = renewalMargin(tokens.expiresAt - tokens.issuedAt, this.#renewBefore);
    return this.#options.clock.nowSeconds() < tokens.expiresAt - margin;
  }

  #shared(customerKey: string, force: boolean, request: RequestOptions): Promise<CustomerTokens> {
    let shared = this.#refreshing.get(customerKey);
    if (!shared) {
      // Not bound to one caller's signal: the others still want the result.
      const started = this.#refreshNow(customerKey, force);
      shared = started;
      this.#refreshing.set(customerKey, started);
      const clear = () => {
        if (this.#refreshing.get(customerKey) === started) this.#refreshing.delete(customerKey);
      };
      started.then(clear, clear);
    }
    return raceAbort(shared, request.signal);
  }

  async #refreshNow(customerKey: string, force: boolean): Promise<CustomerTokens> {
    const tokens = await this.store.get(customerKey);
    if (!tokens) throw await this.#reauthorization(customerKey, 'no_tokens');
    if (!force && this.#fresh(tokens)) return tokens;
    const now = this.#options.clock.nowSeconds();
    if (tokens.refreshExpiresAt !== undefined && now >= tokens.refreshExpiresAt) {
      await this.store.delete(customerKey);
      throw await this.#reauthorization(customerKey, 'refresh_expired');
    }
    if (tokens.refreshToken === undefined) {
      // Still usable until it expires; then only a new authorization helps.
      if (!force && now < tokens.expiresAt) return tokens;
      await this.store.delete(customerKey);
      throw await this.#reauthorization(customerKey, 'no_refresh_token');
    }
    try {
      const fresh =
        this.#via === 'tokens'
          ? await refreshAtTokens(this.#options, tokens, this.#clientCredentials as ClientCredentialsProvider)
          : await refreshAtToken(this.#options, tokens);
      await this.store.set(customerKey, fresh);
      return fresh;
    } catch (error) {
      if (error instanceof InvalidGrant) {
        await this.store.delete(customerKey);
        throw await this.#reauthorization(customerKey, 'refresh_rejected', error);
      }
      // An early refresh that failed for a passing reason: the old token still works until it expires.
      if (!force && now < tokens.expiresAt) return tokens;
      throw error;
    }
  }

  async #reauthorization(customerKey: string, reason: ReauthorizationReason, cause?: unknown): Promise<ReauthorizationRequired> {
    const authorization = await this.startAuthorization(this.#authorizationParams?.(customerKey) ?? {});
    return new ReauthorizationRequired(customerKey, reason, authorization, { cause });
  }
}

/** Whether a 401 is a step-up challenge; a malformed one counts, as no refresh answers it either. */
function isStepUpChallenge(response: Response): boolean {
  try {
    return parseStepUpChallenge(response) !== undefined;
  } catch {
    return true;
  }
}
