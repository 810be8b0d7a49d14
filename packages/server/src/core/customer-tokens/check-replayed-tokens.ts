import { decodeProtectedHeader } from 'jose';
import type { Client } from '../clients/client.js';
import { InvalidGrant, InvalidRequest } from '../errors.js';
import { decryptCustomerAccessToken, verifyRefreshToken, type TokenVerifyDeps } from '../tokens/verify-tokens.js';
import type { TokenSessionStore } from '../tokens/token-session-store.js';
import { STILL_RUNNING } from './idempotent-refresh.js';

/** What re-checking a replayed answer reads. */
export interface ReplayCheckDeps extends TokenVerifyDeps {
  readonly tokenSessions: Pick<TokenSessionStore, 'findTokenSession'>;
}

/** A stored `POST /tokens` answer as a replay sees it: the token session and access token it gave, when recorded. */
export interface StoredRefresh {
  readonly accessToken: string;
  readonly refreshToken?: string;
  /** Expiry of the answer's access token, epoch seconds. */
  readonly expiresAt?: number;
  readonly sid?: string;
  readonly accessJti?: string;
}

/**
 * Before `POST /tokens` replays a stored answer (docs/consumer-guide.md,
 * "Refreshing a customer's access token"): its tokens must still stand.
 * The client must still be active and the answer's token session live (not
 * revoked by a revocation, `customers lock` or `clients disable`; its
 * refresh token unexpired), with the answer's access token still its
 * current one (no later refresh replaced it). An access token that merely
 * expired is replayed all the same: the refresh token in the answer still
 * works. One read of the session; an answer stored without `sid` (by an
 * earlier version) is identified by decrypting its access token.
 *
 * The answer is stored before the first request makes its access token the
 * session's (`runIdempotently`). While `firstMayRun` (it began less than
 * `IDEMPOTENCY_CLAIM_SECONDS` ago), a live session at another access token
 * that is not plainly a later one (a later expiry) means the first request
 * may still be running: 409.
 *
 * @throws InvalidGrant otherwise: the stored tokens are never handed out again.
 */
export async function checkReplayedTokens(
  stored: StoredRefresh,
  client: Client,
  deps: ReplayCheckDeps,
  firstMayRun = false,
): Promise<void> {
  const refused = new InvalidGrant('the tokens of the first answer to this Request-Reference-No are no longer valid; refresh with a new Request-Reference-No');
  if (client.status !== 'active') throw refused;
  // Their keys must still stand too: a revoked key's tokens are never handed out again.
  if (!(await keysStand(stored, deps))) throw refused;
  let sid = stored.sid;
  let accessJti = stored.accessJti;
  if (sid === undefined || accessJti === undefined) {
    const claims = await decryptCustomerAccessToken(stored.accessToken, deps);
    if (!claims) throw refused;
    ({ sid, jti: accessJti } = claims);
  }
  const session = await deps.tokenSessions.findTokenSession(sid);
  const open = session !== undefined && session.revokedAt === null && session.clientId === client.id && session.refreshExpiresAt > deps.clock.nowSeconds();
  if (open) {
    if (session.accessJti === accessJti) return;
    // Not at the answer's token: the first request may not have made it the
    // session's yet, unless a later refresh (a later expiry) replaced it.
    const superseded = stored.expiresAt !== undefined && session.accessExpiresAt > stored.expiresAt;
    if (firstMayRun && !superseded) throw new InvalidRequest(STILL_RUNNING, { status: 409 });
  }
  throw refused;
}

/** Whether the keys of a stored answer's tokens are still trusted (not revoked, inside their windows). */
async function keysStand(stored: StoredRefresh, deps: TokenVerifyDeps): Promise<boolean> {
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(stored.accessToken).kid;
  } catch {
    return false;
  }
  if (kid === undefined || (await deps.keys.decryptionKey(kid)) === undefined) return false;
  return stored.refreshToken === undefined || (await verifyRefreshToken(stored.refreshToken, deps)) !== undefined;
}
