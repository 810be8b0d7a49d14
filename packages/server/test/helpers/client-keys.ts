import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { ClientProfile } from '../../src/core/clients/client.js';
import { form, TEST_AUTH_URL, type TestApp } from './build.js';
import type { DpopKey } from './dpop.js';
import { postToken } from './wire.js';

/** `client_assertion_type` of `private_key_jwt` (RFC 7523 §2.2). */
export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** A client with a registered ES256 key, and what signs its assertions. */
export interface KeyedClient {
  readonly id: string;
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

/**
 * Registers a new ES256 public key for client `id` through the store, with
 * `profile` (a `fapi2` client keeps no secret: its hash is cleared too).
 */
export async function keyClient(t: TestApp, id: string, profile: ClientProfile = 'standard'): Promise<KeyedClient> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = randomUUID();
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'ES256' };
  await t.storage.clients.updateClient(
    id,
    { jwks: { keys: [publicJwk] }, profile, ...(profile === 'fapi2' ? { secretHash: '', previousSecretHash: null, previousSecretExpiresAt: null, requirePkce: true } : {}) },
    t.clock.nowSeconds(),
  );
  return { id, kid, privateKey, publicJwk };
}

/** A client assertion of `client` for Connect's issuer, valid 60 s from the app's clock, a fresh `jti`; `claims` override. */
export function signAssertion(t: Pick<TestApp, 'clock'>, client: KeyedClient, claims: JWTPayload = {}, audience = TEST_AUTH_URL): Promise<string> {
  const now = t.clock.nowSeconds();
  return new SignJWT({ iss: client.id, sub: client.id, aud: audience, iat: now, exp: now + 60, jti: randomUUID(), ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: client.kid })
    .sign(client.privateKey);
}

/** The form fields that authenticate `client` by `private_key_jwt` (a new assertion each call). */
export async function assertionFields(t: Pick<TestApp, 'clock'>, client: KeyedClient, audience?: string): Promise<Record<string, string>> {
  return { client_id: client.id, client_assertion_type: ASSERTION_TYPE, client_assertion: await signAssertion(t, client, {}, audience) };
}

/**
 * `POST /token` of a FAPI 2.0 client as it must send it: `params`
 * authenticated by a new client assertion, a DPoP proof of `key`, and,
 * when Connect answers `use_dpop_nonce`, once more with the nonce it gave.
 */
export async function fapiTokenRequest(
  t: Pick<TestApp, 'clock'>,
  app: FastifyInstance,
  client: KeyedClient,
  key: DpopKey,
  params: Record<string, string>,
): Promise<LightMyRequestResponse> {
  const send = async (nonce?: string) =>
    postToken(app, {
      body: form({ ...params, ...(await assertionFields(t, client)) }),
      headers: { dpop: await key.proof({ htm: 'POST', htu: `${TEST_AUTH_URL}/token`, iat: t.clock.nowSeconds(), ...(nonce === undefined ? {} : { nonce }) }) },
    });
  const first = await send();
  const nonce = first.headers['dpop-nonce'];
  return first.statusCode === 400 && first.json<{ error?: string }>().error === 'use_dpop_nonce' && typeof nonce === 'string' ? send(nonce) : first;
}
