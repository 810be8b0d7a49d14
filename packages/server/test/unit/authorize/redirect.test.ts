import { describe, expect, it } from 'vitest';
import { buildErrorRedirect, buildRedirect, type RedirectErrorCode } from '../../../src/core/authorize/redirect.js';

describe('buildErrorRedirect', () => {
  const codes: readonly RedirectErrorCode[] = [
    'invalid_request',
    'unauthorized_client',
    'access_denied',
    'unsupported_response_type',
    'invalid_scope',
    'server_error',
    'temporarily_unavailable',
    'login_required',
    'consent_required',
  ];

  it.each(codes)('sends %s back with its description, state and iss', (code) => {
    const location = buildErrorRedirect('https://app.example/cb?a%20b=1', code, 'the customer said "no" – twice', 'xyz', 'https://auth.example');
    expect(location).toBe(`https://app.example/cb?a%20b=1&error=${code}&error_description=the+customer+said+%27no%27+%3F+twice&state=xyz&iss=https%3A%2F%2Fauth.example`);
    const url = new URL(location);
    expect(url.searchParams.get('error')).toBe(code);
    expect(url.searchParams.get('error_description')).toBe("the customer said 'no' ? twice");
    expect(url.search.startsWith('?a%20b=1&')).toBe(true);
  });

  it('leaves out a state the request did not have', () => {
    expect(buildErrorRedirect('https://app.example/cb', 'access_denied', 'the customer cancelled', null, 'https://auth.example')).toBe(
      buildRedirect('https://app.example/cb', { error: 'access_denied', error_description: 'the customer cancelled', iss: 'https://auth.example' }),
    );
  });
});
