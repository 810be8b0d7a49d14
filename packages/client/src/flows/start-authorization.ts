import { checkUrl, resolveOptions, type ConnectOptions, type RequestOptions, type ResolvedOptions } from '../transport/connect-options.js';
import { InvalidResponse } from '../transport/errors.js';
import type { PendingAuthorization } from '../transport/pending-authorization.js';
import { withRetry } from '../transport/retry.js';
import { postForm } from '../transport/token-endpoint.js';
import { createPkce, randomToken } from './pkce.js';
import { scopeParameter, type ScopeInput } from './scope.js';

export type { PendingAuthorization } from '../transport/pending-authorization.js';

/** What the authorization request says. */
export interface AuthorizationOptions {
  /** Connect's `{auth_url}`. */
  readonly authUrl: string;
  /** The consumer's client ID. */
  readonly clientId: string;
  /** Exactly the redirect URI registered for the client. */
  readonly redirectUri: string;
  /** `login` ends any session at Connect and asks for the PIN again; `none` never shows a page. */
  readonly prompt?: 'login' | 'none' | undefined;
  /** The customer's mobile number in E.164 (`+639171234567`): prefilled and not editable on the login page. */
  readonly userId?: string | undefined;
  /** A `state` of your own; default 256 random bits. It must be unguessable and used once. */
  readonly state?: string | undefined;
  /** Use PKCE S256 (RFC 7636); default true. Clients created with `--require-pkce` must. */
  readonly pkce?: boolean | undefined;
  /**
   * The scopes to ask for (some of the client's registered ones); default
   * none named, which Connect answers with every scope of the client. The
   * scope granted comes back with the tokens (`CustomerTokens.scope`).
   */
  readonly scope?: ScopeInput | undefined;
  /**
   * `acr_values` (OpenID Connect Core §3.1.2.1): the authentication context
   * classes the sign-in should meet, in order of preference, e.g. `['phr']`;
   * what a step-up challenge asks for (`parseStepUpChallenge`).
   */
  readonly acrValues?: readonly string[] | undefined;
  /**
   * `max_age` (OpenID Connect Core §3.1.2.1): the most seconds since the
   * customer last signed in at Connect; an older sign-in is made again.
   */
  readonly maxAge?: number | undefined;
}

/**
 * An authorization request that may be pushed (RFC 9126): the request's
 * options plus the client's {@link ConnectOptions}, which authenticate the
 * push to `POST {auth_url}/par` and give `dpop_jkt`.
 */
export type PushedAuthorizationOptions = AuthorizationOptions & ConnectOptions;

/**
 * Builds the `GET {auth_url}/authorize` URL (docs/journey.md, "`GET /authorize`") with
 * `response_type=code`, a CSPRNG `state` and, by default, PKCE S256; with
 * `acrValues` and `maxAge`, the `acr_values` and `max_age` a step-up asks
 * for (docs/consumer-guide.md, "Step-up").
 *
 * Given the client's credentials too ({@link PushedAuthorizationOptions}),
 * it pushes the parameters to `POST {auth_url}/par` (RFC 9126) when
 * `pushedAuthorization` is on (by default for `privateKey` + `dpop`), and
 * returns the short `/authorize?client_id=…&request_uri=…` URL, which
 * Connect accepts for 60 seconds and once: send the browser there at once.
 * With `dpop` on, the request carries `dpop_jkt`, the thumbprint of the
 * DPoP key (RFC 9449 §10), so the code can only be exchanged with that key.
 * Errors of the push are thrown as the token endpoint's are.
 *
 * @example
 * const pending = await startAuthorization({ authUrl, clientId, redirectUri, prompt: 'login' });
 * session.pending = { state: pending.state, codeVerifier: pending.codeVerifier };
 * response.writeHead(303, { location: pending.url }).end();
 */
export async function startAuthorization(options: AuthorizationOptions | PushedAuthorizationOptions, request: RequestOptions = {}): Promise<PendingAuthorization> {
  const given = options as Partial<PushedAuthorizationOptions>;
  const credentialed = given.clientSecret !== undefined || given.privateKey !== undefined;
  if (!credentialed && given.pushedAuthorization === true) throw new TypeError('pushedAuthorization needs the client credentials (clientSecret or privateKey)');
  if (!credentialed && given.dpop) throw new TypeError('dpop needs the client credentials (clientSecret or privateKey)');
  return authorizationRequest(credentialed ? resolveOptions(options as PushedAuthorizationOptions) : undefined, options, request.signal);
}

/** {@link startAuthorization}, with the client's resolved options when known (internal). */
export async function authorizationRequest(
  client: ResolvedOptions | undefined,
  options: AuthorizationOptions,
  signal?: AbortSignal,
): Promise<PendingAuthorization> {
  const authUrl = checkUrl('authUrl', options.authUrl);
  if (!options.clientId) throw new TypeError('clientId is required');
  if (!options.redirectUri) throw new TypeError('redirectUri is required');
  const state = options.state ?? randomToken(32);
  if (state === '') throw new TypeError('state must not be empty');
  const url = new URL(`${authUrl}/authorize`);
  const params = url.searchParams;
  params.set('response_type', 'code');
  params.set('client_id', options.clientId);
  params.set('redirect_uri', options.redirectUri);
  params.set('state', state);
  if (options.prompt !== undefined) params.set('prompt', options.prompt);
  if (options.userId !== undefined) params.set('user_id', options.userId);
  const scope = scopeParameter(options.scope);
  if (scope !== undefined) params.set('scope', scope);
  if (options.acrValues !== undefined && options.acrValues.length > 0) {
    for (const value of options.acrValues) {
      if (typeof value !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(value)) throw new TypeError('acrValues must be values of printable ASCII without spaces, double quotes or backslashes');
    }
    params.set('acr_values', [...new Set(options.acrValues)].join(' '));
  }
  if (options.maxAge !== undefined) {
    if (!Number.isSafeInteger(options.maxAge) || options.maxAge < 0) throw new TypeError('maxAge must be a whole number of seconds from 0');
    params.set('max_age', String(options.maxAge));
  }
  let codeVerifier: string | undefined;
  if (options.pkce !== false) {
    const pkce = await createPkce();
    codeVerifier = pkce.codeVerifier;
    params.set('code_challenge', pkce.codeChallenge);
    params.set('code_challenge_method', pkce.codeChallengeMethod);
  }
  if (client?.dpop) params.set('dpop_jkt', await client.dpop.thumbprint());
  if (!client?.pushedAuthorization) return { url: url.href, state, codeVerifier, redirectUri: options.redirectUri };

  // A pushed request is retried like any idempotent one: each push makes a request_uri of its own.
  const pushedParams: Record<string, string> = {};
  params.forEach((value, name) => (pushedParams[name] = value));
  const answer = await withRetry(() => postForm(client, '/par', pushedParams, { signal }), client.retry, signal);
  const { request_uri: requestUri, expires_in: expiresIn } = answer.body;
  if (answer.status !== 201 || typeof requestUri !== 'string' || requestUri === '' || typeof expiresIn !== 'number' || !(expiresIn > 0)) {
    throw new InvalidResponse('the pushed authorization request endpoint did not answer 201 with request_uri and expires_in', {
      status: answer.status,
      endpoint: `POST ${client.authUrl}/par`,
    });
  }
  const pushed = new URL(`${authUrl}/authorize`);
  pushed.searchParams.set('client_id', options.clientId);
  pushed.searchParams.set('request_uri', requestUri);
  return { url: pushed.href, state, codeVerifier, redirectUri: options.redirectUri };
}
