import { describe, expect, it } from 'vitest';
import { checkAuthorizationRequest, type AuthorizeQuery, type PageErrorReason } from '../../../src/core/authorize/authorization-request.js';
import type { Client } from '../../../src/core/clients/client.js';
import { clientRecord } from '../../helpers/client-record.js';

const REDIRECT = 'https://acme.example/callback?from=connect';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

function client(id: string, overrides: Partial<Client> = {}): Client {
  return clientRecord({ id, redirectUri: REDIRECT, ...overrides });
}

const CLIENTS = new Map<string, Client>(
  [
    client('cid_acme'),
    client('cid_pkce', { requirePkce: true }),
    client('cid_fapi', { profile: 'fapi2' }),
    client('cid_disabled', { status: 'disabled' }),
    client('cid_cc_only', { grants: ['client_credentials'] }),
    client('cid_other', { redirectUri: 'https://other.example/cb' }),
    client('cid_api', { name: 'Payments API', kind: 'resource_server', redirectUri: null, grants: [] }),
  ].map((c) => [c.id, c]),
);
const deps = { findClient: async (id: string) => CLIENTS.get(id) };

const BASE = { response_type: 'code', client_id: 'cid_acme', redirect_uri: REDIRECT, state: 'xyz' } as const;

type Expected =
  | { kind: 'page_error'; reason: PageErrorReason; clientName?: string; redirectUris?: { registered: string; received: string } }
  | { kind: 'redirect_error'; error: string; description: RegExp; state: string | null }
  | { kind: 'valid'; request: Record<string, unknown> };

const page = (reason: PageErrorReason, clientName?: string): Expected => ({ kind: 'page_error', reason, ...(clientName ? { clientName } : {}) });
/** A redirect URI that is not the registered one: the page error names both. */
const mismatch = (received: string): Expected => ({ kind: 'page_error', reason: 'redirect_uri_mismatch', clientName: 'Acme Shop', redirectUris: { registered: REDIRECT, received } });
const back = (error: string, description: RegExp, state: string | null = 'xyz'): Expected => ({ kind: 'redirect_error', error, description, state });

