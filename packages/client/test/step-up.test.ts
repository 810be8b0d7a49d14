import { fixedClock } from '@connect-auth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConnectError,
  createTokenVerifier,
  CustomerTokenManager,
  InsufficientScope,
  InsufficientUserAuthentication,
  InvalidResponse,
  MemoryTokenStore,
  parseStepUpChallenge,
  startAuthorization,
  stepUpChallenge,
} from '../src/index.js';
import { sendJson, startLocalServer, type LocalServer } from './support/local-server.js';

/*
 * Step-up (RFC 9470): the verifier's acr and maxAge requirements against an
 * introspection endpoint over real HTTP whose answers the test chooses, on
 * an injected clock; the challenge an API answers with, to the character;
 * the consumer's reading of it, malformed headers included; and the
 * authorization URL it leads to.
 */

const NOW = 1_800_000_000;
const PIN_SMS = 'urn:connect:acr:pin-sms';
const clock = fixedClock(NOW);
/** The introspection answer the fake Connect gives next. */
let answer: Record<string, unknown> = {};
let connect: LocalServer;

beforeAll(async () => {
  connect = await startLocalServer((_request, response) => sendJson(response, 200, answer));
});

afterAll(async () => {
  await connect?.close();
});

function customerToken(signIn: Record<string, unknown> | undefined) {
  return {
    active: true,
    token_type: 'Bearer',
    client_id: 'cid_sandbox_shop',
    sub: '1000001',
    iss: connect.url,
    jti: 'j1',
    iat: NOW - 60,
    exp: NOW + 3600,
    sid: 's1',
    ...signIn,
  };
}

const verifier = () => createTokenVerifier({ authUrl: connect.url, clientId: 'cid_sandbox_api', clientSecret: 'csk_sandbox_api', clock, cacheSeconds: 0 });
const TOKEN = 'aaa.bbb.ccc';

async function refusal(promise: Promise<unknown>): Promise<InsufficientUserAuthentication> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(InsufficientUserAuthentication);
  return error as InsufficientUserAuthentication;
}

describe("the verifier's sign-in requirements", () => {
  it('accepts a token whose acr is one of those required, refuses another with acrValues and maxAge', async () => {
    answer = customerToken({ acr: PIN_SMS, amr: ['pin', 'sms', 'mfa'], auth_time: NOW - 10 });
    await expect(verifier().verify(TOKEN, { acr: [PIN_SMS] })).resolves.toMatchObject({ kind: 'customer', authentication: { acr: PIN_SMS } });
    await expect(verifier().verify(TOKEN, { acr: ['phr', PIN_SMS], maxAge: 300 })).resolves.toMatchObject({ kind: 'customer' });
    const error = await refusal(verifier().verify(TOKEN, { acr: ['phr'], maxAge: 300 }));
    expect(error).toMatchObject({ error: 'insufficient_user_authentication', acrValues: ['phr'], maxAge: 300, description: 'this request needs a stronger sign-in than the access token stands for' });
    expect(error.hint).toMatch(/stepUpChallenge\(err\)/);
  });

  it.each([
    ['just before 300 s', 299, true],
    ['at 300 s', 300, true],
    ['after 300 s', 301, false],
  ])('max_age 300, signed in %s ago by the injected clock: accepted %s', async (_name, age, accepted) => {
    answer = customerToken({ acr: 'phr', amr: ['hwk', 'user'], auth_time: NOW - age });
    const check = verifier().verify(TOKEN, { acr: ['phr'], maxAge: 300 });
    if (accepted) await expect(check).resolves.toMatchObject({ authentication: { authTime: NOW - age } });
    else expect(await refusal(check)).toMatchObject({ acrValues: ['phr'], maxAge: 300, description: 'this request needs a more recent sign-in than the access token stands for' });
  });

  it('refuses a token without auth_time (no recorded sign-in), and a client token, for any requirement', async () => {
    answer = customerToken({ acr: 'phr', amr: ['hwk'] });
    expect(await refusal(verifier().verify(TOKEN, { maxAge: 300 }))).toMatchObject({ maxAge: 300, acrValues: [], description: 'the access token does not say how the customer signed in; a new sign-in is required' });
    answer = { ...customerToken(undefined), sid: undefined, sub: 'cid_sandbox_shop' };
    expect(await refusal(verifier().verify(TOKEN, { acr: ['phr'] }))).toMatchObject({ acrValues: ['phr'] });
    // Without a requirement, both are accepted as before.
    await expect(verifier().verify(TOKEN)).resolves.toMatchObject({ kind: 'client' });
  });

  it('checks scopes first: a token lacking a scope is 403 whatever its sign-in', async () => {
    answer = customerToken({ acr: PIN_SMS, amr: ['pin'], auth_time: NOW - 1000 });
    await expect(verifier().verify(TOKEN, { scopes: ['payments:write'], acr: ['phr'], maxAge: 300 })).rejects.toBeInstanceOf(InsufficientScope);
  });

  it('refuses a malformed requirement with a TypeError before any request', async () => {
    const before = connect.requests.length;
    for (const bad of [{ acr: ['a b'] }, { acr: ['a"b'] }, { acr: [''] }, { maxAge: -1 }, { maxAge: 2.5 }]) {
      await expect(verifier().verify(TOKEN, bad)).rejects.toBeInstanceOf(TypeError);
    }
    expect(connect.requests.length).toBe(before);
  });
});

