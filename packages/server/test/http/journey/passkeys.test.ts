import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { ACR_PIN_SMS } from '../../../src/core/authentication.js';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { lockCustomer } from '../../../src/core/operator/lock-customer.js';
import { build, TEST_AUTH_URL, type BuildOptions, type TestApp } from '../../helpers/build.js';
import { changeReached } from '../../helpers/change-reached.js';
import {
  addCustomer,
  authorizeParams,
  authorizeUrl,
  Browser,
  csrfToken,
  expectClientRedirect,
  latestOtp,
  MOBILE,
  OTHER_MOBILE,
  outbox,
  pageText,
  PIN,
  REDIRECT_URI,
  startLogin,
  submitCredentials,
  type Response,
} from '../../helpers/customer-flow.js';
import { noticePostgresSkipped, postgresAdminUrl } from '../../helpers/postgres.js';
import { accessClaims, expectIntrospection, expectRefreshed, introspect, redeem, refreshAtToken, REFRESH_GRANTS } from '../../helpers/token-session.js';
import { useSqliteInstances, usePostgresInstances, type Instances } from '../../helpers/instances.js';
import { SoftwareCredential, type Flags, type Scope } from '../../helpers/webauthn-authenticator.js';

/**
 * Passkeys on the hosted pages (docs/journey.md, "Passkeys"): the offer
 * after a PIN + SMS sign-in, the enrolment, the sign-in with a passkey (no
 * SMS), and every way an answer is refused — with real WebAuthn answers
 * made by a software authenticator.
 */

const RIGHT: Scope = { origin: TEST_AUTH_URL, rpId: new URL(TEST_AUTH_URL).hostname };
const OPTIONS = '/login/passkey/options';
const SIGN_IN = '/login/passkey';
const ENROL = '/login/passkey/enrol';

type Client = { id: string; secret: string };

/** A POST of a passkey request from `browser`, with a CSRF token of one of its pages. */
function post(browser: Browser, path: string, requestId: string, csrf: string, fields: Record<string, string>): Promise<Response> {
  return browser.post(`${path}?request=${encodeURIComponent(requestId)}`, { csrf_token: csrf, ...fields });
}

/** A PIN + SMS sign-in up to the one-time PIN, entered with `passkey_capable` as given. */
async function signInWithPin(browser: Browser, client: Client, capable: boolean, mobile = MOBILE) {
  // prompt=login: a browser signed in already signs in again.
  const { page, requestId } = await startLogin(browser, authorizeParams(client, { prompt: 'login' }));
  const otpPage = await submitCredentials(browser, page, mobile, PIN);
  const otp = await latestOtp(browser.app, mobile);
  const res = await browser.submit(otpPage, { otp, action: 'verify', ...(capable ? { passkey_capable: '1' } : {}) });
  return { res, requestId, csrf: csrfToken(otpPage.body) };
}

/** After a PIN + SMS sign-in offered a passkey: options, the authenticator's answer, the enrolment. */
async function enrol(browser: Browser, requestId: string, csrf: string, credential: SoftwareCredential, scope: Scope = RIGHT, flags: Flags = {}) {
  const options = await post(browser, OPTIONS, requestId, csrf, { purpose: 'enrol' });
  expect(options.statusCode, options.body).toBe(200);
  const answer = credential.register(options.json(), scope, flags);
  return post(browser, ENROL, requestId, csrf, { credential: JSON.stringify(answer) });
}

/** Enrols `credential` for the customer of `mobile` through a PIN + SMS sign-in in a browser of its own. */
async function enrolled(t: TestApp, client: Client, credential = new SoftwareCredential(), mobile = MOBILE): Promise<SoftwareCredential> {
  const browser = new Browser(t.app);
  const { res, requestId, csrf } = await signInWithPin(browser, client, true, mobile);
  expect(res.statusCode, String(res.headers.location)).toBe(200);
  const added = await enrol(browser, requestId, csrf, credential);
  expect(added.statusCode, added.body).toBe(200);
  expect(added.json()).toEqual({ added: true });
  return credential;
}

/** A journey started in a new browser on `app`, on its login page: the request ID and a CSRF token. */
async function newJourney(app: FastifyInstance, client: Client, params: Record<string, string> = {}) {
  const browser = new Browser(app);
  const { page, requestId } = await startLogin(browser, authorizeParams(client, params));
  return { browser, requestId, csrf: csrfToken(page.body) };
}

/** Sign-in options, then the authenticator's answer (made by `answer`) posted. */
async function passkeySignIn(
  journey: { browser: Browser; requestId: string; csrf: string },
  credential: SoftwareCredential,
  answer: (options: { challenge: string }) => Record<string, unknown> = (options) => credential.assert(options, RIGHT),
): Promise<{ res: Response; answer: Record<string, unknown> }> {
  const options = await post(journey.browser, OPTIONS, journey.requestId, journey.csrf, { purpose: 'sign_in' });
  expect(options.statusCode, options.body).toBe(200);
  const made = answer(options.json());
  return { res: await post(journey.browser, SIGN_IN, journey.requestId, journey.csrf, { credential: JSON.stringify(made) }), answer: made };
}

