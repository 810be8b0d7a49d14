import { errors, jwtDecrypt, jwtVerify, type JWTPayload } from 'jose';
import { authenticationOfClaims, type Authentication } from '../authentication.js';
import { clockDate, type Clock } from '../clock.js';
import { ENCRYPTION_ALG, ENCRYPTION_ENC, SIGNING_ALG, type KeyRing } from '../keys/key-ring.js';
import { ACCESS_TOKEN_JWT_TYPE } from './jwt.js';
import { REFRESH_TOKEN_JWT_TYPE } from './customer-tokens.js';
import type { PublicUrls } from './public-urls.js';
import { splitScope } from '../scopes.js';

/** What checking Connect's tokens needs. */
export interface TokenVerifyDeps {
  readonly keys: Pick<KeyRing, 'verificationKey' | 'decryptionKey'>;
  readonly clock: Clock;
  readonly urls: PublicUrls;
}

/** Claims every Connect token carries. */
export interface TokenClaims {
  readonly iss: string;
  readonly sub: string;
  readonly clientId: string;
  readonly jti: string;
  readonly iat: number;
  readonly exp: number;
  /** The `scope` claim as a list; empty when the token has none. */
  readonly scopes: readonly string[];
  /** `cnf.jkt`: the DPoP key the token is bound to (RFC 9449 §6); `null` for a bearer token. */
  readonly jkt: string | null;
}

/** Claims of customer tokens: also the token session and how the customer signed in. */
export interface CustomerTokenClaims extends TokenClaims {
  readonly sid: string;
  /** `acr`, `amr` and `auth_time`; `null` for a token that carries none (minted before they were recorded). */
  readonly authentication: Authentication | null;
}

/** Longer than any token Connect issues; longer input is not even parsed. */
const MAX_TOKEN_LENGTH = 4096;

/**
 * Verifies a client access token (RFC 9068): ES256 by a key still in its
 * window, `typ` `at+jwt`, our issuer, the base URL as audience, unexpired to
 * the second, `sub` = `client_id`. Returns `undefined` for anything else:
 * `alg: none`, another key, a refresh token, a customer token, another
 * environment's token.
 */
export async function verifyClientAccessToken(token: string, deps: TokenVerifyDeps): Promise<TokenClaims | undefined> {
  const payload = await verifySigned(token, ACCESS_TOKEN_JWT_TYPE, deps.urls.baseUrl, deps);
  if (!payload || payload.sub !== payload.client_id) return undefined;
  return claims(payload);
}

/** Verifies a refresh token's signature and claims (not yet its stored state). */
export async function verifyRefreshToken(token: string, deps: TokenVerifyDeps): Promise<CustomerTokenClaims | undefined> {
  const payload = await verifySigned(token, REFRESH_TOKEN_JWT_TYPE, deps.urls.authUrl, deps);
  return payload ? customerClaims(payload) : undefined;
}

/**
 * Decrypts a customer access token (`dir` + `A256GCM`, a key still in its
 * window) and checks its claims and expiry (not yet its stored state).
 */
export async function decryptCustomerAccessToken(token: string, deps: TokenVerifyDeps): Promise<CustomerTokenClaims | undefined> {
  if (token.length > MAX_TOKEN_LENGTH || token.split('.').length !== 5) return undefined;
  try {
    const { payload } = await jwtDecrypt(
      token,
      async (header) => {
        const key = header.kid ? await deps.keys.decryptionKey(header.kid) : undefined;
        if (!key) throw new errors.JWKSNoMatchingKey();
        return key;
      },
      {
        issuer: deps.urls.authUrl,
        audience: deps.urls.baseUrl,
        typ: ACCESS_TOKEN_JWT_TYPE,
        keyManagementAlgorithms: [ENCRYPTION_ALG],
        contentEncryptionAlgorithms: [ENCRYPTION_ENC],
        currentDate: clockDate(deps.clock),
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti'],
      },
    );
    return customerClaims(payload);
  } catch (error) {
    if (error instanceof errors.JOSEError || error instanceof TypeError) return undefined;
    throw error;
  }
}

async function verifySigned(token: string, typ: string, audience: string, deps: TokenVerifyDeps): Promise<JWTPayload | undefined> {
  if (token.length > MAX_TOKEN_LENGTH || token.split('.').length !== 3) return undefined;
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const key = header.kid ? await deps.keys.verificationKey(header.kid) : undefined;
        if (!key) throw new errors.JWKSNoMatchingKey();
        return key;
      },
      {
        issuer: deps.urls.authUrl,
        audience,
        typ,
        algorithms: [SIGNING_ALG],
        currentDate: clockDate(deps.clock),
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti'],
      },
    );
    return payload;
  } catch (error) {
    if (error instanceof errors.JOSEError || error instanceof TypeError) return undefined;
    throw error;
  }
}

function claims(payload: JWTPayload): TokenClaims | undefined {
  const { iss, sub, jti, iat, exp, scope } = payload;
  const clientId = payload.client_id;
  if (typeof clientId !== 'string' || !iss || !sub || !jti || iat === undefined || exp === undefined) return undefined;
  if (scope !== undefined && typeof scope !== 'string') return undefined;
  const cnf = payload.cnf as { jkt?: unknown } | undefined;
  if (cnf !== undefined && (cnf === null || typeof cnf !== 'object' || typeof cnf.jkt !== 'string')) return undefined;
  return { iss, sub, clientId, jti, iat, exp, scopes: scope === undefined ? [] : splitScope(scope), jkt: typeof cnf?.jkt === 'string' ? cnf.jkt : null };
}

function customerClaims(payload: JWTPayload): CustomerTokenClaims | undefined {
  const base = claims(payload);
  return base && typeof payload.sid === 'string' ? { ...base, sid: payload.sid, authentication: authenticationOfClaims(payload) } : undefined;
}