describe('stepUpChallenge: the header an API answers with (RFC 9470 §3)', () => {
  it('names the error, the description, acr_values space-separated and max_age, each quoted', () => {
    const error = new InsufficientUserAuthentication('this request needs a stronger sign-in than the access token stands for', { acrValues: ['phr', 'phrh'], maxAge: 300 });
    expect(stepUpChallenge(error)).toBe(
      'Bearer error="insufficient_user_authentication", error_description="this request needs a stronger sign-in than the access token stands for", acr_values="phr phrh", max_age="300"',
    );
  });

  it('leaves out what is not required, and keeps the description within RFC 6749 characters', () => {
    expect(stepUpChallenge({ acrValues: [], maxAge: 0, description: 'say "again" \\ now' })).toBe(
      'Bearer error="insufficient_user_authentication", error_description="say \'again\' / now", max_age="0"',
    );
    expect(stepUpChallenge({ acrValues: ['phr'], maxAge: undefined, description: 'x' })).toBe('Bearer error="insufficient_user_authentication", error_description="x", acr_values="phr"');
    expect(() => stepUpChallenge({ acrValues: ['a b'], maxAge: undefined, description: 'x' })).toThrow(TypeError);
    expect(() => stepUpChallenge({ acrValues: [], maxAge: -1, description: 'x' })).toThrow(TypeError);
  });

  it('reads back as the same decision', () => {
    const header = stepUpChallenge({ acrValues: ['phr'], maxAge: 300, description: 'stronger, please' });
    expect(parseStepUpChallenge(header)).toEqual({ action: 'reauthorize', acrValues: ['phr'], maxAge: 300, description: 'stronger, please' });
  });

  it('under the DPoP scheme for an API that took a DPoP-bound token (RFC 9449 §7.1), read back the same; no other scheme', () => {
    const header = stepUpChallenge({ acrValues: ['phr'], maxAge: 300, description: 'stronger, please' }, 'DPoP');
    expect(header).toBe('DPoP error="insufficient_user_authentication", error_description="stronger, please", acr_values="phr", max_age="300"');
    expect(parseStepUpChallenge(header)).toEqual({ action: 'reauthorize', acrValues: ['phr'], maxAge: 300, description: 'stronger, please' });
    expect(() => stepUpChallenge({ acrValues: [], maxAge: 0, description: 'x' }, 'Basic' as 'DPoP')).toThrow(TypeError);
  });
});