// In the order authorization-request.ts checks them: nothing is redirected before
// the client and its exact redirect URI are verified.
const CASES: ReadonlyArray<readonly [string, AuthorizeQuery, Expected]> = [
  ['client_id repeated', { ...BASE, client_id: ['cid_acme', 'cid_acme'] }, page('client_id_repeated')],
  ['client_id missing', { ...BASE, client_id: undefined }, page('client_id_missing')],
  ['client_id empty', { ...BASE, client_id: '' }, page('client_id_missing')],
  ['client_id over 512 characters', { ...BASE, client_id: 'c'.repeat(513) }, page('client_unknown')],
  ['unknown client_id', { ...BASE, client_id: 'cid_nobody' }, page('client_unknown')],
  ['unknown client, even with other errors', { client_id: 'cid_nobody', response_type: 'token', redirect_uri: REDIRECT }, page('client_unknown')],
  ['disabled client', { ...BASE, client_id: 'cid_disabled' }, page('client_disabled', 'Acme Shop')],
  ['a resource server', { ...BASE, client_id: 'cid_api' }, page('client_not_signable', 'Payments API')],
  ['a resource server, with no redirect_uri', { ...BASE, client_id: 'cid_api', redirect_uri: undefined }, page('client_not_signable', 'Payments API')],
  ['a resource server, with an empty redirect_uri', { ...BASE, client_id: 'cid_api', redirect_uri: '' }, page('client_not_signable', 'Payments API')],
  ['redirect_uri repeated', { ...BASE, redirect_uri: [REDIRECT, REDIRECT] }, page('redirect_uri_repeated')],
  ['redirect_uri missing', { ...BASE, redirect_uri: undefined }, page('redirect_uri_missing')],
  ['redirect_uri empty', { ...BASE, redirect_uri: '' }, page('redirect_uri_missing')],
  ['redirect_uri with a trailing slash', { ...BASE, redirect_uri: `${REDIRECT}/` }, mismatch(`${REDIRECT}/`)],
  ['redirect_uri in other case', { ...BASE, redirect_uri: REDIRECT.replace('acme', 'ACME') }, mismatch(REDIRECT.replace('acme', 'ACME'))],
  ['redirect_uri extending the registered one', { ...BASE, redirect_uri: `${REDIRECT}&next=https://evil.example` }, mismatch(`${REDIRECT}&next=https://evil.example`)],
  ['redirect_uri percent-encoded differently', { ...BASE, redirect_uri: REDIRECT.replace('from', '%66rom') }, mismatch(REDIRECT.replace('from', '%66rom'))],
  ['redirect_uri of another client', { ...BASE, redirect_uri: 'https://other.example/cb' }, mismatch('https://other.example/cb')],
  ['redirect_uri mismatch, even with other errors', { ...BASE, response_type: 'token', redirect_uri: 'https://evil.example/' }, mismatch('https://evil.example/')],
  ['a parameter repeated', { ...BASE, scope: ['a', 'b'] }, back('invalid_request', /^scope is repeated$/)],
  ['response_type repeated', { ...BASE, response_type: ['code', 'code'] }, back('invalid_request', /^response_type is repeated$/)],
  ['state repeated: not echoed', { ...BASE, state: ['a', 'b'] }, back('invalid_request', /^state is repeated$/, null)],
  ['a parameter over 2048 characters', { ...BASE, nonce: 'n'.repeat(2049) }, back('invalid_request', /^a parameter is too long$/)],
  ['a made-up parameter repeated: its name is not echoed', { ...BASE, 'x"HOSTILE\\é': ['1', '2'] }, back('invalid_request', /^a parameter is repeated$/)],
  ['state over 2048 characters: not echoed', { ...BASE, state: 's'.repeat(2049) }, back('invalid_request', /^state is too long$/, null)],
  ['response_type missing', { ...BASE, response_type: undefined }, back('invalid_request', /response_type is required/)],
  ['response_type token', { ...BASE, response_type: 'token' }, back('unsupported_response_type', /must be code/)],
  ['response_type code id_token', { ...BASE, response_type: 'code id_token' }, back('unsupported_response_type', /must be code/)],
  ['response_type checked before prompt', { ...BASE, response_type: 'token', prompt: 'consent' }, back('unsupported_response_type', /must be code/)],
  ['client without the authorization_code grant', { ...BASE, client_id: 'cid_cc_only' }, back('unauthorized_client', /authorization_code/)],
  ['prompt consent', { ...BASE, prompt: 'consent' }, back('invalid_request', /prompt must be login or none/)],
  ['prompt checked before user_id', { ...BASE, prompt: 'select_account', user_id: 'nobody' }, back('invalid_request', /prompt/)],
  ['user_id without +', { ...BASE, user_id: '639171234567' }, back('invalid_request', /user_id must be a mobile number/)],
  ['user_id in national format', { ...BASE, user_id: '09171234567' }, back('invalid_request', /user_id/)],
  ['user_id a fixed line', { ...BASE, user_id: '+63 2 8123 4567' }, back('invalid_request', /user_id/)],
  ['user_id checked before PKCE', { ...BASE, user_id: 'x', code_challenge_method: 'plain' }, back('invalid_request', /user_id/)],
  ['code_challenge_method without code_challenge', { ...BASE, code_challenge_method: 'S256' }, back('invalid_request', /code_challenge_method without code_challenge/)],
  ['code_challenge without a method (plain by default)', { ...BASE, code_challenge: CHALLENGE }, back('invalid_request', /must be S256/)],
  ['code_challenge_method plain', { ...BASE, code_challenge: CHALLENGE, code_challenge_method: 'plain' }, back('invalid_request', /must be S256/)],
  ['code_challenge_method s256 in lower case', { ...BASE, code_challenge: CHALLENGE, code_challenge_method: 's256' }, back('invalid_request', /must be S256/)],
  ['code_challenge of 42 characters', { ...BASE, code_challenge: CHALLENGE.slice(1), code_challenge_method: 'S256' }, back('invalid_request', /43 base64url/)],
  ['code_challenge with padding', { ...BASE, code_challenge: `${CHALLENGE}=`, code_challenge_method: 'S256' }, back('invalid_request', /43 base64url/)],
  ['PKCE client without code_challenge', { ...BASE, client_id: 'cid_pkce' }, back('invalid_request', /must use PKCE/)],
  [
    'minimal valid request',
    { response_type: 'code', client_id: 'cid_acme', redirect_uri: REDIRECT },
    { kind: 'valid', request: { redirectUri: REDIRECT, state: null, codeChallenge: null, loginHint: null, prompt: null } },
  ],
  [
    'empty optional parameters count as absent',
    { ...BASE, state: '', prompt: '', user_id: '', code_challenge: '', code_challenge_method: '' },
    { kind: 'valid', request: { state: null, codeChallenge: null, loginHint: null, prompt: null } },
  ],
  [
    'full valid request: user_id normalised to E.164',
    { ...BASE, prompt: 'login', user_id: '+63 917 123 4567', code_challenge: CHALLENGE, code_challenge_method: 'S256' },
    { kind: 'valid', request: { redirectUri: REDIRECT, state: 'xyz', codeChallenge: CHALLENGE, loginHint: '+639171234567', prompt: 'login' } },
  ],
  ['prompt none', { ...BASE, prompt: 'none' }, { kind: 'valid', request: { prompt: 'none' } }],
  [
    'PKCE client with code_challenge',
    { ...BASE, client_id: 'cid_pkce', code_challenge: CHALLENGE, code_challenge_method: 'S256' },
    { kind: 'valid', request: { codeChallenge: CHALLENGE } },
  ],
  ['state of 2048 characters', { ...BASE, state: 's'.repeat(2048) }, { kind: 'valid', request: { state: 's'.repeat(2048) } }],
  ['unknown extra parameters are ignored', { ...BASE, nonce: 'n', claims: '{}' }, { kind: 'valid', request: { state: 'xyz' } }],
];

