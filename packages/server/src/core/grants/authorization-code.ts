import { randomBytes } from 'node:crypto';
import { auditActor } from '../audit/audit-actor.js';
import type { AuditLog } from '../audit/audit-log.js';
import { CODE_VERIFIER_PATTERN, s256Challenge, verifyCodeVerifier } from '../authorize/pkce.js';
import type { Client } from '../clients/client.js';
import type { Clock } from '../clock.js';
import { codeState, hashCode, type AuthorizationCodeRecord } from '../codes/authorization-code.js';
import type { AuthorizationCodeStore } from '../codes/code-store.js';
import { InvalidGrant, InvalidRequest } from '../errors.js';
import { keepScopes } from '../scopes.js';
import { mintCustomerAccessToken, mintRefreshToken, type CustomerTokenDeps, type MintedToken } from '../tokens/customer-tokens.js';
import { NO_REFRESH_TOKEN } from '../tokens/records.js';
import type { TokenSessionStore } from '../tokens/token-session-store.js';
import type { GrantHandler } from './grant.js';

/**
 * RFC 6749 §4.1.3: exchanges an authorization code for a customer access
 * token (JWE) and, when the client has the `refresh_token` grant, a refresh
 * token (JWT; RFC 6749 §5.1 makes it optional), with the scopes granted at
 * `/authorize` (RFC 6749 §4.1.3 takes no `scope`). The code was issued at
 * the end of the customer's journey (`journey/code.ts`).
 */
export const authorizationCodeGrant: GrantHandler<RedeemCodeDeps> = {
  grantType: 'authorization_code',
  parameters: ['code', 'redirect_uri', 'code_verifier'],
  async handle({ params, client, correlationId, dpopJkt }, deps) {
    const { code, redirect_uri: redirectUri, code_verifier: verifier } = params;
    if (code === undefined) throw new InvalidRequest('code is required');
    if (redirectUri === undefined) throw new InvalidRequest('redirect_uri is required');
    const { accessToken, refreshToken, scopes } = await redeemCode({ code, redirectUri, verifier, correlationId, dpopJkt }, client, deps);
    return {
      accessToken: accessToken.token,
      tokenType: dpopJkt ? 'DPoP' : 'Bearer',
      expiresIn: deps.lifetimes.accessTokenSeconds,
      ...(refreshToken ? { refreshToken: refreshToken.token } : {}),
      scopes,
    };
  },
};

const ALREADY_USED = 'authorization code was already used; the tokens issued for it are revoked';

/** The stores a refused redemption reads and writes in its transaction. */
export interface RedeemStores {
  readonly codes: Pick<AuthorizationCodeStore, 'findAuthorizationCode' | 'endReplayedAuthorizationCode'>;
  readonly tokenSessions: Pick<TokenSessionStore, 'revokeTokenSessionsByCode'>;
}

/** What redeeming a code needs. */
export interface RedeemCodeDeps extends CustomerTokenDeps {
  readonly codes: Pick<AuthorizationCodeStore, 'findAuthorizationCode' | 'redeemAuthorizationCode'>;
  /** Runs `work` in one database transaction (only a refused redemption needs one). */
  transaction<T>(work: (tx: RedeemStores) => Promise<T>): Promise<T>;
  readonly clock: Clock;
  readonly audit: AuditLog;
}

/** The tokens a redeemed code gave: a refresh token only to a client with the `refresh_token` grant. */
export interface RedeemedCode {
  readonly accessToken: MintedToken;
  readonly refreshToken?: MintedToken;
  /** The scopes of the token session. */
  readonly scopes: readonly string[];
}

/**
 * Redeems an authorization code (`issued` → `redeemed`, RFC 6749 §4.1.3;
 * docs/journey.md, "The code"):
 * mints a customer access token (JWE) and, for a client with the
 * `refresh_token` grant only, a refresh token (JWT), and records their
 * token session. A session without a refresh token ends with its access
 * token (docs/tokens.md, "Refresh"). Both tokens carry the scopes granted
 * at `/authorize`, less any the client has lost since (docs/tokens.md, "Scopes").
 *
 * Two statements when it succeeds (docs/operator-guide.md, "Database round
 * trips"):
 * 1. the code is read, so that its tokens can be minted for its customer
 *    and scopes, and a wrong `redirect_uri` or verifier is told apart
 *    (the code stays unused);
 * 2. the code is consumed and its token session added in one atomic step
 *    (`redeemAuthorizationCode`), which checks again everything the read
 *    saw: of any number of concurrent exchanges, on any number of
 *    instances, at most one consumes it, and a crash at any instant leaves
 *    either an unused code or a consumed code with its complete session.
 *    A `customers lock`, `clients disable` or replay meeting it either
 *    waits for it and then revokes the session, or goes first and no
 *    tokens are issued.
 *
 * A second exchange of a used code fails, ends it and revokes every token
 * issued from it (RFC 6749 §4.1.2). A customer locked since the code was
 * issued gets no tokens, and the code stays consumed.
 */
