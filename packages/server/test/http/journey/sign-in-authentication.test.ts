import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { build } from '../../helpers/build.js';
import {
  addCustomer,
  authorizeParams,
  Browser,
  expectClientRedirect,
  expectPage,
  expectSeeOther,
  latestOtp,
  logIn,
  MOBILE,
  outbox,
  startLogin,
  type Response,
} from '../../helpers/customer-flow.js';
import {
  accessClaims,
  expectIntrospection,
  expectRefreshed,
  expectTokensBody,
  introspect,
  lifecycle,
  postTokens,
  redeem,
  refreshAtToken,
  REFRESH_GRANTS,
} from '../../helpers/token-session.js';
import { obtainToken } from '../../helpers/wire.js';

/**
 * How the customer signed in, in customer tokens and introspection
 * (docs/tokens.md, "How the customer signed in"): `acr`, `amr` and
 * `auth_time` of the sign-in, set when it completes and kept unchanged by
 * silent sign-ins, refreshes and `POST /tokens`.
 */

const PIN_SMS = { acr: 'urn:connect:acr:pin-sms', amr: ['pin', 'sms', 'mfa'] };

/** The sign-in claims of a token's claims set. */
function signInOf(claims: Record<string, unknown>) {
  return { acr: claims.acr, amr: claims.amr, auth_time: claims.auth_time };
}