describe('parseStepUpChallenge: the consumer reads the challenge', () => {
  const response = (status: number, header?: string) => new Response('{}', { status, headers: header === undefined ? {} : { 'www-authenticate': header } });

  it.each([
    ['the RFC 9470 example', 'Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="myACR"', ['myACR'], undefined],
    ['max_age alone, unquoted', 'Bearer error=insufficient_user_authentication, max_age=5', [], 5],
    ['any case of the scheme and names, extra spaces', 'bearer  ERROR = "insufficient_user_authentication" ,  Acr_Values="phr  urn:connect:acr:pin-sms" , MAX_AGE="300"', ['phr', PIN_SMS], 300],
    ['after another challenge', 'Basic realm="x", Bearer realm="api", error="insufficient_user_authentication", acr_values="phr"', ['phr'], undefined],
    ['after a token68 challenge', 'Negotiate abc==, Bearer error="insufficient_user_authentication", max_age="60"', [], 60],
    ['escapes in quoted strings', 'Bearer error="insufficient_user_authentication", error_description="a \\"b\\"", acr_values="p\\hr"', ['phr'], undefined],
  ])('%s → reauthorize', (_name, header, acrValues, maxAge) => {
    expect(parseStepUpChallenge(response(401, header))).toMatchObject({ action: 'reauthorize', acrValues, maxAge });
  });

  it('keeps the description', () => {
    expect(parseStepUpChallenge('Bearer error="insufficient_user_authentication", error_description="a \\"b\\""')?.description).toBe('a "b"');
  });

  it.each([
    ['another status', response(403, 'Bearer error="insufficient_user_authentication", acr_values="phr"')],
    ['a 200', response(200)],
    ['no header', response(401)],
    ['invalid_token', response(401, 'Bearer error="invalid_token"')],
    ['a challenge without an error code', response(401, 'Bearer realm="connect"')],
    ['insufficient_scope', response(401, 'Bearer error="insufficient_scope", scope="a"')],
    ['the word in another parameter', response(401, 'Bearer error="invalid_token", error_description="insufficient_user_authentication"')],
    ['another scheme', response(401, 'DPoP2 error="insufficient_user_authentication"')],
    ['garbage', response(401, '@@@ ===')],
    ['null', null],
    ['undefined', undefined],
    ['an empty string', ''],
  ])('%s → undefined (no step-up)', (_name, answer) => {
    expect(parseStepUpChallenge(answer)).toBeUndefined();
  });

  it.each([
    ['a max_age that is no number', 'Bearer error="insufficient_user_authentication", max_age="soon"'],
    ['a negative max_age', 'Bearer error="insufficient_user_authentication", max_age="-1"'],
    ['a fractional max_age', 'Bearer error="insufficient_user_authentication", max_age="1.5"'],
    ['a huge max_age', 'Bearer error="insufficient_user_authentication", max_age="99999999999999999999"'],
    ['a repeated acr_values', 'Bearer error="insufficient_user_authentication", acr_values="phr", acr_values="x"'],
    ['an unterminated quoted string', 'Bearer error="insufficient_user_authentication", acr_values="phr'],
    ['a missing comma', 'Bearer error="insufficient_user_authentication" acr_values="phr"'],
    ['a control character in acr_values', 'Bearer error="insufficient_user_authentication", acr_values="ph\u0001r"'],
  ])('%s → InvalidResponse (an SDK error)', (_name, header) => {
    expect(() => parseStepUpChallenge(header)).toThrow(InvalidResponse);
  });

  it('never throws anything but an SDK error, whatever the header', () => {
    const alphabet = ['Bearer', ' ', ',', '=', '"', '\\', 'error', 'insufficient_user_authentication', 'acr_values', 'max_age', '300', 'phr', '\t', '==', 'x'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let run = 0; run < 3000; run++) {
      const header = Array.from({ length: 1 + (next() % 14) }, () => alphabet[next() % alphabet.length]).join('');
      try {
        const decision = parseStepUpChallenge(header);
        if (decision) expect(decision.action).toBe('reauthorize');
      } catch (error) {
        expect(error, header).toBeInstanceOf(ConnectError);
      }
    }
    expect(parseStepUpChallenge(`Bearer ${'x'.repeat(20_000)}`)).toBeUndefined();
  });
});

