import { describe, expect, it } from 'vitest';
import { assertionFields, keyClient } from '../../helpers/client-keys.js';
import { DEMO_CLIENT_NAME, demoClientSecret, seedDemo } from '../../../src/demo/seed-demo.js';
import { build, form, TEST_AUTH_URL, type TestApp } from '../../helpers/build.js';
import { addCustomer, authorizeParams, Browser, exchangeCode, expectPage, LEAK, logIn, pageText, PIN, pkcePair } from '../../helpers/customer-flow.js';

/**
 * `GET /sandbox/callback` (docs/operator-guide.md, "One server, one
 * environment"): what a redirect back to a client brought, and the command
 * that exchanges a code. The command itself is run by
 * test/browser/sandbox-callback.test.ts against a real server.
 */

const CALLBACK = `${TEST_AUTH_URL}/sandbox/callback`;

async function demo(t: TestApp) {
  return seedDemo(CALLBACK, { ...t.services.runtime, clients: t.storage.clients, customers: t.storage.customers, environment: 'sandbox' });
}

async function callbackPage(t: TestApp, query: string) {
  const res = await t.app.inject({ method: 'GET', url: `/sandbox/callback${query}` });
  expectPage(res, 200);
  // The code is in the page's URL: it must not leave in a Referer.
  expect(res.headers['referrer-policy']).toBe('no-referrer');
  return { res, text: pageText(res.body), command: /<code id="exchange-command">([^<]*)<\/code>/.exec(res.body)?.[1]?.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, '&') };
}

describe('the sandbox callback page', () => {
  it('visited with nothing: says what it is for', async () => {
    const t = await build();
    const { text, command } = await callbackPage(t, '');
    expect(text).toContain('Nothing came back yet');
    expect(command).toBeUndefined();
  });

  it('an error: shows it and its description, and no command', async () => {
    const t = await build();
    const { text, command } = await callbackPage(t, '?error=access_denied&error_description=the+customer+cancelled&state=s1');
    expect(text).toContain('The sign-in ended with an error');
    expect(text).toContain('access_denied');
    expect(text).toContain('the customer cancelled');
    expect(command).toBeUndefined();
  });

  it("the demo client's code: every parameter, and the command with the client's ID, secret and redirect URI", async () => {
    const t = await build();
    const seeded = await demo(t);
    expect(seeded.clientSecret).toBe(demoClientSecret(t.services.runtime));
    await addCustomer(t, '+639181234321');
    const params = await logIn(new Browser(t.app), authorizeParams({ id: seeded.clientId, redirectUri: CALLBACK }), { mobile: '+639181234321', pin: PIN });
    const { text, command } = await callbackPage(t, `?${params.toString()}`);
    for (const name of ['code', 'state', 'userId', 'profileId', 'iss']) expect(text).toContain(params.get(name) ?? '');
    expect(command).toBe(
      `curl -s -u '${seeded.clientId}:${seeded.clientSecret}' -d grant_type=authorization_code` +
        ` --data-urlencode 'code=${params.get('code')}' --data-urlencode 'redirect_uri=${CALLBACK}' '${TEST_AUTH_URL}/token'`,
    );
    // Once exchanged, the page says so instead of a command that cannot work.
    expect((await exchangeCode(t.app, { id: seeded.clientId, secret: seeded.clientSecret }, { code: params.get('code') ?? '', redirect_uri: CALLBACK })).statusCode).toBe(200);
    const after = await callbackPage(t, `?${params.toString()}`);
    expect(after.command).toBeUndefined();
    expect(after.text).toContain('exchanged already or has expired');
  });

  it("another client's code: its secret and the PKCE verifier are left to fill in", async () => {
    const t = await build();
    const other = await t.createClient({ name: 'Acme', redirectUri: CALLBACK });
    await addCustomer(t);
    const params = await logIn(new Browser(t.app), authorizeParams({ id: other.id, redirectUri: CALLBACK }, { code_challenge: pkcePair().challenge, code_challenge_method: 'S256' }));
    const { command } = await callbackPage(t, `?${params.toString()}`);
    expect(command).toContain(`-u "${other.id}:$CLIENT_SECRET"`);
    expect(command).toContain('--data-urlencode "code_verifier=$CODE_VERIFIER"');
    expect(command).not.toContain(other.secret);
    expect((await t.storage.clients.findClient(other.id))?.name).not.toBe(DEMO_CLIENT_NAME);
  });

  it("says how long the code lives: CONNECT_CODE_TTL, or 60 seconds for a fapi2 client's code, which no shell command can exchange", async () => {
    const t = await build();
    await addCustomer(t);
    const standard = await t.createClient({ name: 'Acme', redirectUri: CALLBACK });
    const params = await logIn(new Browser(t.app), authorizeParams({ id: standard.id, redirectUri: CALLBACK }));
    expect((await callbackPage(t, `?${params.toString()}`)).text).toContain('Run this within 300 seconds');

    const fapi = await t.createClient({ name: 'Bank', redirectUri: CALLBACK });
    const keyed = await keyClient(t, fapi.id, 'fapi2');
    const pushed = await t.app.inject({
      method: 'POST',
      url: '/par',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ response_type: 'code', redirect_uri: CALLBACK, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', ...(await assertionFields(t, keyed)) }),
    });
    const requestUri = pushed.json<{ request_uri: string }>().request_uri;
    const fapiParams = await logIn(new Browser(t.app), { client_id: fapi.id, request_uri: requestUri, redirect_uri: CALLBACK });
    const fapiPage = await callbackPage(t, `?${fapiParams.toString()}`);
    expect(fapiPage.command).toBeUndefined();
    expect(fapiPage.text).toContain('This client is held to FAPI 2.0: it exchanges the code within 60 seconds with a client assertion and a DPoP proof');
  });

  it('an unknown or malformed code, or markup in a parameter: a clear page, escaped, never an error', async () => {
    const t = await build();
    for (const query of ['?code=' + 'A'.repeat(43), '?code=%3Cscript%3E&state=%22%3E%3Cb%3E', '?code=a&code=b']) {
      const { res, text, command } = await callbackPage(t, query);
      expect(command).toBeUndefined();
      expect(text).toContain('Connect does not know this code');
      expect(res.body).not.toContain('<script>');
      expect(res.body).not.toContain('"><b>');
      expect(res.body).not.toMatch(LEAK);
    }
  });

  it('does not exist in production', async () => {
    const t = await build({ environment: 'production' });
    expect((await t.app.inject({ method: 'GET', url: '/sandbox/callback?code=x' })).statusCode).toBe(404);
  });
});
