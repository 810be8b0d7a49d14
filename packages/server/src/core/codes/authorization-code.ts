/**
 * The authorization code as both its issuer (the customer's journey) and
 * its redeemer (the `authorization_code` grant) see it: its stored form,
 * its record and its states (docs/journey.md, "The code").
 */
import { createHash } from 'node:crypto';
import type { Authentication } from '../authentication.js';

/** The stored form of an authorization code: its SHA-256, base64url (the code carries 256 random bits, so no slow hash is needed). */
export function hashCode(code: string): string {
  return createHash('sha256').update(code).digest('base64url');
}

/** An authorization code, single use. */
export interface AuthorizationCodeRecord {
  /** SHA-256 of the code. */
  readonly codeHash: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly profileId: string;
  readonly codeChallenge: string | null;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly consumedAt: number | null;
  /** The scopes granted at `/authorize`, which the code's token session gets. */
  readonly scopes: readonly string[];
  /** How the customer signed in (docs/tokens.md, "How the customer signed in"), which the code's token session gets; `null`: unknown. */
  readonly authentication: Authentication | null;
  /** The DPoP key (`dpop_jkt` of `/authorize`) whose proof must come with the redemption (RFC 9449 §10); `null` or absent: none. */
  readonly dpopJkt?: string | null;
}

/** Where an authorization code stands: `issued` until redeemed once or expired. */
export type CodeState = 'issued' | 'redeemed' | 'expired';

/** The state of a code at `now`. */
export function codeState(code: { consumedAt: number | null; expiresAt: number }, now: number): CodeState {
  if (code.consumedAt !== null) return 'redeemed';
  return code.expiresAt > now ? 'issued' : 'expired';
}