describe('acr, amr and auth_time of a PIN + SMS sign-in', () => {
  it('are in the access token, the refresh token and their introspection, auth_time being when the one-time PIN was entered', async () => {
    const t = await build();
    const client = await t.createClient({ grants: REFRESH_GRANTS });
    await addCustomer(t);
    const browser = new Browser(t.app);
    t.clock.advance(30);
    const signedInAt = t.clock.nowSeconds();
    const code = (await logIn(browser, authorizeParams(client))).get('code') ?? '';
    t.clock.advance(9);
    const tokens = await redeem(t.app, client, code);

    const access = await accessClaims(t, tokens.accessToken);
    expect(signInOf(access)).toEqual({ ...PIN_SMS, auth_time: signedInAt });
    expect(access.iat).toBe(signedInAt + 9);
    expect(signInOf(decodeJwt(tokens.refreshToken))).toEqual({ ...PIN_SMS, auth_time: signedInAt });
    for (const token of [tokens.accessToken, tokens.refreshToken]) {
      expect(signInOf(expectIntrospection(await introspect(t.app, client, token)))).toEqual({ ...PIN_SMS, auth_time: signedInAt });
    }
  });

  it('stay those of the sign-in through refreshes at /token and POST /tokens', async () => {
    const s = await lifecycle();
    const signIn = { ...PIN_SMS, auth_time: Number((await accessClaims(s.t, s.tokens.accessToken)).iat) };
    s.t.clock.advance(600);
    const refreshed = expectRefreshed(await refreshAtToken(s.t.app, s.client, s.tokens.refreshToken));
    const afterRefresh = await accessClaims(s.t, refreshed.access_token);
    expect(afterRefresh.iat).toBe(signIn.auth_time + 600);
    expect(signInOf(afterRefresh)).toEqual(signIn);

    s.t.clock.advance(600);
    const bearer = await obtainToken(s.t, s.client);
    const body = expectTokensBody(await postTokens(s.t.app, { bearer, body: { refreshToken: s.tokens.refreshToken } }));
    const afterTokens = await accessClaims(s.t, body.accessToken);
    expect(afterTokens.iat).toBe(signIn.auth_time + 1200);
    expect(signInOf(afterTokens)).toEqual(signIn);
    expect(signInOf(expectIntrospection(await introspect(s.t.app, s.client, body.accessToken)))).toEqual(signIn);
  });

  it("a silent sign-in from the customer session carries the session's sign-in, not its own time; so does one after consent", async () => {
    const s = await lifecycle();
    const signedInAt = (await accessClaims(s.t, s.tokens.accessToken)).iat;
    // Inside the session's idle lifetime; each use keeps it alive.
    s.t.clock.advance(600);
    // Acme was approved by the sign-in: a code at once, from the session.
    const silent = await s.newSession();
    expect(signInOf(await accessClaims(s.t, silent.accessToken))).toEqual({ ...PIN_SMS, auth_time: signedInAt });
    expect(signInOf(decodeJwt(silent.refreshToken))).toEqual({ ...PIN_SMS, auth_time: signedInAt });
    // Another client: the consent page first, then a code, still from the same sign-in.
    s.t.clock.advance(600);
    const other = await s.addClient();
    const approved = await s.newSession(other);
    expect(signInOf(await accessClaims(s.t, approved.accessToken))).toEqual({ ...PIN_SMS, auth_time: signedInAt });
  });

  it('prompt=login asks for the PIN and the one-time PIN again: a new auth_time', async () => {
    const s = await lifecycle();
    s.t.clock.advance(1800);
    const params = await logIn(s.browser, authorizeParams(s.client, { prompt: 'login' }));
    const tokens = await redeem(s.t.app, s.client, params.get('code') ?? '');
    expect(signInOf(await accessClaims(s.t, tokens.accessToken))).toEqual({ ...PIN_SMS, auth_time: s.t.clock.nowSeconds() });
  });

  it("a login right after a PIN reset in the same journey sends no second SMS, and its amr still says sms: the reset's SMS code proved the phone", async () => {
    const t = await build();
    const client = await t.createClient({ grants: REFRESH_GRANTS });
    await addCustomer(t);
    const browser = new Browser(t.app);
    const { page: loginPage } = await startLogin(browser, authorizeParams(client));
    const forgot = /<p class="forgot"><a href="([^"]+)">/.exec(loginPage.body)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const resetPage = await browser.open(forgot);
    const codePage = await follow(browser, await browser.submit(resetPage, { mobile: MOBILE, action: 'send' }), /^\/login\/reset\/otp\?/);
    await t.services.afterAnswer.idle();
    const pinPage = await follow(browser, await browser.submit(codePage, { otp: await latestOtp(t.app, MOBILE), action: 'verify' }), /^\/login\/reset\/pin\?/);
    const newPin = '590316';
    t.clock.advance(120);
    const login = await follow(browser, await browser.submit(pinPage, { pin: newPin, pin_confirmation: newPin, action: 'change' }), /^\/login\?/);
    t.clock.advance(15);
    const signedInAt = t.clock.nowSeconds();
    const done = expectClientRedirect(await browser.submit(login, { mobile: MOBILE, pin: newPin, action: 'login' }));
    await t.services.afterAnswer.idle();
    // One SMS only: the reset's.
    expect(await outbox(t.app, MOBILE)).toHaveLength(1);
    t.clock.advance(5);
    const tokens = await redeem(t.app, client, done.get('code') ?? '');
    expect(signInOf(await accessClaims(t, tokens.accessToken))).toEqual({ ...PIN_SMS, auth_time: signedInAt });
    expect((await accessClaims(t, tokens.accessToken)).amr).toContain('sms');
    expect(signInOf(expectIntrospection(await introspect(t.app, client, tokens.refreshToken)))).toEqual({ ...PIN_SMS, auth_time: signedInAt });
  });
});

describe('discovery', () => {
  it('lists phr first, then the acr value of PIN + SMS, in acr_values_supported', async () => {
    const t = await build();
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(res.statusCode).toBe(200);
    expect(res.json<{ acr_values_supported: string[] }>().acr_values_supported).toEqual(['phr', 'urn:connect:acr:pin-sms']);
  });
});

/** A 303 to `path`, followed: the page it leads to. */
async function follow(browser: Browser, res: Response, path: RegExp): Promise<Response> {
  expectSeeOther(res, path);
  const page = await browser.follow(res);
  expectPage(page, 200);
  return page;
}
