import { checkUrl, DEFAULT_TIMEOUT_MS, type RequestOptions } from '../transport/connect-options.js';
import { systemClock } from '../transport/clock.js';
import { InvalidResponse, IssuerMismatch } from '../transport/errors.js';
import { withRetry, type RetryOptions } from '../transport/retry.js';
import { sendRequest, type JsonAnswer } from '../transport/send-request.js';

/** How {@link discover} sends its request. */
export interface DiscoverOptions extends RequestOptions {
  /** Give up on one attempt after this many milliseconds; default 10,000. */
  readonly timeoutMs?: number;
  /** A `fetch` to use instead of the global one. */
  readonly fetch?: typeof fetch;
  /** Retries of transient failures (network errors, timeouts, 5xx, 429). */
  readonly retry?: RetryOptions;
}

/**
 * What Connect publishes about itself (RFC 8414), checked. `authUrl` is the
 * value the rest of the SDK takes: spread the result into its options.
 */
export interface ConnectMetadata {
  /** The issuer, exactly as asked for and as Connect published it: the SDK's `authUrl`. */
  readonly authUrl: string;
  /** `issuer`: the same as `authUrl`. */
  readonly issuer: string;
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  readonly revocationEndpoint: string;
  readonly introspectionEndpoint: string;
  readonly jwksUri: string;
  /** `grant_types_supported`. */
  readonly grantTypesSupported: readonly string[];
  /** `scopes_supported`: the scopes the operator lists (docs/tokens.md, "Scopes"); `[]` when none. */
  readonly scopesSupported: readonly string[];
  /** `acr_values_supported`: the `acr` values customer tokens carry (docs/tokens.md, "How the customer signed in"); `[]` when none listed. */
  readonly acrValuesSupported: readonly string[];
  /** `pushed_authorization_request_endpoint` (RFC 9126), `{issuer}/par`, when Connect has one. */
  readonly pushedAuthorizationRequestEndpoint: string | undefined;
  /**
   * `true` when the metadata says `require_pushed_authorization_requests`
   * (RFC 9126 §5), else `undefined`: spread into the SDK's options, it turns
   * `pushedAuthorization` on and otherwise leaves its default alone.
   */
  readonly pushedAuthorization: true | undefined;
  /** `authorization_response_iss_parameter_supported` (RFC 9207); `parseCallback` requires `iss` either way. */
  readonly issParameterSupported: boolean;
  /** The whole metadata document as Connect sent it. */
  readonly metadata: Readonly<Record<string, unknown>>;
}

const WELL_KNOWN = '/.well-known/oauth-authorization-server';

/** The endpoints the SDK calls, below the auth URL, by their metadata name. */
const ENDPOINTS = {
  authorization_endpoint: '/authorize',
  token_endpoint: '/token',
  revocation_endpoint: '/revoke',
  introspection_endpoint: '/introspect',
  jwks_uri: '/.well-known/jwks.json',
} as const;

/**
 * Reads Connect's authorization server metadata (RFC 8414) for `issuerUrl`
 * and checks it:
 *
 * - it asks `{origin}/.well-known/oauth-authorization-server{path}` (RFC 8414
 *   §3.1; for an issuer without a path that is `{issuer}/.well-known/…`) and,
 *   when an issuer with a path gets a 404 there, `{issuer}/.well-known/…`
 *   (docs/operator-guide.md, "An auth URL with a path");
 * - the published `issuer` must be `issuerUrl` exactly (RFC 8414 §3.3), or
 *   it throws `IssuerMismatch`;
 * - the endpoints must be those the SDK calls below the issuer (`/token`,
 *   `/authorize`, `/revoke`, `/introspect`), or it throws `InvalidResponse`.
 *
 * `{base_url}` (for `POST /tokens`) is not part of the metadata: pass
 * `baseUrl` yourself when it differs from the auth URL.
 *
 * @example
 * const connect = await discover('https://auth.sandbox.example');
 * const customers = new CustomerTokenManager({ ...connect, clientId, clientSecret, redirectUri });
 */
export async function discover(issuerUrl: string, options: DiscoverOptions = {}): Promise<ConnectMetadata> {
  const issuer = checkUrl('issuerUrl', issuerUrl);
  const settings = { fetch: options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init)), timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, clock: systemClock };
  if (!Number.isFinite(settings.timeoutMs) || settings.timeoutMs <= 0) throw new TypeError('timeoutMs must be a positive number of milliseconds');
  const get = (url: string) =>
    withRetry(() => sendRequest({ method: 'GET', url, headers: { accept: 'application/json' } }, settings, options.signal), options.retry ?? {}, options.signal);

  const { origin, pathname } = new URL(issuer);
  const path = pathname === '/' ? '' : pathname;
  let answer: JsonAnswer;
  try {
    answer = await get(`${origin}${WELL_KNOWN}${path}`);
  } catch (error) {
    if (path === '' || !(error instanceof InvalidResponse) || error.status !== 404) throw error;
    answer = await get(`${issuer}${WELL_KNOWN}`);
  }

  const metadata = answer.body;
  if (metadata.issuer !== issuer) {
    throw new IssuerMismatch(`the metadata names issuer ${JSON.stringify(printable(metadata.issuer))}, not ${JSON.stringify(issuer)}`, {
      hint: 'Pass discover the issuer this Connect publishes, exactly (scheme, host, port and path); if it is not the Connect you meant, check what answers at this address.',
    });
  }
  for (const [name, suffix] of Object.entries(ENDPOINTS)) {
    if (metadata[name] !== `${issuer}${suffix}`) {
      throw new InvalidResponse(`the metadata's ${name} is ${JSON.stringify(printable(metadata[name]))}, not ${issuer}${suffix}, where this SDK sends its requests`);
    }
  }
  const par = metadata.pushed_authorization_request_endpoint;
  if (par !== undefined && par !== `${issuer}/par`) {
    throw new InvalidResponse(`the metadata's pushed_authorization_request_endpoint is ${JSON.stringify(printable(par))}, not ${issuer}/par, where this SDK sends its requests`);
  }
  const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);
  const grants = strings(metadata.grant_types_supported);
  return {
    authUrl: issuer,
    issuer,
    authorizationEndpoint: `${issuer}/authorize`,
    tokenEndpoint: `${issuer}/token`,
    revocationEndpoint: `${issuer}/revoke`,
    introspectionEndpoint: `${issuer}/introspect`,
    jwksUri: `${issuer}/.well-known/jwks.json`,
    grantTypesSupported: grants,
    scopesSupported: strings(metadata.scopes_supported),
    acrValuesSupported: strings(metadata.acr_values_supported),
    pushedAuthorizationRequestEndpoint: par === undefined ? undefined : `${issuer}/par`,
    pushedAuthorization: metadata.require_pushed_authorization_requests === true ? true : undefined,
    issParameterSupported: metadata.authorization_response_iss_parameter_supported === true,
    metadata,
  };
}

function printable(value: unknown): string {
  return String(value).replace(/[^\x20-\x7e]/g, '?').slice(0, 120);
}
