import { describe, expect, it } from 'vitest';
import { hashCookieValue } from '../../../src/core/journey/session.js';
import { build } from '../../helpers/build.js';
import { appWithClient } from '../../helpers/builders.js';
import {
  addCustomer,
  attribute,
  authorizeParams,
  authorizeUrl,
  Browser,
  enterOtp,
  expectClientRedirect,
  expectErrorRedirect,
  expectPage,
  expectSeeOther,
  findTag,
  inputTag,
  logIn,
  MASKED_MOBILE,
  MOBILE,
  OTHER_MOBILE,
  outbox,
  pageText,
  PIN,
  pkcePair,
  REDIRECT_URI,
  startLogin,
  submitCredentials,
} from '../../helpers/customer-flow.js';

/** Parameters that would each be a redirect error, to show they are never reached before the client checks. */
const ALSO_WRONG = { response_type: 'token', prompt: 'bogus', user_id: 'abc', code_challenge_method: 'plain', state: 's1' };

describe('GET /authorize: an unverified client or redirect URI gets an error page, never a redirect', () => {
  const cases: ReadonlyArray<{ name: string; query: (clientId: string) => string; message: string }> = [
    { name: 'no client_id', query: () => authorizeUrl({ redirect_uri: REDIRECT_URI, ...ALSO_WRONG }), message: 'The request does not name the application (client_id is missing).' },
    { name: 'empty client_id', query: () => authorizeUrl({ client_id: '', redirect_uri: REDIRECT_URI, ...ALSO_WRONG }), message: 'The request does not name the application (client_id is missing).' },
    { name: 'unknown client', query: () => authorizeUrl({ client_id: 'cid_sandbox_nobody', redirect_uri: REDIRECT_URI, ...ALSO_WRONG }), message: 'The application that sent you here is not known.' },
    { name: 'a 10 KB client_id', query: () => authorizeUrl({ client_id: 'c'.repeat(10_000), redirect_uri: REDIRECT_URI }), message: 'The application that sent you here is not known.' },
    {
      name: 'client_id twice',
      query: (id) => `/authorize?client_id=${id}&client_id=${id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code`,
      message: 'client_id is repeated.',
    },
    { name: 'no redirect_uri', query: (id) => authorizeUrl({ client_id: id, ...ALSO_WRONG }), message: 'The request does not say where to send you back (redirect_uri is missing).' },
    {
      name: 'redirect_uri twice (both the registered one)',
      query: (id) => `/authorize?client_id=${id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&response_type=code`,
      message: 'redirect_uri is repeated.',
    },
    ...[
      ['a trailing slash', 'https://acme.example/callback/'],
      ['an upper-case host', 'https://ACME.example/callback'],
      ['an upper-case path', 'https://acme.example/Callback'],
      ['an extra query', 'https://acme.example/callback?next=/home'],
      ['an empty query', 'https://acme.example/callback?'],
      ['a fragment', 'https://acme.example/callback#x'],
      ['http instead of https', 'http://acme.example/callback'],
      ['the default port spelt out', 'https://acme.example:443/callback'],
      ['a percent-encoded path', 'https://acme.example/%63allback'],
      ['a dot segment', 'https://acme.example/x/../callback'],
      ['a longer path', 'https://acme.example/callbackx'],
      ['a sub-path', 'https://acme.example/callback/evil'],
      ['another host ending in the same name', 'https://evil-acme.example/callback'],
      ['the host as a sub-domain of another', 'https://acme.example.evil.test/callback'],
      ['userinfo', 'https://acme.example@evil.test/callback'],
      ['leading space', ' https://acme.example/callback'],
    ].map(([variant, uri]) => ({
      name: `redirect_uri with ${variant}`,
      query: (id: string) => authorizeUrl({ client_id: id, redirect_uri: uri, ...ALSO_WRONG }),
      message: 'The return address is not the one registered for Acme.',
    })),
  ];

  it.each(cases)('$name → 400 page', async ({ query, message }) => {
    const { t, client } = await appWithClient();
    const res = await t.app.inject({ method: 'GET', url: query(client.id) });
    expectPage(res, 400);
    expect(res.headers.location).toBeUndefined();
    expect(pageText(res.body)).toContain(message);
    // Nothing on the page leads to the unverified address: the sandbox shows it as text only (below).
    expect(res.body.replace(/<code>[^<]*<\/code>/g, '')).not.toMatch(/evil|http-equiv|<form|<a\s/i);
    expect(res.headers['content-security-policy']).toContain("form-action 'self';");
  });

  it('a disabled client → 400 page naming it', async () => {
    const { t, client } = await appWithClient();
    await t.storage.clients.updateClient(client.id, { status: 'disabled' }, t.clock.nowSeconds());
    const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client)) });
    expectPage(res, 400);
    expect(pageText(res.body)).toContain('Acme cannot sign customers in right now.');
  });

  it('a mismatched redirect URI: in the sandbox the page shows the registered and the received one (its query masked, HTML escaped); the log line says the same in both environments', async () => {
    const received = 'https://evil.example/cb?code=secret<script>#frag';
    for (const environment of ['sandbox', 'production'] as const) {
      const t = await build({ environment, captureLogs: true });
      const client = await t.createClient({ name: 'Acme', redirectUri: 'https://acme.example/callback?tenant=7' });
      const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client, { redirect_uri: received })) });
      expectPage(res, 400);
      expect(res.headers.location).toBeUndefined();
      expect(res.body).not.toMatch(/secret|<script>|frag|<a\s|<form|http-equiv/);
      const shown = pageText(res.body);
      expect(shown).toContain('The return address is not the one registered for Acme.');
      if (environment === 'sandbox') {
        expect(res.body).toContain('<code>https://acme.example/callback?tenant=7</code>');
        expect(res.body).toContain('<code>https://evil.example/cb?…</code>');
        expect(shown).toContain('They must be equal, character for character');
      } else {
        expect(res.body).not.toMatch(/acme\.example|evil\.example|Sandbox/);
      }
      const lines = t.logs.filter((line) => line.includes('redirect_uri is not the one registered'));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] as string)).toMatchObject({ clientId: client.id, registeredRedirectUri: 'https://acme.example/callback?…', receivedRedirectUri: 'https://evil.example/cb?…' });
      expect(lines[0]).not.toMatch(/secret|tenant|frag/);
    }
  });

  it("another client's redirect URI → 400 page", async () => {
    const { t, client } = await appWithClient();
    await t.createClient({ name: 'Other', redirectUri: 'https://other.example/cb' });
    const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client, { redirect_uri: 'https://other.example/cb' })) });
    expectPage(res, 400);
    expect(pageText(res.body)).toContain('The return address is not the one registered for Acme.');
  });
});

