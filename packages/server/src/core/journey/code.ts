import { randomBytes } from 'node:crypto';
import type { Authentication } from '../authentication.js';
import { buildRedirect } from '../authorize/redirect.js';
import type { Clock } from '../clock.js';
import { hashCode, type AuthorizationCodeRecord } from '../codes/authorization-code.js';
import type { AuthorizationCodeStore } from '../codes/code-store.js';
import type { Customer } from '../customers/customer.js';
import { maskedMobile } from '../customers/mobile.js';
import type { Client } from '../clients/client.js';
import { codeSecondsOf, type Lifetimes } from '../lifetimes.js';

/** A client of the standard profile, whose codes live `CONNECT_CODE_TTL`. */
const STANDARD: Pick<Client, 'profile'> = { profile: 'standard' };

/** The request a code answers. */
export interface CodeRequest {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly state: string | null;
  readonly codeChallenge: string | null;
  /** The scopes granted to the request. */
  readonly scopes: readonly string[];
  /** The request's `dpop_jkt` (RFC 9449 §10): the code is redeemed only with a proof of that key. */
  readonly dpopJkt?: string | null | undefined;
}

/**
 * Issues an authorization code for `customer` (state `issued`) and builds
 * the success redirect (see {@link newCode}). Pass the transaction's store
 * when the code is one write of several.
 */
export async function issueCode(
  request: CodeRequest,
  customer: Pick<Customer, 'profileId' | 'mobile'>,
  authentication: Authentication | null,
  codes: Pick<AuthorizationCodeStore, 'insertAuthorizationCode'>,
  deps: { clock: Clock; lifetimes: Pick<Lifetimes, 'codeSeconds'>; issuer: string },
  client: Pick<Client, 'profile'> = STANDARD,
): Promise<string> {
  const { record, location } = newCode(request, customer, authentication, deps, client);
  await codes.insertAuthorizationCode(record);
  return location;
}

/**
 * A new authorization code for `customer`, not stored yet, and the success
 * redirect that carries it: `code`, `state`, `userId` (masked mobile),
 * `profileId` and `iss` (RFC 9207). The code carries 256 random bits and is
 * stored only as its SHA-256, bound to the client, redirect URI, customer
 * and PKCE challenge, with the scopes granted to the request and how the
 * customer signed in (`authentication`: the sign-in that just completed,
 * or the customer session's for a silent sign-in or a consent; `null` for
 * a session from before it was recorded, whose tokens then carry none).
 * It is redeemable `CONNECT_CODE_TTL`, or 60 seconds for a `fapi2`
 * `client` (docs/journey.md, "The code").
 */
export function newCode(
  request: CodeRequest,
  customer: Pick<Customer, 'profileId' | 'mobile'>,
  authentication: Authentication | null,
  deps: { clock: Clock; lifetimes: Pick<Lifetimes, 'codeSeconds'>; issuer: string },
  client: Pick<Client, 'profile'> = STANDARD,
): { record: AuthorizationCodeRecord; location: string } {
  const code = randomBytes(32).toString('base64url');
  const now = deps.clock.nowSeconds();
  const record: AuthorizationCodeRecord = {
    codeHash: hashCode(code),
    clientId: request.clientId,
    redirectUri: request.redirectUri,
    profileId: customer.profileId,
    codeChallenge: request.codeChallenge,
    createdAt: now,
    expiresAt: now + codeSecondsOf(client.profile, deps.lifetimes),
    consumedAt: null,
    scopes: request.scopes,
    authentication,
    ...(request.dpopJkt ? { dpopJkt: request.dpopJkt } : {}),
  };
  const location = buildRedirect(request.redirectUri, {
    code,
    state: request.state,
    userId: maskedMobile(customer.mobile, 'user_id'),
    profileId: customer.profileId,
    iss: deps.issuer,
  });
  return { record, location };
}
