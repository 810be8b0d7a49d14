/**
 * OAuth scopes (RFC 6749 §3.3; docs/tokens.md, "Scopes"): what a client is
 * registered with, what a request may ask for, and what a token carries.
 *
 * A scope is a list of case-sensitive tokens. On the wire it is one string,
 * the tokens separated by spaces; inside Connect it is a list of distinct
 * tokens, in the order first given. Granted scopes are always a subset of
 * the client's registered ones: a request without `scope` gets them all.
 */
import { InvalidScope } from './errors.js';

/** RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`: printable ASCII but space, `"` and `\`. */
export const SCOPE_TOKEN_PATTERN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** The most scopes a client may be registered with. */
export const MAX_SCOPES = 20;

/** The longest scope token, in characters. */
export const MAX_SCOPE_LENGTH = 64;

/**
 * The longest `scope` parameter read: every registered scope, each at its
 * longest, with a space between. Anything longer cannot name only scopes a
 * client has, so it is refused before it is split.
 */
const MAX_SCOPE_PARAMETER_LENGTH = MAX_SCOPES * (MAX_SCOPE_LENGTH + 1);

const MALFORMED = 'scope must be scope tokens separated by spaces: printable ASCII other than double quote and backslash';
const NOT_REGISTERED = 'scope asks for a scope this client is not registered for; ask the operator to register it, or leave scope out';
const BEYOND_SESSION = 'scope asks for a scope the authorization did not grant; a refresh may only narrow the scope';

/** What is wrong with a list of scope tokens as a registration, or `undefined` when nothing is (the operator's own input, so it may name them). */
export function scopeListProblem(scopes: readonly string[]): string | undefined {
  const malformed = scopes.filter((scope) => !SCOPE_TOKEN_PATTERN.test(scope));
  if (malformed.length > 0) {
    return `${malformed.map((scope) => JSON.stringify(scope)).join(', ')}: a scope is printable ASCII without spaces, double quotes or backslashes (RFC 6749 section 3.3)`;
  }
  const long = scopes.filter((scope) => scope.length > MAX_SCOPE_LENGTH);
  if (long.length > 0) return `a scope may have at most ${MAX_SCOPE_LENGTH} characters: ${long.map((scope) => JSON.stringify(scope)).join(', ')}`;
  if (new Set(scopes).size > MAX_SCOPES) return `a client may have at most ${MAX_SCOPES} scopes`;
  return undefined;
}

/**
 * Splits a space-separated scope string into its distinct tokens, in the
 * order first given. Runs of spaces, and spaces before or after, separate
 * like one space: the tokens they separate are unambiguous. The tokens are
 * not checked: see {@link scopeListProblem} and {@link grantScope}.
 *
 * @example
 * splitScope(' payments:read  payments:read profile ') // ['payments:read', 'profile']
 */
export function splitScope(value: string): string[] {
  return [...new Set(value.split(' ').filter((token) => token !== ''))];
}

/** The wire form of a list of scopes (RFC 6749 §3.3): the tokens joined by single spaces; `''` for none. */
export function formatScope(scopes: readonly string[]): string {
  return scopes.join(' ');
}

/**
 * The scopes a request is granted (RFC 6749 §3.3): without `scope`, every
 * scope in `allowed`; with it, the distinct tokens it names, each of which
 * must be in `allowed`. `allowed` is the client's registered scopes for a
 * token request (`of: 'client'`), the session's for a refresh (`of:
 * 'session'`, RFC 6749 §6), which the refusal says.
 *
 * @throws InvalidScope for a malformed or overlong `scope`, or one naming
 *   a scope outside `allowed`. The description never repeats the request.
 */
export function grantScope(requested: string | undefined, allowed: readonly string[], of: 'client' | 'session' = 'client'): readonly string[] {
  if (requested === undefined) return allowed;
  if (requested.length > MAX_SCOPE_PARAMETER_LENGTH) throw new InvalidScope('scope is too long');
  const scopes = splitScope(requested);
  if (scopes.length === 0 || !scopes.every((scope) => SCOPE_TOKEN_PATTERN.test(scope))) throw new InvalidScope(MALFORMED);
  if (!scopes.every((scope) => allowed.includes(scope))) throw new InvalidScope(of === 'session' ? BEYOND_SESSION : NOT_REGISTERED);
  return scopes;
}

/** The scopes of `scopes` that are also in `allowed`, in the order of `scopes`. */
export function keepScopes(scopes: readonly string[], allowed: readonly string[]): readonly string[] {
  return scopes.every((scope) => allowed.includes(scope)) ? scopes : scopes.filter((scope) => allowed.includes(scope));
}

/** The scopes of `required` that `granted` lacks, in the order of `required`. */
export function missingScopes(granted: readonly string[], required: readonly string[]): string[] {
  return required.filter((scope) => !granted.includes(scope));
}