describe('startAuthorization with a step-up', () => {
  it('passes acr_values (space-separated) and max_age on the authorization URL', async () => {
    const pending = await startAuthorization({ authUrl: 'https://connect.example', clientId: 'cid_x', redirectUri: 'https://shop.example/cb', acrValues: ['phr', PIN_SMS], maxAge: 300 });
    const url = new URL(pending.url);
    expect(url.searchParams.get('acr_values')).toBe(`phr ${PIN_SMS}`);
    expect(url.searchParams.get('max_age')).toBe('300');
    expect(url.search).toContain('acr_values=phr+urn%3Aconnect%3Aacr%3Apin-sms');
  });

  it('adds neither when not given, max_age 0 when asked, and refuses malformed values with a TypeError', async () => {
    const base = { authUrl: 'https://connect.example', clientId: 'cid_x', redirectUri: 'https://shop.example/cb' };
    const plain = new URL((await startAuthorization({ ...base, acrValues: [] })).url);
    expect(plain.searchParams.has('acr_values')).toBe(false);
    expect(plain.searchParams.has('max_age')).toBe(false);
    expect(new URL((await startAuthorization({ ...base, maxAge: 0 })).url).searchParams.get('max_age')).toBe('0');
    await expect(startAuthorization({ ...base, acrValues: ['a b'] })).rejects.toBeInstanceOf(TypeError);
    await expect(startAuthorization({ ...base, maxAge: -5 })).rejects.toBeInstanceOf(TypeError);
    await expect(startAuthorization({ ...base, maxAge: 1.5 })).rejects.toBeInstanceOf(TypeError);
  });
});

describe("the token manager's step-up decision", () => {
  it('returns a step-up 401 without refreshing, and turns it into an authorization with its acr_values and max_age', async () => {
    const api = await startLocalServer((_request, response) => {
      response
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="insufficient_user_authentication", error_description="stronger", acr_values="phr", max_age="300"' })
        .end('{"error":"insufficient_user_authentication"}');
    });
    try {
      const store = new MemoryTokenStore();
      const tokens = { accessToken: 'at', refreshToken: 'rt', issuedAt: NOW, expiresAt: NOW + 3600, refreshExpiresAt: NOW + 86_400 };
      await store.set('u1', tokens);
      const manager = new CustomerTokenManager({
        authUrl: connect.url,
        clientId: 'cid_sandbox_shop',
        clientSecret: 'csk_sandbox_shop',
        redirectUri: 'https://shop.example/cb',
        store,
        clock,
        authorizationParams: () => ({ userId: '+639171234567' }),
      });
      const before = connect.requests.length;
      const response = await manager.fetch('u1', `${api.url}/payouts`, { method: 'POST', body: '{}' });
      expect(response.status).toBe(401);
      expect(api.requests).toHaveLength(1);
      expect(connect.requests.length).toBe(before); // no refresh
      const stepUp = await manager.stepUpAuthorization('u1', response);
      expect(stepUp).toMatchObject({ action: 'reauthorize', acrValues: ['phr'], maxAge: 300, description: 'stronger' });
      const url = new URL(stepUp?.authorization.url ?? '');
      expect(url.origin + url.pathname).toBe(`${connect.url}/authorize`);
      expect(Object.fromEntries(url.searchParams)).toMatchObject({ acr_values: 'phr', max_age: '300', user_id: '+639171234567', client_id: 'cid_sandbox_shop' });
      expect(stepUp?.authorization.codeVerifier).toEqual(expect.any(String));
      // The tokens stay: they still serve every other request.
      expect(await store.get('u1')).toEqual(tokens);
      expect(await manager.stepUpAuthorization('u1', new Response(null, { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } }))).toBeUndefined();
    } finally {
      await api.close();
    }
  });
});
