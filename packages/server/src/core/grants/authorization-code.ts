import { createHash, randomBytes } from 'node:crypto';
import type { AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../clock.js';
import { InvalidGrant, InvalidRequest } from '../errors.js';
import { CODE_VERIFIER_PATTERN, verifyCodeVerifier } from '../authorize/pkce.js';
import type { AuthorizationCodeRecord } from '../journey/records.js';
import { mintCustomerAccessToken, mintRefreshToken, type CustomerTokenDeps, type MintedToken } from '../tokens/customer-tokens.js';
import type { AuthorizationCodeStore } from '../journey/stores.js';
import type { Stores } from '../../storage/ports.js';
import type { GrantHandler } from './grant.js';

/** What the authorization_code grant reads and writes. */
export interface AuthorizationCodeDeps extends CustomerTokenDeps {
  /** Runs `work` in one database transaction. */
  transaction<T>(work: (tx: Pick<Stores, 'codes' | 'tokenSessions'>) => Promise<T>): Promise<T>;
  readonly codes: Pick<AuthorizationCodeStore, 'findAuthorizationCode'>;
  readonly clock: Clock;
  readonly audit: AuditLog;
}

/** The stored form of an authorization code: its SHA-256 (the code carries 256 random bits). */
export function hashCode(code: string): string {
  return createHash('sha256').update(code).digest('base64url');
}

/**
 * RFC 6749 §4.1.3: exchanges an authorization code for a customer access
 * token (JWE) and a refresh token (JWT), and records the token session.
 *
 * The code is redeemed with one conditional update, so of any number of
 * concurrent exchanges exactly one succeeds. A second exchange of a used code
 * fails and revokes every token issued from it (RFC 6749 §4.1.2).
 */
export const authorizationCodeGrant: GrantHandler<AuthorizationCodeDeps> = {
  grantType: 'authorization_code',
  parameters: ['code', 'redirect_uri', 'code_verifier'],
  async handle({ params, client }, deps) {
    const { code, redirect_uri: redirectUri, code_verifier: verifier } = params;
    if (code === undefined) throw new InvalidRequest('code is required');
    if (redirectUri === undefined) throw new InvalidRequest('redirect_uri is required');
    // RFC 7636 §4.1: 43 to 128 characters of [A-Za-z0-9-._~].
    if (verifier !== undefined && !CODE_VERIFIER_PATTERN.test(verifier)) {
      throw new InvalidRequest('code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
    }
    const codeHash = hashCode(code);
    const now = deps.clock.nowSeconds();

    // Check the code and mint the tokens before the transaction, so the
    // database is held only for the two writes, not for the signing.
    const found = await deps.codes.findAuthorizationCode(codeHash);
    let minted: { sid: string; access: MintedToken; refresh: MintedToken } | undefined;
    if (found && found.clientId === client.id && found.consumedAt === null && found.expiresAt > now) {
      // A wrong redirect_uri or verifier leaves the code unused: the rightful client can still redeem it.
      const mismatch = bindingMismatch(found, redirectUri, verifier);
      if (mismatch) throw mismatch;
      const sid = randomBytes(16).toString('base64url');
      const subject = { profileId: found.profileId, clientId: client.id, sid };
      minted = { sid, access: await mintCustomerAccessToken(subject, deps), refresh: await mintRefreshToken(subject, deps) };
    }

    const outcome = await deps.transaction(async (tx): Promise<{ ok: true } | { error: InvalidGrant; replayed?: { profileId: string; revoked: number } }> => {
      const record = minted ? await tx.codes.consumeAuthorizationCode(codeHash, client.id, now) : undefined;
      // Unusable from the start, or redeemed by a concurrent exchange meanwhile.
      if (!record || !minted) return refusal(tx, codeHash, client.id, now);
      await tx.tokenSessions.insertTokenSession({
        sid: minted.sid,
        clientId: client.id,
        profileId: record.profileId,
        codeHash,
        refreshJti: minted.refresh.jti,
        accessJti: minted.access.jti,
        createdAt: now,
        refreshExpiresAt: minted.refresh.expiresAt,
        accessExpiresAt: minted.access.expiresAt,
        revokedAt: null,
      });
      return { ok: true };
    });
    if ('error' in outcome) {
      if (outcome.replayed) {
        await deps.audit.record({ type: 'code.replayed', actor: `client:${client.id}`, subject: outcome.replayed.profileId, outcome: 'failure', details: { revoked_sessions: outcome.replayed.revoked } });
      }
      throw outcome.error;
    }
    return {
      accessToken: (minted as NonNullable<typeof minted>).access.token,
      tokenType: 'Bearer',
      expiresIn: deps.accessTokenTtlSeconds,
      refreshToken: (minted as NonNullable<typeof minted>).refresh.token,
    };
  },
};

/** Why a code could not be redeemed; a replay also revokes its tokens. */
async function refusal(
  tx: Pick<Stores, 'codes' | 'tokenSessions'>,
  codeHash: string,
  clientId: string,
  now: number,
): Promise<{ error: InvalidGrant; replayed?: { profileId: string; revoked: number } }> {
  const existing = await tx.codes.findAuthorizationCode(codeHash);
  if (!existing || existing.clientId !== clientId) return { error: new InvalidGrant('authorization code is invalid') };
  if (existing.consumedAt !== null) {
    const revoked = await tx.tokenSessions.revokeTokenSessionsByCode(codeHash, now);
    return {
      error: new InvalidGrant('authorization code was already used; the tokens issued for it are revoked'),
      replayed: { profileId: existing.profileId, revoked },
    };
  }
  return { error: new InvalidGrant('authorization code has expired') };
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
