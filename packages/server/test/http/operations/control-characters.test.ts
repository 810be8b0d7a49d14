import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Storage } from '../../../src/core/storage/storage.js';
import { basicAuth, form, type TestApp } from '../../helpers/build.js';
import { appWithClient } from '../../helpers/builders.js';
import { noticePostgresSkipped, postgresAdminUrl, usePostgresStorage } from '../../helpers/postgres.js';
import { addCustomer, authorizeParams, authorizeUrl, Browser, expectPage, MOBILE, pageText, PIN, startLogin } from '../../helpers/customer-flow.js';
import { postToken, type Credentials } from '../../helpers/wire.js';

/**
 * NUL bytes and other control characters in any parameter: `400
 * invalid_request` (an error page on the hosted pages) before anything
 * reaches the database, on SQLite and on PostgreSQL alike (PostgreSQL
 * refuses a NUL in text outright, which must never surface as a 5xx).
 */

/** The hostile characters, as they travel percent-encoded. */
const HOSTILE: ReadonlyArray<readonly [string, string]> = [
  ['NUL', '\u0000'],
  ['SOH', '\u0001'],
  ['TAB', '\t'],
  ['LF', '\n'],
  ['CR', '\r'],
  ['ESC', '\u001b'],
  ['DEL', '\u007f'],
  ['C1 NEL', '\u0085'],
];

interface Api {
  readonly name: string;
  readonly send: (t: TestApp, client: Credentials, bad: string) => Promise<LightMyRequestResponse>;
}

const API: readonly Api[] = [
  { name: '/token client_id (post)', send: (t, c, bad) => postToken(t.app, { body: form({ grant_type: 'client_credentials', client_id: `${c.id}${bad}`, client_secret: c.secret }) }) },
  { name: '/token client_secret', send: (t, c, bad) => postToken(t.app, { body: form({ grant_type: 'client_credentials', client_id: c.id, client_secret: `${c.secret}${bad}` }) }) },
  { name: '/token grant_type', send: (t, c, bad) => postToken(t.app, { authorization: basicAuth(c.id, c.secret), body: form({ grant_type: `client${bad}credentials` }) }) },
  {
    name: '/token code',
    send: (t, c, bad) =>
      postToken(t.app, { authorization: basicAuth(c.id, c.secret), body: form({ grant_type: 'authorization_code', code: `abc${bad}def`, redirect_uri: 'https://acme.example/callback', code_verifier: 'v'.repeat(43) }) }),
  },
  {
    name: '/token redirect_uri',
    send: (t, c, bad) =>
      postToken(t.app, { authorization: basicAuth(c.id, c.secret), body: form({ grant_type: 'authorization_code', code: 'abc', redirect_uri: `https://acme.example/callback${bad}`, code_verifier: 'v'.repeat(43) }) }),
  },
  { name: '/token refresh_token', send: (t, c, bad) => postToken(t.app, { authorization: basicAuth(c.id, c.secret), body: form({ grant_type: 'refresh_token', refresh_token: `rt${bad}` }) }) },
  { name: '/token a parameter name', send: (t, c, bad) => postToken(t.app, { authorization: basicAuth(c.id, c.secret), body: form([['grant_type', 'client_credentials'], [`x${bad}`, '1']]) }) },
  {
    name: '/introspect token',
    send: (t, c, bad) => t.app.inject({ method: 'POST', url: '/introspect', headers: { authorization: basicAuth(c.id, c.secret), 'content-type': 'application/x-www-form-urlencoded' }, payload: form({ token: `t${bad}` }) }),
  },
  {
    name: '/revoke token',
    send: (t, c, bad) => t.app.inject({ method: 'POST', url: '/revoke', headers: { authorization: basicAuth(c.id, c.secret), 'content-type': 'application/x-www-form-urlencoded' }, payload: form({ token: `t${bad}` }) }),
  },
];

/** /authorize parameters: each bad one answers an error page (never a redirect carrying it, never 5xx). */
const AUTHORIZE_PARAMS = ['client_id', 'redirect_uri', 'state', 'scope', 'user_id', 'code_challenge', 'response_type', 'nonce'] as const;

