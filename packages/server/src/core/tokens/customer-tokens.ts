import { randomUUID } from 'node:crypto';
import { authenticationClaims, type Authentication } from '../authentication.js';
import type { Clock } from '../clock.js';
import { ENCRYPTION_ALG, ENCRYPTION_ENC, type ActiveEncryptionKey, type ActiveSigningKey } from '../keys/key-ring.js';
import { encryptJwt, signJwt } from './jwt.js';
import type { PublicUrls } from './public-urls.js';
import type { Lifetimes } from '../lifetimes.js';
import { formatScope } from '../scopes.js';

/** The `typ` of a refresh token, so it can never pass for an access token (RFC 8725 §3.11). */
export const REFRESH_TOKEN_JWT_TYPE = 'rt+jwt';

/** What minting customer tokens needs. */
export interface CustomerTokenDeps {
  readonly keys: { signingKey(): ActiveSigningKey; encryptionKey(): ActiveEncryptionKey };
  readonly clock: Clock;
  readonly urls: PublicUrls;
  readonly lifetimes: Pick<Lifetimes, 'accessTokenSeconds' | 'refreshTokenSeconds'>;
}

/** Whose tokens these are. */
export interface CustomerTokenSubject {
  readonly profileId: string;
  readonly clientId: string;
  /** The token session. */
  readonly sid: string;
  /** The scopes granted to the session (docs/tokens.md, "Scopes"); none when absent. */
  readonly scopes?: readonly string[] | undefined;
  /** How the customer signed in (docs/tokens.md, "How the customer signed in"); `null` or absent: unknown, no such claims. */
  readonly authentication?: Authentication | null | undefined;
  /** The DPoP key the tokens are bound to (`cnf.jkt`, RFC 9449 §6; docs/tokens.md, "DPoP-bound tokens"); `null` or absent: bearer tokens. */
  readonly jkt?: string | null | undefined;
}

/** RFC 9449 §6.1: the `cnf` claim of a DPoP-bound token; nothing for a bearer token. */
export function confirmationClaim(jkt: string | null | undefined): { cnf?: { jkt: string } } {
  return jkt ? { cnf: { jkt } } : {};
}

/** The `scope` claim of a subject's tokens: present only when it was granted any (RFC 9068 §2.2.3). */
function scopeClaim(subject: CustomerTokenSubject): { scope?: string } {
  return subject.scopes !== undefined && subject.scopes.length > 0 ? { scope: formatScope(subject.scopes) } : {};
}

/** A minted token with its `jti` and expiry. */
export interface MintedToken {
  readonly token: string;
  readonly jti: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

/**
 * Mints a customer access token: a compact JWE (`dir` + `A256GCM`), opaque to
 * the consumer, whose plaintext is a JWT with `iss`, `sub` (profile ID),
 * `aud` (base URL), `client_id`, `sid`, `jti`, `iat`, `exp`, when the
 * session was granted any, `scope`, and `acr`, `amr` and `auth_time` of
 * the customer's sign-in when known (docs/tokens.md, "Claims"). `exp - iat` is exactly the configured lifetime.
 */
export async function mintCustomerAccessToken(subject: CustomerTokenSubject, deps: CustomerTokenDeps): Promise<MintedToken> {
  const now = deps.clock.nowSeconds();
  const expiresAt = now + deps.lifetimes.accessTokenSeconds;
  const jti = randomUUID();
  const { kid, key } = deps.keys.encryptionKey();
  const token = await encryptJwt(
    { iss: deps.urls.authUrl, sub: subject.profileId, aud: deps.urls.baseUrl, iat: now, exp: expiresAt, jti, client_id: subject.clientId, sid: subject.sid, ...scopeClaim(subject), ...authenticationClaims(subject.authentication), ...confirmationClaim(subject.jkt) },
    { alg: ENCRYPTION_ALG, enc: ENCRYPTION_ENC, kid, typ: 'at+jwt' },
    key,
  );
  return { token, jti, issuedAt: now, expiresAt };
}

/**
 * Mints a refresh token: a JWT signed with the active key, `typ` `rt+jwt`,
 * with `iss`, `sub`, `aud` (the auth URL: only Connect accepts it),
 * `client_id`, `sid`, `jti`, `iat`, `exp`, the session's `scope` and the
 * sign-in's `acr`, `amr` and `auth_time`, which every access token it
 * refreshes carries unchanged. It is also checked against the
 * stored token session, so it can be revoked.
 */
export async function mintRefreshToken(subject: CustomerTokenSubject, deps: CustomerTokenDeps): Promise<MintedToken> {
  const now = deps.clock.nowSeconds();
  const expiresAt = now + deps.lifetimes.refreshTokenSeconds;
  const jti = randomUUID();
  const { kid, alg, key } = deps.keys.signingKey();
  const token = await signJwt(
    { iss: deps.urls.authUrl, sub: subject.profileId, aud: deps.urls.authUrl, iat: now, exp: expiresAt, jti, client_id: subject.clientId, sid: subject.sid, ...scopeClaim(subject), ...authenticationClaims(subject.authentication), ...confirmationClaim(subject.jkt) },
    { alg, typ: REFRESH_TOKEN_JWT_TYPE, kid },
    key,
  );
  return { token, jti, issuedAt: now, expiresAt };
}
