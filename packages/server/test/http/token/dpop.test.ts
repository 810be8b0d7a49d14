import { decodeJwt } from 'jose';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { basicAuth, build, form, T0, TEST_AUTH_URL, TEST_BASE_URL, type TestApp } from '../../helpers/build.js';
import { signedIn } from '../../helpers/builders.js';
import { addCustomer, authorizeParams, authorizeUrl, approveIfAsked, Browser, expectClientRedirect, expectErrorRedirect, exchangeCode, logIn, REDIRECT_URI } from '../../helpers/customer-flow.js';
import { assertionFields, keyClient } from '../../helpers/client-keys.js';
import { dpopKey, type DpopKey } from '../../helpers/dpop.js';
import { usePostgresInstances } from '../../helpers/instances.js';
import { noticePostgresSkipped, postgresAdminUrl } from '../../helpers/postgres.js';
import { accessClaims, introspect, postTokens, revoke } from '../../helpers/token-session.js';
import { expectOAuthError, postToken, type Credentials } from '../../helpers/wire.js';

const TOKEN_URL = `${TEST_AUTH_URL}/token`;
const PROFILE_URL = `${TEST_BASE_URL}/customer/profile`;
const TOKENS_URL = `${TEST_BASE_URL}/tokens`;

/** `POST /token` of `client` with `pairs`, and these `DPoP` headers. */
function tokenRequest(app: FastifyInstance, client: Credentials, pairs: Record<string, string>, proofs: string[] = []) {
  return postToken(app, {
    authorization: basicAuth(client.id, client.secret),
    body: form(pairs),
    ...(proofs.length === 0 ? {} : { headers: { dpop: (proofs.length === 1 ? proofs[0] : proofs) as string } }),
  });
}

/** A proof for `POST /token` now. */
function tokenProof(t: TestApp, key: DpopKey, nonce?: string): Promise<string> {
  return key.proof({ htm: 'POST', htu: TOKEN_URL, iat: t.clock.nowSeconds(), ...(nonce === undefined ? {} : { nonce }) });
}

function getProfile(app: FastifyInstance, authorization: string, proof?: string) {
  return app.inject({ method: 'GET', url: '/customer/profile', headers: { authorization, ...(proof === undefined ? {} : { dpop: proof }) } });
}

/** Exactly the RFC 9449 §7.1 challenge of a protected resource for `error`. */
function expectDpopChallenge(res: { headers: Record<string, unknown> }, error: string): void {
  expect(res.headers['www-authenticate']).toMatch(new RegExp(`^DPoP error="${error}", error_description="[^"\\\\]*", algs="ES256 PS256 EdDSA"$`));
}

