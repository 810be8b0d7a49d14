import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { clockDate, type Clock } from '../clock.js';
import { InvalidClient } from '../errors.js';
import type { ReplayStore } from '../replay/replay-store.js';
import { useJtiOnce } from '../replay/use-jti-once.js';
import type { Client } from './client.js';
import { CLIENT_ASSERTION_ALGORITHMS } from './client-keys.js';
import { JwksUriFetchFailed, type ClientJwksUriFetcher } from './client-jwks-uri.js';

/** `client_assertion_type` of `private_key_jwt` (RFC 7523 §2.2). */
export const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** How far `iat` and `nbf` may be ahead of Connect's clock, and `exp` behind it, in seconds. */
export const ASSERTION_CLOCK_SKEW_SECONDS = 60;

/** The longest an assertion may live: `exp` at most this many seconds after its `iat` (or after now, without `iat`). */
export const MAX_ASSERTION_LIFETIME_SECONDS = 300;

/** What checking a client assertion reads. */
export interface ClientAssertionDeps {
  readonly clock: Clock;
  /** Connect's issuer identifier (the auth URL): the `aud` every assertion must name. */
  readonly issuer: string;
  /** Where `jti`s are recorded once, on every instance (docs/operator-guide.md, "The replay store"). */
  readonly usedJtis: Pick<ReplayStore, 'useJtiOnce'>;
  /** The keys of clients registered with a `jwks_uri` (it reports its failed fetches itself). */
  readonly jwksUri: ClientJwksUriFetcher;
}

/**
 * jose's key set over `set`, one per `keys` array: a client's registered
 * keys, or a `jwks_uri`'s cached answer, are the same array until they
 * change, and the set keeps the keys it imported, so a client's key is
 * imported once rather than on every request.
 */
const localKeySets = new WeakMap<object, ReturnType<typeof createLocalJWKSet>>();
function localKeySetOf(set: JSONWebKeySet): ReturnType<typeof createLocalJWKSet> {
  let local = localKeySets.get(set.keys);
  if (!local) {
    local = createLocalJWKSet(set);
    localKeySets.set(set.keys, local);
  }
  return local;
}

/**
 * Verifies a `private_key_jwt` client assertion (RFC 7523 §3, FAPI 2.0
 * Security Profile §5.3.2.1) of `client`, and records its `jti`
 * (docs/consumer-guide.md, "Authenticating with a private key"):
 *
 * - signed with ES256, PS256 or EdDSA by a key of the client's registered
 *   JWK Set or `jwks_uri` (fetched again once for an unknown `kid`);
 * - `iss` = `sub` = the client ID;
 * - `aud` the issuer: for a `fapi2` client the issuer as its one value (a
 *   string); a `standard` client may also name the token endpoint URL
 *   (RFC 7523 §3), in a string or an array;
 * - `exp` required, not passed (60 s of clock skew), at most 300 s after
 *   `iat` (or now); `iat` and `nbf` not ahead of the clock by more than 60 s;
 * - `jti` required, and accepted once on every instance until `exp`.
 *
 * A disabled client is refused only once its assertion verified, so that
 * an unsigned request learns nothing of it.
 *
 * @throws InvalidClient with a client-safe description of the first check that failed.
 */
