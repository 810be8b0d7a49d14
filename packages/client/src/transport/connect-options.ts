import { systemClock, type Clock } from './clock.js';
import { clientKeyOf, dpopStateOf, type ClientKey, type DpopState, type JoseAlgorithm, type PrivateJwk } from './keys.js';
import type { RetryOptions } from './retry.js';

/**
 * How the client authenticates: exactly one of `clientSecret`
 * (`client_secret_basic`) or `privateKey` (`private_key_jwt`, RFC 7523;
 * docs/consumer-guide.md, "FAPI 2.0").
 */
export type ClientAuthentication =
  | {
      /** The client secret; sent only in the `Authorization` header, never in a message or log. */
      readonly clientSecret: string;
      readonly privateKey?: undefined;
      readonly keyId?: undefined;
      readonly algorithm?: undefined;
    }
  | {
      readonly clientSecret?: undefined;
      /**
       * The client's private signing key (`private_key_jwt`): a `CryptoKey`
       * (best non-extractable) or a private JWK. Its public half is in the
       * client's registered JWKS. Each request to Connect then carries a
       * fresh `client_assertion`: `iss` = `sub` = the client ID, `aud` =
       * `authUrl` (the issuer, which `discover` checks is exactly the auth
       * URL), a random `jti`, `iat` and `exp` = `iat` + 60.
       */
      readonly privateKey: CryptoKey | PrivateJwk;
      /** The key's `kid` in the registered JWKS; default the JWK's own `kid`. */
      readonly keyId?: string | undefined;
      /** `ES256`, `PS256` or `EdDSA`; default inferred from the key (P-256 → ES256, RSA → PS256, Ed25519 → EdDSA). */
      readonly algorithm?: JoseAlgorithm | undefined;
    };

/** Where Connect is, who the consumer is, and how requests behave. */
export type ConnectOptions = ConnectSettings & ClientAuthentication;

/** {@link ConnectOptions} besides the client authentication. */
export interface ConnectSettings {
  /** Connect's `{auth_url}` (for `/token`, `/authorize`, `/revoke`), e.g. `https://auth.sandbox.example`. */
  readonly authUrl: string;
  /** Connect's `{base_url}` (for `POST /tokens`); default: `authUrl`. */
  readonly baseUrl?: string;
  /** The client ID issued at onboarding (one per environment). */
  readonly clientId: string;
  /** Give up on one attempt after this many milliseconds; default 10,000. */
  readonly timeoutMs?: number;
  /** A `fetch` to use instead of the global one (one that goes through a proxy, a test wrapper). */
  readonly fetch?: typeof fetch;
  /** The source of "now" for expiry decisions; default the system clock. */
  readonly clock?: Clock;
  /** Retries of transient failures, where a retry is safe. */
  readonly retry?: RetryOptions;
  /**
   * DPoP (RFC 9449; docs/consumer-guide.md, "FAPI 2.0"): every `/token`
   * request carries a proof, so the tokens are bound to the key and useless
   * without it; the SDK presents them as `Authorization: DPoP …` with a
   * proof, answers `use_dpop_nonce` once with Connect's nonce, and
   * remembers the latest nonce per origin.
   *
   * `true`: the SDK generates an ES256 key pair (private key
   * non-extractable) once per client (`authUrl` and `clientId`) in this
   * process, so every SDK instance and standalone call of the client
   * shares it (a code pushed by `startAuthorization` is exchanged by
   * `exchangeCode` with the same key). It lives only in this process: tokens kept in a
   * `TokenStore` are bound to it, so a consumer that keeps refresh tokens
   * across restarts must pass its own key pair, `{ key }` (ES256, PS256 or
   * EdDSA), and keep it as safe as the tokens. Default off.
   */
  readonly dpop?: boolean | { readonly key: CryptoKeyPair } | undefined;
  /**
   * Pushed authorization requests (RFC 9126): `startAuthorization` sends the
   * parameters to `POST {auth_url}/par`, authenticated, and returns the short
   * `/authorize?client_id&request_uri` URL. Default: on when `privateKey`
   * and `dpop` are both set (a FAPI 2.0 client, which Connect makes push),
   * or when `discover` found `require_pushed_authorization_requests: true`
   * (spread its result into these options); otherwise off.
   */
  readonly pushedAuthorization?: boolean | undefined;
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
  /** How requests to Connect are authenticated. */
  readonly credentials: { readonly kind: 'secret'; readonly clientSecret: string } | { readonly kind: 'key'; readonly key: ClientKey };
  readonly timeoutMs: number;
  readonly fetch: typeof fetch;
  readonly clock: Clock;
  readonly retry: RetryOptions;
  /** The DPoP key and nonces, when DPoP is on. */
  readonly dpop: DpopState | undefined;
  readonly pushedAuthorization: boolean;
}

/**
 * Fills in defaults and checks the options; a mistake here is a programming
 * error, so it throws a `TypeError` at once rather than a `ConnectError` later.
 */
export function resolveOptions(options: ConnectOptions): ResolvedOptions {
  const authUrl = checkUrl('authUrl', options.authUrl);
  const baseUrl = options.baseUrl === undefined ? authUrl : checkUrl('baseUrl', options.baseUrl);
  if (typeof options.clientId !== 'string' || options.clientId === '') throw new TypeError('clientId is required');
  const given = options as ConnectSettings & { clientSecret?: unknown; privateKey?: unknown };
  const hasSecret = given.clientSecret !== undefined;
  const hasKey = given.privateKey !== undefined;
  if (hasSecret === hasKey) throw new TypeError('exactly one of clientSecret and privateKey is required');
  if (hasSecret && (typeof given.clientSecret !== 'string' || given.clientSecret === '')) throw new TypeError('clientSecret is required to be a non-empty string');
  const credentials: ResolvedOptions['credentials'] = hasSecret
    ? { kind: 'secret', clientSecret: given.clientSecret as string }
    : { kind: 'key', key: clientKeyOf(options as ConnectSettings & ClientAuthentication & { privateKey: CryptoKey | PrivateJwk }) };
  if (options.dpop !== undefined && typeof options.dpop !== 'boolean' && !isKeyPair(options.dpop.key)) throw new TypeError('dpop.key must be a CryptoKeyPair');
  const dpop = options.dpop ? dpopStateOf(options.dpop, `${authUrl} ${options.clientId}`) : undefined;
  const pushed = options.pushedAuthorization ?? (hasKey && dpop !== undefined);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new TypeError('timeoutMs must be a positive number of milliseconds');
  const givenFetch = options.fetch;
  return {
    authUrl,
    baseUrl,
    clientId: options.clientId,
    credentials,
    timeoutMs,
    // Looked up at call time, and called unbound (browsers refuse fetch with a foreign `this`).
    fetch: givenFetch ?? ((input, init) => fetch(input, init)),
    clock: options.clock ?? systemClock,
    retry: options.retry ?? {},
    dpop,
    pushedAuthorization: pushed,
  };
}

function isKeyPair(value: unknown): value is CryptoKeyPair {
  const pair = value as Partial<CryptoKeyPair> | undefined;
  return typeof pair === 'object' && pair !== null && pair.privateKey?.type === 'private' && pair.publicKey?.type === 'public';
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
