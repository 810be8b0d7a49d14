import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Clock } from '../clock.js';
import type { Client } from '../clients/client.js';
import type { ActiveSigningKey } from '../keys/key-ring.js';
import type { PublicUrls } from './public-urls.js';

/** RFC 9068 §2.1: the `typ` header of a JWT access token. */
export const ACCESS_TOKEN_JWT_TYPE = 'at+jwt';

/** What minting a client access token needs. */
export interface ClientAccessTokenDeps {
  readonly keys: { signingKey(): ActiveSigningKey };
  readonly clock: Clock;
  readonly urls: PublicUrls;
  readonly accessTokenTtlSeconds: number;
}

/** An access token with its lifetime. */
export interface IssuedAccessToken {
  readonly token: string;
  /** Seconds until expiry (`exp - iat`). */
  readonly expiresIn: number;
  /** Expiry as epoch seconds. */
  readonly expiresAt: number;
}

/**
 * Mints a client-credentials access token: an RFC 9068 JWT signed with the
 * active key, `sub` and `client_id` both the client ID, `aud` the base URL.
 * `exp - iat` is exactly the configured lifetime (CONTRACT.md §5).
 */
export async function issueClientAccessToken(client: Pick<Client, 'id'>, deps: ClientAccessTokenDeps): Promise<IssuedAccessToken> {
  const now = deps.clock.nowSeconds();
  const expiresAt = now + deps.accessTokenTtlSeconds;
  const { kid, alg, key } = deps.keys.signingKey();
  const token = await new SignJWT({ client_id: client.id })
    .setProtectedHeader({ alg, typ: ACCESS_TOKEN_JWT_TYPE, kid })
    .setIssuer(deps.urls.authUrl)
    .setSubject(client.id)
    .setAudience(deps.urls.baseUrl)
    .setIssuedAt(now)
    .setExpirationTime(expiresAt)
    .setJti(randomUUID())
    .sign(key);
  return { token, expiresIn: deps.accessTokenTtlSeconds, expiresAt };
}
