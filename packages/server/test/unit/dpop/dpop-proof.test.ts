import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/core/clock.js';
import { createDpopNonces, DPOP_NONCE_SLOT_SECONDS } from '../../../src/core/dpop/dpop-nonce.js';
import { DPOP_IAT_WINDOW_SECONDS, verifyDpopProof, type DpopProofRequest } from '../../../src/core/dpop/dpop-proof.js';
import { normalizeHtu } from '../../../src/core/dpop/htu.js';
import { InvalidDpopProof, UseDpopNonce } from '../../../src/core/errors.js';
import type { ReplayKind, ReplayStore } from '../../../src/core/replay/replay-store.js';
import { dpopKey, hs256Proof, unsecuredProof, type DpopKey, type ProofRequest } from '../../helpers/dpop.js';

const T0 = 1_767_225_600;
const URL = 'https://auth.connect.test/token';
const TOKEN = 'access-token-value';

/** The replay store as `used_jtis` keeps it: a jti once until it expires. */
function memoryReplayStore(): Pick<ReplayStore, 'useJtiOnce'> {
  const used = new Map<string, number>();
  return {
    async useJtiOnce(kind: ReplayKind, hash: string, expiresAt: number, now: number) {
      const key = `${kind}:${hash}`;
      const until = used.get(key);
      if (until !== undefined && until > now) return false;
      used.set(key, expiresAt);
      return true;
    },
  };
}

function setup(nonceKey = randomBytes(32)) {
  const clock = fixedClock(T0);
  const nonces = createDpopNonces(nonceKey, clock);
  const deps = { clock, replay: memoryReplayStore(), nonces };
  const check = (proofs: string[], request: Partial<DpopProofRequest> = {}) =>
    verifyDpopProof({ proofs, method: 'POST', url: URL, requireNonce: false, at: 'token', ...request }, deps);
  return { clock, nonces, deps, check };
}

const base: ProofRequest = { htm: 'POST', htu: URL, iat: T0 };

type Case = {
  readonly name: string;
  readonly proofs: (key: DpopKey) => Promise<string[]>;
  readonly request?: Partial<DpopProofRequest>;
};

