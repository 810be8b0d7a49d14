import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK } from 'jose';
import { resolveOptions, type ClientAuthentication, type ConnectSettings, type RequestOptions, type ResolvedOptions } from '../transport/connect-options.js';
import { InsufficientScope, InsufficientUserAuthentication, InvalidResponse, InvalidToken } from '../transport/errors.js';
import { accessTokenHash, JOSE_ALGORITHMS } from '../transport/keys.js';
import { postForm } from '../transport/token-endpoint.js';
import { raceAbort } from '../transport/race-abort.js';
import { withRetry } from '../transport/retry.js';
import { grantedScopes, scopeTokens, type ScopeInput } from '../flows/scope.js';

/** The two kinds of access token Connect issues: a customer's (a JWE) and a client's own (a JWT). */
export type TokenKind = 'customer' | 'client';

/** What every verified access token carries. Times are epoch seconds on Connect's clock. */
interface VerifiedTokenBase {
  /** The client the token was issued to (the consumer that presents it). */
  readonly clientId: string;
  /** `iss`: Connect's auth URL. */
  readonly issuer: string;
  /** `aud`, when Connect names one (its base URL). */
  readonly audience: string | undefined;
  /** `jti`. */
  readonly tokenId: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
  /** `scope`: the scopes the token was granted, each once; `[]` when it has none (docs/tokens.md, "Scopes"). */
  readonly scopes: readonly string[];
  /**
   * `cnf.jkt`: the JWK SHA-256 thumbprint (RFC 7638) of the DPoP key the
   * token is bound to (RFC 9449 §6); `undefined` for a bearer token.
   */
  readonly jkt: string | undefined;
  /** The whole introspection answer (RFC 7662 §2.2), for members not named above. */
  readonly claims: Readonly<Record<string, unknown>>;
}

/**
 * How the customer signed in (docs/tokens.md, "How the customer signed
 * in"), the same through every refresh of the session.
 */
export interface CustomerAuthentication {
  /** `acr`: the authentication context class, e.g. `urn:connect:acr:pin-sms` (PIN + one-time PIN by SMS). */
  readonly acr: string;
  /** `amr`: RFC 8176 methods, e.g. `['pin', 'sms', 'mfa']`. */
  readonly amr: readonly string[];
  /** `auth_time`: when the customer completed the sign-in, epoch seconds on Connect's clock. */
  readonly authTime: number;
}

/** A customer access token: it stands for the customer `profileId`, linked through `clientId`. */
export interface VerifiedCustomerToken extends VerifiedTokenBase {
  readonly kind: 'customer';
  /** `sub`: the customer's profile ID. */
  readonly profileId: string;
  /** `sid`: the customer's token session with that client. */
  readonly sessionId: string;
  /** `acr`, `amr` and `auth_time` of the customer's sign-in; `null` when Connect has none for the token (sessions from before it recorded them). */
  readonly authentication: CustomerAuthentication | null;
}

/** A client access token (client credentials): it stands for the client itself. */
export interface VerifiedClientToken extends VerifiedTokenBase {
  readonly kind: 'client';
}

/** An access token Connect says is active; `switch (token.kind)` narrows. */
export type VerifiedToken = VerifiedCustomerToken | VerifiedClientToken;

/** The verified token of kind `K`. */
export type VerifiedTokenOf<K extends TokenKind> = Extract<VerifiedToken, { readonly kind: K }>;

/**
 * What one check requires of the token, besides being active. An object so
 * that later requirements join it without changing a call.
 */
export interface VerifyOptions<K extends TokenKind = TokenKind> extends RequestOptions {
  /** Accept only this kind of token; default either. */
  readonly kind?: K;
  /**
   * Scopes the token must all have (RFC 6750 §3.1), e.g. `['payments:read']`
   * or `'payments:read profile'`. An active token lacking one is refused
   * with `InsufficientScope` (answer 403, naming `err.scope`); default none.
   */
  readonly scopes?: ScopeInput | undefined;
  /**
   * Step-up (RFC 9470): the `acr` values of which the customer's sign-in
   * must have one, e.g. `['phr']`. A token of another sign-in (or a client
   * token, or one without a recorded sign-in) is refused with
   * `InsufficientUserAuthentication` (answer 401 with `stepUpChallenge(err)`).
   */
  readonly acr?: readonly string[] | undefined;
  /**
   * Step-up (RFC 9470): the most seconds since the customer signed in
   * (`auth_time`, by the verifier's clock); met while `now - auth_time <=
   * maxAge`. An older sign-in (or none recorded) is refused with
   * `InsufficientUserAuthentication`.
   */
  readonly maxAge?: number | undefined;
}