describe('GET /authorize: request errors go back to the verified redirect URI', () => {
  const cases: ReadonlyArray<{ name: string; params: Record<string, string | undefined>; error: string; description: string }> = [
    { name: 'no response_type', params: { response_type: undefined }, error: 'invalid_request', description: 'response_type is required' },
    { name: 'response_type=token', params: { response_type: 'token' }, error: 'unsupported_response_type', description: 'response_type must be code' },
    { name: 'response_type="code id_token"', params: { response_type: 'code id_token' }, error: 'unsupported_response_type', description: 'response_type must be code' },
    { name: 'response_type=CODE', params: { response_type: 'CODE' }, error: 'unsupported_response_type', description: 'response_type must be code' },
    ...['consent', 'LOGIN', 'login none', 'select_account'].map((prompt) => ({
      name: `prompt=${prompt}`,
      params: { prompt },
      error: 'invalid_request',
      description: 'prompt must be login or none',
    })),
    ...['09171234567', 'abc', '+1', '+63917', '639171234567', '+63917123456789', '+63 917 ABC 4567'].map((userId) => ({
      name: `user_id=${userId}`,
      params: { user_id: userId },
      error: 'invalid_request',
      description: 'user_id must be a mobile number in international (E.164) format, e.g. +639171234567',
    })),
    { name: 'code_challenge_method=plain', params: { code_challenge: pkcePair().challenge, code_challenge_method: 'plain' }, error: 'invalid_request', description: 'code_challenge_method must be S256' },
    { name: 'a challenge without a method (plain by default)', params: { code_challenge: pkcePair().challenge }, error: 'invalid_request', description: 'code_challenge_method must be S256' },
    { name: 'code_challenge_method=s256', params: { code_challenge: pkcePair().challenge, code_challenge_method: 's256' }, error: 'invalid_request', description: 'code_challenge_method must be S256' },
    { name: 'a method without a challenge', params: { code_challenge_method: 'S256' }, error: 'invalid_request', description: 'code_challenge_method without code_challenge' },
    ...[
      ['42 characters', 'a'.repeat(42)],
      ['44 characters', 'a'.repeat(44)],
      ['base64 padding', `${'a'.repeat(42)}=`],
      ['+ and /', `${'a'.repeat(41)}+/`],
      ['a verifier-length value of 128', 'a'.repeat(128)],
    ].map(([shape, challenge]) => ({
      name: `a challenge of ${shape}`,
      params: { code_challenge: challenge, code_challenge_method: 'S256' },
      error: 'invalid_request',
      description: 'code_challenge must be 43 base64url characters (S256)',
    })),
  ];

  it.each(cases)('$name → $error', async ({ params, error, description }) => {
    const { t, client } = await appWithClient();
    const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client, params)) });
    expect(expectErrorRedirect(res, error, 'xyz-state')).toBe(description);
  });

  it('a client without the authorization_code grant → unauthorized_client', async () => {
    const t = await build();
    const client = await t.createClient({ grants: ['client_credentials'] });
    const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client)) });
    expect(expectErrorRedirect(res, 'unauthorized_client', 'xyz-state')).toBe('this client is not allowed the authorization_code grant');
  });

  it('a client created with requirePkce and no challenge → invalid_request; with one → the login page', async () => {
    const t = await build();
    const client = await t.createClient({ requirePkce: true });
    const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client)) });
    expect(expectErrorRedirect(res, 'invalid_request', 'xyz-state')).toBe('this client must use PKCE: code_challenge with code_challenge_method=S256');
    const { challenge } = pkcePair();
    await startLogin(new Browser(t.app), authorizeParams(client, { code_challenge: challenge, code_challenge_method: 'S256' }));
  });

  it('checks in order: response_type, grant, prompt, user_id, PKCE', async () => {
    const t = await build();
    const noGrant = await t.createClient({ name: 'No grant', grants: ['client_credentials'] });
    const client = await t.createClient();
    const steps: ReadonlyArray<[{ id: string }, Record<string, string | undefined>, string, string]> = [
      [noGrant, { response_type: undefined, prompt: 'x', user_id: 'x', code_challenge_method: 'plain' }, 'invalid_request', 'response_type is required'],
      [noGrant, { response_type: 'token', prompt: 'x', user_id: 'x', code_challenge_method: 'plain' }, 'unsupported_response_type', 'response_type must be code'],
      [noGrant, { prompt: 'x', user_id: 'x', code_challenge_method: 'plain' }, 'unauthorized_client', 'this client is not allowed the authorization_code grant'],
      [client, { prompt: 'x', user_id: 'x', code_challenge_method: 'plain' }, 'invalid_request', 'prompt must be login or none'],
      [client, { prompt: 'login', user_id: 'x', code_challenge_method: 'plain' }, 'invalid_request', 'user_id must be a mobile number in international (E.164) format, e.g. +639171234567'],
      [client, { prompt: 'login', user_id: MOBILE, code_challenge_method: 'plain' }, 'invalid_request', 'code_challenge_method without code_challenge'],
    ];
    for (const [who, params, error, description] of steps) {
      const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(who, params)) });
      expect(expectErrorRedirect(res, error, 'xyz-state')).toBe(description);
    }
  });

  describe('user_id a one-time PIN cannot be sent to (docs/operator-guide.md, "SMS budgets")', () => {
    const CANNOT_SEND = 'user_id is a mobile number Connect cannot send codes to';

    it('a mobile of a country CONNECT_SMS_COUNTRIES lists: the journey starts as before', async () => {
      const t = await build({ env: { CONNECT_SMS_COUNTRIES: 'SG,PH' } });
      const client = await t.createClient();
      for (const userId of ['+6591234567', MOBILE]) {
        const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client, { user_id: userId })) });
        expectSeeOther(res, /^\/login\?request=/);
      }
    });

    it('a mobile of a country CONNECT_SMS_COUNTRIES does not list → invalid_request, with state and iss, and no journey', async () => {
      const t = await build({ env: { CONNECT_SMS_COUNTRIES: 'SG' } });
      const client = await t.createClient();
      const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client, { user_id: MOBILE })) });
      expect(expectErrorRedirect(res, 'invalid_request', 'xyz-state')).toBe(CANNOT_SEND);
      // The same mobile in another spelling is the same number.
      const spaced = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client, { user_id: '+63 917 123 4567' })) });
      expect(expectErrorRedirect(spaced, 'invalid_request', 'xyz-state')).toBe(CANNOT_SEND);
    });

    it.each([
      ['an Iridium satellite phone', '+881631234567'],
      ['an international network number', '+8823123456789'],
    ])('%s → invalid_request, whatever CONNECT_SMS_COUNTRIES says', async (_why, userId) => {
      const { t, client } = await appWithClient();
      const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client, { user_id: userId })) });
      expect(expectErrorRedirect(res, 'invalid_request', 'xyz-state')).toBe(CANNOT_SEND);
    });

    it.each([
      ['a US premium-rate number', '+19005550123'],
      ['a French shared-cost number', '+33810123456'],
    ])('%s is no mobile number → invalid_request', async (_why, userId) => {
      const { t, client } = await appWithClient();
      const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client, { user_id: userId })) });
      expect(expectErrorRedirect(res, 'invalid_request', 'xyz-state')).toBe('user_id must be a mobile number in international (E.164) format, e.g. +639171234567');
    });
  });

  it('echoes state unchanged, odd characters included, and sends none when none was given', async () => {
    const { t, client } = await appWithClient();
    for (const state of ['a b&c=d/é?#%20+😀', '  ', '<script>alert(1)</script>', 'x'.repeat(2048), '%zz']) {
      const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client, { state, response_type: 'token' })) });
      expectErrorRedirect(res, 'unsupported_response_type', state);
    }
    const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client, { state: undefined, response_type: 'token' })) });
    expectErrorRedirect(res, 'unsupported_response_type', null);
  });

  it('keeps the query of the registered redirect URI exactly as registered', async () => {
    const t = await build();
    const redirectUri = 'https://acme.example/cb?tenant=7&next=a%20b&flag&tilde=%7E';
    const client = await t.createClient({ redirectUri });
    const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams({ id: client.id, redirectUri }, { response_type: 'token' })) });
    const location = String(res.headers.location);
    expect(location).toBe(
      `${redirectUri}&error=unsupported_response_type&error_description=response_type+must+be+code&state=xyz-state&iss=${encodeURIComponent('https://auth.connect.test')}`,
    );
  });

  it('refuses repeated and over-long parameters once the redirect URI is verified, never with a 500', async () => {
    const { t, client } = await appWithClient();
    const base = `/authorize?client_id=${client.id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`;
    const cases: ReadonlyArray<[string, string, string | null]> = [
      [`${base}&response_type=code&response_type=code&state=s`, 'response_type is repeated', 's'],
      [`${base}&response_type=code&state=a&state=b`, 'state is repeated', null],
      [`${base}&response_type=code&user_id=${encodeURIComponent(MOBILE)}&user_id=${encodeURIComponent(MOBILE)}&state=s`, 'user_id is repeated', 's'],
      // A name Connect does not read is not repeated back: it could be anything.
      [`${base}&response_type=code&state=s&padding=${'a'.repeat(10_240)}`, 'a parameter is too long', 's'],
      [`${base}&response_type=code&state=s&x%22HOSTILE%5C%C3%A9=1&x%22HOSTILE%5C%C3%A9=2`, 'a parameter is repeated', 's'],
      [`${base}&response_type=code&state=s&user_id=${'9'.repeat(10_240)}`, 'user_id is too long', 's'],
      [`${base}&response_type=code&state=${'s'.repeat(10_240)}`, 'state is too long', null],
    ];
    for (const [url, description, state] of cases) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(expectErrorRedirect(res, 'invalid_request', state)).toBe(description);
    }
  });

  it('answers malformed query strings with a 400 page or an error redirect, never a 500', async () => {
    const { t, client } = await appWithClient();
    const base = `client_id=${client.id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`;
    const cases: ReadonlyArray<[string, 'page' | 'invalid_request' | 'unsupported_response_type' | 'login page']> = [
      ['/authorize?%zz', 'page'],
      ['/authorize?client_id=%zz', 'page'],
      [`/authorize?client_id=${client.id}&redirect_uri=%zz`, 'page'],
      [`/authorize?client_id=${client.id}&redirect_uri=${'%'.repeat(3000)}`, 'page'],
      ['/authorize?&&&==&', 'page'],
      [`/authorize?${'x'.repeat(10_240)}`, 'page'],
      [`/authorize?${base}&response_type=%zz`, 'unsupported_response_type'],
      [`/authorize?${base}&response_type=code&user_id=%zz`, 'invalid_request'],
      [`/authorize?${base}&response_type=code&code_challenge=%ff&code_challenge_method=S256`, 'invalid_request'],
      [`/authorize?${base}&response_type[]=code`, 'invalid_request'],
      // A control character anywhere: a page before anything is read (docs/journey.md), even with a verified redirect URI.
      [`/authorize?${base}&response_type=code&prompt=%00`, 'page'],
      // RFC 6749 §3.1: unrecognised parameters are ignored.
      [`/authorize?${base}&%zz=1&response_type=code`, 'login page'],
    ];
    for (const [url, outcome] of cases) {
      const res = await t.app.inject({ method: 'GET', url });
      if (outcome === 'page') expectPage(res, 400);
      else if (outcome !== 'login page') expectErrorRedirect(res, outcome, null);
      else expectSeeOther(res, /^\/login\?request=[A-Za-z0-9_-]{43}$/);
    }
  });
});