describe('checkAuthorizationRequest', () => {
  it.each(CASES)('%s', async (_description, query, expected) => {
    const result = await checkAuthorizationRequest(query, deps);
    expect(result.kind).toBe(expected.kind);
    if (expected.kind === 'page_error' && result.kind === 'page_error') {
      // An error page never names where it would have sent the browser.
      expect(result).toEqual(expected);
    } else if (expected.kind === 'redirect_error' && result.kind === 'redirect_error') {
      expect(result).toEqual({ kind: 'redirect_error', redirectUri: REDIRECT, error: expected.error, description: result.description, state: expected.state });
      expect(result.description).toMatch(expected.description);
    } else if (expected.kind === 'valid' && result.kind === 'valid') {
      expect(result.request).toMatchObject(expected.request);
      expect(result.request.client).toBe(CLIENTS.get(String(query.client_id)));
    }
  });

  // docs/journey.md, "FAPI 2.0 clients": pushed requests and PKCE S256 required, after the client and redirect URI checks.
  const FAPI = { ...BASE, client_id: 'cid_fapi' };
  const S256 = { code_challenge: CHALLENGE, code_challenge_method: 'S256' };
  it.each([
    ['not pushed, even with PKCE', { ...FAPI, ...S256 }, false, back('invalid_request', /^this client must push its authorization requests to \/par/)],
    ['pushed, without PKCE', FAPI, true, back('invalid_request', /^this client must use PKCE/)],
    ['pushed, PKCE plain', { ...FAPI, code_challenge: CHALLENGE, code_challenge_method: 'plain' }, true, back('invalid_request', /^code_challenge_method must be S256$/)],
    ['pushed, response_type=token', { ...FAPI, ...S256, response_type: 'token' }, true, back('unsupported_response_type', /^response_type must be code$/)],
    ['not pushed, another redirect_uri: still the error page', { ...FAPI, redirect_uri: 'https://evil.example/' }, false, page('redirect_uri_mismatch', 'Acme Shop')],
    ['pushed, PKCE S256', { ...FAPI, ...S256 }, true, { kind: 'valid', request: { codeChallenge: CHALLENGE } }],
  ] as const)('a fapi2 client, %s', async (_description, query, pushed, expected) => {
    const result = await checkAuthorizationRequest(query, { ...deps, pushed });
    expect(result).toMatchObject(expected.kind === 'redirect_error' ? { kind: expected.kind, error: expected.error, state: expected.state } : expected.kind === 'page_error' ? { kind: 'page_error', reason: expected.reason } : { kind: 'valid' });
    if (expected.kind === 'redirect_error' && result.kind === 'redirect_error') expect(result.description).toMatch(expected.description);
  });

  it('a standard client need not push, and may', async () => {
    expect((await checkAuthorizationRequest(BASE, { ...deps, pushed: false })).kind).toBe('valid');
    expect((await checkAuthorizationRequest(BASE, { ...deps, pushed: true })).kind).toBe('valid');
  });

  it('looks up no client for an over-long client_id', async () => {
    const asked: string[] = [];
    await checkAuthorizationRequest({ ...BASE, client_id: 'c'.repeat(513) }, { findClient: async (id) => void asked.push(id) as undefined });
    expect(asked).toEqual([]);
  });

  it('refuses a user_id no one-time PIN can be sent to, by the one rule of docs/operator-guide.md ("SMS budgets"), after the client checks', async () => {
    const cannotSend = { kind: 'redirect_error', redirectUri: REDIRECT, error: 'invalid_request', description: 'user_id is a mobile number Connect cannot send codes to', state: 'xyz' };
    const onlySg = { ...deps, smsCountries: ['SG'] };
    expect(await checkAuthorizationRequest({ ...BASE, user_id: '+639171234567' }, onlySg)).toEqual(cannotSend);
    expect(await checkAuthorizationRequest({ ...BASE, user_id: '+881631234567' }, deps)).toEqual(cannotSend);
    expect(await checkAuthorizationRequest({ ...BASE, user_id: '+6591234567' }, onlySg)).toMatchObject({ kind: 'valid', request: { loginHint: '+6591234567' } });
    expect(await checkAuthorizationRequest({ ...BASE, user_id: '+639171234567' }, deps)).toMatchObject({ kind: 'valid', request: { loginHint: '+639171234567' } });
    // An unverified redirect URI is still an error page, never a redirect.
    expect(await checkAuthorizationRequest({ ...BASE, redirect_uri: 'https://evil.example/', user_id: '+881631234567' }, deps)).toMatchObject({ kind: 'page_error' });
  });
});