describe('POST /token with a DPoP proof (RFC 9449 §5)', () => {
  it('client_credentials: token_type DPoP, cnf.jkt in the JWT, a DPoP-Nonce; without a proof a bearer token as before', async () => {
    const t = await build();
    const client = await t.createClient();
    const key = await dpopKey();
    const res = await tokenRequest(t.app, client, { grant_type: 'client_credentials' }, [await tokenProof(t, key)]);
    expect({ status: res.statusCode, body: res.json() }).toMatchObject({ status: 200, body: { token_type: 'DPoP' } });
    expect(res.headers['dpop-nonce']).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
    const { payload } = await t.verifyAccessToken(res.json<{ access_token: string }>().access_token);
    expect(payload.cnf).toEqual({ jkt: key.jkt });

    const plain = await tokenRequest(t.app, client, { grant_type: 'client_credentials' });
    expect(plain.json()).toMatchObject({ token_type: 'Bearer' });
    expect(plain.headers['dpop-nonce']).toBeUndefined();
    expect((await t.verifyAccessToken(plain.json<{ access_token: string }>().access_token)).payload.cnf).toBeUndefined();
  });

  it.each<[string, (t: TestApp, key: DpopKey) => Promise<string[]>]>([
    ['two DPoP headers', async (t, key) => [await tokenProof(t, key), await tokenProof(t, key)]],
    ['a proof for another URL', async (t, key) => [await key.proof({ htm: 'POST', htu: `${TEST_AUTH_URL}/introspect`, iat: t.clock.nowSeconds() })]],
    ['a proof for GET', async (t, key) => [await key.proof({ htm: 'GET', htu: TOKEN_URL, iat: t.clock.nowSeconds() })]],
    ['a proof 61 seconds old', async (t, key) => [await key.proof({ htm: 'POST', htu: TOKEN_URL, iat: t.clock.nowSeconds() - 61 })]],
    ['garbage', async () => ['not-a-proof']],
    ['a jwk whose x and y are no point on P-256', async (t, key) => [await key.proof({ htm: 'POST', htu: TOKEN_URL, iat: t.clock.nowSeconds() }, { header: { jwk: { kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'BBBB' } } })]],
  ])('%s → 400 invalid_dpop_proof, no token', async (_name, proofs) => {
    const t = await build();
    const client = await t.createClient();
    const res = await tokenRequest(t.app, client, { grant_type: 'client_credentials' }, await proofs(t, await dpopKey()));
    expectOAuthError(res, { status: 400, error: 'invalid_dpop_proof' });
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  it('a replayed proof → 400 invalid_dpop_proof', async () => {
    const t = await build();
    const client = await t.createClient();
    const proof = await tokenProof(t, await dpopKey());
    expect((await tokenRequest(t.app, client, { grant_type: 'client_credentials' }, [proof])).statusCode).toBe(200);
    expectOAuthError(await tokenRequest(t.app, client, { grant_type: 'client_credentials' }, [proof]), { status: 400, error: 'invalid_dpop_proof', description: 'the DPoP proof was used before' });
  });

  it('a fapi2 client: no proof → invalid_dpop_proof; no nonce → use_dpop_nonce with DPoP-Nonce; with it → 200', async () => {
    const t = await build();
    const keyed = await keyClient(t, (await t.createClient()).id, 'fapi2');
    const key = await dpopKey();
    // Authenticated by private_key_jwt, as a fapi2 client must be.
    const tokenRequest = async (_app: FastifyInstance, _client: unknown, pairs: Record<string, string>, proofs: string[] = []) =>
      postToken(t.app, { body: form({ ...pairs, ...(await assertionFields(t, keyed)) }), ...(proofs.length === 0 ? {} : { headers: { dpop: proofs[0] as string } }) });
    const client = undefined;
    expectOAuthError(await tokenRequest(t.app, client, { grant_type: 'client_credentials' }), { status: 400, error: 'invalid_dpop_proof' });
    const first = await tokenRequest(t.app, client, { grant_type: 'client_credentials' }, [await tokenProof(t, key)]);
    expectOAuthError(first, { status: 400, error: 'use_dpop_nonce' });
    const nonce = String(first.headers['dpop-nonce']);
    expect(nonce).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
    const ok = await tokenRequest(t.app, client, { grant_type: 'client_credentials' }, [await tokenProof(t, key, nonce)]);
    expect({ status: ok.statusCode, type: ok.json<{ token_type: string }>().token_type }).toEqual({ status: 200, type: 'DPoP' });
    // Stale after two slots (600 s): the answer carries a fresh one.
    t.clock.advance(600);
    const stale = await tokenRequest(t.app, client, { grant_type: 'client_credentials' }, [await tokenProof(t, key, nonce)]);
    expectOAuthError(stale, { status: 400, error: 'use_dpop_nonce' });
    expect(stale.headers['dpop-nonce']).not.toBe(nonce);
  });

  it('authorization_code and refresh_token: bound session; refresh needs the same key', async () => {
    const s = await signedIn();
    const key = await dpopKey();
    const res = await tokenRequest(s.t.app, s.client, { grant_type: 'authorization_code', code: s.loginCode, redirect_uri: REDIRECT_URI }, [await tokenProof(s.t, key)]);
    expect({ status: res.statusCode, type: res.json<{ token_type: string }>().token_type }).toEqual({ status: 200, type: 'DPoP' });
    const tokens = res.json<{ access_token: string; refresh_token: string }>();
    const access = await accessClaims(s.t, tokens.access_token);
    expect(access.cnf).toEqual({ jkt: key.jkt });
    expect(decodeJwt(tokens.refresh_token).cnf).toEqual({ jkt: key.jkt });
    expect(await s.t.storage.tokenSessions.findTokenSession(access.sid)).toMatchObject({ dpopJkt: key.jkt });

    const refresh = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token };
    expectOAuthError(await tokenRequest(s.t.app, s.client, refresh), { status: 400, error: 'invalid_dpop_proof' });
    expectOAuthError(await tokenRequest(s.t.app, s.client, refresh, [await tokenProof(s.t, await dpopKey())]), { status: 400, error: 'invalid_grant', description: 'this refresh token is bound to another DPoP key' });
    const refreshed = await tokenRequest(s.t.app, s.client, refresh, [await tokenProof(s.t, key)]);
    expect({ status: refreshed.statusCode, type: refreshed.json<{ token_type: string }>().token_type }).toEqual({ status: 200, type: 'DPoP' });
    expect((await accessClaims(s.t, refreshed.json<{ access_token: string }>().access_token)).cnf).toEqual({ jkt: key.jkt });
  });

  it('a bearer session refreshed with a proof gets a bound access token, and a bearer refresh right after is never handed that one', async () => {
    const s = await signedIn();
    const tokens = (await exchangeCode(s.t.app, s.client, { code: s.loginCode, redirect_uri: REDIRECT_URI })).json<{ refresh_token: string; token_type: string }>();
    expect(tokens.token_type).toBe('Bearer');
    const key = await dpopKey();
    const refresh = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token };
    const bound = (await tokenRequest(s.t.app, s.client, refresh, [await tokenProof(s.t, key)])).json<{ access_token: string; token_type: string }>();
    expect(bound.token_type).toBe('DPoP');
    // Within the reuse interval: a refresh without a proof gets a bearer token of its own, not the bound one.
    const bearer = (await tokenRequest(s.t.app, s.client, refresh)).json<{ access_token: string; token_type: string }>();
    expect(bearer.token_type).toBe('Bearer');
    expect(bearer.access_token).not.toBe(bound.access_token);
    expect((await accessClaims(s.t, bearer.access_token)).cnf).toBeUndefined();
  });

  it('dpop_jkt at /authorize binds the code: only a proof of that key redeems it', async () => {
    const s = await signedIn();
    const key = await dpopKey();
    const res = await approveIfAsked(s.browser, await s.browser.get(authorizeUrl(authorizeParams(s.client, { dpop_jkt: key.jkt }))));
    const code = expectClientRedirect(res).get('code') ?? '';
    const params = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI };
    const bound = 'the authorization request bound this code to a DPoP key (dpop_jkt): send a DPoP proof of that key';
    expectOAuthError(await tokenRequest(s.t.app, s.client, params), { status: 400, error: 'invalid_grant', description: bound });
    expectOAuthError(await tokenRequest(s.t.app, s.client, params, [await tokenProof(s.t, await dpopKey())]), { status: 400, error: 'invalid_grant', description: bound });
    const ok = await tokenRequest(s.t.app, s.client, params, [await tokenProof(s.t, key)]);
    expect({ status: ok.statusCode, type: ok.json<{ token_type: string }>().token_type }).toEqual({ status: 200, type: 'DPoP' });
  });

  it('a malformed dpop_jkt at /authorize → invalid_request back to the client', async () => {
    const s = await signedIn();
    const res = await s.browser.get(authorizeUrl(authorizeParams(s.client, { dpop_jkt: 'not-a-thumbprint' })));
    expectErrorRedirect(res, 'invalid_request', 'xyz-state');
  });
});