describe('GET /authorize: prompt, user_id and the customer session', () => {
  it('prompt=none without a session → login_required', async () => {
    const { t, client } = await appWithClient();
    const res = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client, { prompt: 'none' })) });
    expect(expectErrorRedirect(res, 'login_required', 'xyz-state')).toBe('the customer must log in');
  });

  it('no user_id → the login page with an empty, editable mobile field and a link to register', async () => {
    const { t, client } = await appWithClient();
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client));
    const mobile = inputTag(page.body, 'mobile');
    expect(attribute(mobile, 'value')).toBe('');
    expect(attribute(mobile, 'readonly')).toBeUndefined();
    expect(page.body).toContain(`<a href="/register?request=${requestId}">`);
    const register = await browser.open(`/register?request=${requestId}`);
    expectPage(register, 200);
    expect(attribute(inputTag(register.body, 'mobile'), 'value')).toBe('');
    expect(inputTag(register.body, 'pin_confirmation')).toBeDefined();
  });

  it('user_id of a registered account → the login page with that mobile, read-only; the server ignores any other mobile posted', async () => {
    const { t, client } = await appWithClient();
    const customer = await addCustomer(t);
    // Another account with the same PIN: posting its mobile must still log in the user_id's account.
    await addCustomer(t, OTHER_MOBILE, PIN);
    const browser = new Browser(t.app);
    const { page, requestId } = await startLogin(browser, authorizeParams(client, { user_id: MOBILE }));
    const mobile = inputTag(page.body, 'mobile');
    expect(attribute(mobile, 'value')).toBe(MOBILE);
    expect(attribute(mobile, 'readonly')).toBe('');
    expect(page.body).not.toContain('/register?');
    // The registration page of this request is not offered.
    expectSeeOther(await browser.get(`/register?request=${requestId}`), new RegExp(`^/login\\?request=${requestId}$`));

    const otpPage = await submitCredentials(browser, page, OTHER_MOBILE, PIN);
    expect(await outbox(t.app, OTHER_MOBILE)).toEqual([]);
    expect(await outbox(t.app, MOBILE)).toHaveLength(1);
    const params = expectClientRedirect(await enterOtp(browser, otpPage, MOBILE));
    expect(params.get('profileId')).toBe(customer.profileId);
    expect(params.get('userId')).toBe(MASKED_MOBILE);
  });

  it('user_id in another international spelling is the same account', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const { page } = await startLogin(new Browser(t.app), authorizeParams(client, { user_id: '+63 917-123-4567' }));
    expect(attribute(inputTag(page.body, 'mobile'), 'value')).toBe(MOBILE);
    expect(attribute(inputTag(page.body, 'mobile'), 'readonly')).toBe('');
  });

  it('user_id not registered → the registration form with that mobile prefilled', async () => {
    const { t, client } = await appWithClient();
    const browser = new Browser(t.app);
    const res = await browser.get(authorizeUrl(authorizeParams(client, { user_id: MOBILE })));
    const login = expectSeeOther(res, /^\/login\?request=/);
    const requestId = new URL(login, 'https://x').searchParams.get('request') ?? '';
    const toRegister = await browser.get(login);
    expectSeeOther(toRegister, new RegExp(`^/register\\?request=${requestId}$`));
    const page = await browser.follow(toRegister);
    expectPage(page, 200);
    const mobile = inputTag(page.body, 'mobile');
    expect(attribute(mobile, 'value')).toBe(MOBILE);
    expect(attribute(mobile, 'readonly')).toBe('');
    expect(inputTag(page.body, 'pin')).toBeDefined();
    expect(inputTag(page.body, 'pin_confirmation')).toBeDefined();
    expect(page.body).not.toContain('/login?');
  });

  it('success: 303 to the redirect URI with code, state, userId (masked), profileId and iss; a new HttpOnly, SameSite=Lax session cookie', async () => {
    const { t, client } = await appWithClient();
    const customer = await addCustomer(t);
    const browser = new Browser(t.app);
    browser.cookies.set('connect_session', 'fixated-by-an-attacker');
    const { page } = await startLogin(browser, authorizeParams(client, { state: 'a b&c=d/é?#%20+😀' }));
    const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
    const res = await enterOtp(browser, otpPage, MOBILE);

    const params = expectClientRedirect(res);
    expect([...params.keys()]).toEqual(['code', 'state', 'userId', 'profileId', 'iss']);
    expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('state')).toBe('a b&c=d/é?#%20+😀');
    expect(params.get('userId')).toBe(MASKED_MOBILE);
    expect(params.get('profileId')).toBe(customer.profileId);
    expect(customer.profileId).toMatch(/^[1-9]\d{11}$/);

    const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).filter((c) => c.startsWith('connect_session='));
    expect(setCookie).toHaveLength(1);
    const [value, ...attributes] = (setCookie[0] ?? '').split('; ');
    expect(value).toMatch(/^connect_session=[A-Za-z0-9_-]{43}$/);
    expect(value).not.toBe('connect_session=fixated-by-an-attacker');
    expect(attributes.sort()).toEqual(['HttpOnly', 'Max-Age=43200', 'Path=/', 'SameSite=Lax']);
    expect(browser.cookies.get('connect_session')).toBe(value?.slice('connect_session='.length));
  });

  it('success keeps the query of the registered redirect URI, and omits state when none was sent', async () => {
    const t = await build();
    const redirectUri = 'https://acme.example/cb?tenant=7&next=a%20b&flag';
    const client = await t.createClient({ redirectUri });
    const customer = await addCustomer(t);
    const params = await logIn(new Browser(t.app), authorizeParams({ id: client.id, redirectUri }, { state: undefined }));
    expect([...params]).toEqual([
      ['tenant', '7'],
      ['next', 'a b'],
      ['flag', ''],
      ['code', params.get('code')],
      ['userId', MASKED_MOBILE],
      ['profileId', customer.profileId],
      ['iss', 'https://auth.connect.test'],
    ]);
  });

  it('in production the session cookie is __Host- and Secure', async () => {
    const t = await build({ environment: 'production' });
    const client = await t.createClient();
    await addCustomer(t);
    const browser = new Browser(t.app);
    const res = await browser.get(authorizeUrl(authorizeParams(client)));
    expect(browser.setCookies.map((c) => [c.name, c.secure, c.httpOnly, c.sameSite, c.path, c.domain])).toEqual([
      ['__Host-connect_browser', true, true, 'Lax', '/', undefined],
    ]);
    const page = await browser.follow(res);
    const otpRes = await browser.submit(page, { mobile: MOBILE, pin: PIN, action: 'login' });
    const otpPage = await browser.follow(otpRes);
    const [sms] = await t.storage.outbox.listOutboxMessages(MOBILE, 1);
    const code = /\b(\d{6})\b/.exec(sms?.body ?? '')?.[1] ?? '';
    const done = await browser.submit(otpPage, { otp: code, action: 'verify' });
    expectClientRedirect(done);
    const session = done.cookies.find((c) => c.name === '__Host-connect_session');
    expect(session).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Lax', path: '/', maxAge: 43_200 });
    expect(session?.domain).toBeUndefined();
    expect(browser.setCookies.every((c) => c.name.startsWith('__Host-') && c.secure === true)).toBe(true);
  });

  it('a live session and no prompt: a code at once, without login or SMS; the code is good', async () => {
    const { t, client } = await appWithClient();
    const customer = await addCustomer(t);
    const browser = new Browser(t.app);
    await logIn(browser, authorizeParams(client));
    const sent = (await outbox(t.app, MOBILE)).length;

    for (const extra of [{}, { user_id: MOBILE }, { prompt: 'none' }, { prompt: 'none', user_id: MOBILE }]) {
      const res = await browser.get(authorizeUrl(authorizeParams(client, { state: 'again', ...extra })));
      const params = expectClientRedirect(res);
      expect([...params.keys()]).toEqual(['code', 'state', 'userId', 'profileId', 'iss']);
      expect(params.get('state')).toBe('again');
      expect(params.get('profileId')).toBe(customer.profileId);
      expect(res.cookies).toEqual([]);
    }
    expect(await outbox(t.app, MOBILE)).toHaveLength(sent);
  });

  it('a live session of another customer than user_id: login is asked for (prompt=none: login_required)', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    await addCustomer(t, OTHER_MOBILE, PIN);
    const browser = new Browser(t.app);
    await logIn(browser, authorizeParams(client));

    const none = await browser.get(authorizeUrl(authorizeParams(client, { prompt: 'none', user_id: OTHER_MOBILE })));
    expectErrorRedirect(none, 'login_required', 'xyz-state');
    const { page } = await startLogin(browser, authorizeParams(client, { user_id: OTHER_MOBILE }));
    expect(attribute(inputTag(page.body, 'mobile'), 'value')).toBe(OTHER_MOBILE);
  });

  it('prompt=login ends the session and forces a new login; the new session has a new ID and the old one stays dead', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const browser = new Browser(t.app);
    await logIn(browser, authorizeParams(client));
    const first = browser.cookies.get('connect_session') ?? '';
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const thief = new Browser(t.app);
    thief.cookies.set('connect_session', first);

    t.clock.advance(10);
    const res = await browser.get(authorizeUrl(authorizeParams(client, { prompt: 'login' })));
    expectSeeOther(res, /^\/login\?request=/);
    const cleared = res.cookies.find((c) => c.name === 'connect_session');
    expect(cleared?.value).toBe('');
    expect(cleared?.expires?.getTime()).toBe(0);
    expect(browser.cookies.has('connect_session')).toBe(false);
    expect((await t.storage.customerSessions.findCustomerSession(hashCookieValue(first)))?.endedAt).toBe(t.clock.nowSeconds());
    // The old cookie, wherever it is, no longer logs anyone in.
    expectErrorRedirect(await thief.get(authorizeUrl(authorizeParams(client, { prompt: 'none' }))), 'login_required', 'xyz-state');

    // Log in again (the login page from this prompt=login request).
    const page = await browser.follow(res);
    const otpPage = await submitCredentials(browser, page, MOBILE, PIN);
    expectClientRedirect(await enterOtp(browser, otpPage, MOBILE));
    const second = browser.cookies.get('connect_session');
    expect(second).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second).not.toBe(first);
    expectErrorRedirect(await thief.get(authorizeUrl(authorizeParams(client, { prompt: 'none' }))), 'login_required', 'xyz-state');
  });

  it("logging in over another customer's live session starts a new session and ends that one (no fixation)", async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const other = await addCustomer(t, OTHER_MOBILE, PIN);
    const browser = new Browser(t.app);
    await logIn(browser, authorizeParams(client));
    const planted = browser.cookies.get('connect_session') ?? '';

    const params = await logIn(browser, authorizeParams(client, { user_id: OTHER_MOBILE }), { mobile: OTHER_MOBILE, pin: PIN });
    expect(params.get('profileId')).toBe(other.profileId);
    const current = browser.cookies.get('connect_session');
    expect(current).not.toBe(planted);
    expect((await t.storage.customerSessions.findCustomerSession(hashCookieValue(planted)))?.endedAt).toBe(t.clock.nowSeconds());
    // The browser is now the other customer's.
    const again = expectClientRedirect(await browser.get(authorizeUrl(authorizeParams(client))));
    expect(again.get('profileId')).toBe(other.profileId);
  });

  it('the session ends after 30 idle minutes', async () => {
    const { t, client } = await appWithClient();
    await addCustomer(t);
    const browser = new Browser(t.app);
    await logIn(browser, authorizeParams(client));
    t.clock.advance(1799);
    expectClientRedirect(await browser.get(authorizeUrl(authorizeParams(client, { prompt: 'none' }))));
    t.clock.advance(1800);
    expectErrorRedirect(await browser.get(authorizeUrl(authorizeParams(client, { prompt: 'none' }))), 'login_required', 'xyz-state');
  });

  it('a pending request expires after 15 minutes', async () => {
    const { t, client } = await appWithClient();
    const browser = new Browser(t.app);
    const { requestId } = await startLogin(browser, authorizeParams(client));
    t.clock.advance(899);
    expectPage(await browser.get(`/login?request=${requestId}`), 200);
    t.clock.advance(1);
    const res = await browser.get(`/login?request=${requestId}`);
    expectPage(res, 400);
    expect(pageText(res.body)).toContain('This sign-in page has expired or was opened in another browser.');
    expect(findTag(res.body, 'input', 'csrf_token')).toBeUndefined();
  });
});