export async function redeemCode(
  input: { code: string; redirectUri: string; verifier: string | undefined; correlationId?: string | undefined; dpopJkt?: string | undefined },
  client: Client,
  deps: RedeemCodeDeps,
): Promise<RedeemedCode> {
  // RFC 7636 §4.1: 43 to 128 characters of [A-Za-z0-9-._~].
  if (input.verifier !== undefined && !CODE_VERIFIER_PATTERN.test(input.verifier)) {
    throw new InvalidRequest('code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
  }
  const codeHash = hashCode(input.code);
  const now = deps.clock.nowSeconds();
  const binding = { redirectUri: input.redirectUri, codeChallenge: input.verifier === undefined ? null : s256Challenge(input.verifier) };

  const record = await deps.codes.findAuthorizationCode(codeHash);
  if (!record || record.clientId !== client.id || codeState(record, now) !== 'issued') throw await refused(codeHash, input, client, now, deps);
  const mismatch = bindingMismatch(record, input.redirectUri, input.verifier);
  if (mismatch) throw mismatch;
  // An operator replaced the client's redirect URI since the code was issued: the old address gets no tokens (the code stays unused).
  if (client.redirectUri !== record.redirectUri) throw new InvalidGrant('the redirect_uri of this code is no longer registered for the client');
  // RFC 9449 §10: a code bound with dpop_jkt is redeemed only with a proof of that key (the code stays unused).
  if (record.dpopJkt && record.dpopJkt !== input.dpopJkt) {
    throw new InvalidGrant('the authorization request bound this code to a DPoP key (dpop_jkt): send a DPoP proof of that key');
  }

  const sid = randomBytes(16).toString('base64url');
  const scopes = keepScopes(record.scopes, client.scopes);
  // The sign-in the code was issued for: every token of the session carries it (docs/tokens.md, "How the customer signed in").
  // RFC 9449 §5: every token of the session is bound to the proof's key (docs/tokens.md, "DPoP-bound tokens").
  const subject = { profileId: record.profileId, clientId: client.id, sid, scopes, authentication: record.authentication, jkt: input.dpopJkt ?? null };
  // A refresh token is issued only to a client that may use it.
  const refresh = client.grants.includes('refresh_token') ? await mintRefreshToken(subject, deps) : undefined;
  const access = await mintCustomerAccessToken(subject, deps);
  const redeemed = await deps.codes.redeemAuthorizationCode(
    {
      sid,
      clientId: client.id,
      profileId: record.profileId,
      codeHash,
      // Without a refresh token: a jti no token has, and the session ends with its access token.
      refreshJti: refresh?.jti ?? NO_REFRESH_TOKEN,
      accessJti: access.jti,
      createdAt: now,
      refreshExpiresAt: refresh?.expiresAt ?? access.expiresAt,
      accessExpiresAt: access.expiresAt,
      revokedAt: null,
      authentication: record.authentication,
      ...(input.dpopJkt ? { dpopJkt: input.dpopJkt } : {}),
    },
    now,
    binding,
  );
  // Redeemed, ended or replayed since the read: it matched then, so another exchange or an operator came first.
  if (redeemed === 'refused') throw await refused(codeHash, input, client, now, deps);
  // Locked or disabled meanwhile: the code is consumed, and the tokens are never handed out.
  if (redeemed === 'ended') throw new InvalidGrant('the authorization code was ended: the customer or the client can no longer sign in with it');
  return refresh ? { accessToken: access, refreshToken: refresh, scopes } : { accessToken: access, scopes };
}

/**
 * Why a code was not redeemed: a replay of a redeemed code ends it and
 * revokes its tokens (and is audited); anything else leaves it as it is.
 */
async function refused(
  codeHash: string,
  input: { correlationId?: string | undefined },
  client: Client,
  now: number,
  deps: RedeemCodeDeps,
): Promise<InvalidGrant> {
  const outcome = await deps.transaction((tx) => refusal(tx, codeHash, client.id, now));
  if (outcome.replayed) {
    await deps.audit.record({
      type: 'code.replayed',
      actor: auditActor({ kind: 'client', clientId: client.id }),
      subject: outcome.replayed.profileId,
      outcome: 'failure',
      details: { revoked_sessions: outcome.replayed.revoked },
      requestId: input.correlationId,
    });
  }
  return outcome.error;
}

/** Why a code could not be redeemed; a replay also ends it and revokes its tokens. */
async function refusal(
  tx: RedeemStores,
  codeHash: string,
  clientId: string,
  now: number,
): Promise<{ error: InvalidGrant; replayed?: { profileId: string; revoked: number } }> {
  const existing = await tx.codes.findAuthorizationCode(codeHash);
  if (!existing || existing.clientId !== clientId) return { error: new InvalidGrant('authorization code is invalid') };
  if (codeState(existing, now) === 'redeemed') {
    // Ended first: an exchange that redeemed it has added its session in
    // the same step, so the revocation below finds it.
    await tx.codes.endReplayedAuthorizationCode(codeHash);
    const revoked = await tx.tokenSessions.revokeTokenSessionsByCode(codeHash, now);
    return {
      error: new InvalidGrant(ALREADY_USED),
      replayed: { profileId: existing.profileId, revoked },
    };
  }
  return { error: new InvalidGrant('authorization code has expired or was ended') };
}

function bindingMismatch(record: AuthorizationCodeRecord, redirectUri: string, verifier: string | undefined): InvalidGrant | undefined {
  if (record.redirectUri !== redirectUri) return new InvalidGrant('redirect_uri does not match the authorization request');
  if (record.codeChallenge === null) {
    // RFC 9700 §4.8.2: a verifier for a code issued without a challenge is refused.
    return verifier === undefined ? undefined : new InvalidGrant('code_verifier given, but the authorization request had no code_challenge');
  }
  if (verifier === undefined) return new InvalidGrant('code_verifier is required: the authorization request had a code_challenge');
  // RFC 7636 §4.6.
  return verifyCodeVerifier(verifier, record.codeChallenge) ? undefined : new InvalidGrant('code_verifier does not match the code_challenge');
}