/** The owner's right one-time PIN entered on `otpPage`. */
async function browser303(browser: Browser, otpPage: Response): Promise<Response> {
  return browser.submit(otpPage, { otp: await latestOtp(browser.app, MOBILE), action: 'verify' });
}

function expectError(res: Response, status: number, error: string): Record<string, unknown> {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['cache-control']).toBe('no-store');
  const body = res.json<Record<string, unknown>>();
  expect(body.error).toBe(error);
  expect(typeof body.message).toBe('string');
  return body;
}

/** The code of a passkey sign-in's answer, checked to go back to the client. */
function codeOf(res: Response): string {
  expect(res.statusCode, res.body).toBe(200);
  const location = new URL(res.json<{ location: string }>().location);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
  return location.searchParams.get('code') ?? '';
}

async function refusals(t: TestApp): Promise<unknown[]> {
  const events = await t.storage.audit.listAuditEvents({ type: 'customer.passkey_refused', limit: 100 });
  return events.map((e) => e.details?.reason);
}

async function setup(options: BuildOptions = {}) {
  const t = await build(options);
  const client = await t.createClient({ grants: REFRESH_GRANTS });
  const customer = await addCustomer(t);
  return { t, client, customer };
}

describe('the offer of a passkey after a PIN + SMS sign-in', () => {
  it('is made when the page says the browser can make one, with the cookies and the exact location the redirect would have had', async () => {
    const { t, client } = await setup();
    const browser = new Browser(t.app);
    const { res } = await signInWithPin(browser, client, true);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const href = /href="([^"]+)" data-passkey-continue/.exec(res.body)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const location = new URL(href);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.get('iss')).toBe(TEST_AUTH_URL);
    expect(res.cookies.find((c) => c.name === 'connect_session')?.value).toBeTruthy();
    expect(res.cookies.find((c) => c.name === 'connect_device')?.value).toBeTruthy();
    // The code works as any other.
    const tokens = await redeem(t.app, client, location.searchParams.get('code') ?? '');
    expect((await accessClaims(t, tokens.accessToken)).acr).toBe(ACR_PIN_SMS);
  });

  it('is not made without passkey_capable (a plain 303 to the client), nor to a customer who has a usable passkey', async () => {
    const { t, client } = await setup();
    const { res } = await signInWithPin(new Browser(t.app), client, false);
    expectClientRedirect(res);
    await enrolled(t, client);
    const again = await signInWithPin(new Browser(t.app), client, true);
    expectClientRedirect(again.res);
  });
});

describe('the offer after a registration and after a PIN reset', () => {
  it('a registration completed with passkey_capable is offered a passkey', async () => {
    const t = await build();
    const client = await t.createClient();
    const browser = new Browser(t.app);
    const { page } = await startLogin(browser, authorizeParams(client));
    const register = await browser.open(/href="(\/register\?[^"]+)"/.exec(page.body)?.[1]?.replace(/&amp;/g, '&') ?? '');
    const sent = await browser.submit(register, { mobile: MOBILE, pin: PIN, pin_confirmation: PIN, action: 'register' });
    const otpPage = await browser.follow(sent);
    const res = await browser.submit(otpPage, { otp: await latestOtp(t.app, MOBILE), action: 'verify', passkey_capable: '1' });
    expect(res.statusCode, String(res.headers.location)).toBe(200);
    expect(res.body).toContain('data-passkey-continue');
    expect(await t.storage.customers.findCustomerByMobile(MOBILE)).toBeDefined();
  });

  it('the login right after a PIN reset, with passkey_capable, is offered a passkey', async () => {
    const { t, client } = await setup();
    const browser = new Browser(t.app);
    const { page: loginPage } = await startLogin(browser, authorizeParams(client));
    const forgot = /<p class="forgot"><a href="([^"]+)">/.exec(loginPage.body)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const resetPage = await browser.open(forgot);
    const codePage = await browser.follow(await browser.submit(resetPage, { mobile: MOBILE, action: 'send' }));
    await t.services.afterAnswer.idle();
    const pinPage = await browser.follow(await browser.submit(codePage, { otp: await latestOtp(t.app, MOBILE), action: 'verify' }));
    const newPin = '590316';
    const login = await browser.follow(await browser.submit(pinPage, { pin: newPin, pin_confirmation: newPin, action: 'change' }));
    const res = await browser.submit(login, { mobile: MOBILE, pin: newPin, action: 'login', passkey_capable: '1' });
    expect(res.statusCode, String(res.headers.location)).toBe(200);
    expect(res.body).toContain('data-passkey-continue');
    expect(res.cookies.find((c) => c.name === 'connect_session')?.value).toBeTruthy();
  });
});

