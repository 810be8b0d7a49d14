import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Client } from '../clients/client.js';
import type { ActiveSigningKey } from '../keys/key-ring.js';
import { signJwt } from './jwt.js';
import type { PublicUrls } from './public-urls.js';
import type { Lifetimes } from '../lifetimes.js';
import { formatScope } from '../scopes.js';

/** RFC 9068 §2.1: the `typ` header of a JWT access token. */
export const ACCESS_TOKEN_JWT_TYPE = 'at+jwt';

/** What minting a client access token needs. */
export interface ClientAccessTokenDeps {
  readonly keys: { signingKey(): ActiveSigningKey };
  readonly clock: Clock;
  readonly urls: PublicUrls;
  readonly lifetimes: Pick<Lifetimes, 'accessTokenSeconds'>;
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
 * active key, `sub` and `client_id` both the client ID, `aud` the base URL,
 * and `scope` (space-separated) when it was granted any.
 * `exp - iat` is exactly the configured lifetime (docs/tokens.md).
 */
export async function issueClientAccessToken(
  client: Pick<Client, 'id'>,
  deps: ClientAccessTokenDeps,
  scopes: readonly string[] = [],
): Promise<IssuedAccessToken> {
  const now = deps.clock.nowSeconds();
  const expiresAt = now + deps.lifetimes.accessTokenSeconds;
  const { kid, alg, key } = deps.keys.signingKey();
  const token = await signJwt(
    // RFC 9068 §2.2: iss, exp, aud, sub, client_id, iat and jti; §2.2.3: scope, when there is one.
    {
      iss: deps.urls.authUrl,
      sub: client.id,
      aud: deps.urls.baseUrl,
      iat: now,
      exp: expiresAt,
      jti: randomUUID(),
      client_id: client.id,
      ...(scopes.length > 0 ? { scope: formatScope(scopes) } : {}),
    },
    { alg, typ: ACCESS_TOKEN_JWT_TYPE, kid },
    key,
  );
  return { token, expiresIn: deps.lifetimes.accessTokenSeconds, expiresAt };
}