/** Options of {@link createTokenVerifier}: a resource server's credentials and the cache. */
export type TokenVerifierOptions = Omit<ConnectSettings, 'baseUrl' | 'dpop' | 'pushedAuthorization'> & ClientAuthentication & TokenVerifierSettings;

/** What {@link createTokenVerifier} adds to the client's options. */
export interface TokenVerifierSettings {
  /**
   * How long an active answer is reused, in seconds; default 1, at most 60,
   * 0 turns the cache off. A token revoked at Connect is still accepted for
   * up to this long, so above 1 the API no longer refuses a revoked token
   * within the second Connect promises for its own checks
   * (docs/resource-servers.md, "Cost and freshness").
   */
  readonly cacheSeconds?: number;
  /** The most answers held at once; default 10,000 (the oldest goes first). */
  readonly maxCachedTokens?: number;
}

/**
 * An API request as it arrived, for {@link TokenVerifier.verifyRequest}:
 * what a DPoP proof is checked against (RFC 9449 §4.3).
 */
export interface PresentedRequest {
  /** The `Authorization` header: `Bearer <token>` or `DPoP <token>`. */
  readonly authorization: string | null | undefined;
  /** The `DPoP` header (the proof); more than one is refused. */
  readonly dpop?: string | readonly string[] | null | undefined;
  /** The request's method, e.g. `GET`. */
  readonly method: string;
  /**
   * The request's URL as the client addressed it: scheme, host, port and
   * path, as they are in front of any proxy (the query is ignored).
   */
  readonly url: string | URL;
}

/** Checks access tokens at Connect's introspection endpoint; see {@link createTokenVerifier}. */
export interface TokenVerifier {
  /**
   * The token's claims when Connect says it is active (and of the kind
   * asked for); otherwise throws `InvalidToken` (`error: 'invalid_token'`:
   * answer 401). An active token lacking one of the `scopes` asked for
   * throws `InsufficientScope` (`error: 'insufficient_scope'`: answer 403
   * with `WWW-Authenticate: Bearer error="insufficient_scope",
   * scope="<err.scope>"`). A token whose sign-in is weaker or older than
   * `acr` / `maxAge` allow throws `InsufficientUserAuthentication` (answer
   * 401 with `WWW-Authenticate: stepUpChallenge(err)`; RFC 9470). A
   * DPoP-bound token (introspection says `cnf`) throws `InvalidToken`: it
   * is no bearer credential, and this verifier checks no DPoP proofs
   * (docs/resource-servers.md, "DPoP-bound tokens"). Any other
   * error means the check could not be
   * made (Connect unreachable, wrong resource-server credentials): answer
   * 503, never 401.
   */
  verify<K extends TokenKind = TokenKind>(token: string | undefined, options?: VerifyOptions<K>): Promise<VerifiedTokenOf<K>>;
  /**
   * {@link TokenVerifier.verify} for a whole request, bearer or DPoP (RFC
   * 9449 §7): `Authorization: Bearer <token>` is checked as `verify` does,
   * and refused for a DPoP-bound token; `Authorization: DPoP <token>` needs
   * a DPoP-bound token (`cnf.jkt`) and one valid `DPoP` proof: `typ`
   * `dpop+jwt`, ES256, PS256 or EdDSA, signed by the public `jwk` of its
   * header whose thumbprint is the token's `jkt`, `htm` and `htu` of this
   * request, `iat` within 60 seconds of the verifier's clock, `ath` the
   * token's hash, and a `jti` this verifier has not seen within that window.
   * The `jti`s are kept in this process's memory: APIs that run in several
   * processes refuse a proof replayed to the same process only
   * (docs/resource-servers.md, "DPoP in the SDK's verifier"). Every refusal is `InvalidToken`
   * (answer 401 with `WWW-Authenticate: dpopChallenge(err)` for a DPoP
   * request); other errors as `verify`.
   */
  verifyRequest<K extends TokenKind = TokenKind>(request: PresentedRequest, options?: VerifyOptions<K>): Promise<VerifiedTokenOf<K>>;
  /** Forgets every cached answer. */
  clear(): void;
}