describe('presenting DPoP-bound tokens (RFC 9449 §7)', () => {
  async function boundCustomerTokens() {
    const s = await signedIn();
    const key = await dpopKey();
    const res = await tokenRequest(s.t.app, s.client, { grant_type: 'authorization_code', code: s.loginCode, redirect_uri: REDIRECT_URI }, [await tokenProof(s.t, key)]);
    return { ...s, key, tokens: res.json<{ access_token: string; refresh_token: string }>() };
  }

  it('the resource-server check: DPoP + a proof of the key → 200 with DPoP-Nonce; as Bearer, another key, no ath → refused', async () => {
    const { t, key, tokens } = await boundCustomerTokens();
    const token = tokens.access_token;
    const proof = (k: DpopKey, extra: { accessToken?: string } = { accessToken: token }) => k.proof({ htm: 'GET', htu: PROFILE_URL, iat: t.clock.nowSeconds(), ...extra });

    const ok = await getProfile(t.app, `DPoP ${token}`, await proof(key));
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['dpop-nonce']).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);

    const asBearer = await getProfile(t.app, `Bearer ${token}`);
    expectOAuthError(asBearer, { status: 401, error: 'invalid_token', description: 'this access token is DPoP-bound: present it as Authorization: DPoP with a DPoP proof' });
    const asBearerWithProof = await getProfile(t.app, `Bearer ${token}`, await proof(key));
    expectOAuthError(asBearerWithProof, { status: 401, error: 'invalid_token' });

    const otherKey = await getProfile(t.app, `DPoP ${token}`, await proof(await dpopKey()));
    expectOAuthError(otherKey, { status: 401, error: 'invalid_dpop_proof', description: 'the DPoP proof is signed by another key than the access token is bound to' });
    expectDpopChallenge(otherKey, 'invalid_dpop_proof');
    const noAth = await getProfile(t.app, `DPoP ${token}`, await proof(key, {}));
    expectOAuthError(noAth, { status: 401, error: 'invalid_dpop_proof' });
    expectDpopChallenge(noAth, 'invalid_dpop_proof');
    const badJwk = await getProfile(t.app, `DPoP ${token}`, await key.proof({ htm: 'GET', htu: PROFILE_URL, iat: t.clock.nowSeconds(), accessToken: token }, { header: { jwk: { ...key.publicJwk, crv: 'P-384' } } }));
    expectOAuthError(badJwk, { status: 401, error: 'invalid_dpop_proof' });
    expectDpopChallenge(badJwk, 'invalid_dpop_proof');
    const noProof = await getProfile(t.app, `DPoP ${token}`);
    expectOAuthError(noProof, { status: 401, error: 'invalid_dpop_proof' });
    const replayed = await proof(key);
    expect((await getProfile(t.app, `DPoP ${token}`, replayed)).statusCode).toBe(200);
    expectOAuthError(await getProfile(t.app, `DPoP ${token}`, replayed), { status: 401, error: 'invalid_dpop_proof', description: 'the DPoP proof was used before' });
  });

  it('a DPoP-bound token that was revoked, presented as DPoP with a good proof → 401 invalid_token in a DPoP challenge (RFC 9449 §7.1)', async () => {
    const { t, client, key, tokens } = await boundCustomerTokens();
    expect((await revoke(t.app, client, tokens.refresh_token)).statusCode).toBe(200);
    const refused = await getProfile(t.app, `DPoP ${tokens.access_token}`, await key.proof({ htm: 'GET', htu: PROFILE_URL, iat: t.clock.nowSeconds(), accessToken: tokens.access_token }));
    expectOAuthError(refused, { status: 401, error: 'invalid_token' });
    expectDpopChallenge(refused, 'invalid_token');
  });

  it('a proof with a stale nonce at the resource-server check → 401 use_dpop_nonce with DPoP-Nonce', async () => {
    const { t, key, tokens } = await boundCustomerTokens();
    const res = await getProfile(t.app, `DPoP ${tokens.access_token}`, await key.proof({ htm: 'GET', htu: PROFILE_URL, iat: t.clock.nowSeconds(), accessToken: tokens.access_token, nonce: 'x.stale' }));
    expectOAuthError(res, { status: 401, error: 'use_dpop_nonce' });
    expectDpopChallenge(res, 'use_dpop_nonce');
    expect(res.headers['dpop-nonce']).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
  });

  it('introspection reports cnf and token_type DPoP for a bound token', async () => {
    const { t, client, key, tokens } = await boundCustomerTokens();
    const body = (await introspect(t.app, client, tokens.access_token)).json();
    expect(body).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: key.jkt } });
    const refresh = (await introspect(t.app, client, tokens.refresh_token)).json();
    expect(refresh).toMatchObject({ active: true, cnf: { jkt: key.jkt } });
  });

  it('POST /tokens: a DPoP-bound client token only as DPoP with a proof; it refreshes a session bound to the same key', async () => {
    const { t, client, key, tokens } = await boundCustomerTokens();
    const clientToken = (await tokenRequest(t.app, client, { grant_type: 'client_credentials' }, [await tokenProof(t, key)])).json<{ access_token: string }>().access_token;
    const body = { refreshToken: tokens.refresh_token };

    expectOAuthError(await postTokens(t.app, { bearer: clientToken, body }), { status: 401, error: 'invalid_token', description: 'this access token is DPoP-bound: present it as Authorization: DPoP with a DPoP proof' });
    const other = await dpopKey();
    const wrong = await postTokens(t.app, { authorization: `DPoP ${clientToken}`, body, ...dpopHeader(await other.proof({ htm: 'POST', htu: TOKENS_URL, iat: t.clock.nowSeconds(), accessToken: clientToken })) });
    expectOAuthError(wrong, { status: 401, error: 'invalid_dpop_proof' });

    const ok = await postTokens(t.app, { authorization: `DPoP ${clientToken}`, body, ...dpopHeader(await key.proof({ htm: 'POST', htu: TOKENS_URL, iat: t.clock.nowSeconds(), accessToken: clientToken })) });
    expect({ status: ok.statusCode, body: ok.body }).toMatchObject({ status: 200 });
    expect(ok.headers['dpop-nonce']).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
    expect((await accessClaims(t, ok.json<{ accessToken: string }>().accessToken)).cnf).toEqual({ jkt: key.jkt });
  });

  it('POST /tokens with a bearer client token cannot refresh a DPoP-bound session', async () => {
    const { t, client, tokens } = await boundCustomerTokens();
    const clientToken = (await tokenRequest(t.app, client, { grant_type: 'client_credentials' })).json<{ access_token: string }>().access_token;
    expectOAuthError(await postTokens(t.app, { bearer: clientToken, body: { refreshToken: tokens.refresh_token } }), { status: 400, error: 'invalid_dpop_proof' });
  });
});