const refused: Case[] = [
  { name: 'no DPoP header', proofs: async () => [] },
  { name: 'two DPoP headers', proofs: async (k) => [await k.proof(base), await k.proof(base)] },
  { name: 'not a JWT', proofs: async () => ['not-a-proof'] },
  { name: 'no typ', proofs: async (k) => [await k.proof(base, { header: { typ: undefined } })] },
  { name: 'typ JWT', proofs: async (k) => [await k.proof(base, { header: { typ: 'JWT' } })] },
  { name: 'no jwk', proofs: async (k) => [await k.proof(base, { header: { jwk: undefined } })] },
  { name: 'a private key as jwk', proofs: async (k) => [await k.proof(base, { header: { jwk: k.privateJwk } })] },
  { name: 'another key as jwk than signed', proofs: async (k) => [await k.proof(base, { header: { jwk: (await dpopKey()).publicJwk } })] },
  // Keys WebCrypto cannot import (it throws a DOMException, not a jose error).
  { name: 'a jwk whose x and y are no point on P-256', proofs: async (k) => [await k.proof(base, { header: { jwk: { kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'BBBB' } } })] },
  { name: 'a jwk on P-384 for ES256', proofs: async (k) => [await k.proof(base, { header: { jwk: { ...k.publicJwk, crv: 'P-384' } } })] },
  { name: 'a jwk on secp256k1', proofs: async (k) => [await k.proof(base, { header: { jwk: { ...k.publicJwk, crv: 'secp256k1' } } })] },
  {
    name: 'an Ed25519 jwk with a short x',
    proofs: async () => {
      const ed = await dpopKey('EdDSA');
      return [await ed.proof(base, { header: { jwk: { ...ed.publicJwk, x: 'AAAA' } } })];
    },
  },
  { name: 'alg none', proofs: async (k) => [unsecuredProof(k.publicJwk, base)] },
  { name: 'HS256', proofs: async (k) => [await hs256Proof(k.publicJwk, base)] },
  { name: 'no jti', proofs: async (k) => [await k.proof(base, { claims: { jti: undefined } })] },
  { name: 'no htm', proofs: async (k) => [await k.proof(base, { claims: { htm: undefined } })] },
  { name: 'htm GET for a POST', proofs: async (k) => [await k.proof({ ...base, htm: 'GET' })] },
  { name: 'htm post (case matters)', proofs: async (k) => [await k.proof({ ...base, htm: 'post' })] },
  { name: 'no htu', proofs: async (k) => [await k.proof(base, { claims: { htu: undefined } })] },
  { name: 'htu of another path', proofs: async (k) => [await k.proof({ ...base, htu: 'https://auth.connect.test/introspect' })] },
  { name: 'htu of another host', proofs: async (k) => [await k.proof({ ...base, htu: 'https://evil.example/token' })] },
  { name: 'htu with http instead of https', proofs: async (k) => [await k.proof({ ...base, htu: 'http://auth.connect.test/token' })] },
  { name: 'htu with another port', proofs: async (k) => [await k.proof({ ...base, htu: 'https://auth.connect.test:8443/token' })] },
  { name: 'no iat', proofs: async (k) => [await k.proof(base, { claims: { iat: undefined } })] },
  { name: 'iat too old', proofs: async (k) => [await k.proof({ ...base, iat: T0 - DPOP_IAT_WINDOW_SECONDS - 1 })] },
  { name: 'iat in the future', proofs: async (k) => [await k.proof({ ...base, iat: T0 + DPOP_IAT_WINDOW_SECONDS + 1 })] },
  { name: 'no ath with an access token', proofs: async (k) => [await k.proof(base)], request: { accessToken: TOKEN } },
  { name: 'ath of another token', proofs: async (k) => [await k.proof({ ...base, accessToken: 'another' })], request: { accessToken: TOKEN } },
];