/** The default reuse of an active answer, in seconds. */
export const DEFAULT_TOKEN_CACHE_SECONDS = 1;

const MAX_CACHE_SECONDS = 60;
/** Longer than any token Connect issues; longer ones are refused without a request. */
const MAX_TOKEN_LENGTH = 4096;
/** A compact JWS (3 parts) or JWE (5 parts) of base64url segments. */
const COMPACT = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*){2}(?:(?:\.[A-Za-z0-9_-]*){2})?$/;

interface Cached {
  readonly token: VerifiedToken;
  /** Reused while the clock reads less than this. */
  readonly until: number;
}

/**
 * A check of Connect's access tokens for one of the platform's APIs, with
 * the credentials of a resource server (`connect-auth clients create
 * --resource-server`; docs/resource-servers.md). It asks `POST
 * {authUrl}/introspect` (RFC 7662) and holds no key: the credentials can
 * check tokens but cannot obtain or make one.
 *
 * An active answer is reused for `cacheSeconds` (default 1), never past the
 * token's `exp` as the verifier's clock reads it; inactive answers are not
 * kept. Concurrent checks of one token share one request. Transient
 * failures are retried as `retry` says.
 *
 * @example
 * const verifier = createTokenVerifier({ authUrl, clientId: apiId, clientSecret: apiSecret });
 * try {
 *   const token = await verifier.verify(bearerToken(request.headers.authorization), { kind: 'customer', scopes: ['payments:read'] });
 *   // serve token.profileId to the client token.clientId
 * } catch (err) {
 *   if (err instanceof InvalidToken) return reply401();
 *   if (err instanceof InsufficientScope) return reply403(err.scope);
 *   return reply503();
 * }
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const resolved = resolveOptions(options);
  const cacheSeconds = options.cacheSeconds ?? DEFAULT_TOKEN_CACHE_SECONDS;
  if (!Number.isInteger(cacheSeconds) || cacheSeconds < 0 || cacheSeconds > MAX_CACHE_SECONDS) {
    throw new TypeError(`cacheSeconds must be a whole number from 0 to ${MAX_CACHE_SECONDS}`);
  }
  const maxCached = options.maxCachedTokens ?? 10_000;
  if (!Number.isInteger(maxCached) || maxCached < 1) throw new TypeError('maxCachedTokens must be a whole number from 1');
  const cache = new Map<string, Cached>();
  const pending = new Map<string, Promise<VerifiedToken>>();
  let generation = 0;

  const remember = (raw: string, token: VerifiedToken, asked: number) => {
    const now = resolved.clock.nowSeconds();
    const until = Math.min(now + cacheSeconds, token.expiresAt);
    if (asked !== generation || until <= now) return;
    cache.delete(raw);
    while (cache.size >= maxCached) cache.delete(cache.keys().next().value as string);
    cache.set(raw, { token, until });
  };

  const lookUp = (raw: string): Promise<VerifiedToken> => {
    const hit = cache.get(raw);
    if (hit) {
      if (resolved.clock.nowSeconds() < hit.until) return Promise.resolve(hit.token);
      cache.delete(raw);
    }
    const shared = pending.get(raw);
    if (shared) return shared;
    const asked = generation;
    const request = withRetry(() => introspect(resolved, raw), resolved.retry).then((token) => {
      remember(raw, token, asked);
      return token;
    });
    pending.set(raw, request);
    const settle = () => {
      if (pending.get(raw) === request) pending.delete(raw);
    };
    request.then(settle, settle);
    return request;
  };

  const seenProofs = new Map<string, number>();

  /** The requirement of `verifyOptions`, checked before any request: a malformed one is the calling code's mistake. */
  const requirement = (verifyOptions: VerifyOptions) => {
    const required = verifyOptions.scopes === undefined ? [] : scopeTokens(verifyOptions.scopes, 'scopes');
    const acrValues = verifyOptions.acr === undefined ? [] : [...verifyOptions.acr];
    checkAuthenticationRequirement(acrValues, verifyOptions.maxAge);
    return { required, acrValues, maxAge: verifyOptions.maxAge };
  };

  const checkShape = (token: string | undefined, scheme: string): string => {
    if (token === undefined || token === '') throw new InvalidToken(`an access token is required: Authorization: ${scheme} <access_token>`, { hint: REFUSE_TOKEN });
    if (token.length > MAX_TOKEN_LENGTH || !COMPACT.test(token)) throw new InvalidToken('the access token is malformed', { hint: REFUSE_TOKEN });
    return token;
  };

  const meets = <K extends TokenKind>(verified: VerifiedToken, verifyOptions: VerifyOptions<K>, need: ReturnType<typeof requirement>): VerifiedTokenOf<K> => {
    const { required, acrValues, maxAge } = need;
    if (verifyOptions.kind !== undefined && verified.kind !== verifyOptions.kind) {
      throw new InvalidToken(verifyOptions.kind === 'customer' ? 'a customer access token is required' : 'a client access token is required', { hint: REFUSE_TOKEN });
    }
    if (required.some((scope) => !verified.scopes.includes(scope))) {
      throw new InsufficientScope('the access token lacks a scope this API needs', { scope: required.join(' '), hint: REFUSE_SCOPE });
    }
    if (acrValues.length > 0 || maxAge !== undefined) {
      const signIn = verified.kind === 'customer' ? verified.authentication : null;
      const challenge = { acrValues, maxAge, hint: REFUSE_SIGN_IN };
      if (signIn === null) throw new InsufficientUserAuthentication('the access token does not say how the customer signed in; a new sign-in is required', challenge);
      if (acrValues.length > 0 && !acrValues.includes(signIn.acr)) {
        throw new InsufficientUserAuthentication('this request needs a stronger sign-in than the access token stands for', challenge);
      }
      if (maxAge !== undefined && resolved.clock.nowSeconds() - signIn.authTime > maxAge) {
        throw new InsufficientUserAuthentication('this request needs a more recent sign-in than the access token stands for', challenge);
      }
    }
    return verified as VerifiedTokenOf<K>;
  };

  const bearer = (verified: VerifiedToken) => {
    if (verified.jkt !== undefined) throw new InvalidToken('this access token is DPoP-bound: present it as Authorization: DPoP with a DPoP proof', { hint: REFUSE_TOKEN });
  };

  /** Checks a proof against the request and the token, then records its `jti` (RFC 9449 §4.3, §11.1). */
  const checkProof = async (request: PresentedRequest, token: string, verified: VerifiedToken) => {
    if (verified.jkt === undefined) throw new InvalidToken('this access token is not DPoP-bound: present it as Authorization: Bearer', { hint: REFUSE_TOKEN });
    const proofs = request.dpop === undefined || request.dpop === null ? [] : typeof request.dpop === 'string' ? [request.dpop] : [...request.dpop];
    const proof = proofs[0];
    if (proofs.length !== 1 || proof === undefined || proof.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)) {
      throw new InvalidToken('a DPoP request needs exactly one well-formed DPoP proof header', { hint: REFUSE_PROOF });
    }
    const now = resolved.clock.nowSeconds();
    let payload: Record<string, unknown>;
    let jwk: JWK;
    try {
      const result = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: [...JOSE_ALGORITHMS], currentDate: new Date(now * 1000) });
      payload = result.payload;
      jwk = result.protectedHeader.jwk as JWK;
    } catch {
      throw new InvalidToken('the DPoP proof is not a valid dpop+jwt signed with ES256, PS256 or EdDSA by the key in its header', { hint: REFUSE_PROOF });
    }
    const { htm, htu, iat, jti, ath } = payload;
    if (typeof htm !== 'string' || htm !== request.method.toUpperCase()) throw new InvalidToken('the DPoP proof is for another method (htm)', { hint: REFUSE_PROOF });
    if (typeof htu !== 'string' || !sameTarget(htu, request.url)) throw new InvalidToken('the DPoP proof is for another URL (htu)', { hint: REFUSE_PROOF });
    if (typeof iat !== 'number' || !Number.isFinite(iat) || Math.abs(now - iat) > PROOF_WINDOW_SECONDS) throw new InvalidToken('the DPoP proof is too old or dated in the future (iat)', { hint: REFUSE_PROOF });
    if (typeof jti !== 'string' || jti === '' || jti.length > 256) throw new InvalidToken('the DPoP proof has no jti', { hint: REFUSE_PROOF });
    if (ath !== (await accessTokenHash(token))) throw new InvalidToken('the DPoP proof is not for this access token (ath)', { hint: REFUSE_PROOF });
    if ((await calculateJwkThumbprint(jwk, 'sha256')) !== verified.jkt) throw new InvalidToken('the DPoP proof is signed by another key than the one the access token is bound to', { hint: REFUSE_PROOF });
    // Forget the jtis whose proofs the iat check refuses by now (the map is in insertion order, roughly by iat).
    for (const [seen, until] of seenProofs) {
      if (until >= now) break;
      seenProofs.delete(seen);
    }
    if (seenProofs.has(jti)) throw new InvalidToken('the DPoP proof was used before (jti)', { hint: REFUSE_PROOF });
    seenProofs.set(jti, iat + PROOF_WINDOW_SECONDS);
  };

  return {
    async verify<K extends TokenKind = TokenKind>(token: string | undefined, verifyOptions: VerifyOptions<K> = {}): Promise<VerifiedTokenOf<K>> {
      const need = requirement(verifyOptions);
      const raw = checkShape(token, 'Bearer');
      const verified = await raceAbort(lookUp(raw), verifyOptions.signal);
      bearer(verified);
      return meets(verified, verifyOptions, need);
    },
    async verifyRequest<K extends TokenKind = TokenKind>(request: PresentedRequest, verifyOptions: VerifyOptions<K> = {}): Promise<VerifiedTokenOf<K>> {
      const need = requirement(verifyOptions);
      const match = request.authorization ? /^(Bearer|DPoP) +([A-Za-z0-9._~+/-]+=*) *$/i.exec(request.authorization) : null;
      const scheme = match?.[1]?.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';
      const raw = checkShape(match?.[2], scheme);
      const verified = await raceAbort(lookUp(raw), verifyOptions.signal);
      if (scheme === 'Bearer') bearer(verified);
      else await checkProof(request, raw, verified);
      return meets(verified, verifyOptions, need);
    },
    clear() {
      generation++;
      cache.clear();
    },
  };
}

