import { describe, expect, it } from 'vitest';
import { build, TEST_AUTH_URL, type TestApp } from '../../helpers/build.js';
import {
  addCustomer,
  authorizeParams,
  authorizeUrl,
  Browser,
  enterOtp,
  logIn,
  MOBILE,
  OTHER_MOBILE,
  PIN,
  REDIRECT_URI,
  startLogin,
  submitCredentials,
  type Response,
} from '../../helpers/customer-flow.js';

/**
 * RFC 9207 §2: every authorization response carries `iss`, the issuer
 * (Connect's auth URL): every redirect back to the client from the
 * customer's journey, success or error, so a client can tell which
 * authorization server answered.
 */

/** A client whose registered redirect URI has a query of its own. */
const B_REDIRECT = 'https://bayani.example/cb?tenant=7';

interface Context {
  readonly t: TestApp;
  /** Client A (Acme), at {@link REDIRECT_URI}. */
  readonly a: { id: string };
  /** Client B, at {@link B_REDIRECT}. */
  readonly b: { id: string; redirectUri: string };
  readonly browser: Browser;
}

/** The journey up to the one-time-PIN page of `mobile`, through `client`. */
async function toOtpPage({ browser }: Context, client: { id: string; redirectUri?: string }, mobile: string = MOBILE): Promise<Response> {
  const { page } = await startLogin(browser, authorizeParams(client, { user_id: mobile }));
  return submitCredentials(browser, page, mobile, PIN);
}

/** The consent page of client B, after a login through A. */
async function toConsentPage(ctx: Context): Promise<Response> {
  await logIn(ctx.browser, authorizeParams(ctx.a));
  return ctx.browser.open(authorizeUrl(authorizeParams(ctx.b)));
}

const authorize = (ctx: Context, client: { id: string; redirectUri?: string }, extra: Record<string, string | undefined> = {}) =>
  ctx.browser.get(authorizeUrl(authorizeParams(client, extra)));

/** Every way the journey goes back to a client: which client, and how it gets there. */
const REDIRECTS: ReadonlyArray<{ name: string; to: 'a' | 'b'; run(ctx: Context): Promise<Response> }> = [
  { name: 'code: login completed', to: 'a', run: async (ctx) => enterOtp(ctx.browser, await toOtpPage(ctx, ctx.a), MOBILE) },
  {
    name: 'code: registration completed',
    to: 'a',
    run: async (ctx) => {
      // A user_id without an account: the registration page.
      const { page } = await startLogin(ctx.browser, authorizeParams(ctx.a, { user_id: OTHER_MOBILE }));
      const otp = await ctx.browser.follow(await ctx.browser.submit(page, { mobile: OTHER_MOBILE, pin: PIN, pin_confirmation: PIN, action: 'register' }));
      return enterOtp(ctx.browser, otp, OTHER_MOBILE);
    },
  },
  { name: 'code: login completed, redirect URI with a query', to: 'b', run: async (ctx) => enterOtp(ctx.browser, await toOtpPage(ctx, ctx.b), MOBILE) },
  {
    name: 'code: a live session, silently',
    to: 'a',
    run: async (ctx) => {
      await logIn(ctx.browser, authorizeParams(ctx.a));
      return authorize(ctx, ctx.a, { prompt: 'none' });
    },
  },
  { name: 'code: consent approved', to: 'b', run: async (ctx) => ctx.browser.submit(await toConsentPage(ctx), { action: 'approve' }) },
  { name: 'access_denied: cancel on the login page', to: 'a', run: async (ctx) => ctx.browser.submit((await startLogin(ctx.browser, authorizeParams(ctx.a))).page, { action: 'cancel' }) },
  {
    name: 'access_denied: cancel on the registration page',
    to: 'b',
    run: async (ctx) => ctx.browser.submit(await ctx.browser.open(authorizeUrl(authorizeParams(ctx.b, { user_id: OTHER_MOBILE }))), { action: 'cancel' }),
  },
  { name: 'access_denied: cancel on the one-time-PIN page', to: 'a', run: async (ctx) => ctx.browser.submit(await toOtpPage(ctx, ctx.a), { action: 'cancel' }) },
  { name: 'access_denied: cancel on the consent page', to: 'b', run: async (ctx) => ctx.browser.submit(await toConsentPage(ctx), { action: 'cancel' }) },
  { name: 'login_required: prompt=none without a session', to: 'a', run: (ctx) => authorize(ctx, ctx.a, { prompt: 'none' }) },
  {
    name: "login_required: prompt=none, user_id of another customer than the session's",
    to: 'a',
    run: async (ctx) => {
      await logIn(ctx.browser, authorizeParams(ctx.a));
      return authorize(ctx, ctx.a, { prompt: 'none', user_id: OTHER_MOBILE });
    },
  },
  {
    name: 'consent_required: prompt=none, a client not approved',
    to: 'b',
    run: async (ctx) => {
      await logIn(ctx.browser, authorizeParams(ctx.a));
      return authorize(ctx, ctx.b, { prompt: 'none' });
    },
  },
  { name: 'invalid_request: no response_type', to: 'a', run: (ctx) => authorize(ctx, ctx.a, { response_type: undefined }) },
  { name: 'unsupported_response_type', to: 'b', run: (ctx) => authorize(ctx, ctx.b, { response_type: 'token' }) },
  { name: 'invalid_request: a bad prompt', to: 'a', run: (ctx) => authorize(ctx, ctx.a, { prompt: 'consent' }) },
  { name: 'invalid_request: a bad user_id', to: 'b', run: (ctx) => authorize(ctx, ctx.b, { user_id: '09171234567' }) },
  { name: 'invalid_request: PKCE plain', to: 'a', run: (ctx) => authorize(ctx, ctx.a, { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }) },
  {
    name: 'unauthorized_client: a client without the authorization_code grant',
    to: 'a',
    run: async (ctx) => authorize(ctx, await ctx.t.createClient({ name: 'Machine', grants: ['client_credentials'] })),
  },
  {
    name: 'invalid_request: a client that must use PKCE, without it',
    to: 'b',
    run: async (ctx) => authorize(ctx, { ...(await ctx.t.createClient({ name: 'Strict', redirectUri: B_REDIRECT, requirePkce: true })), redirectUri: B_REDIRECT }),
  },
];

describe('every redirect back to the client carries iss, the auth URL (RFC 9207)', () => {
  it.each(REDIRECTS)('$name', async ({ to, run }) => {
    const t = await build();
    await addCustomer(t);
    const a = await t.createClient();
    const b = { ...(await t.createClient({ name: 'Bayani Pay', redirectUri: B_REDIRECT })), redirectUri: B_REDIRECT };
    const res = await run({ t, a, b, browser: new Browser(t.app) });

    expect({ status: res.statusCode, body: res.body }).toEqual({ status: 303, body: '' });
    const location = new URL(String(res.headers.location));
    const redirectUri = new URL(to === 'a' ? REDIRECT_URI : B_REDIRECT);
    expect(`${location.origin}${location.pathname}`).toBe(`${redirectUri.origin}${redirectUri.pathname}`);
    expect(location.searchParams.getAll('iss')).toEqual([t.services.urls.authUrl]);
    expect(t.services.urls.authUrl).toBe(TEST_AUTH_URL);
    // The redirect URI's own query is kept, before the response's parameters.
    for (const [name, value] of redirectUri.searchParams) expect(location.searchParams.getAll(name)).toEqual([value]);
    const sent = [...location.searchParams.keys()].filter((name) => !redirectUri.searchParams.has(name));
    expect(sent.includes('code') || sent.includes('error')).toBe(true);
  });
});
