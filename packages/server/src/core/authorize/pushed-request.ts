/**
 * Pushed authorization requests (RFC 9126; docs/journey.md, "Pushed
 * authorization requests"): `POST /par` checks and stores the parameters
 * of an authorization request a client pushed, and `GET /authorize` with
 * its `request_uri` uses them, once.
 */
import { createHash, randomBytes } from 'node:crypto';
import { clientAuthInputOf, type ClientAuthInput } from '../clients/client-authenticate.js';
import type { Client } from '../clients/client.js';
import type { Clock } from '../clock.js';
import { verifyDpopProof, type DpopProofDeps } from '../dpop/dpop-proof.js';
import { InvalidDpopProof, InvalidRequest, InvalidScope, TooManyRequests, UnauthorizedClient, UnsupportedResponseType, type OAuthError } from '../errors.js';
import { PUSHED_REQUEST_TTL_SECONDS } from '../lifetimes.js';
import type { ClientBudget } from '../limits/attempt-limiter.js';
import { checkAuthorizationRequest, type AuthorizeQuery, type PageError } from './authorization-request.js';
import type { PushedRequestStore } from './pushed-request-store.js';
import type { RedirectErrorCode } from './redirect.js';

/** RFC 9126 §2.2: the prefix of every `request_uri` Connect issues; the rest is 256 random bits, base64url. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** A `POST /par` as it arrived, after form parsing. */
export interface PushInput {
  /** Form parameters, each present once; empty ones already dropped. */
  readonly params: Readonly<Record<string, string>>;
  /** The raw `Authorization` header, if any. */
  readonly authorization?: string | undefined;
  /** The caller's address, for the audit log. */
  readonly ip?: string | undefined;
  /** The ID of the request this is part of (its `X-Request-Id`). */
  readonly correlationId?: string | undefined;
  /** Every `DPoP` header of the request, as sent (RFC 9449 §10.1). */
  readonly dpopProofs?: readonly string[] | undefined;
}

/** What `POST /par` needs. */
export interface PushDeps {
  /** Client authentication, exactly as at `/token`. */
  authenticate(input: ClientAuthInput): Promise<Client>;
  readonly pushedRequests: Pick<PushedRequestStore, 'insertPushedRequest'>;
  /** Pushed requests stored per client (`PUSHED_REQUESTS_PER_CLIENT`). */
  readonly pushes: ClientBudget;
  readonly clock: Clock;
  /** `CONNECT_SMS_COUNTRIES`, as `/authorize` checks `user_id` against it. */
  readonly smsCountries?: readonly string[] | undefined;
  /** DPoP proof checks, and where Connect publishes `/par` (a proof's `htu`). */
  readonly dpop: DpopProofDeps & { readonly urls: { readonly authUrl: string } };
}

/** RFC 9126 §2.2: the answer to a pushed request. */
export interface PushedRequest {
  readonly requestUri: string;
  readonly expiresIn: number;
}

/**
 * The parameters of client authentication: taken by `authenticate` and
 * never stored with the pushed request.
 */
const CREDENTIAL_PARAMETERS: readonly string[] = ['client_secret', 'client_assertion', 'client_assertion_type'];

/**
 * `POST /par` (RFC 9126 §2): authenticates the client as `/token` does,
 * refuses `request` and `request_uri` (§2.1), checks the parameters with
 * `/authorize`'s own check ({@link checkAuthorizationRequest}, so a pushed
 * request is held to the same rules, `redirect_uri` exactly the registered
 * one), takes one from the client's budget of pushed requests, and stores
 * every parameter pushed but the credentials, `request_uri` kept only as
 * its SHA-256. Parameters `/authorize` does not read are kept too, so that
 * whatever reads them there meets them as if they had come in the query.
 *
 * @throws InvalidClient when authentication fails; InvalidRequest,
 *   UnsupportedResponseType, UnauthorizedClient or InvalidScope for a
 *   request `/authorize` would refuse; TooManyRequests past the budget.
 */