export async function verifyClientAssertion(assertion: string, client: Client, deps: ClientAssertionDeps): Promise<void> {
  const assertionFailed = (description: string) =>
    new InvalidClient(description, 'private_key_jwt', { claimedClientId: client.id.slice(0, 100), claimedClientKnown: true });
  const notSigned = () => assertionFailed('client_assertion is not signed by a key registered for this client');

  const { jwks, jwksUri } = client;
  if (!jwks && !jwksUri) throw notSigned();
  const options = {
    algorithms: [...CLIENT_ASSERTION_ALGORITHMS],
    issuer: client.id,
    subject: client.id,
    requiredClaims: ['exp', 'jti'],
    clockTolerance: ASSERTION_CLOCK_SKEW_SECONDS,
    currentDate: clockDate(deps.clock),
  };

  const verifyWith = (set: JSONWebKeySet) => jwtVerify(assertion, localKeySetOf(set), options);
  const keysOf = async (): Promise<JSONWebKeySet> => {
    if (jwks) return { keys: jwks.keys as JSONWebKeySet['keys'] };
    try {
      return await deps.jwksUri.keys(client.id, jwksUri as string);
    } catch (error) {
      throw fetchFailed(error);
    }
  };
  const fetchFailed = (error: unknown) => {
    if (!(error instanceof JwksUriFetchFailed)) throw error;
    return assertionFailed('the keys of this client could not be fetched from its jwks_uri; try again later');
  };

  let payload: JWTPayload;
  try {
    try {
      ({ payload } = await verifyWith(await keysOf()));
    } catch (error) {
      // A kid the cached set lacks: the client may have added a key since (docs/operator-guide.md, "FAPI 2.0 clients").
      if (!(error instanceof errors.JWKSNoMatchingKey) || !jwksUri || jwks) throw error;
      let fresh: JSONWebKeySet | undefined;
      try {
        fresh = await deps.jwksUri.refresh(client.id, jwksUri);
      } catch (fetchError) {
        throw fetchFailed(fetchError);
      }
      if (!fresh) throw error;
      ({ payload } = await verifyWith(fresh));
    }
  } catch (error) {
    throw describeFailure(error, assertionFailed, notSigned);
  }

  checkAudience(payload.aud, client, deps.issuer, assertionFailed);
  const now = deps.clock.nowSeconds();
  const exp = payload.exp as number;
  if (payload.iat !== undefined && payload.iat > now + ASSERTION_CLOCK_SKEW_SECONDS) throw assertionFailed('client_assertion iat is in the future');
  if (exp - (payload.iat ?? now) > MAX_ASSERTION_LIFETIME_SECONDS) {
    throw assertionFailed('client_assertion lives too long: exp must be at most 300 seconds after iat');
  }
  const jti = payload.jti;
  if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw assertionFailed('client_assertion jti must be 1 to 256 characters');
  if (client.status !== 'active') throw assertionFailed('client is disabled');
  const first = await useJtiOnce(deps.usedJtis, {
    kind: 'client_assertion',
    issuer: client.id,
    jti,
    // Kept until it could no longer be accepted anyway: its exp, plus the skew it is allowed.
    expiresAt: exp + ASSERTION_CLOCK_SKEW_SECONDS,
    now,
  });
  if (!first) throw assertionFailed('client_assertion was used already: each jti is accepted once');
}

/**
 * `aud` of a `fapi2` client: the issuer, as a string (FAPI 2.0 Security
 * Profile §5.3.2.1); of a `standard` client: the issuer or the token
 * endpoint URL, alone or in an array (RFC 7523 §3).
 */
function checkAudience(aud: unknown, client: Client, issuer: string, assertionFailed: (description: string) => InvalidClient): void {
  if (client.profile === 'fapi2') {
    if (aud !== issuer) throw assertionFailed('client_assertion aud must be the issuer identifier, as a single string');
    return;
  }
  const accepted = [issuer, `${issuer}/token`];
  const values = Array.isArray(aud) ? aud : [aud];
  if (!values.some((value) => typeof value === 'string' && accepted.includes(value))) {
    throw assertionFailed('client_assertion aud must be the issuer identifier (or the token endpoint URL)');
  }
}

/** A jose failure as a client-safe `invalid_client`. */
function describeFailure(error: unknown, assertionFailed: (description: string) => InvalidClient, notSigned: () => InvalidClient): unknown {
  if (error instanceof InvalidClient) return error;
  if (error instanceof errors.JWTExpired) return assertionFailed('client_assertion has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'iss':
      case 'sub':
        return assertionFailed('client_assertion iss and sub must both be the client ID');
      case 'nbf':
        return assertionFailed('client_assertion is not valid yet (nbf)');
      case 'iat':
        return assertionFailed('client_assertion iat is not a number');
      case 'exp':
        return assertionFailed('client_assertion exp is required');
      case 'jti':
        return assertionFailed('client_assertion jti is required');
      default:
        return assertionFailed('client_assertion has an invalid claim');
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return assertionFailed('client_assertion must be signed with ES256, PS256 or EdDSA');
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid) return assertionFailed('client_assertion is not a valid signed JWT');
  if (error instanceof errors.JOSENotSupported) return assertionFailed('client_assertion must be signed with ES256, PS256 or EdDSA');
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSMultipleMatchingKeys) {
    return notSigned();
  }
  if (error instanceof JwksUriFetchFailed) return assertionFailed('the keys of this client could not be fetched from its jwks_uri; try again later');
  // Anything else jose reports about the token, or WebCrypto about a key of the client's
  // it cannot import (a DataError), is the assertion's failure, never a 500.
  if (error instanceof errors.JOSEError || error instanceof DOMException) return notSigned();
  return error;
}
