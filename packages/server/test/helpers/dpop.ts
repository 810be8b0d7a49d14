import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { base64url, calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/**
 * A client's DPoP key and the proofs it signs (RFC 9449 §4), for tests:
 * `proof()` makes a good proof for a request; options break one part.
 */
export interface DpopKey {
  readonly publicJwk: JWK;
  readonly privateJwk: JWK;
  /** SHA-256 JWK thumbprint (RFC 7638): `cnf.jkt` of the tokens it binds. */
  readonly jkt: string;
  proof(request: ProofRequest, options?: ProofOptions): Promise<string>;
}

/** The request a proof is for. */
export interface ProofRequest {
  readonly htm: string;
  readonly htu: string;
  /** Epoch seconds. */
  readonly iat: number;
  /** The access token presented with it (`ath`). */
  readonly accessToken?: string;
  readonly nonce?: string;
}

/** How to break a proof. */
export interface ProofOptions {
  /** Header members replaced (or removed when `undefined`). */
  readonly header?: Record<string, unknown>;
  /** Claims replaced (or removed when `undefined`). */
  readonly claims?: JWTPayload;
  /** Another algorithm to sign with (a key of that kind is made). */
  readonly alg?: 'PS256' | 'EdDSA';
}

/** `ath`: base64url(SHA-256(token)). */
export function accessTokenHash(token: string): string {
  return base64url.encode(createHash('sha256').update(token).digest());
}

/** A new ES256 (default), PS256 or EdDSA DPoP key. */
export async function dpopKey(alg: 'ES256' | 'PS256' | 'EdDSA' = 'ES256'): Promise<DpopKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const privateJwk = await exportJWK(privateKey);
  const jkt = await calculateJwkThumbprint(publicJwk, 'sha256');
  return {
    publicJwk,
    privateJwk,
    jkt,
    proof: (request, options = {}) => signProof(alg, privateKey, publicJwk, request, options),
  };
}

async function signProof(alg: string, key: CryptoKey, jwk: JWK, request: ProofRequest, options: ProofOptions): Promise<string> {
  const claims: JWTPayload = {
    jti: randomUUID(),
    htm: request.htm,
    htu: request.htu,
    iat: request.iat,
    ...(request.accessToken !== undefined ? { ath: accessTokenHash(request.accessToken) } : {}),
    ...(request.nonce !== undefined ? { nonce: request.nonce } : {}),
    ...options.claims,
  };
  const header: Record<string, unknown> = { alg, typ: 'dpop+jwt', jwk, ...options.header };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  for (const [name, value] of Object.entries(header)) if (value === undefined) delete header[name];
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key);
}

/** An unsecured JWT (`alg: none`) with a proof's claims: never accepted. */
export function unsecuredProof(jwk: JWK, request: ProofRequest): string {
  const part = (value: object) => base64url.encode(JSON.stringify(value));
  return `${part({ alg: 'none', typ: 'dpop+jwt', jwk })}.${part({ jti: randomUUID(), htm: request.htm, htu: request.htu, iat: request.iat })}.`;
}

/** A proof MACed with HS256 under a random secret (and a public `jwk` in the header): never accepted. */
export async function hs256Proof(jwk: JWK, request: ProofRequest): Promise<string> {
  return new SignJWT({ jti: randomUUID(), htm: request.htm, htu: request.htu, iat: request.iat })
    .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk })
    .sign(randomBytes(32));
}
