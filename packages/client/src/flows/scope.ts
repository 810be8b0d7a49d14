/**
 * OAuth scopes (RFC 6749 §3.3) as the SDK takes and gives them
 * (docs/tokens.md, "Scopes"). A scope is given either as Connect's wire
 * form, one string of scope tokens separated by spaces, or as a list of
 * scope tokens.
 */

/** One scope, or several: `'payments:read profile'` or `['payments:read', 'profile']`. */
export type ScopeInput = string | readonly string[];

/** RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * The scope tokens of `scope`, each once, in the order given; a malformed
 * one is a programming mistake, so it throws a `TypeError` (internal).
 */
export function scopeTokens(scope: ScopeInput, name = 'scope'): string[] {
  const tokens = typeof scope === 'string' ? scope.split(' ').filter((token) => token !== '') : [...scope];
  if (tokens.length === 0) throw new TypeError(`${name} must name at least one scope; leave it out to mean every scope of the client`);
  for (const token of tokens) {
    if (typeof token !== 'string' || !SCOPE_TOKEN.test(token)) {
      throw new TypeError(`${name} must be scope tokens: printable ASCII without spaces, double quotes or backslashes (RFC 6749 section 3.3)`);
    }
  }
  return [...new Set(tokens)];
}

/** The wire form of `scope` for a request parameter, or `undefined` when none is given (internal). */
export function scopeParameter(scope: ScopeInput | undefined): string | undefined {
  return scope === undefined ? undefined : scopeTokens(scope).join(' ');
}

/** The tokens of a `scope` Connect sent; `[]` when it sent none (internal). */
export function grantedScopes(scope: string | undefined): string[] {
  return scope === undefined ? [] : [...new Set(scope.split(' ').filter((token) => token !== ''))];
}
