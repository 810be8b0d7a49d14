import { decodeJwtTimes } from './decode-jwt-times.js';

/**
 * A customer's tokens, as the SDK stores them. Plain JSON: a `TokenStore`
 * may serialise it as it is. Times are epoch seconds on the consumer's own
 * clock (the injected `Clock`), computed when the answer arrived.
 */
export interface CustomerTokens {
  /** The customer access token: a JWE, opaque to the consumer. */
  readonly accessToken: string;
  /**
   * `DPoP` when the tokens are bound to the DPoP key they were obtained
   * with (`dpop`): they are then useless without that key, and presented as
   * `Authorization: DPoP …` with a proof. Absent for bearer tokens.
   */
  readonly tokenType?: 'DPoP';
  /**
   * The refresh token (a JWT); Connect does not rotate it, it lives until its
   * own expiry. Absent when the client has no `refresh_token` grant: the
   * customer then authorizes again once the access token expires.
   */
  readonly refreshToken?: string;
  /** When the access token expires: receipt time + `expires_in`. */
  readonly expiresAt: number;
  /**
   * When the refresh token expires, if known: receipt time + its lifetime
   * (`exp - iat` of its unverified payload, read for scheduling only).
   */
  readonly refreshExpiresAt?: number;
  /** When the access token was received. */
  readonly issuedAt: number;
  /**
   * The scopes of the access token, space-separated as Connect sent them
   * (the scope granted at `/authorize`, which refreshes keep; docs/tokens.md,
   * "Scopes"); absent when it has none.
   */
  readonly scope?: string;
}

/**
 * Builds stored tokens from a `/token` answer received at `now`. The refresh
 * token's expiry keeps to the consumer's clock: its lifetime `exp - iat` is
 * counted from the first receipt, so a skewed server clock does not matter.
 */
export function customerTokensFrom(
  answer: { accessToken: string; tokenType?: 'Bearer' | 'DPoP' | undefined; refreshToken?: string | undefined; expiresIn: number; scope?: string | undefined },
  now: number,
  previous?: CustomerTokens,
): CustomerTokens {
  let refreshExpiresAt: number | undefined;
  if (previous && previous.refreshToken === answer.refreshToken) {
    refreshExpiresAt = previous.refreshExpiresAt;
  } else if (answer.refreshToken !== undefined) {
    const times = decodeJwtTimes(answer.refreshToken);
    if (times?.iat !== undefined && times.exp !== undefined && times.exp > times.iat) refreshExpiresAt = now + (times.exp - times.iat);
  }
  return {
    accessToken: answer.accessToken,
    ...(answer.tokenType === 'DPoP' ? { tokenType: 'DPoP' as const } : {}),
    ...(answer.refreshToken === undefined ? {} : { refreshToken: answer.refreshToken }),
    expiresAt: now + answer.expiresIn,
    ...(refreshExpiresAt === undefined ? {} : { refreshExpiresAt }),
    issuedAt: now,
    ...(answer.scope === undefined ? {} : { scope: answer.scope }),
  };
}

/**
 * How far Connect's clock is ahead of the consumer's, in seconds, as far as
 * the stored tokens tell: the refresh token's `exp` (Connect's clock) minus
 * its expiry on the consumer's clock. 0 when unknown. Only used to read
 * `expiresAt` of `POST /tokens`, which is an absolute time on Connect's clock.
 */
export function serverClockOffset(tokens: CustomerTokens): number {
  if (tokens.refreshExpiresAt === undefined || tokens.refreshToken === undefined) return 0;
  const exp = decodeJwtTimes(tokens.refreshToken)?.exp;
  return exp === undefined ? 0 : exp - tokens.refreshExpiresAt;
}
