import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { parseMobile } from '../customers/mobile.js';
import type { Customer } from '../customers/customer.js';
import { hashCode } from '../grants/authorization-code.js';
import type { AuthorizationCodeStore } from '../journey/stores.js';
import { buildRedirect } from './redirect.js';

/** What issuing a code needs. */
export interface IssueCodeDeps {
  readonly codes: Pick<AuthorizationCodeStore, 'insertAuthorizationCode'>;
  readonly clock: Clock;
  readonly codeTtlSeconds: number;
  /** The issuer, sent as `iss` with the response (RFC 9207). */
  readonly issuer: string;
}

/** The request a code answers. */
export interface CodeRequest {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly state: string | null;
  readonly codeChallenge: string | null;
}

/**
 * Issues an authorization code for `customer` and builds the success
 * redirect: `code`, `state`, `userId` (masked mobile), `profileId` and `iss`.
 * The code carries 256 random bits and is stored only as its SHA-256, bound
 * to the client, redirect URI, customer and PKCE challenge; it lives
 * `codeTtlSeconds` (seed §2.3).
 */
export async function issueCodeRedirect(request: CodeRequest, customer: Customer, deps: IssueCodeDeps): Promise<string> {
  const code = randomBytes(32).toString('base64url');
  const now = deps.clock.nowSeconds();
  await deps.codes.insertAuthorizationCode({
    codeHash: hashCode(code),
    clientId: request.clientId,
    redirectUri: request.redirectUri,
    profileId: customer.profileId,
    codeChallenge: request.codeChallenge,
    createdAt: now,
    expiresAt: now + deps.codeTtlSeconds,
    consumedAt: null,
  });
  return buildRedirect(request.redirectUri, {
    code,
    state: request.state,
    userId: parseMobile(customer.mobile)?.masked ?? null,
    profileId: customer.profileId,
    iss: deps.issuer,
  });
}

/** The redirect that carries an error back to a verified redirect URI. */
export function errorRedirect(
  redirectUri: string,
  error: string,
  description: string,
  state: string | null,
  issuer: string,
): string {
  return buildRedirect(redirectUri, { error, error_description: description, state, iss: issuer });
}