describe('enrolment', () => {
  it('adds the passkey with the customer\'s user handle, set once on the customer row, and audits it', async () => {
    const { t, client, customer } = await setup();
    const credential = await enrolled(t, client);
    const stored = await t.storage.passkeys.findPasskey(credential.id);
    expect(stored).toMatchObject({ profileId: customer.profileId, signCount: 0, transports: ['internal'], heldUntil: null, suspendedAt: null });
    const handle = await t.storage.passkeys.findUserHandleOf(customer.profileId);
    expect(stored?.userHandle).toBe(handle);
    expect(credential.userHandle).toBe(handle);
    expect(handle).not.toContain(MOBILE.slice(1));
    // A second passkey (no offer now: enrolled straight after a sign-in) carries the same handle.
    const browser = new Browser(t.app);
    const again = await signInWithPin(browser, client, true);
    expectClientRedirect(again.res);
    const second = new SoftwareCredential();
    expect((await enrol(browser, again.requestId, again.csrf, second)).json()).toEqual({ added: true });
    expect((await t.storage.passkeys.findPasskey(second.id))?.userHandle).toBe(handle);
    const added = await t.storage.audit.listAuditEvents({ type: 'customer.passkey_added', limit: 10 });
    expect(added).toHaveLength(2);
    expect(added[0]).toMatchObject({ subject: customer.profileId, outcome: 'success' });
  });

  it('is held for CONNECT_PASSKEY_HOLD when added after a PIN + SMS sign-in', async () => {
    const { t, client } = await setup({ env: { CONNECT_PASSKEY_HOLD: '3600' } });
    const credential = await enrolled(t, client);
    expect((await t.storage.passkeys.findPasskey(credential.id))?.heldUntil).toBe(t.clock.nowSeconds() + 3600);
  });

  it('excludes the customer\'s passkeys in its options, and refuses a credential ID already stored', async () => {
    const { t, client } = await setup();
    const credential = await enrolled(t, client);
    // The customer's passkey was suspended and restored, so a new offer comes only after a removal; enrol straight after another sign-in.
    const browser = new Browser(t.app);
    const { requestId, csrf } = await signInWithPin(browser, client, false);
    const options = await post(browser, OPTIONS, requestId, csrf, { purpose: 'enrol' });
    expect(options.json<{ excludeCredentials: Array<{ id: string }> }>().excludeCredentials.map((c) => c.id)).toEqual([credential.id]);
    const again = await post(browser, ENROL, requestId, csrf, { credential: JSON.stringify(credential.register(options.json(), RIGHT)) });
    expectError(again, 400, 'passkey_refused');
    expect(await refusals(t)).toContain('exists');
  });

  it('is refused for another journey, for a journey not signed in by this browser, and from a wrong origin', async () => {
    const { t, client } = await setup();
    const browser = new Browser(t.app);
    const first = await signInWithPin(browser, client, true);
    const options = await post(browser, OPTIONS, first.requestId, first.csrf, { purpose: 'enrol' });
    const answer = new SoftwareCredential().register(options.json(), RIGHT);
    // Another journey of the same browser, signed in a moment later: the challenge is bound to the first one.
    t.clock.advance(1);
    const second = await signInWithPin(browser, client, true);
    expectError(await post(browser, ENROL, second.requestId, second.csrf, { credential: JSON.stringify(answer) }), 400, 'passkey_expired');
    // The first journey's session was ended by the second sign-in: it can no longer enrol.
    expectError(await post(browser, ENROL, first.requestId, first.csrf, { credential: JSON.stringify(answer) }), 409, 'journey_ended');
    // A journey still on its login page offers no enrolment.
    const open = await newJourney(t.app, client);
    expectError(await post(open.browser, OPTIONS, open.requestId, open.csrf, { purpose: 'enrol' }), 409, 'journey_ended');
    // Wrong origin.
    const third = await signInWithPin(browser, client, true);
    const wrongOrigin = await enrol(browser, third.requestId, third.csrf, new SoftwareCredential(), { ...RIGHT, origin: 'https://evil.example' });
    expectError(wrongOrigin, 400, 'passkey_refused');
    expect(await refusals(t)).toContain('origin');
    expect(await t.storage.passkeys.listPasskeysOf((await t.storage.customers.findCustomerByMobile(MOBILE))?.profileId ?? '')).toEqual([]);
  });

  it("a registration and another customer's sign-in completed in one second in one browser: the registration's offer adds no passkey to the other customer", async () => {
    const { t, client, customer } = await setup();
    const browser = new Browser(t.app);
    // One tab: a registration of OTHER_MOBILE, up to its one-time PIN.
    const first = await startLogin(browser, authorizeParams(client));
    const register = await browser.open(/href="(\/register\?[^"]+)"/.exec(first.page.body)?.[1]?.replace(/&amp;/g, '&') ?? '');
    const registrationOtp = await browser.follow(await browser.submit(register, { mobile: OTHER_MOBILE, pin: PIN, pin_confirmation: PIN, action: 'register' }));
    // Another tab: MOBILE's login, up to its one-time PIN.
    const second = await startLogin(browser, authorizeParams(client));
    const loginOtp = await submitCredentials(browser, second.page, MOBILE, PIN);
    // Both complete in the same second; the browser's session is now MOBILE's.
    const offer = await browser.submit(registrationOtp, { otp: await latestOtp(t.app, OTHER_MOBILE), action: 'verify', passkey_capable: '1' });
    expect(offer.body).toContain('data-passkey-continue');
    expectClientRedirect(await browser.submit(loginOtp, { otp: await latestOtp(t.app, MOBILE), action: 'verify' }));
    // The registration's offer enrols for the account it registered, or not at all.
    const csrf = csrfToken(registrationOtp.body);
    expectError(await post(browser, OPTIONS, first.requestId, csrf, { purpose: 'enrol' }), 409, 'journey_ended');
    expect(await t.storage.passkeys.listPasskeysOf(customer.profileId)).toEqual([]);
    // The login's own journey still enrols its customer.
    const login = { requestId: second.requestId, csrf: csrfToken(loginOtp.body) };
    expect((await enrol(browser, login.requestId, login.csrf, new SoftwareCredential())).json()).toEqual({ added: true });
    expect(await t.storage.passkeys.listPasskeysOf(customer.profileId)).toHaveLength(1);
    // A registration alone enrols its new account.
    const alone = new Browser(t.app);
    const started = await startLogin(alone, authorizeParams(client));
    const form = await alone.open(/href="(\/register\?[^"]+)"/.exec(started.page.body)?.[1]?.replace(/&amp;/g, '&') ?? '');
    const otpPage = await alone.follow(await alone.submit(form, { mobile: '+639171110002', pin: PIN, pin_confirmation: PIN, action: 'register' }));
    await alone.submit(otpPage, { otp: await latestOtp(t.app, '+639171110002'), action: 'verify', passkey_capable: '1' });
    expect((await enrol(alone, started.requestId, csrfToken(otpPage.body), new SoftwareCredential())).json()).toEqual({ added: true });
    const registered = await t.storage.customers.findCustomerByMobile('+639171110002');
    expect(await t.storage.passkeys.listPasskeysOf(registered?.profileId ?? '')).toHaveLength(1);
  });

  it('without its CSRF token is refused with 403 csrf', async () => {
    const { t, client } = await setup();
    const browser = new Browser(t.app);
    const { requestId } = await signInWithPin(browser, client, true);
    const res = await browser.post(`${OPTIONS}?request=${requestId}`, { purpose: 'enrol' });
    expectError(res, 403, 'csrf');
  });
});