/** How far a DPoP proof's `iat` may be from the verifier's clock, either way, in seconds. */
const PROOF_WINDOW_SECONDS = 60;

/** Whether a proof's `htu` names the request's URL (RFC 9449 §4.3: without query and fragment, normalised). */
function sameTarget(htu: string, requested: string | URL): boolean {
  try {
    const a = new URL(htu);
    const b = new URL(requested);
    return a.origin === b.origin && a.pathname === b.pathname;
  } catch {
    return false;
  }
}

/**
 * The `WWW-Authenticate` value of a DPoP API's 401 (RFC 9449 §7.1): `DPoP
 * algs="ES256 PS256 EdDSA"` for a request without credentials, and with
 * `error` and `error_description` for a refused one (`InvalidToken` of
 * {@link TokenVerifier.verifyRequest}). An API that accepts both schemes
 * answers a request without credentials with both challenges.
 *
 * @example
 * reply.status(401).header('www-authenticate', dpopChallenge(err)).send({ error: err.error, error_description: err.description });
 */
export function dpopChallenge(error?: { readonly error: string; readonly description: string }): string {
  const algs = `DPoP algs="${JOSE_ALGORITHMS.join(' ')}"`;
  if (!error) return algs;
  const quoted = (value: string) => value.replace(/"/g, "'").replace(/\\/g, '/').replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '?');
  return `${algs}, error="${quoted(error.error)}", error_description="${quoted(error.description)}"`;
}

// What an API does with a token it refused: the caller, not the API, gets a new token (RFC 6750 §3.1).
const REFUSE_TOKEN = 'Answer 401 with WWW-Authenticate: Bearer error="invalid_token"; the caller must present a valid access token.';
const REFUSE_SCOPE = 'Answer 403 with WWW-Authenticate: Bearer error="insufficient_scope" and scope set to err.scope.';
const REFUSE_PROOF = 'Answer 401 with WWW-Authenticate: dpopChallenge(err); the caller must send a fresh DPoP proof for this request, signed with the key the token is bound to.';
const REFUSE_SIGN_IN = 'Answer 401 with WWW-Authenticate set to stepUpChallenge(err): the caller must have the customer sign in again with err.acrValues and err.maxAge.';

/** A requirement's `acr` values and `maxAge`; a malformed one is the calling code's mistake (TypeError). */
function checkAuthenticationRequirement(acrValues: readonly string[], maxAge: number | undefined): void {
  for (const value of acrValues) {
    if (typeof value !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(value)) throw new TypeError('acr must be values of printable ASCII without spaces, double quotes or backslashes');
  }
  if (maxAge !== undefined && (!Number.isSafeInteger(maxAge) || maxAge < 0)) throw new TypeError('maxAge must be a whole number of seconds from 0');
}

/**
 * The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1),
 * or `undefined` when the header is missing or of another scheme.
 */
export function bearerToken(authorization: string | null | undefined): string | undefined {
  const match = authorization ? /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(authorization) : null;
  return match?.[1];
}

/** One `POST /introspect`: the verified token, or `InvalidToken` when Connect says inactive. */
async function introspect(options: ResolvedOptions, token: string): Promise<VerifiedToken> {
  const endpoint = `${options.authUrl}/introspect`;
  // The resource server's own client authentication (secret or private_key_jwt); no DPoP proof: it presents no token of its own.
  const answer = await postForm(options, '/introspect', { token, token_type_hint: 'access_token' });
  const claims = answer.body;
  const invalid = () => new InvalidResponse('the introspection answer is not RFC 7662 JSON with the claims of an access token', { status: answer.status, endpoint: `POST ${endpoint}` });
  if (claims.active === false) throw new InvalidToken('the access token is not active: expired, revoked, replaced or not issued by Connect', { hint: REFUSE_TOKEN });
  if (claims.active !== true) throw invalid();
  // RFC 7662 §2.2: an active token that is not an access token (a refresh token) is no bearer credential for an API.
  const tokenType = typeof claims.token_type === 'string' ? claims.token_type.toLowerCase() : undefined;
  if (tokenType !== 'bearer' && tokenType !== 'dpop') throw new InvalidToken('the token is not an access token', { hint: REFUSE_TOKEN });
  const { client_id: clientId, sub, iss, aud, jti, iat, exp, sid, scope, cnf } = claims;
  const jkt = (cnf as { jkt?: unknown } | undefined)?.jkt;
  const wellFormed =
    isText(clientId) &&
    isText(sub) &&
    isText(iss) &&
    isText(jti) &&
    isSeconds(iat) &&
    isSeconds(exp) &&
    (aud === undefined || isText(aud)) &&
    (sid === undefined || isText(sid)) &&
    (scope === undefined || typeof scope === 'string') &&
    (cnf === undefined || (typeof cnf === 'object' && cnf !== null && (jkt === undefined || isText(jkt))));
  if (!wellFormed) throw invalid();
  const scopes = grantedScopes(scope as string | undefined);
  const base = { clientId, issuer: iss, audience: aud as string | undefined, tokenId: jti, issuedAt: iat, expiresAt: exp, scopes, jkt: jkt as string | undefined, claims };
  // A customer access token belongs to a token session; a client access token's subject is the client itself.
  if (typeof sid === 'string') return { kind: 'customer', ...base, profileId: sub, sessionId: sid, authentication: authenticationOf(claims) };
  if (sub !== clientId) throw invalid();
  return { kind: 'client', ...base };
}

/** The sign-in of an introspection answer: all of `acr`, `amr` and `auth_time` well formed, or `null`. */
function authenticationOf(claims: Record<string, unknown>): CustomerAuthentication | null {
  const { acr, amr, auth_time: authTime } = claims;
  if (!isText(acr) || !Array.isArray(amr) || !amr.every(isText) || !isSeconds(authTime)) return null;
  return { acr, amr: [...amr], authTime };
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function isSeconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
