/**
 * Records of customer token sessions, as stores keep them.
 * Every timestamp is epoch seconds; every secret is stored only hashed.
 */

import type { Authentication } from '../authentication.js';

/**
 * The tokens one authorization gave a client for a customer (`sid`): the
 * refresh token and the one access token currently valid.
 */
export interface TokenSessionRecord {
  readonly sid: string;
  readonly clientId: string;
  readonly profileId: string;
  /** The code the session was created from, so a replay can revoke it. */
  readonly codeHash: string | null;
  /** The refresh token's `jti`; {@link NO_REFRESH_TOKEN} for a client without the `refresh_token` grant. */
  readonly refreshJti: string;
  /** The only customer access token of this session still accepted. */
  readonly accessJti: string;
  readonly createdAt: number;
  readonly refreshExpiresAt: number;
  readonly accessExpiresAt: number;
  readonly revokedAt: number | null;
  /**
   * How the customer signed in, from the session's code (docs/tokens.md,
   * "How the customer signed in"); every token of the session carries it.
   * `null`: unknown (sessions from before it was recorded).
   */
  readonly authentication: Authentication | null;
  /** The DPoP key the session's tokens are bound to (`cnf.jkt`; docs/tokens.md, "DPoP-bound tokens"); `null` or absent: bearer tokens. */
  readonly dpopJkt?: string | null;
}

/**
 * The `refreshJti` of a token session without a refresh token: no token
 * carries an empty `jti` (every check requires one), so nothing matches it.
 */
export const NO_REFRESH_TOKEN = '';
