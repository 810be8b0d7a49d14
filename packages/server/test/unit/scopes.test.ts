import { describe, expect, it } from 'vitest';
import { ERROR_DESCRIPTION_PATTERN, InvalidScope } from '../../src/core/errors.js';
import { formatScope, grantScope, keepScopes, MAX_SCOPE_LENGTH, MAX_SCOPES, missingScopes, scopeListProblem, splitScope } from '../../src/core/scopes.js';

const REGISTERED = ['payments:read', 'payments:write', 'profile'];

describe('scopes (RFC 6749 §3.3)', () => {
  describe('grantScope', () => {
    const granted: Array<[string, string | undefined, readonly string[]]> = [
      ['no scope: every registered one', undefined, REGISTERED],
      ['one registered scope', 'profile', ['profile']],
      ['several, in the order asked', 'profile payments:read', ['profile', 'payments:read']],
      ['a repeated token counts once', 'profile profile', ['profile']],
      ['runs of spaces, and spaces around, separate like one', '  profile   payments:read ', ['profile', 'payments:read']],
      ['every registered one, named', 'payments:read payments:write profile', REGISTERED],
      ['every character a scope token may have', '!#[]~', ['!#[]~']],
    ];
    it.each(granted)('%s', (_name, requested, expected) => {
      const allowed = requested?.includes('!') ? ['!#[]~'] : REGISTERED;
      expect(grantScope(requested, allowed)).toEqual(expected);
    });

    const refused: Array<[string, string, RegExp]> = [
      ['a scope the client is not registered for', 'profile admin', /not registered/],
      ['scopes differ in case', 'Profile', /not registered/],
      ['a prefix of a registered scope', 'payments', /not registered/],
      ['only spaces', '   ', /scope must be scope tokens/],
      ['a double quote', 'pro"file', /scope must be scope tokens/],
      ['a backslash', 'pro\\file', /scope must be scope tokens/],
      ['a control character', 'pro\u0000file', /scope must be scope tokens/],
      ['a tab between tokens', 'profile\tpayments:read', /scope must be scope tokens/],
      ['non-ASCII', 'profil\u00e9', /scope must be scope tokens/],
      ['a 10 kB scope', 'a'.repeat(10_240), /^scope is too long$/],
      ['10 kB of a registered scope repeated', 'profile '.repeat(1280), /^scope is too long$/],
    ];
    it.each(refused)('refuses %s with invalid_scope, in a description that never repeats it', (_name, requested, description) => {
      let error: unknown;
      try {
        grantScope(requested, REGISTERED);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(InvalidScope);
      const refusal = error as InvalidScope;
      expect({ error: refusal.error, status: refusal.status }).toEqual({ error: 'invalid_scope', status: 400 });
      expect(refusal.description).toMatch(description);
      expect(refusal.description).toMatch(ERROR_DESCRIPTION_PATTERN);
      expect(refusal.description).not.toContain('admin');
    });

    it('says, refusing a refresh, that the authorization did not grant the scope', () => {
      expect(() => grantScope('payments:write', ['profile'], 'session')).toThrow(/^scope asks for a scope the authorization did not grant/);
      expect(grantScope('profile', ['profile', 'payments:read'], 'session')).toEqual(['profile']);
    });

    it('grants nothing to a client with no scopes, and refuses it any scope', () => {
      expect(grantScope(undefined, [])).toEqual([]);
      expect(() => grantScope('profile', [])).toThrow(InvalidScope);
    });
  });

  describe('scopeListProblem (a registration)', () => {
    const cases: Array<[string, string[], RegExp | undefined]> = [
      ['none', [], undefined],
      ['URL-like and colon scopes', ['payments:read', 'https://api.example/x', 'a.b-c_d~e'], undefined],
      [`${MAX_SCOPES} scopes of ${MAX_SCOPE_LENGTH} characters`, Array.from({ length: MAX_SCOPES }, (_, i) => `${i}`.padEnd(MAX_SCOPE_LENGTH, 'x')), undefined],
      [`${MAX_SCOPES + 1} scopes`, Array.from({ length: MAX_SCOPES + 1 }, (_, i) => `s${i}`), /at most 20 scopes/],
      ['a scope of 65 characters', ['x'.repeat(65)], /at most 64 characters/],
      ['a double quote', ['a"b'], /printable ASCII without spaces, double quotes or backslashes/],
      ['a backslash', ['a\\b'], /printable ASCII/],
      ['a control character', ['a\u0007b'], /printable ASCII/],
      ['non-ASCII', ['caf\u00e9'], /printable ASCII/],
    ];
    it.each(cases)('%s', (_name, scopes, problem) => {
      const found = scopeListProblem(scopes);
      if (problem === undefined) expect(found).toBeUndefined();
      else expect(found).toMatch(problem);
    });

    it('names a bad scope with its characters escaped, so the message stays on one line', () => {
      expect(scopeListProblem(['a\nb'])).toBe('"a\\nb": a scope is printable ASCII without spaces, double quotes or backslashes (RFC 6749 section 3.3)');
    });
  });

  it('splits and formats the wire form', () => {
    expect(splitScope('a b  a c')).toEqual(['a', 'b', 'c']);
    expect(splitScope('')).toEqual([]);
    expect(formatScope(['a', 'b'])).toBe('a b');
    expect(formatScope([])).toBe('');
  });

  it('keeps the scopes still allowed, and names the missing ones', () => {
    expect(keepScopes(['a', 'b', 'c'], ['c', 'a'])).toEqual(['a', 'c']);
    expect(keepScopes(['a'], [])).toEqual([]);
    expect(missingScopes(['a', 'b'], ['b', 'c', 'd'])).toEqual(['c', 'd']);
    expect(missingScopes(['a'], [])).toEqual([]);
  });
});