describe('the options budget', () => {
  it('each challenge stored takes from the address\'s journey budget: past it too_many_attempts with retry_after, and no challenge is stored', async () => {
    // 3 journeys an hour from one address: the journey itself, then two challenges.
    const { t, client } = await setup({ env: { CONNECT_JOURNEY_LIMIT_PER_ADDRESS: '3' } });
    const journey = await newJourney(t.app, client);
    const ask = () => post(journey.browser, OPTIONS, journey.requestId, journey.csrf, { purpose: 'sign_in' });
    expect((await ask()).statusCode).toBe(200);
    expect((await ask()).statusCode).toBe(200);
    const stored = await t.storage.passkeys.deleteWebAuthnChallengesEndedBy(t.clock.nowSeconds() + 3600, 100);
    const refused = expectError(await ask(), 429, 'too_many_attempts');
    expect(refused.retry_after).toEqual(expect.any(Number));
    expect(await t.storage.passkeys.deleteWebAuthnChallengesEndedBy(t.clock.nowSeconds() + 3600, 100)).toBe(0);
    expect(stored).toBe(2);
  });
});

describe('sign-in with a passkey', () => {
  it('signs in with no SMS sent: acr phr out of its hold, amr hwk/user/mfa, in the access token, refresh token, introspection and after a refresh; counted and audited', async () => {
    const { t, client, customer } = await setup();
    const credential = await enrolled(t, client);
    const smsBefore = (await outbox(t.app, MOBILE)).length;
    const journey = await newJourney(t.app, client);
    t.clock.advance(40);
    const signedInAt = t.clock.nowSeconds();
    const { res } = await passkeySignIn(journey, credential);
    const code = codeOf(res);
    expect(res.cookies.find((c) => c.name === 'connect_session')?.value).toBeTruthy();
    expect(res.cookies.find((c) => c.name === 'connect_device')?.value).toBeTruthy();
    expect(await outbox(t.app, MOBILE)).toHaveLength(smsBefore);

    const expected = { acr: 'phr', amr: ['hwk', 'user', 'mfa'], auth_time: signedInAt };
    const signInOf = (claims: Record<string, unknown>) => ({ acr: claims.acr, amr: claims.amr, auth_time: claims.auth_time });
    t.clock.advance(5);
    const tokens = await redeem(t.app, client, code);
    expect(signInOf(await accessClaims(t, tokens.accessToken))).toEqual(expected);
    expect(signInOf(decodeJwt(tokens.refreshToken))).toEqual(expected);
    for (const token of [tokens.accessToken, tokens.refreshToken]) {
      expect(signInOf(expectIntrospection(await introspect(t.app, client, token)))).toEqual(expected);
    }
    t.clock.advance(600);
    const refreshed = expectRefreshed(await refreshAtToken(t.app, client, tokens.refreshToken));
    expect(signInOf(await accessClaims(t, refreshed.access_token))).toEqual(expected);

    const used = await t.storage.audit.listAuditEvents({ type: 'customer.passkey_used', limit: 10 });
    expect(used).toHaveLength(1);
    expect(used[0]).toMatchObject({ subject: customer.profileId, outcome: 'success', details: { credential_id: credential.id, acr: 'phr' } });
    const metrics = await t.services.metrics.registry.metrics();
    expect(metrics).toContain('connect_sign_ins_total{method="passkey"} 1');
    expect(metrics).toContain('connect_sign_ins_total{method="pin_sms"} 1');
  });

  it('a synced passkey (backup eligible) gives amr swk', async () => {
    const { t, client } = await setup();
    const credential = await enrolled(t, client);
    const { res } = await passkeySignIn(await newJourney(t.app, client), credential, (o) => credential.assert(o, RIGHT, { be: true }));
    const tokens = await redeem(t.app, client, codeOf(res));
    expect((await accessClaims(t, tokens.accessToken)).amr).toEqual(['swk', 'user', 'mfa']);
  });

  it('a passkey in its hold gives the PIN + SMS acr; out of it (injected clock), phr', async () => {
    const { t, client } = await setup({ env: { CONNECT_PASSKEY_HOLD: '3600' } });
    const credential = await enrolled(t, client);
    t.clock.advance(3599);
    const held = await passkeySignIn(await newJourney(t.app, client), credential);
    expect((await accessClaims(t, (await redeem(t.app, client, codeOf(held.res))).accessToken)).acr).toBe(ACR_PIN_SMS);
    t.clock.advance(1);
    const free = await passkeySignIn(await newJourney(t.app, client), credential);
    expect((await accessClaims(t, (await redeem(t.app, client, codeOf(free.res))).accessToken)).acr).toBe('phr');
  });

  it('a request for phr (acr_values): a passkey in its hold ends it with unmet_authentication_requirements, signing nothing in; out of its hold, phr', async () => {
    const { t, client } = await setup({ env: { CONNECT_PASSKEY_HOLD: '3600' } });
    const credential = await enrolled(t, client);
    const held = await newJourney(t.app, client, { acr_values: 'phr', state: 'held-state' });
    const { res } = await passkeySignIn(held, credential);
    const refused = expectError(res, 409, 'journey_ended');
    // No session cookie: nothing was signed in.
    expect(String(res.headers['set-cookie'] ?? '')).not.toMatch(/session/);
    const back = new URL(String(refused.location));
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get('error')).toBe('unmet_authentication_requirements');
    expect(back.searchParams.get('state')).toBe('held-state');
    expect(back.searchParams.get('code')).toBeNull();
    expect(await refusals(t)).toContain('unmet_requirements');
    // The journey is over: it gives no new challenge.
    expectError(await post(held.browser, OPTIONS, held.requestId, held.csrf, { purpose: 'sign_in' }), 409, 'journey_ended');

    t.clock.advance(3600);
    const free = await passkeySignIn(await newJourney(t.app, client, { acr_values: 'phr' }), credential);
    expect((await accessClaims(t, (await redeem(t.app, client, codeOf(free.res))).accessToken)).acr).toBe('phr');
  });

  it('a passkey added after signing in with a held passkey is held at least as long', async () => {
    const { t, client } = await setup({ env: { CONNECT_PASSKEY_HOLD: '3600' } });
    const first = await enrolled(t, client);
    const until = (await t.storage.passkeys.findPasskey(first.id))?.heldUntil;
    t.clock.advance(100);
    const journey = await newJourney(t.app, client);
    codeOf((await passkeySignIn(journey, first)).res);
    const second = new SoftwareCredential();
    expect((await enrol(journey.browser, journey.requestId, journey.csrf, second)).statusCode).toBe(200);
    expect((await t.storage.passkeys.findPasskey(second.id))?.heldUntil).toBe(Math.max(until ?? 0, t.clock.nowSeconds() + 3600));
  });

  it('refuses, one answer for all, the audit saying why: no user verification, wrong origin, wrong RP ID, unknown credential, forged signature', async () => {
    const { t, client } = await setup();
    const credential = await enrolled(t, client);
    const cases: Array<[string, (o: { challenge: string }) => Record<string, unknown>]> = [
      ['user_verification', (o) => credential.assert(o, RIGHT, { uv: false })],
      ['origin', (o) => credential.assert(o, { ...RIGHT, origin: 'https://auth.connect.test.evil.example' })],
      ['rp_id', (o) => credential.assert(o, { ...RIGHT, rpId: 'evil.example' })],
      ['unknown_credential', (o) => new SoftwareCredential().assert(o, RIGHT)],
      [
        'signature',
        (o) => {
          const made = new SoftwareCredential().assert(o, RIGHT) as { response: Record<string, string> };
          return { ...made, id: credential.id, rawId: credential.id };
        },
      ],
    ];
    for (const [reason, answer] of cases) {
      const journey = await newJourney(t.app, client);
      expectError((await passkeySignIn(journey, credential, answer)).res, 400, 'passkey_refused');
      expect((await refusals(t)).at(-1), reason).toBe(reason);
    }
    expect(await t.storage.customerSessions.endCustomerSessionsOf('none', 0)).toBe(0);
    // No secrets in the audit details.
    for (const event of await t.storage.audit.listAuditEvents({ type: 'customer.passkey_refused', limit: 100 })) {
      expect(JSON.stringify(event.details)).not.toMatch(/"(challenge|signature|clientDataJSON|authenticatorData)":/);
    }
  });

  it('refuses a replayed answer (passkey_expired) and a counter that did not advance', async () => {
    const { t, client } = await setup();
    const credential = await enrolled(t, client, new SoftwareCredential({ counter: 5 }));
    const journey = await newJourney(t.app, client);
    const first = await passkeySignIn(journey, credential);
    codeOf(first.res);
    // The same answer again, in a new journey of the same browser: its challenge was used.
    const again = await newJourney(t.app, client);
    const replay = await post(again.browser, SIGN_IN, again.requestId, again.csrf, { credential: JSON.stringify(first.answer) });
    expectError(replay, 400, 'passkey_expired');
    // A fresh challenge, but the counter stays where it was (a cloned authenticator).
    const cloned = await passkeySignIn(await newJourney(t.app, client), credential, (o) => credential.assert(o, RIGHT, {}, 6));
    expectError(cloned.res, 400, 'passkey_refused');
    expect(await refusals(t)).toContain('counter');
  });

  it('refuses an expired challenge', async () => {
    const { t, client } = await setup();
    const credential = await enrolled(t, client);
    const journey = await newJourney(t.app, client);
    const { res } = await passkeySignIn(journey, credential, (o) => {
      t.clock.advance(301);
      return credential.assert(o, RIGHT);
    });
    expectError(res, 400, 'passkey_expired');
  });

  it("with the client's user_id signs in only that customer's passkey, and offers only theirs", async () => {
    const { t, client } = await setup();
    const mine = await enrolled(t, client);
    await addCustomer(t, OTHER_MOBILE);
    const theirs = await enrolled(t, client, new SoftwareCredential(), OTHER_MOBILE);
    const journey = await newJourney(t.app, client, { user_id: MOBILE });
    const options = await post(journey.browser, OPTIONS, journey.requestId, journey.csrf, { purpose: 'sign_in' });
    expect(options.json<{ allowCredentials: Array<{ id: string }> }>().allowCredentials.map((c) => c.id)).toEqual([mine.id]);
    const res = await post(journey.browser, SIGN_IN, journey.requestId, journey.csrf, { credential: JSON.stringify(theirs.assert(options.json(), RIGHT)) });
    expectError(res, 400, 'passkey_refused');
    expect(await refusals(t)).toContain('wrong_customer');
  });

  it("a locked customer's passkey is refused (customers lock suspends it), and after unlock it signs in again", async () => {
    const { t, client, customer } = await setup();
    const credential = await enrolled(t, client);
    await t.storage.transaction((tx) => lockCustomer(customer.profileId, tx, t.clock.nowSeconds()));
    expectError((await passkeySignIn(await newJourney(t.app, client), credential)).res, 400, 'passkey_refused');
    expect(await refusals(t)).toContain('suspended');
  });

  it('counts refusals against the address like wrong PINs: a limited address gets too_many_attempts with retry_after', async () => {
    const { t, client } = await setup({ env: { CONNECT_PIN_LIMIT_PER_ADDRESS: '3' } });
    const credential = await enrolled(t, client);
    for (let i = 0; i < 3; i++) {
      expectError((await passkeySignIn(await newJourney(t.app, client), credential, (o) => credential.assert(o, RIGHT, { uv: false }))).res, 400, 'passkey_refused');
    }
    const limited = expectError((await passkeySignIn(await newJourney(t.app, client), credential)).res, 429, 'too_many_attempts');
    expect(limited.retry_after).toBeGreaterThan(0);
  });

  it("a stranger's refused answers in journeys with the owner's user_id lock out neither the owner's one-time PIN nor their passkey", async () => {
    const { t, client } = await setup();
    const credential = await enrolled(t, client);
    // A stranger who knows only the mobile: 12 junk answers, then 12 forged ones, from one address.
    const stranger = { remoteAddress: '198.51.100.9' };
    for (let i = 0; i < 12; i++) {
      const browser = new Browser(t.app, stranger);
      const { page, requestId } = await startLogin(browser, authorizeParams(client, { user_id: MOBILE }));
      expectError(await post(browser, SIGN_IN, requestId, csrfToken(page.body), { credential: 'not json' }), 400, 'passkey_refused');
      const forged = await passkeySignIn({ browser, requestId, csrf: csrfToken(page.body) }, credential, (o) => new SoftwareCredential().assert(o, RIGHT));
      expectError(forged.res, 400, 'passkey_refused');
    }
    // The owner, elsewhere: PIN + SMS with user_id completes.
    const owner = new Browser(t.app, { remoteAddress: '203.0.113.77' });
    const { page } = await startLogin(owner, authorizeParams(client, { user_id: MOBILE }));
    const otpPage = await submitCredentials(owner, page, undefined, PIN);
    expectClientRedirect(await browser303(owner, otpPage), REDIRECT_URI);
    // And their passkey with user_id signs in.
    const again = new Browser(t.app, { remoteAddress: '203.0.113.78' });
    const started = await startLogin(again, authorizeParams(client, { user_id: MOBILE }));
    codeOf((await passkeySignIn({ browser: again, requestId: started.requestId, csrf: csrfToken(started.page.body) }, credential)).res);
  });

  it("a stranger's 5 wrong PINs lock PIN login only: the owner's passkey, open session, sign-in past its PIN and code already issued all end in tokens", async () => {
    const { t, client } = await setup();
    const credential = await enrolled(t, client);
    // The owner: signed in on a phone (its code not yet exchanged), and half-way through a sign-in on a tablet.
    const phone = new Browser(t.app, { remoteAddress: '203.0.113.77' });
    const { res: signedIn } = await signInWithPin(phone, client, false);
    const issued = expectClientRedirect(signedIn).get('code') ?? '';
    const tablet = new Browser(t.app, { remoteAddress: '203.0.113.78' });
    const halfWay = await submitCredentials(tablet, (await startLogin(tablet, authorizeParams(client))).page, MOBILE, PIN);

    // A stranger who knows only the mobile: 5 wrong PINs lock its PIN login.
    const stranger = new Browser(t.app, { remoteAddress: '198.51.100.9' });
    let guess: Response | undefined;
    for (let i = 0; i < 5; i++) guess = await stranger.submit((await startLogin(stranger, authorizeParams(client))).page, { mobile: MOBILE, pin: '000000', action: 'login' });
    expect(pageText(guess?.body ?? '')).toContain('Too many wrong PINs');
    const lockedUntil = (await t.storage.customers.findCustomerByMobile(MOBILE))?.lockedUntil;
    expect(lockedUntil).toBeGreaterThan(t.clock.nowSeconds());

    // Each of the owner's ways in that needs no PIN check now ends in tokens.
    await redeem(t.app, client, issued);
    await redeem(t.app, client, expectClientRedirect(await browser303(tablet, halfWay)).get('code') ?? '');
    await redeem(t.app, client, expectClientRedirect(await phone.get(authorizeUrl(authorizeParams(client, { prompt: 'none' })))).get('code') ?? '');
    const journey = await newJourney(t.app, client, { user_id: MOBILE });
    await redeem(t.app, client, codeOf((await passkeySignIn(journey, credential)).res));
    // PIN login itself stays locked, even against the right PIN, and nothing above lifted the lock.
    const owner = new Browser(t.app, { remoteAddress: '203.0.113.79' });
    const refused = await owner.submit((await startLogin(owner, authorizeParams(client))).page, { mobile: MOBILE, pin: PIN, action: 'login' });
    expect(pageText(refused.body)).toContain('Too many wrong PINs');
    expect((await t.storage.customers.findCustomerByMobile(MOBILE))?.lockedUntil).toBe(lockedUntil);
  });

  it('answers a malformed credential, or none, with passkey_refused, never a 500', async () => {
    const { t, client } = await setup();
    for (const credential of ['', 'null', '[]', '{"id":"x","type":"public-key","response":{}}', JSON.stringify({ id: 'x', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' } })]) {
      const journey = await newJourney(t.app, client);
      expectError(await post(journey.browser, SIGN_IN, journey.requestId, journey.csrf, { credential }), 400, 'passkey_refused');
    }
    const browser = new Browser(t.app);
    const { requestId, csrf } = await signInWithPin(browser, client, true);
    expectError(await post(browser, ENROL, requestId, csrf, { credential: '{"id":"x"}' }), 400, 'passkey_refused');
  });
});

/** One answer posted `count` times at once, spread over the instances: exactly one sign-in. */
async function expectOneSignIn({ apps, t, raw }: Instances, count = 10): Promise<void> {
  const client = await t.createClient();
  await addCustomer(t);
  const credential = await enrolled(t, client);
  const sessionsBefore = await raw.count('customer_sessions');
  const journey = await newJourney(apps[0] as FastifyInstance, client);
  const options = await post(journey.browser, OPTIONS, journey.requestId, journey.csrf, { purpose: 'sign_in' });
  const body = { csrf_token: journey.csrf, credential: JSON.stringify(credential.assert(options.json(), RIGHT)) };
  const responses = await Promise.all(
    Array.from({ length: count }, (_, i) => journey.browser.via(apps[i % apps.length] as FastifyInstance).post(`${SIGN_IN}?request=${journey.requestId}`, body)),
  );
  const ok = responses.filter((res) => res.statusCode === 200);
  expect(ok).toHaveLength(1);
  for (const res of responses.filter((r) => r.statusCode !== 200)) expect(res.statusCode).toBeLessThan(500);
  expect(await raw.count('customer_sessions')).toBe(sessionsBefore + 1);
  expect(await raw.count('authorization_codes', "code_hash is not null")).toBeGreaterThan(0);
  expect((await t.storage.audit.listAuditEvents({ type: 'customer.passkey_used', limit: 100 })).length).toBe(1);
}

/** A write of the passkey sign-in fails: a 503, nothing of the sign-in is left; once it works, a new answer signs in. */
async function expectAllOrNothing({ t, raw }: Instances, table: string, event: 'INSERT' | 'UPDATE', when?: string): Promise<void> {
  const client = await t.createClient();
  await addCustomer(t);
  const credential = await enrolled(t, client);
  const counts = async () => ({
    sessions: await raw.count('customer_sessions'),
    codes: await raw.count('authorization_codes'),
    consents: await raw.count('consents'),
  });
  const before = await counts();
  const journey = await newJourney(t.app, client);
  const restore = await raw.failWrites(table, event, when);
  const failed = await passkeySignIn(journey, credential);
  expect(failed.res.statusCode).toBe(503);
  expect(failed.res.cookies.filter((c) => c.name === 'connect_session')).toEqual([]);
  expect(await counts()).toEqual(before);
  expect((await t.storage.authorizationRequests.findAuthorizationRequest(hashCookieValue(journey.requestId)))?.status).toBe('pending');
  await restore();
  codeOf((await passkeySignIn(journey, credential)).res);
  expect(await counts()).toEqual({ sessions: before.sessions + 1, codes: before.codes + 1, consents: before.consents });
}

const FAILING_WRITES = [
  ['moving the journey', 'authorization_requests', 'UPDATE', "NEW.status = 'code_issued'"],
  ['starting the session', 'customer_sessions', 'INSERT', undefined],
  ['issuing the code', 'authorization_codes', 'INSERT', undefined],
] as const;

const onSqlite = useSqliteInstances('connect-passkeys-');

describe('one passkey answer posted many times at once on SQLite', () => {
  it('signs in exactly once', async () => {
    await expectOneSignIn(await onSqlite());
  });

  it.each(FAILING_WRITES)('a passkey sign-in is all or nothing: %s fails', async (_name, table, event, when) => {
    await expectAllOrNothing(await onSqlite(), table, event, when);
  });
});

noticePostgresSkipped('passkeys on PostgreSQL');

describe.skipIf(!postgresAdminUrl)('passkeys on PostgreSQL', () => {
  const instances = usePostgresInstances();
  it('one answer posted 10 times at once signs in exactly once', async () => {
    await expectOneSignIn(await instances.one());
  });

  it.each(FAILING_WRITES)('a passkey sign-in is all or nothing: %s fails', async (_name, table, event, when) => {
    await expectAllOrNothing(await instances.one(), table, event, when);
  });

  it('one answer posted 10 times at once over two instances with their own pools signs in exactly once', async () => {
    await expectOneSignIn(await instances.two());
  });

  it('enrols and signs in with a passkey, no SMS sent', async () => {
    const { t } = await instances.one();
    const client = await t.createClient();
    await addCustomer(t);
    const credential = await enrolled(t, client);
    const sms = (await outbox(t.app, MOBILE)).length;
    codeOf((await passkeySignIn(await newJourney(t.app, client), credential)).res);
    expect(await outbox(t.app, MOBILE)).toHaveLength(sms);
  });

  it('customers lock on one instance: a passkey sign-in on the other is refused within a second', async () => {
    const { apps, t } = await instances.two();
    const client = await t.createClient();
    const customer = await addCustomer(t);
    const credential = await enrolled(t, client);
    const other = apps[1] as FastifyInstance;
    codeOf((await passkeySignIn(await newJourney(other, client), credential)).res);
    await t.storage.transaction((tx) => lockCustomer(customer.profileId, tx, t.clock.nowSeconds()));
    await changeReached(async () => {
      const { res } = await passkeySignIn(await newJourney(other, client), credential);
      return res.statusCode === 400 && res.json<{ error: string }>().error === 'passkey_refused';
    });
    expect(await refusals(t)).toContain('suspended');
  });
});