describe('verifyDpopProof', () => {
  it.each(refused)('refuses $name with invalid_dpop_proof', async ({ proofs, request }) => {
    const { check } = setup();
    const key = await dpopKey();
    await expect(check(await proofs(key), request)).rejects.toThrow(InvalidDpopProof);
  });

  it.each(['ES256', 'PS256', 'EdDSA'] as const)('accepts a good %s proof and returns its key thumbprint', async (alg) => {
    const { check } = setup();
    const key = await dpopKey(alg);
    await expect(check([await key.proof(base)])).resolves.toEqual({ jkt: key.jkt });
  });

  it('accepts iat at either edge of the window', async () => {
    const { check } = setup();
    const key = await dpopKey();
    await expect(check([await key.proof({ ...base, iat: T0 - DPOP_IAT_WINDOW_SECONDS })])).resolves.toEqual({ jkt: key.jkt });
    await expect(check([await key.proof({ ...base, iat: T0 + DPOP_IAT_WINDOW_SECONDS })])).resolves.toEqual({ jkt: key.jkt });
  });

  it.each([
    'HTTPS://AUTH.CONNECT.TEST/token',
    'https://auth.connect.test:443/token',
    'https://auth.connect.test/token?x=1',
    'https://auth.connect.test/token#part',
  ])('accepts htu %s as the same URL (RFC 3986 §6 normalisation)', async (htu) => {
    const { check } = setup();
    const key = await dpopKey();
    await expect(check([await key.proof({ ...base, htu })])).resolves.toEqual({ jkt: key.jkt });
  });

  it('accepts the ath of the access token presented', async () => {
    const { check } = setup();
    const key = await dpopKey();
    await expect(check([await key.proof({ ...base, accessToken: TOKEN })], { accessToken: TOKEN })).resolves.toEqual({ jkt: key.jkt });
  });

  it('refuses a replayed jti, until it could no longer be accepted anyway', async () => {
    const { check, clock } = setup();
    const key = await dpopKey();
    const proof = await key.proof(base);
    await check([proof]);
    await expect(check([proof])).rejects.toThrow('the DPoP proof was used before');
    clock.advance(DPOP_IAT_WINDOW_SECONDS);
    await expect(check([proof])).rejects.toThrow('the DPoP proof was used before');
    clock.advance(1);
    await expect(check([proof])).rejects.toThrow('the iat of the DPoP proof');
  });

  it('does not spend the jti of a proof it refuses for another reason', async () => {
    const { check } = setup();
    const key = await dpopKey();
    const proof = await key.proof({ ...base, accessToken: TOKEN });
    await expect(check([proof], { accessToken: 'another' })).rejects.toThrow(InvalidDpopProof);
    await expect(check([proof], { accessToken: TOKEN })).resolves.toEqual({ jkt: key.jkt });
  });

  describe('nonces', () => {
    it('requires one when told: use_dpop_nonce with a fresh nonce', async () => {
      const { check, nonces } = setup();
      const key = await dpopKey();
      const error = await check([await key.proof(base)], { requireNonce: true }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UseDpopNonce);
      expect((error as UseDpopNonce).nonce).toBe(nonces.issue());
      expect((error as UseDpopNonce).status).toBe(400);
      await expect(check([await key.proof({ ...base, nonce: nonces.issue() })], { requireNonce: true })).resolves.toEqual({ jkt: key.jkt });
    });

    it('accepts the previous slot, refuses an older one (stale) and a made-up one', async () => {
      const { check, nonces, clock } = setup();
      const key = await dpopKey();
      const issued = nonces.issue();
      clock.advance(DPOP_NONCE_SLOT_SECONDS);
      await expect(check([await key.proof({ ...base, iat: clock.nowSeconds(), nonce: issued })], { requireNonce: true })).resolves.toEqual({ jkt: key.jkt });
      clock.advance(DPOP_NONCE_SLOT_SECONDS);
      await expect(check([await key.proof({ ...base, iat: clock.nowSeconds(), nonce: issued })], { requireNonce: true })).rejects.toThrow(UseDpopNonce);
      await expect(check([await key.proof({ ...base, iat: clock.nowSeconds(), nonce: 'made-up' })])).rejects.toThrow(UseDpopNonce);
    });

    it('accepts a nonce of another instance with the same key, refuses one of another key', async () => {
      const secret = randomBytes(32);
      const one = setup(secret);
      const other = createDpopNonces(secret, one.clock);
      const stranger = createDpopNonces(randomBytes(32), one.clock);
      const key = await dpopKey();
      await expect(one.check([await key.proof({ ...base, nonce: other.issue() })], { requireNonce: true })).resolves.toEqual({ jkt: key.jkt });
      await expect(one.check([await key.proof({ ...base, nonce: stranger.issue() })], { requireNonce: true })).rejects.toThrow(UseDpopNonce);
    });

    it('answers 401 for a protected resource', async () => {
      const { check } = setup();
      const key = await dpopKey();
      const error = await check([await key.proof(base)], { requireNonce: true, at: 'resource' }).catch((e: unknown) => e);
      expect(error).toMatchObject({ error: 'use_dpop_nonce', status: 401, atResource: true });
      const invalid = await check([], { at: 'resource' }).catch((e: unknown) => e);
      expect(invalid).toMatchObject({ error: 'invalid_dpop_proof', status: 401, atResource: true });
    });
  });
});

describe('normalizeHtu', () => {
  it.each([
    ['HTTPS://Auth.Example/token', 'https://auth.example/token'],
    ['https://auth.example:443/token?x#y', 'https://auth.example/token'],
    ['http://auth.example:80', 'http://auth.example/'],
    ['https://auth.example:8443/a/b', 'https://auth.example:8443/a/b'],
  ])('%s → %s', (url, normal) => {
    expect(normalizeHtu(url)).toBe(normal);
  });

  it.each(['ftp://auth.example/x', 'not a url', 'https://user:pw@auth.example/token'])('refuses %s', (url) => {
    expect(normalizeHtu(url)).toBeUndefined();
  });
});