function dpopHeader(proof: string) {
  return { headers: { dpop: proof } };
}

/** A sign-in through PIN + SMS of a request with `dpop_jkt`: its code is redeemed only with a proof of that key. */
async function signInBoundByDpopJkt(t: TestApp): Promise<void> {
  const client = await t.createClient();
  await addCustomer(t);
  const key = await dpopKey();
  const code = (await logIn(new Browser(t.app), authorizeParams(client, { dpop_jkt: key.jkt }))).get('code') ?? '';
  const params = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI };
  expectOAuthError(await tokenRequest(t.app, client, params, [await tokenProof(t, await dpopKey())]), { status: 400, error: 'invalid_grant' });
  const ok = await tokenRequest(t.app, client, params, [await tokenProof(t, key)]);
  expect({ status: ok.statusCode, type: ok.json<{ token_type: string }>().token_type }).toEqual({ status: 200, type: 'DPoP' });
  const access = await accessClaims(t, ok.json<{ access_token: string }>().access_token);
  expect(await t.storage.tokenSessions.findTokenSession(access.sid)).toMatchObject({ dpopJkt: key.jkt });
}

/** 10 requests at once with one proof: exactly one gets a token (RFC 9449 §11.1). */
async function oneOfTen(apps: readonly FastifyInstance[], t: TestApp): Promise<void> {
  const client = await t.createClient();
  const proof = await tokenProof(t, await dpopKey());
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => tokenRequest(apps[i % apps.length]!, client, { grant_type: 'client_credentials' }, [proof])));
  expect(answers.map((a) => a.statusCode).sort()).toEqual([200, ...Array<number>(9).fill(400)]);
  for (const a of answers.filter((a) => a.statusCode === 400)) expect(a.json()).toMatchObject({ error: 'invalid_dpop_proof' });
}

