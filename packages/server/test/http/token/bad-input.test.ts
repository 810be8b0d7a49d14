import { describe, expect, it } from 'vitest';
import { basicAuth, build, form } from '../../helpers/build.js';
import { BASIC_CHALLENGE, ERROR_DESCRIPTION, FORM, postToken, type Credentials, type TokenRequestOptions } from '../../helpers/wire.js';

const CC = 'client_credentials';
const AC = 'authorization_code';
const b64 = (value: string | Buffer) => Buffer.from(value).toString('base64');
/**
 * A hostile value: the two characters an error description may not hold,
 * non-ASCII, and a marker no description may repeat.
 */
const HOSTILE = 'x"HOSTILE\\\u00e9\u{1F600}';
/** 10 kB of it, still under the 16 KiB body limit once encoded. */
const HOSTILE_10K = `${HOSTILE}${'h'.repeat(10_000)}`;
const TEN_KB = 'v'.repeat(10_000);

/** The clients a bad input may use. */
interface Clients {
  readonly client: Credentials;
  readonly disabled: Credentials;
  /** Allowed every grant, refresh included. */
  readonly full: Credentials;
}

interface BadInput {
  readonly name: string;
  readonly request: (clients: Clients) => TokenRequestOptions;
  readonly status: number;
  readonly error: string;
}

const basic = (c: Credentials, pairs: Record<string, string> | ReadonlyArray<readonly [string, string]>): TokenRequestOptions => ({
  authorization: basicAuth(c.id, c.secret),
  body: form(pairs),
});