export async function pushAuthorizationRequest(input: PushInput, deps: PushDeps): Promise<PushedRequest> {
  const client = await deps.authenticate(clientAuthInputOf(input.params, input));
  if (client.kind === 'resource_server') throw new UnauthorizedClient('a resource server has no authorization requests to push');
  // RFC 9126 §2.1: no request object here, and a request_uri is what this endpoint issues.
  if (input.params.request !== undefined) throw new InvalidRequest('request objects are not supported: push the authorization parameters themselves');
  if (input.params.request_uri !== undefined) throw new InvalidRequest('request_uri cannot be pushed');

  const parameters: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.params)) {
    if (!CREDENTIAL_PARAMETERS.includes(name)) parameters[name] = value;
  }
  // RFC 9126 §2.1: the client_id of the request is the authenticated client (HTTP Basic need not repeat it).
  if (parameters.client_id !== undefined && parameters.client_id !== client.id) throw new InvalidRequest('client_id is not the authenticated client');
  parameters.client_id = client.id;

  const check = await checkAuthorizationRequest(parameters, { findClient: async () => client, smsCountries: deps.smsCountries, pushed: true });
  if (check.kind === 'page_error') throw pageErrorOf(check);
  if (check.kind === 'redirect_error') throw redirectErrorOf(check.error, check.description);

  // RFC 9449 §10.1: a DPoP proof sent with the push binds the code to its key, as dpop_jkt does.
  if (input.dpopProofs !== undefined && input.dpopProofs.length > 0) {
    const { jkt } = await verifyDpopProof({ proofs: input.dpopProofs, method: 'POST', url: `${deps.dpop.urls.authUrl}/par`, requireNonce: false, at: 'token' }, deps.dpop);
    if (parameters.dpop_jkt !== undefined && parameters.dpop_jkt !== jkt) throw new InvalidDpopProof('dpop_jkt is not the thumbprint of the DPoP proof\'s key', { at: 'token' });
    parameters.dpop_jkt = jkt;
  }

  const limited = await deps.pushes.take(client.id);
  if (limited) throw new TooManyRequests('too many authorization requests were pushed by this client; try again later', limited.retryAfterSeconds);
  const id = randomBytes(32).toString('base64url');
  const now = deps.clock.nowSeconds();
  await deps.pushedRequests.insertPushedRequest({
    idHash: sha256(id),
    clientId: client.id,
    parameters,
    createdAt: now,
    expiresAt: now + PUSHED_REQUEST_TTL_SECONDS,
    consumedAt: null,
  });
  return { requestUri: `${REQUEST_URI_PREFIX}${id}`, expiresIn: PUSHED_REQUEST_TTL_SECONDS };
}

/** The stored form of a `request_uri`'s random part: its SHA-256, base64url (256 random bits need no slow hash). */
function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** What `GET /authorize` goes on with: the query itself, or the parameters of the pushed request it named. */
export type AuthorizeParameters = { readonly kind: 'parameters'; readonly query: AuthorizeQuery; readonly pushed: boolean } | PageError;

/**
 * RFC 9126 §4: a `GET /authorize` with `request_uri` runs on the pushed
 * parameters only (every other query parameter but `client_id` is
 * ignored). The client must be known and active, and the pushed request
 * its own, unused and unexpired: it is used up here, in one atomic
 * conditional update, so that of any number of visits on any number of
 * instances one goes on. Anything else is an error page, never a redirect
 * (`request_uri_invalid`): nothing says the pushed redirect URI can be
 * trusted. A query without `request_uri` goes on as it is.
 */
export async function pushedParameters(
  query: AuthorizeQuery,
  deps: { findClient(id: string): Promise<Client | undefined>; readonly db: { readonly pushedRequests: Pick<PushedRequestStore, 'consumePushedRequest'> }; readonly clock: Clock },
): Promise<AuthorizeParameters> {
  const requestUri = query.request_uri;
  if (requestUri === undefined || requestUri === '') return { kind: 'parameters', query, pushed: false };
  const clientId = query.client_id;
  if (Array.isArray(clientId)) return { kind: 'page_error', reason: 'client_id_repeated' };
  if (typeof clientId !== 'string' || clientId === '') return { kind: 'page_error', reason: 'client_id_missing' };
  const client = clientId.length <= 512 ? await deps.findClient(clientId) : undefined;
  if (!client) return { kind: 'page_error', reason: 'client_unknown' };
  if (client.status !== 'active') return { kind: 'page_error', reason: 'client_disabled', clientName: client.name };
  const invalid: PageError = { kind: 'page_error', reason: 'request_uri_invalid', clientName: client.name };
  if (typeof requestUri !== 'string' || !requestUri.startsWith(REQUEST_URI_PREFIX)) return invalid;
  const id = requestUri.slice(REQUEST_URI_PREFIX.length);
  if (!/^[A-Za-z0-9_-]{43}$/.test(id)) return invalid;
  const record = await deps.db.pushedRequests.consumePushedRequest(sha256(id), client.id, deps.clock.nowSeconds());
  if (!record) return invalid;
  return { kind: 'parameters', query: record.parameters, pushed: true };
}

/** `/par`'s error for a request `/authorize` would answer with an error page. */
function pageErrorOf(error: PageError): OAuthError {
  switch (error.reason) {
    case 'redirect_uri_missing':
      return new InvalidRequest('redirect_uri is required');
    case 'redirect_uri_repeated':
      return new InvalidRequest('redirect_uri is repeated');
    case 'redirect_uri_mismatch':
      return new InvalidRequest('redirect_uri is not the one registered for this client');
    case 'client_not_signable':
      return new UnauthorizedClient('this client has no redirect URI: customers do not sign in to it');
    default:
      return new InvalidRequest('client_id is not the authenticated client');
  }
}

/** `/par`'s error for a request `/authorize` would send back to the redirect URI with `error` (its description written where `/authorize` checks). */
function redirectErrorOf(error: RedirectErrorCode, description: string): OAuthError {
  switch (error) {
    case 'unsupported_response_type':
      return new UnsupportedResponseType(description);
    case 'unauthorized_client':
      return new UnauthorizedClient(description);
    case 'invalid_scope':
      return new InvalidScope(description);
    default:
      return new InvalidRequest(description);
  }
}
