import { randomBytes } from 'node:crypto';
import { compactDecrypt, decodeProtectedHeader, generateKeyPair, jwtDecrypt, jwtVerify, type CryptoKey } from 'jose';
import { describe, expect, it } from 'vitest';
import { encryptJwt, signJwt } from '../../../src/core/tokens/jwt.js';

const CLAIMS = { iss: 'https://auth.connect.test', sub: 'cid_sandbox_acme', aud: 'https://api.connect.test', iat: 1_790_000_000, exp: 1_790_003_600, jti: 'j1', client_id: 'cid_sandbox_acme' };

async function es256(): Promise<{ privateKey: CryptoKey; publicKey: CryptoKey }> {
  return generateKeyPair('ES256');
}

async function aes256(): Promise<CryptoKey> {
  return (await globalThis.crypto.subtle.importKey('raw', randomBytes(32), { name: 'AES-GCM' }, false, ['encrypt', 'decrypt'])) as CryptoKey;
}

describe('signJwt', () => {
  it('makes a compact JWS that jose verifies, with exactly the given header and claims', async () => {
    const { privateKey, publicKey } = await es256();
    const token = await signJwt(CLAIMS, { alg: 'ES256', typ: 'at+jwt', kid: 'k1' }, privateKey);
    const { payload, protectedHeader } = await jwtVerify(token, publicKey, { typ: 'at+jwt', currentDate: new Date(1_790_000_001_000) });
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: 'k1' });
    expect(payload).toEqual(CLAIMS);
  });

  it('signs with the key it is given, not another', async () => {
    const { privateKey } = await es256();
    const other = await es256();
    const token = await signJwt(CLAIMS, { alg: 'ES256', typ: 'at+jwt', kid: 'k1' }, privateKey);
    await expect(jwtVerify(token, other.publicKey, { currentDate: new Date(1_790_000_001_000) })).rejects.toThrow(/signature/);
  });

  it.each([
    ['iat', Number.NaN],
    ['exp', Number.POSITIVE_INFINITY],
    ['exp', 1_790_003_600.5],
    ['nbf', -0.1],
  ])('refuses a %s of %s: a NumericDate is whole seconds', async (claim, value) => {
    const { privateKey } = await es256();
    await expect(signJwt({ ...CLAIMS, [claim]: value }, { alg: 'ES256', typ: 'at+jwt', kid: 'k1' }, privateKey)).rejects.toThrow(
      `JWT claim ${claim} must be whole seconds`,
    );
  });
});

describe('encryptJwt', () => {
  it('makes a compact JWE (dir, A256GCM) that only its key opens, with the given header and claims', async () => {
    const key = await aes256();
    const header = { alg: 'dir', enc: 'A256GCM', kid: 'e1', typ: 'at+jwt' };
    const token = await encryptJwt({ ...CLAIMS, sid: 's1' }, header, key);
    expect(token.split('.')).toHaveLength(5);
    expect(decodeProtectedHeader(token)).toEqual(header);
    const { payload } = await jwtDecrypt(token, key, { currentDate: new Date(1_790_000_001_000) });
    expect(payload).toEqual({ ...CLAIMS, sid: 's1' });
    await expect(compactDecrypt(token, await aes256())).rejects.toThrow();
  });

  it('refuses a claim time that is not whole seconds', async () => {
    await expect(encryptJwt({ ...CLAIMS, iat: 0.5 }, { alg: 'dir', enc: 'A256GCM' }, await aes256())).rejects.toThrow('JWT claim iat must be whole seconds');
  });
});
