/**
 * What an authorization request asks of the customer's sign-in
 * (docs/journey.md, "`acr_values` and `max_age`"): its `acr_values` and
 * `max_age` (OpenID Connect Core §3.1.2.1), and whether a sign-in meets
 * them. Every way a journey completes asks {@link meetsRequirements}: a
 * silent sign-in from the customer session, the consent page's approval,
 * a PIN + SMS sign-in, and a passkey sign-in.
 */
import { ACR_PHR, ACR_PIN_SMS, ACR_VALUES_SUPPORTED, type Authentication } from './authentication.js';

/** What a sign-in must meet to complete a journey. */
export interface AuthenticationRequirements {
  /**
   * The weakest `acr` the request accepts: `phr` (only a passkey sign-in
   * out of its hold meets it), `urn:connect:acr:pin-sms` (any sign-in), or
   * `null` (the request named no known value: any sign-in).
   */
  readonly requiredAcr: string | null;
  /** The most seconds since the sign-in (`now - auth_time`); `null`: no limit. */
  readonly maxAge: number | null;
}

/** The largest `max_age` accepted, in seconds (about 68 years: more than any session lives). */
export const MAX_AGE_LIMIT = 2_147_483_647;

/**
 * How strong each known `acr` is as a requirement: a passkey sign-in
 * (`phr`) is stronger than PIN + SMS, which any sign-in meets.
 */
const STRENGTH: Readonly<Record<string, number>> = { [ACR_PIN_SMS]: 1, [ACR_PHR]: 2 };

/** The strength of `acr` as a requirement: 0 for one Connect does not know. */
function strengthOf(acr: string): number {
  return Object.hasOwn(STRENGTH, acr) ? (STRENGTH[acr] as number) : 0;
}

/**
 * The `acr_values` of a request that Connect knows (`acr_values_supported`),
 * in the request's order, each once. Values are separated by spaces;
 * unknown ones are ignored (OpenID Connect Core §3.1.2.1: a voluntary
 * request), never an error.
 */
export function knownAcrValues(acrValues: string | undefined): string[] {
  if (acrValues === undefined) return [];
  const named = acrValues.split(' ').filter((value) => ACR_VALUES_SUPPORTED.includes(value));
  return [...new Set(named)];
}

/**
 * `max_age` as the request gives it: a whole number of seconds, digits
 * only, from 0 to {@link MAX_AGE_LIMIT}; `undefined` for anything else.
 */
export function parseMaxAge(value: string): number | undefined {
  if (!/^\d{1,10}$/.test(value)) return undefined;
  const seconds = Number(value);
  return seconds <= MAX_AGE_LIMIT ? seconds : undefined;
}

/**
 * The requirements of a request's known `acr_values` and `max_age`: any of
 * the `acr_values` listed satisfies the request, so the weakest of them is
 * the one required (`phr` alone: only `phr`; with `urn:connect:acr:pin-sms`
 * listed too, any sign-in).
 */
export function requirementsOf(request: { readonly acrValues: readonly string[]; readonly maxAge: number | null }): AuthenticationRequirements {
  let requiredAcr: string | null = null;
  for (const acr of request.acrValues) {
    if (requiredAcr === null || strengthOf(acr) < strengthOf(requiredAcr)) requiredAcr = acr;
  }
  return { requiredAcr, maxAge: request.maxAge };
}

/** Whether only a passkey sign-in out of its hold can meet `requirements` (the pages then offer no PIN form). */
export function requiresPhr(requirements: AuthenticationRequirements): boolean {
  return requirements.requiredAcr === ACR_PHR;
}

/**
 * Whether a sign-in meets a request's requirements at `now`: with `phr`
 * required its `acr` must be `phr` (any other requirement is met by any
 * sign-in), and with a `max_age` no more than `maxAge` seconds may have
 * passed since its `auth_time` (OpenID Connect Core §3.1.2.1). A sign-in
 * whose authentication is not known (`null`: a session from before
 * Connect recorded it, which was PIN + SMS) meets neither `phr` nor any
 * `max_age`.
 *
 * Called wherever a journey can complete: a silent sign-in from the
 * customer session, the consent page's approval, a PIN + SMS sign-in's
 * one-time PIN, and a passkey sign-in (whose `acr` is `phr` only for a
 * passkey out of its hold).
 */
export function meetsRequirements(authentication: Authentication | null, requirements: AuthenticationRequirements, now: number): boolean {
  const { requiredAcr, maxAge } = requirements;
  if (authentication === null) return maxAge === null && requiredAcr !== ACR_PHR;
  if (requiredAcr === ACR_PHR && authentication.acr !== ACR_PHR) return false;
  return maxAge === null || now - authentication.authTime <= maxAge;
}