function describeOn(engine: string, storage: () => Storage | undefined): void {
  describe(`control characters in parameters: ${engine}`, () => {
    const setup = () => {
      const opened = storage();
      return appWithClient({ ...(opened ? { storage: opened } : {}), grants: ['authorization_code', 'client_credentials', 'refresh_token'] });
    };

    it('every API parameter holding one: 400 invalid_request in the OAuth form', async () => {
      const { t, client } = await setup();
      for (const api of API) {
        for (const [name, bad] of HOSTILE) {
          const res = await api.send(t, client, bad);
          expect(res.statusCode, `${api.name} with ${name}`).toBe(400);
          expect(res.json(), `${api.name} with ${name}`).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('control character') });
          expect(res.headers['cache-control']).toBe('no-store');
        }
      }
      // Nothing of them reached the audit log (no failed authentication was even tried).
      expect(await t.storage.audit.listAuditEvents({ type: 'client.authentication_failed', limit: 10 })).toEqual([]);
    });

    it('HTTP Basic credentials holding one (percent-encoded or raw, once decoded): 400 invalid_request at /token, /introspect and /revoke, nothing audited', async () => {
      const { t, client } = await setup();
      const raw = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
      const endpoints = [
        ['/token', form({ grant_type: 'client_credentials' })],
        ['/introspect', form({ token: 'some-token' })],
        ['/revoke', form({ token: 'some-token' })],
      ] as const;
      for (const [url, payload] of endpoints) {
        for (const [name, bad] of [...HOSTILE, ['a forged audit line', `x\n2026-01-01T00:00:00Z client.secret_rotated cli:root\u001b[2J`]] as const) {
          const forms = [
            ['client_id, encoded', basicAuth(`${client.id}${bad}`, client.secret)],
            ['client_id, raw', raw(`${client.id}${bad}`, client.secret)],
            ['client secret, encoded', basicAuth(client.id, `${client.secret}${bad}`)],
          ] as const;
          for (const [which, authorization] of forms) {
            const res = await t.app.inject({ method: 'POST', url, headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' }, payload });
            const label = `${url}, ${which} with ${name}`;
            expect({ label, status: res.statusCode }).toEqual({ label, status: 400 });
            expect(res.json(), label).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('control character') });
            expect(res.headers['cache-control'], label).toBe('no-store');
          }
        }
      }
      // Refused before any lookup: no failed authentication was recorded for them.
      expect(await t.storage.audit.listAuditEvents({ type: 'client.authentication_failed', limit: 10 })).toEqual([]);
    });

    /** Headers for inject(): a list is sent as that header repeated (Node's types allow one Authorization). */
    const repeated = (headers: Record<string, string | string[]>) => headers as Record<string, string>;

    it('two Authorization headers (two clients, or a client and a token): 400 invalid_request, never the first one taken', async () => {
      const { t, client } = await setup();
      const other = await t.createClient({ name: 'Other' });
      const twice = [basicAuth(client.id, client.secret), basicAuth(other.id, other.secret)];
      for (const [url, payload] of [
        ['/token', form({ grant_type: 'client_credentials' })],
        ['/introspect', form({ token: 'some-token' })],
      ] as const) {
        const headers = repeated({ authorization: twice, 'content-type': 'application/x-www-form-urlencoded' });
        const res = await t.app.inject({ method: 'POST', url, headers, payload });
        expect({ url, status: res.statusCode }).toEqual({ url, status: 400 });
        expect(res.json()).toMatchObject({ error: 'invalid_request', error_description: 'the Authorization header is repeated' });
      }
      const bearers = repeated({ authorization: ['Bearer a', 'Bearer b'] });
      const profile = await t.app.inject({ method: 'GET', url: '/customer/profile', headers: bearers });
      expect(profile.statusCode).toBe(400);
      expect(profile.json()).toMatchObject({ error: 'invalid_request', error_description: 'the Authorization header is repeated' });
      // One, in any case of its name, is as before.
      expect((await t.app.inject({ method: 'POST', url: '/token', headers: { AUTHORIZATION: twice[0], 'content-type': 'application/x-www-form-urlencoded' }, payload: form({ grant_type: 'client_credentials' }) })).statusCode).toBe(200);
    });

    it('a header Connect reads holding a C1 control (as a Latin-1 byte on the wire): 400 invalid_request', async () => {
      const { t, client } = await setup();
      const token = await postToken(t.app, { authorization: `${basicAuth(client.id, client.secret)}\u0085`, body: form({ grant_type: 'client_credentials' }) });
      expect(token.statusCode).toBe(400);
      expect(token.json()).toMatchObject({ error: 'invalid_request', error_description: 'the Authorization header contains a control character' });
      const page = await t.app.inject({ method: 'GET', url: authorizeUrl(authorizeParams(client)), headers: { 'accept-language': 'en\u0085' } });
      expect(page.statusCode).toBe(400);
      expect(pageText(page.body)).toContain('control character');
    });

    it('every /authorize parameter holding one: a 400 error page', async () => {
      const { t, client } = await setup();
      for (const param of AUTHORIZE_PARAMS) {
        for (const [name, bad] of HOSTILE) {
          const params = authorizeParams(client);
          const res = await t.app.inject({ method: 'GET', url: authorizeUrl({ ...params, [param]: `${params[param] ?? 'x'}${bad}` }) });
          expect(res.statusCode, `${param} with ${name}`).toBe(400);
          expect(res.headers['content-type']).toMatch(/^text\/html/);
          expect(pageText(res.body)).toContain('control character');
        }
      }
    });

    it('the hosted forms: a field holding one is a 400 page, and nothing is checked or counted', async () => {
      const { t, client } = await setup();
      await addCustomer(t);
      const browser = new Browser(t.app);
      const { page, requestId } = await startLogin(browser, authorizeParams(client));
      for (const [name, bad] of HOSTILE) {
        for (const fields of [{ mobile: `${MOBILE}${bad}`, pin: PIN }, { mobile: MOBILE, pin: `${PIN}${bad}` }, { mobile: MOBILE, pin: PIN, [`x${bad}`]: '1' }]) {
          const res = await browser.submit(page, { ...fields, action: 'login' });
          expectPage(res, 400);
          expect(pageText(res.body), name).toContain('control character');
        }
      }
      const register = await browser.open(`/register?request=${requestId}`);
      const res = await browser.submit(register, { mobile: '+639181234321', pin: PIN, pin_confirmation: `${PIN}\u0000`, action: 'register' });
      expectPage(res, 400);
      expect((await t.storage.customers.findCustomerByMobile(MOBILE))?.pinAttempts).toBe(0);
      // The journey is untouched: the right PIN still goes on to the one-time PIN.
      expect((await browser.submit(page, { mobile: MOBILE, pin: PIN, action: 'login' })).statusCode).toBe(303);
    });

    it('a JSON object body holding one, in a field name or value: 400 invalid_request wherever JSON is parsed', async () => {
      const { t } = await setup();
      for (const [name, bad] of HOSTILE) {
        for (const body of [{ [`x${bad}`]: 1 }, { grant_type: `a${bad}` }]) {
          const res = await t.app.inject({ method: 'POST', url: '/nowhere', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
          expect(res.statusCode, name).toBe(400);
          expect(res.json(), name).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('contains a control character') });
        }
      }
      const plain = await t.app.inject({ method: 'POST', url: '/nowhere', headers: { 'content-type': 'application/json' }, payload: '{"x":"fine"}' });
      expect(plain.statusCode).toBe(404);
    });

    it('/tokens: a header or query parameter holding one is 400 invalid_request, echoing Request-Reference-No and not cached', async () => {
      const { t } = await setup();
      for (const [url, authorization] of [
        ['/tokens', 'Bearer abc\u0085'],
        ['/tokens?x=%01', 'Bearer abc'],
      ] as const) {
        const reference = crypto.randomUUID();
        const res = await t.app.inject({
          method: 'POST',
          url,
          headers: { authorization, 'content-type': 'application/json', 'request-reference-no': reference },
          payload: JSON.stringify({ refreshToken: 'rt' }),
        });
        expect(res.statusCode, url).toBe(400);
        expect(res.json(), url).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('control character') });
        expect(res.headers['request-reference-no'], url).toBe(reference);
        expect(res.headers['cache-control'], url).toBe('no-store');
      }
    });

    it('/tokens: a refreshToken holding one is 400 invalid_request', async () => {
      const { t, client } = await setup();
      const token = await t.app.inject({ method: 'POST', url: '/token', headers: { authorization: basicAuth(client.id, client.secret), 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials' });
      const accessToken = token.json<{ access_token: string }>().access_token;
      for (const [name, bad] of HOSTILE) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/tokens',
          headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', 'request-reference-no': crypto.randomUUID() },
          payload: JSON.stringify({ refreshToken: `rt${bad}` }),
        });
        expect(res.statusCode, name).toBe(400);
        expect(res.json()).toMatchObject({ error: 'invalid_request' });
      }
    });
  });
}

describeOn('SQLite', () => undefined);

noticePostgresSkipped('control characters in parameters on PostgreSQL');
describe.skipIf(!postgresAdminUrl)('PostgreSQL', () => {
  const { open } = usePostgresStorage();
  describeOn('PostgreSQL', () => open());
});
