import type { Client } from '../clients/client.js';
import { hasControlCharacter } from '../control-characters.js';
import { InvalidRequest, UnauthorizedClient } from '../errors.js';
import { prepareRefresh, type RefreshDeps, type RefreshedTokens } from '../grants/refresh-token.js';
import { formatScope } from '../scopes.js';
import { checkReplayedTokens } from './check-replayed-tokens.js';
import { runIdempotently, type IdempotencyDeps } from './idempotent-refresh.js';

/** What `POST /tokens` needs besides authenticating its caller. */
export interface RefreshIdempotentlyDeps {
  readonly refresh: RefreshDeps;
  readonly idempotency: IdempotencyDeps;
}

/** A `POST /tokens` request, its HTTP form checked (docs/consumer-guide.md, "Refreshing a customer's access token"). */
export interface CustomerTokenRequest {
  /** The client its access token authenticated. */
  readonly client: Client;
  /** Its `Request-Reference-No`, a UUID in either case. */
  readonly reference: string;
  /** The JSON body as sent: a retry with the same reference must send the same. */
  readonly body: string;
  /** The body's `refreshToken` member as parsed, not yet checked; `undefined` when the body is no JSON object. */
  readonly refreshToken: unknown;
  /** The ID of the request, recorded with the audit event of a revoked token's use. */
  readonly correlationId?: string | undefined;
  /** The key of the DPoP proof the caller's bound client token came with (RFC 9449 §7): a bound refresh token needs that key. */
  readonly dpopJkt?: string | undefined;
}

/** The answer to `POST /tokens`. */
export interface CustomerTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  /** Expiry of the access token, epoch seconds. */
  readonly expiresAt: number;
  /** The scope of the access token, when it has one. */
  readonly scope?: string;
}

/** The answer as stored for retries, with what a replay re-checks (sealed, never sent): its session and access token's `jti`. */
type StoredAnswer = CustomerTokens & { readonly sid: string; readonly accessJti: string };

/**
 * `POST /tokens` (docs/consumer-guide.md, "Refreshing a customer's access
 * token"; docs/tokens.md, "Refresh"): the refresh grant
 * (`prepareRefresh`) run once per client and `Request-Reference-No`
 * (`runIdempotently`). A retry with the same reference replays the first
 * answer while its tokens still stand (`checkReplayedTokens`).
 *
 * @throws UnauthorizedClient (403) when refresh is not enabled for the client.
 */
export async function refreshIdempotently(request: CustomerTokenRequest, deps: RefreshIdempotentlyDeps): Promise<CustomerTokens> {
  const { client, correlationId } = request;
  if (!client.grants.includes('refresh_token')) {
    throw new UnauthorizedClient('refresh is not enabled for this client', { status: 403 });
  }
  const { response } = await runIdempotently<StoredAnswer>(
    // UUIDs compare case-insensitively.
    { clientId: client.id, reference: request.reference.toLowerCase(), body: request.body },
    async () => {
      const { refreshed, apply } = await prepareRefresh(refreshTokenOf(request.refreshToken), client, deps.refresh, { correlationId, dpopJkt: request.dpopJkt });
      const response = answerOf(refreshed);
      return {
        response,
        async apply() {
          const applied = await apply();
          // Within the reuse interval: the token another refresh minted (docs/tokens.md, "Concurrent refreshes").
          return applied === refreshed ? response : answerOf(applied);
        },
      };
    },
    deps.idempotency,
    // A replay hands out the stored tokens only while they still stand.
    (stored, firstMayRun) => checkReplayedTokens(stored, client, deps.refresh, firstMayRun),
  );
  const { accessToken, refreshToken, expiresAt, scope } = response;
  // The scope of the new access token, when it has one (docs/consumer-guide.md, "Refreshing a customer's access token").
  return { accessToken, refreshToken, expiresAt, ...(scope === undefined ? {} : { scope }) };
}

/** The answer to a refresh, with what a replay re-checks. */
function answerOf(refreshed: RefreshedTokens): StoredAnswer {
  const { accessToken, refreshToken, expiresAt, sid, accessJti } = refreshed;
  const scope = refreshed.scopes.length > 0 ? { scope: formatScope(refreshed.scopes) } : {};
  return { accessToken, refreshToken, expiresAt, ...scope, sid, accessJti };
}

/** The body's refresh token, checked as every other parameter is (no control character). */
function refreshTokenOf(token: unknown): string {
  if (typeof token !== 'string' || token === '') throw new InvalidRequest('refreshToken is required and must be a string');
  // The rule of every other parameter, for the one value of this JSON body.
  if (hasControlCharacter(token)) throw new InvalidRequest('refreshToken contains a control character');
  return token;
}
