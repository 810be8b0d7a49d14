import { createHmac, createPublicKey, generateKeyPairSync, randomBytes, randomUUID, sign, verify, type JsonWebKeyInput, type KeyObject } from 'node:crypto';
import { CompactEncrypt, decodeJwt, decodeProtectedHeader, EncryptJWT, exportJWK, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/build.js';
import { TEST_AUTH_URL } from '../../helpers/build.js';
import {
  accessClaims,
  encryptWithServerKey,
  expectInactive,
  expectInvalidToken,
  expectNoLeak,
  expectRefreshed,
  expectTokensBody,
  getProfile,
  introspect,
  lifecycle,
  postTokens,
  refreshAtToken,
  signWithServerKey,
  type Response,
} from '../../helpers/token-session.js';
import { expectOAuthError, obtainToken } from '../../helpers/wire.js';

interface Forgery {
  readonly name: string;
  readonly token: string;
}

const b64 = (value: string | Buffer | Uint8Array) => Buffer.from(value).toString('base64url');
const json = (value: object) => b64(JSON.stringify(value));
const segments = (token: string) => token.split('.');

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * The token with one character changed so that the bytes it stands for
 * change too: the top bit of its 6-bit group is flipped (the low bits of a
 * segment's last character may be padding that decoders ignore).
 */
function flipAt(token: string, index: number): string {
  const value = ALPHABET.indexOf(token[index] ?? '');
  return `${token.slice(0, index)}${ALPHABET[value ^ 32]}${token.slice(index + 1)}`;
}

/** Every single-character change of a token, one per position (dots excepted). */
function everyFlip(token: string): Forgery[] {
  return [...token].flatMap((char, index) => (char === '.' ? [] : [{ name: `character ${index} flipped`, token: flipAt(token, index) }]));
}

function truncations(token: string): Forgery[] {
  const parts = segments(token);
  return [
    { name: 'the last character cut', token: token.slice(0, -1) },
    { name: 'the last segment cut', token: parts.slice(0, -1).join('.') },
    { name: 'the last segment emptied', token: `${parts.slice(0, -1).join('.')}.` },
    { name: 'cut in half', token: token.slice(0, Math.floor(token.length / 2)) },
    { name: 'one segment only', token: parts[0] ?? '' },
    { name: 'a segment doubled', token: `${token}.${parts.at(-1) ?? ''}` },
  ];
}

/** Signs `header.payload` with an ES256 node key, in the JOSE form (or DER). */
function es256(key: KeyObject, header: object, payload: object): string {
  const input = `${json(header)}.${json(payload)}`;
  return `${input}.${b64(sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }))}`;
}

/** Signs with the server's own (non-extractable) signing key, through WebCrypto, whatever the header says. */
async function es256WithServerKey(t: TestApp, header: object, payload: object): Promise<string> {
  const input = `${json(header)}.${json(payload)}`;
  const signature = await globalThis.crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, t.keyRing.signingKey().key, Buffer.from(input));
  return `${input}.${b64(Buffer.from(signature))}`;
}

/** An ES256 signature (r and s, 32 bytes each) in DER instead: a SEQUENCE of two INTEGERs, as OpenSSL writes it. */
function derSignature(rs: Buffer): Buffer {
  const integer = (big: Buffer) => {
    let bytes = big;
    while (bytes.length > 1 && bytes[0] === 0 && ((bytes[1] as number) & 0x80) === 0) bytes = bytes.subarray(1);
    if (((bytes[0] as number) & 0x80) !== 0) bytes = Buffer.concat([Buffer.from([0]), bytes]);
    return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
  };
  const body = Buffer.concat([integer(rs.subarray(0, 32)), integer(rs.subarray(32))]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

function hs256(secret: string | Buffer, header: object, payload: object): string {
  const input = `${json(header)}.${json(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** Forgeries of a JWS made by `t` (a client access token or a refresh token). */
async function jwsForgeries(t: TestApp, real: string): Promise<Forgery[]> {
  const header = decodeProtectedHeader(real) as { alg: string; typ: string; kid: string };
  const claims = decodeJwt(real);
  const [h, p, sig] = segments(real) as [string, string, string];
  const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const attackerJwk = await exportJWK(attacker.publicKey);
  const serverPublicJwk = t.keyRing.jwks().keys.find((k) => k.kid === header.kid);
  const serverPublic = createPublicKey({ key: serverPublicJwk as JsonWebKeyInput['key'], format: 'jwk' });
  const serverPublicPem = serverPublic.export({ type: 'spki', format: 'pem' }).toString();
  const der = derSignature(Buffer.from(sig, 'base64url'));
  // The real signature indeed, only in DER: OpenSSL verifies it so.
  expect(verify('sha256', Buffer.from(`${h}.${p}`), { key: serverPublic, dsaEncoding: 'der' }, der)).toBe(true);
  const future = { ...claims, exp: (claims.exp ?? 0) + 10 * 365 * 86_400 };
  const otherTyp = header.typ === 'at+jwt' ? 'rt+jwt' : 'at+jwt';
  return [
    ...truncations(real),
    ...everyFlip(real),
    { name: 're-signed with another ES256 key, same kid and claims', token: es256(attacker.privateKey, header, claims) },
    { name: 're-signed with another ES256 key and a later exp', token: es256(attacker.privateKey, header, future) },
    { name: 'signed by another key that it embeds (jwk header)', token: es256(attacker.privateKey, { ...header, jwk: attackerJwk }, claims) },
    { name: 'alg none, no signature', token: `${json({ ...header, alg: 'none' })}.${p}.` },
    { name: 'alg none, the original signature kept', token: `${json({ ...header, alg: 'none' })}.${p}.${sig}` },
    { name: 'alg none without kid', token: `${json({ alg: 'none', typ: header.typ })}.${p}.` },
    { name: 'alg NONE', token: `${json({ ...header, alg: 'NONE' })}.${p}.` },
    { name: 'HS256 keyed with the public JWK', token: hs256(JSON.stringify(serverPublicJwk), { ...header, alg: 'HS256' }, claims) },
    { name: 'HS256 keyed with the public key PEM', token: hs256(serverPublicPem, { ...header, alg: 'HS256' }, claims) },
    { name: 'the real signature in DER encoding', token: `${h}.${p}.${b64(der)}` },
    { name: 'the header swapped for one without typ (signature kept)', token: `${json({ alg: header.alg, kid: header.kid })}.${p}.${sig}` },
    { name: 'the claims swapped (signature kept)', token: `${h}.${json(future)}.${sig}` },
    { name: 'typ changed to JWT (server key)', token: await signWithServerKey(t, { typ: 'JWT' }, claims) },
    { name: 'typ removed (server key)', token: await signWithServerKey(t, { typ: '' }, claims) },
    { name: `typ changed to ${otherTyp} (server key)`, token: await signWithServerKey(t, { typ: otherTyp }, claims) },
    { name: 'an unknown critical header (server key)', token: await es256WithServerKey(t, { ...header, crit: ['x-connect'], 'x-connect': 1 }, claims) },
    { name: 'a kid that names no key', token: es256(attacker.privateKey, { ...header, kid: "' OR 1=1 --" }, claims) },
    { name: 'a kid that is a path', token: es256(attacker.privateKey, { ...header, kid: '../../../../etc/passwd' }, claims) },
    { name: 'another issuer (server key)', token: await signWithServerKey(t, { typ: header.typ }, { ...claims, iss: 'https://evil.example' }) },
    { name: 'another audience (server key)', token: await signWithServerKey(t, { typ: header.typ }, { ...claims, aud: 'https://evil.example' }) },
    { name: 'no exp (server key)', token: await signWithServerKey(t, { typ: header.typ }, { ...claims, exp: undefined }) },
    { name: 'no jti (server key)', token: await signWithServerKey(t, { typ: header.typ }, { ...claims, jti: undefined }) },
    { name: 'already expired (server key)', token: await signWithServerKey(t, { typ: header.typ }, { ...claims, exp: (claims.iat ?? 0) - 1 }) },
    { name: 'a 10 KB claim (server key)', token: await signWithServerKey(t, { typ: header.typ }, { ...claims, pad: 'x'.repeat(10_240) }) },
  ];
}

/** Forgeries of a customer access token (a JWE) made by `t`. */
async function jweForgeries(t: TestApp, real: string): Promise<Forgery[]> {
  const claims = (await accessClaims(t, real)) as JWTPayload;
  const header = decodeProtectedHeader(real) as { kid: string; typ: string };
  const plaintext = new TextEncoder().encode(JSON.stringify(claims));
  const otherKey = randomBytes(32);
  return [
    ...truncations(real),
    ...everyFlip(real),
    { name: 'encrypted with another 32-byte key, same kid and claims', token: await new EncryptJWT(claims).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: header.kid, typ: 'at+jwt' }).encrypt(otherKey) },
    { name: 'encrypted with a 16-byte key (A128GCM)', token: await new EncryptJWT(claims).setProtectedHeader({ alg: 'dir', enc: 'A128GCM', kid: header.kid, typ: 'at+jwt' }).encrypt(randomBytes(16)) },
    { name: 'key-wrapped (A256KW) with another key', token: await new EncryptJWT(claims).setProtectedHeader({ alg: 'A256KW', enc: 'A256GCM', kid: header.kid, typ: 'at+jwt' }).encrypt(otherKey) },
    {
      name: 'PBES2 with a huge iteration count',
      token: await new CompactEncrypt(plaintext)
        .setProtectedHeader({ alg: 'PBES2-HS256+A128KW', enc: 'A256GCM', kid: header.kid, typ: 'at+jwt' })
        .setKeyManagementParameters({ p2c: 1000, p2s: randomBytes(16) })
        .encrypt(new TextEncoder().encode('password'))
        .then((token) => {
          const [h, ...rest] = segments(token);
          const decoded = JSON.parse(Buffer.from(h ?? '', 'base64url').toString()) as Record<string, unknown>;
          return [json({ ...decoded, p2c: 2_000_000_000 }), ...rest].join('.');
        }),
    },
    { name: 'compressed (zip DEF header)', token: [json({ alg: 'dir', enc: 'A256GCM', kid: header.kid, typ: 'at+jwt', zip: 'DEF' }), ...segments(real).slice(1)].join('.') },
    { name: 'alg none', token: [json({ alg: 'none', enc: 'A256GCM', kid: header.kid }), ...segments(real).slice(1)].join('.') },
    { name: 'typ changed to JWT (server key)', token: await encryptWithServerKey(t, { typ: 'JWT' }, claims) },
    { name: 'typ rt+jwt (server key)', token: await encryptWithServerKey(t, { typ: 'rt+jwt' }, claims) },
    { name: 'without typ (server key)', token: await encryptWithServerKey(t, {}, claims) },
    { name: 'a kid that names no key', token: await new EncryptJWT(claims).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: 'nope', typ: 'at+jwt' }).encrypt(otherKey) },
    { name: 'without sid (server key)', token: await encryptWithServerKey(t, { typ: 'at+jwt' }, { ...claims, sid: undefined }) },
    { name: 'another audience (server key)', token: await encryptWithServerKey(t, { typ: 'at+jwt' }, { ...claims, aud: TEST_AUTH_URL }) },
    { name: 'another issuer (server key)', token: await encryptWithServerKey(t, { typ: 'at+jwt' }, { ...claims, iss: 'https://evil.example' }) },
    { name: 'already expired (server key)', token: await encryptWithServerKey(t, { typ: 'at+jwt' }, { ...claims, exp: (claims.iat ?? 0) - 1 }) },
    { name: 'no exp (server key)', token: await encryptWithServerKey(t, { typ: 'at+jwt' }, { ...claims, exp: undefined }) },
  ];
}

/** Every forged token is refused the contract's way, never with a 5xx or internals. */
async function expectAllRefused(forgeries: readonly Forgery[], attempt: (token: string) => Promise<Response>, check: (res: Response) => void): Promise<void> {
  const failures: string[] = [];
  for (const forgery of forgeries) {
    const res = await attempt(forgery.token);
    try {
      expectNoLeak(res);
      check(res);
    } catch (error) {
      failures.push(`${forgery.name}: ${res.statusCode} ${res.body.slice(0, 200)} (${(error as Error).message.split('\n')[0]})`);
    }
  }
  expect(failures).toEqual([]);
}

/** An app with a customer session and a client access token. */
async function setup() {
  const s = await lifecycle();
  return { s, bearer: await obtainToken(s.t, s.client) };
}

/** A second server, with another master key, a client, a customer session and a client access token of its own. */
async function otherServer() {
  const foreign = await lifecycle();
  return { foreign, foreignBearer: await obtainToken(foreign.t, foreign.client) };
}

describe('forged and damaged tokens', () => {
  it('client access tokens at POST /tokens → 401 invalid_token, the reference echoed', async () => {
    const { s, bearer } = await setup();
    const { foreignBearer } = await otherServer();
    const forgeries = [...(await jwsForgeries(s.t, bearer)), { name: 'a token of another server', token: foreignBearer }];
    const reference = randomUUID();
    await expectAllRefused(
      forgeries,
      (token) => postTokens(s.t.app, { bearer: token, reference, body: { refreshToken: s.tokens.refreshToken } }),
      (res) => {
        expectInvalidToken(res);
        expect(res.headers['request-reference-no']).toBe(reference);
      },
    );
    expectTokensBody(await postTokens(s.t.app, { bearer, body: { refreshToken: s.tokens.refreshToken } }));
  });

  it('client access tokens at POST /introspect → {"active":false}', async () => {
    const { s, bearer } = await setup();
    const { foreignBearer } = await otherServer();
    const forgeries = [...(await jwsForgeries(s.t, bearer)).filter((_, i) => i % 7 === 0), { name: 'a token of another server', token: foreignBearer }];
    await expectAllRefused(forgeries, (token) => introspect(s.t.app, s.client, token), expectInactive);
  });

  it('customer access tokens at GET /customer/profile → 401 invalid_token', async () => {
    const { s } = await setup();
    const { foreign } = await otherServer();
    const { accessToken } = await s.newSession();
    const forgeries = [...(await jweForgeries(s.t, accessToken)), { name: 'a token of another server', token: foreign.tokens.accessToken }];
    await expectAllRefused(forgeries, (token) => getProfile(s.t.app, token), (res) => expectInvalidToken(res));
    expect((await getProfile(s.t.app, accessToken)).statusCode).toBe(200);
  });

  it('a well-made customer access token for a session that does not exist → 401', async () => {
    const { s } = await setup();
    const claims = await accessClaims(s.t, (await s.newSession()).accessToken);
    const token = await encryptWithServerKey(s.t, { typ: 'at+jwt' }, { ...claims, sid: randomBytes(16).toString('base64url') });
    expectInvalidToken(await getProfile(s.t.app, token), 'the access token has been replaced or revoked');
    expectInactive(await introspect(s.t.app, s.client, token));
  });

  it('a well-made customer access token naming another customer or client than its session → 401', async () => {
    const { s } = await setup();
    const claims = await accessClaims(s.t, (await s.newSession()).accessToken);
    const other = await s.addClient();
    for (const changed of [{ sub: '999999999999' }, { client_id: other.id }]) {
      const token = await encryptWithServerKey(s.t, { typ: 'at+jwt' }, { ...claims, ...changed });
      expectInvalidToken(await getProfile(s.t.app, token), 'the access token has been replaced or revoked');
    }
  });

  it('customer access tokens at POST /introspect → {"active":false}', async () => {
    const { s } = await setup();
    const { foreign } = await otherServer();
    const { accessToken } = await s.newSession();
    const forgeries = [...(await jweForgeries(s.t, accessToken)).filter((_, i) => i % 7 === 0), { name: 'a token of another server', token: foreign.tokens.accessToken }];
    await expectAllRefused(forgeries, (token) => introspect(s.t.app, s.client, token), expectInactive);
  });

  it('refresh tokens at POST /token → 400 invalid_grant', async () => {
    const { s } = await setup();
    const { foreign } = await otherServer();
    const { refreshToken } = await s.newSession();
    const forgeries = [...(await jwsForgeries(s.t, refreshToken)), { name: 'a token of another server', token: foreign.tokens.refreshToken }];
    await expectAllRefused(forgeries, (token) => refreshAtToken(s.t.app, s.client, token), (res) => {
      expectOAuthError(res, { status: 400, error: 'invalid_grant' });
    });
    expectRefreshed(await refreshAtToken(s.t.app, s.client, refreshToken));
  });

  it('refresh tokens at POST /tokens → 400 invalid_grant, at /introspect → {"active":false}', async () => {
    const { s, bearer } = await setup();
    const { foreign } = await otherServer();
    const { refreshToken } = await s.newSession();
    const forgeries = [...(await jwsForgeries(s.t, refreshToken)).filter((_, i) => i % 5 === 0), { name: 'a token of another server', token: foreign.tokens.refreshToken }];
    await expectAllRefused(forgeries, (token) => postTokens(s.t.app, { bearer, body: { refreshToken: token } }), (res) => {
      expectOAuthError(res, { status: 400, error: 'invalid_grant' });
    });
    await expectAllRefused(forgeries, (token) => introspect(s.t.app, s.client, token), expectInactive);
  });

  it('a refresh token re-typed as a client access token for the base URL, with the server key → refused as a bearer (sub is not the client)', async () => {
    const { s } = await setup();
    const claims = decodeJwt(s.tokens.refreshToken);
    const token = await signWithServerKey(s.t, { typ: 'at+jwt' }, { ...claims, aud: 'https://api.connect.test' });
    expectInvalidToken(await postTokens(s.t.app, { bearer: token, body: { refreshToken: s.tokens.refreshToken } }));
  });

  it('a client access token re-typed as a refresh token, with the server key → invalid_grant (no such session)', async () => {
    const { s, bearer } = await setup();
    const claims = decodeJwt(bearer);
    const token = await signWithServerKey(s.t, { typ: 'rt+jwt' }, { ...claims, aud: TEST_AUTH_URL, sid: 'x'.repeat(22) });
    expectOAuthError(await refreshAtToken(s.t.app, s.client, token), { status: 400, error: 'invalid_grant', description: 'refresh token is invalid' });
  });

  it('the other server’s tokens are refused even for the other server’s own client ID', async () => {
    const { s } = await setup();
    const { foreign } = await otherServer();
    // A client of the other server authenticates nowhere here.
    expectOAuthError(await refreshAtToken(s.t.app, foreign.client, foreign.tokens.refreshToken), { status: 401, error: 'invalid_client' });
    expectInvalidToken(await getProfile(s.t.app, foreign.tokens.accessToken), 'the access token is invalid or expired');
  });
});

describe('oversized input', () => {
  it('a 10 KB Authorization header → the contract’s 401 at /tokens, /customer/profile and /introspect', async () => {
    const s = await lifecycle();
    const huge = `Bearer ${'A'.repeat(10 * 1024)}`;
    const reference = randomUUID();
    const tokens = await postTokens(s.t.app, { authorization: huge, reference, body: { refreshToken: s.tokens.refreshToken } });
    expectInvalidToken(tokens, 'the access token is invalid or expired');
    expect(tokens.headers['request-reference-no']).toBe(reference);
    expectNoLeak(tokens);
    const profile = await getProfile(s.t.app, undefined, huge);
    expectInvalidToken(profile, 'the access token is invalid or expired');
    expectNoLeak(profile);
    const res = await s.t.app.inject({
      method: 'POST',
      url: '/introspect',
      headers: { authorization: `Basic ${'QUJD'.repeat(2560)}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${s.tokens.accessToken}`,
    });
    expectOAuthError(res, { status: 401, error: 'invalid_client' });
    expectNoLeak(res);
  });

  it.each([16 * 1024 + 1, 64 * 1024, 1024 * 1024])('a JSON body of %i bytes at /tokens → 413 invalid_request, the reference echoed', async (size) => {
    const s = await lifecycle();
    const bearer = await obtainToken(s.t, s.client);
    const prefix = `{"refreshToken":"${s.tokens.refreshToken}","pad":"`;
    const body = `${prefix}${'a'.repeat(size - prefix.length - 2)}"}`;
    expect(Buffer.byteLength(body)).toBe(size);
    const reference = randomUUID();
    const res = await postTokens(s.t.app, { bearer, reference, body });
    expectOAuthError(res, { status: 413, error: 'invalid_request', description: 'request body is too large' });
    expect(res.headers['request-reference-no']).toBe(reference);
    expectNoLeak(res);
    // Nothing was refreshed, and the reference is still free.
    expectTokensBody(await postTokens(s.t.app, { bearer, reference, body: { refreshToken: s.tokens.refreshToken } }), reference);
  });

  it('a body of exactly 16 KiB at /tokens is read', async () => {
    const s = await lifecycle();
    const bearer = await obtainToken(s.t, s.client);
    const prefix = `{"refreshToken":"${s.tokens.refreshToken}","pad":"`;
    const body = `${prefix}${'a'.repeat(16 * 1024 - prefix.length - 2)}"}`;
    expectTokensBody(await postTokens(s.t.app, { bearer, body }));
  });

  it.each(['/introspect', '/revoke'])('a form body over 16 KiB at %s → 413', async (url) => {
    const s = await lifecycle();
    const res = await s.t.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${'a'.repeat(16 * 1024)}&client_id=${s.client.id}&client_secret=${s.client.secret}`,
    });
    expectOAuthError(res, { status: 413, error: 'invalid_request' });
    expectNoLeak(res);
  });

  it.each<[string, string]>([
    ['deeply nested JSON', `${'['.repeat(4000)}${']'.repeat(4000)}`],
    ['__proto__ carrying refreshToken', '{"__proto__":{"refreshToken":"x"}}'],
    ['constructor.prototype carrying refreshToken', '{"constructor":{"prototype":{"refreshToken":"x"}}}'],
    ['a lone surrogate', '{"refreshToken":"\\ud800"}'],
  ])('%s at /tokens → 400, never a 5xx', async (_name, body) => {
    const s = await lifecycle();
    const bearer = await obtainToken(s.t, s.client);
    const res = await postTokens(s.t.app, { bearer, body });
    expectNoLeak(res);
    expect(res.statusCode).toBe(400);
    expect(['invalid_request', 'invalid_grant']).toContain(res.json<{ error: string }>().error);
  });
});
