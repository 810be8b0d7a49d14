import { decodeBase64UrlText } from '../transport/base64url.js';

/** The time claims of a JWT, when present and numeric. */
export interface JwtTimes {
  readonly iat: number | undefined;
  readonly exp: number | undefined;
}

/**
 * Reads `iat` and `exp` from a JWS-compact JWT's payload WITHOUT verifying
 * it. Only for scheduling (when to renew); never for trusting anything.
 * Returns `undefined` for anything that is not a three-part JWT with a JSON
 * object payload.
 */
export function decodeJwtTimes(token: string): JwtTimes | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[1] === undefined) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(decodeBase64UrlText(parts[1]));
  } catch {
    return undefined;
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return undefined;
  const { iat, exp } = claims as { iat?: unknown; exp?: unknown };
  const time = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  return { iat: time(iat), exp: time(exp) };
}