describe('one proof, many requests', () => {
  it('SQLite: 10 concurrent requests with the same proof → one accepted', async () => {
    const t = await build();
    await oneOfTen([t.app], t);
  });

  it('SQLite: dpop_jkt of a PIN + SMS sign-in binds its code and the session', async () => {
    await signInBoundByDpopJkt(await build());
  });
});

noticePostgresSkipped('DPoP on PostgreSQL');
describe.skipIf(!postgresAdminUrl)('DPoP on PostgreSQL', () => {
  const instances = usePostgresInstances();

  it('dpop_jkt of a PIN + SMS sign-in binds its code and the session', async () => {
    const { t } = await instances.one();
    await signInBoundByDpopJkt(t);
  });

  it('10 concurrent requests with the same proof over two instances → one accepted', async () => {
    const { apps, t } = await instances.two();
    await oneOfTen(apps, t);
  });

  it('a proof used at one instance is refused at the other; a nonce of one is accepted at the other', async () => {
    const { apps, t } = await instances.two();
    const [a, b] = apps as [FastifyInstance, FastifyInstance];
    const client = await t.createClient();
    const key = await dpopKey();
    const proof = await tokenProof(t, key);
    expect((await tokenRequest(a, client, { grant_type: 'client_credentials' }, [proof])).statusCode).toBe(200);
    expectOAuthError(await tokenRequest(b, client, { grant_type: 'client_credentials' }, [proof]), { status: 400, error: 'invalid_dpop_proof', description: 'the DPoP proof was used before' });

    // A proof with a nonce is checked whatever the client's profile: a made-up one gets a fresh nonce from a, which b accepts.
    const asked = await tokenRequest(a, client, { grant_type: 'client_credentials' }, [await tokenProof(t, key, 'x.no-nonce')]);
    expectOAuthError(asked, { status: 400, error: 'use_dpop_nonce' });
    const nonce = String(asked.headers['dpop-nonce']);
    const ok = await tokenRequest(b, client, { grant_type: 'client_credentials' }, [await tokenProof(t, key, nonce)]);
    expect({ status: ok.statusCode, type: ok.json<{ token_type: string }>().token_type }).toEqual({ status: 200, type: 'DPoP' });
  });
});