const BAD_INPUTS: readonly BadInput[] = [
  // Content types other than the form encoding (RFC 6749 §3.2).
  { name: 'application/json', request: () => ({ contentType: 'application/json', body: '{"grant_type":"client_credentials"}' }), status: 400, error: 'invalid_request' },
  { name: 'malformed application/json', request: () => ({ contentType: 'application/json', body: '{"grant_type":' }), status: 400, error: 'invalid_request' },
  { name: 'text/plain', request: () => ({ contentType: 'text/plain', body: 'grant_type=client_credentials' }), status: 400, error: 'invalid_request' },
  {
    name: 'multipart/form-data',
    request: () => ({
      contentType: 'multipart/form-data; boundary=b',
      body: '--b\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nclient_credentials\r\n--b--\r\n',
    }),
    status: 400,
    error: 'invalid_request',
  },
  { name: 'no Content-Type with a body', request: () => ({ contentType: null, body: 'grant_type=client_credentials' }), status: 400, error: 'invalid_request' },
  { name: 'a look-alike Content-Type', request: () => ({ contentType: `${FORM}x`, body: 'grant_type=client_credentials' }), status: 400, error: 'invalid_request' },
  { name: 'Content-Length larger than the body', request: () => ({ headers: { 'content-length': '500' }, body: 'grant_type=client_credentials' }), status: 400, error: 'invalid_request' },
  // Parameters (RFC 6749 §3.1: parameters must not be included more than once).
  { name: 'grant_type twice', request: ({ client }) => ({ authorization: basicAuth(client.id, client.secret), body: 'grant_type=client_credentials&grant_type=client_credentials' }), status: 400, error: 'invalid_request' },
  { name: 'client_id twice', request: ({ client }) => ({ body: form([['grant_type', CC], ['client_id', client.id], ['client_id', client.id], ['client_secret', client.secret]]) }), status: 400, error: 'invalid_request' },
  { name: 'grant_type with a NUL byte', request: ({ client }) => ({ authorization: basicAuth(client.id, client.secret), body: 'grant_type=client%00credentials' }), status: 400, error: 'invalid_request' },
  { name: 'a 10,000-character grant_type', request: ({ client }) => ({ authorization: basicAuth(client.id, client.secret), body: form({ grant_type: 'g'.repeat(10_000) }) }), status: 400, error: 'unsupported_grant_type' },
  // Size.
  { name: 'body over 16 KiB', request: () => ({ body: `grant_type=client_credentials&pad=${'a'.repeat(16 * 1024)}` }), status: 413, error: 'invalid_request' },
  { name: 'body of 1 MiB', request: () => ({ body: `grant_type=client_credentials&pad=${'a'.repeat(1024 * 1024)}` }), status: 413, error: 'invalid_request' },
  // Encoding.
  { name: 'invalid UTF-8 bytes in the body', request: () => ({ body: Buffer.concat([Buffer.from('grant_type=client_credentials&client_id='), Buffer.from([0xff, 0xfe])]) }), status: 400, error: 'invalid_request' },
  { name: 'percent-escape of an invalid UTF-8 byte (%ff)', request: () => ({ body: 'grant_type=client_credentials&client_id=%ff' }), status: 400, error: 'invalid_request' },
  { name: 'truncated UTF-8 sequence (%e2%82)', request: () => ({ body: 'grant_type=client_credentials&client_id=%e2%82' }), status: 400, error: 'invalid_request' },
  { name: 'bad percent-escape (%zz)', request: () => ({ body: 'grant_type=client_credentials&client_id=%zz' }), status: 400, error: 'invalid_request' },
  { name: 'lone % at the end', request: () => ({ body: 'grant_type=client_credentials&client_id=%' }), status: 400, error: 'invalid_request' },
  { name: 'bad percent-escape in a parameter name', request: () => ({ body: 'grant_type=client_credentials&%zz=1' }), status: 400, error: 'invalid_request' },
  // Authorization headers.
  { name: 'Authorization: Basic', request: () => ({ authorization: 'Basic', body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  { name: 'Authorization: Basic !!!', request: () => ({ authorization: 'Basic !!!', body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  { name: 'Basic without a colon', request: () => ({ authorization: `Basic ${b64('nocolon')}`, body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  { name: 'Basic with an empty client ID', request: () => ({ authorization: `Basic ${b64(':secret')}`, body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  { name: 'Basic with an empty secret', request: ({ client }) => ({ authorization: `Basic ${b64(`${client.id}:`)}`, body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  { name: 'Basic of invalid UTF-8', request: () => ({ authorization: `Basic ${b64(Buffer.from([0xff, 0xfe, 0x3a, 0x61]))}`, body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  { name: 'Basic with a bad percent-escape', request: ({ client }) => ({ authorization: `Basic ${b64(`${client.id}:%zz`)}`, body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  { name: 'Authorization: Bearer xyz', request: () => ({ authorization: 'Bearer xyz', body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  { name: 'empty Authorization header', request: () => ({ authorization: '', body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  { name: '10 KB Authorization header', request: () => ({ authorization: `Basic ${'QUJD'.repeat(2560)}`, body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  // Clients.
  { name: 'unknown client (Basic)', request: () => ({ authorization: basicAuth('cid_sandbox_nobody', 'csk_sandbox_nothing'), body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  { name: 'unknown client (post)', request: () => ({ body: form({ grant_type: CC, client_id: 'nobody', client_secret: 'nothing' }) }), status: 401, error: 'invalid_client' },
  { name: 'disabled client', request: ({ disabled }) => ({ authorization: basicAuth(disabled.id, disabled.secret), body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  { name: 'very long client_id (post)', request: ({ client }) => ({ body: form({ grant_type: CC, client_id: 'c'.repeat(10_000), client_secret: client.secret }) }), status: 401, error: 'invalid_client' },
  { name: 'very long client_id (Basic)', request: ({ client }) => ({ authorization: basicAuth('c'.repeat(1000), client.secret), body: 'grant_type=client_credentials' }), status: 401, error: 'invalid_client' },
  { name: 'very long client_secret (post)', request: ({ client }) => ({ body: form({ grant_type: CC, client_id: client.id, client_secret: 's'.repeat(10_000) }) }), status: 401, error: 'invalid_client' },
  // Repeated parameters of every kind (RFC 6749 §3.1), a made-up one included.
  { name: 'client_secret twice', request: ({ client }) => ({ body: form([['grant_type', CC], ['client_id', client.id], ['client_secret', client.secret], ['client_secret', client.secret]]) }), status: 400, error: 'invalid_request' },
  { name: 'code twice', request: ({ full }) => basic(full, [['grant_type', AC], ['code', 'a'], ['code', 'b'], ['redirect_uri', 'https://acme.example/callback']]) , status: 400, error: 'invalid_request' },
  { name: 'an empty grant_type, then a real one', request: ({ client }) => ({ authorization: basicAuth(client.id, client.secret), body: 'grant_type=&grant_type=client_credentials' }), status: 400, error: 'invalid_request' },
  { name: 'a made-up parameter twice, its name hostile', request: ({ client }) => basic(client, [['grant_type', CC], [HOSTILE, '1'], [HOSTILE, '2']]), status: 400, error: 'invalid_request' },
  { name: 'a 10 kB parameter name, twice', request: ({ client }) => basic(client, [['grant_type', CC], [`n${'n'.repeat(5_000)}`, '1'], [`n${'n'.repeat(5_000)}`, '2']]), status: 400, error: 'invalid_request' },
  // Hostile values: quotes, backslashes, non-ASCII, 10 kB.
  { name: 'a hostile grant_type', request: ({ client }) => basic(client, { grant_type: HOSTILE }), status: 400, error: 'unsupported_grant_type' },
  { name: 'a hostile 10 kB grant_type', request: ({ client }) => basic(client, { grant_type: HOSTILE_10K }), status: 400, error: 'unsupported_grant_type' },
  { name: 'a hostile client_id (post)', request: () => ({ body: form({ grant_type: CC, client_id: HOSTILE, client_secret: 'csk_sandbox_x' }) }), status: 401, error: 'invalid_client' },
  { name: 'a hostile 10 kB client_id (post)', request: () => ({ body: form({ grant_type: CC, client_id: HOSTILE_10K, client_secret: 'csk_sandbox_x' }) }), status: 401, error: 'invalid_client' },
  { name: 'a hostile client ID and secret (Basic)', request: () => ({ authorization: basicAuth(HOSTILE, HOSTILE), body: form({ grant_type: CC }) }), status: 401, error: 'invalid_client' },
  { name: 'a hostile client_secret (post)', request: ({ client }) => ({ body: form({ grant_type: CC, client_id: client.id, client_secret: HOSTILE }) }), status: 401, error: 'invalid_client' },
  { name: 'a hostile code', request: ({ full }) => basic(full, { grant_type: AC, code: HOSTILE, redirect_uri: 'https://acme.example/callback' }), status: 400, error: 'invalid_grant' },
  { name: 'a hostile 10 kB code', request: ({ full }) => basic(full, { grant_type: AC, code: HOSTILE_10K, redirect_uri: 'https://acme.example/callback' }), status: 400, error: 'invalid_grant' },
  { name: 'a hostile 10 kB redirect_uri', request: ({ full }) => basic(full, { grant_type: AC, code: 'c', redirect_uri: HOSTILE_10K }), status: 400, error: 'invalid_grant' },
  { name: 'a hostile code_verifier', request: ({ full }) => basic(full, { grant_type: AC, code: 'c', redirect_uri: 'https://acme.example/callback', code_verifier: HOSTILE }), status: 400, error: 'invalid_request' },
  { name: 'a 10 kB code_verifier', request: ({ full }) => basic(full, { grant_type: AC, code: 'c', redirect_uri: 'https://acme.example/callback', code_verifier: TEN_KB }), status: 400, error: 'invalid_request' },
  { name: 'a hostile refresh_token', request: ({ full }) => basic(full, { grant_type: 'refresh_token', refresh_token: HOSTILE }), status: 400, error: 'invalid_grant' },
  { name: 'a hostile 10 kB refresh_token', request: ({ full }) => basic(full, { grant_type: 'refresh_token', refresh_token: HOSTILE_10K }), status: 400, error: 'invalid_grant' },
  { name: 'a 10 kB JWT-shaped refresh_token', request: ({ full }) => basic(full, { grant_type: 'refresh_token', refresh_token: `${'a'.repeat(3_000)}.${'b'.repeat(4_000)}.${'c'.repeat(3_000)}` }), status: 400, error: 'invalid_grant' },
  { name: 'a hostile 10 kB scope (not read)', request: ({ client }) => basic(client, { grant_type: 'password', scope: HOSTILE_10K }), status: 400, error: 'unsupported_grant_type' },
  // Both authentication methods at once (RFC 6749 §2.3), whatever the case of the scheme.
  { name: 'Basic and client_id + client_secret in the body', request: ({ client }) => ({ authorization: basicAuth(client.id, client.secret), body: form({ grant_type: CC, client_id: client.id, client_secret: client.secret }) }), status: 400, error: 'invalid_request' },
  { name: 'basic (lower case) and client_secret in the body', request: ({ client }) => ({ authorization: basicAuth(client.id, client.secret).replace('Basic', 'basic'), body: form({ grant_type: CC, client_secret: client.secret }) }), status: 400, error: 'invalid_request' },
  { name: 'Basic and a hostile client_secret in the body', request: ({ client }) => ({ authorization: basicAuth(client.id, client.secret), body: form({ grant_type: CC, client_secret: HOSTILE_10K }) }), status: 400, error: 'invalid_request' },
  { name: 'Basic and a hostile client_id in the body', request: ({ client }) => ({ authorization: basicAuth(client.id, client.secret), body: form({ grant_type: CC, client_id: HOSTILE }) }), status: 400, error: 'invalid_request' },
  { name: 'a mixed-case scheme with a wrong secret', request: ({ client }) => ({ authorization: basicAuth(client.id, 'csk_sandbox_wrong').replace('Basic', 'bAsIc'), body: form({ grant_type: CC }) }), status: 401, error: 'invalid_client' },
];

/** Signs of an internal error leaking out: stack frames, source paths, error class names. */
const LEAK = /\bat \S+ \(|\/work\/|node_modules|[\w-]+\.(?:[cm]?[jt]s)\b|\b(?:Type|Syntax|Range|Reference)?Error:/;

describe('POST /token with bad input', () => {
  it('answers every bad request with a client error in RFC 6749 §5.2 form, and changes nothing', async () => {
    const t = await build();
    const client = await t.createClient();
    const disabled = await t.createClient({ name: 'Disabled' });
    await t.storage.clients.updateClient(disabled.id, { status: 'disabled' }, t.clock.nowSeconds());
    const full = await t.createClient({ name: 'Full', grants: [CC, AC, 'refresh_token'] });
    const clientsBefore = await t.storage.clients.listClients();
    const keysBefore = await t.storage.keys.listKeys();

    for (const input of BAD_INPUTS) {
      const res = await postToken(t.app, input.request({ client, disabled, full }));
      let body: unknown;
      try {
        body = res.json();
      } catch {
        body = res.body;
      }
      const record = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
      // One object per case, so a failure names the case and shows everything that is off.
      expect({
        case: input.name,
        status: res.statusCode,
        serverError: res.statusCode >= 500,
        contentType: /^application\/json(;|$)/.test(String(res.headers['content-type'])),
        keys: Object.keys(record).sort(),
        error: record.error,
        description: typeof record.error_description,
        // RFC 6749 §5.2: printable ASCII without " and \; and never the request's own words.
        conformantDescription: ERROR_DESCRIPTION.test(String(record.error_description)),
        echoes: /HOSTILE|vvvvv|hhhhh|nnnnn/i.test(String(record.error_description)),
        challenge: res.statusCode === 401 ? res.headers['www-authenticate'] : undefined,
        leaks: LEAK.test(res.body),
        shortBody: res.body.length < 300,
        cacheControl: res.headers['cache-control'],
        pragma: res.headers.pragma,
      }).toEqual({
        case: input.name,
        status: input.status,
        serverError: false,
        contentType: true,
        keys: ['error', 'error_description'],
        error: input.error,
        description: 'string',
        conformantDescription: true,
        echoes: false,
        challenge: input.status === 401 ? BASIC_CHALLENGE : undefined,
        leaks: false,
        shortBody: true,
        cacheControl: 'no-store',
        pragma: 'no-cache',
      });
    }

    expect(await t.storage.clients.listClients()).toEqual(clientsBefore);
    expect(await t.storage.keys.listKeys()).toEqual(keysBefore);
    // And the app still serves a good request afterwards.
    const ok = await postToken(t.app, { authorization: basicAuth(client.id, client.secret), body: form({ grant_type: CC }) });
    expect(ok.statusCode).toBe(200);
  });

  it('reads the Basic scheme in any case (RFC 9110 §11.1): basic, BASIC and bAsIc all authenticate', async () => {
    const t = await build();
    const client = await t.createClient();
    for (const scheme of ['basic', 'BASIC', 'bAsIc']) {
      const res = await postToken(t.app, { authorization: basicAuth(client.id, client.secret).replace('Basic', scheme), body: form({ grant_type: CC }) });
      expect({ scheme, status: res.statusCode }).toEqual({ scheme, status: 200 });
    }
  });
});
