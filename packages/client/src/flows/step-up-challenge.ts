import { InsufficientUserAuthentication, InvalidResponse } from '../transport/errors.js';

/**
 * Step-up (RFC 9470): an API refuses a token whose sign-in is too weak or
 * too old with `401` and `WWW-Authenticate: Bearer
 * error="insufficient_user_authentication"`, naming the `acr_values` and
 * `max_age` a new sign-in must meet (docs/consumer-guide.md, "Step-up").
 */

/** What to do about a step-up challenge: send the customer through `/authorize` with these values. */
export interface StepUpDecision {
  readonly action: 'reauthorize';
  /** The `acr_values` to ask for, in the API's order of preference; empty when the API named none. */
  readonly acrValues: readonly string[];
  /** The `max_age` to ask for, in seconds; `undefined` when the API named none. */
  readonly maxAge: number | undefined;
  /** The API's `error_description`, when it sent one. */
  readonly description: string | undefined;
}

/** A value in a challenge: printable ASCII without spaces, `"` or `\` (RFC 6749 §3.3's scope-token characters). */
const ACR_VALUE = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
/** RFC 9110 §5.6.2 `token`. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;
const TOKEN68 = /^[A-Za-z0-9._~+/-]+=*/;
const MAX_HEADER_LENGTH = 8192;

/**
 * The `WWW-Authenticate` value an API built on the SDK answers an
 * `InsufficientUserAuthentication` with (RFC 9470 §3): `Bearer
 * error="insufficient_user_authentication", error_description="…"`, then
 * `acr_values="…"` (space-separated) and `max_age="…"` when required.
 * An API that took the token under the DPoP scheme (RFC 9449 §7.1) passes
 * `'DPoP'`: the same challenge, under that scheme.
 *
 * @example
 * if (err instanceof InsufficientUserAuthentication) {
 *   return reply.status(401).header('www-authenticate', stepUpChallenge(err)).send({ error: err.error, error_description: err.description });
 * }
 * @throws TypeError when an `acr` value holds a space, `"` or `\`, or `maxAge` is no whole number from 0.
 */
export function stepUpChallenge(required: Pick<InsufficientUserAuthentication, 'acrValues' | 'maxAge' | 'description'>, scheme: 'Bearer' | 'DPoP' = 'Bearer'): string {
  for (const value of required.acrValues) {
    if (typeof value !== 'string' || !ACR_VALUE.test(value)) throw new TypeError('an acr value must be printable ASCII without spaces, double quotes or backslashes');
  }
  const { maxAge } = required;
  if (maxAge !== undefined && (!Number.isSafeInteger(maxAge) || maxAge < 0)) throw new TypeError('maxAge must be a whole number of seconds from 0');
  // RFC 6749 §5.2's characters for error_description: printable ASCII without `"` and `\`.
  const description = required.description.replace(/"/g, "'").replace(/\\/g, '/').replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '?');
  if (scheme !== 'Bearer' && scheme !== 'DPoP') throw new TypeError('scheme must be Bearer or DPoP');
  const parts = [`${scheme} error="insufficient_user_authentication"`, `error_description="${description}"`];
  if (required.acrValues.length > 0) parts.push(`acr_values="${required.acrValues.join(' ')}"`);
  if (maxAge !== undefined) parts.push(`max_age="${maxAge}"`);
  return parts.join(', ');
}

/**
 * Reads an API's answer for a step-up challenge (RFC 9470 §3) and says what
 * to do: `{ action: 'reauthorize', acrValues, maxAge }`, the values to pass
 * to `startAuthorization` (or `CustomerTokenManager.stepUpAuthorization`).
 * A refresh would not help: a refreshed token keeps the sign-in it had.
 *
 * Takes a `Response` (only a 401 can carry the challenge) or the
 * `WWW-Authenticate` value itself.
 *
 * @returns `undefined` when the answer carries no step-up challenge (another
 *   status, no header, another error, a header that is no challenge list).
 * @throws InvalidResponse when the API says `insufficient_user_authentication`
 *   but its challenge cannot be acted on (malformed, a repeated parameter,
 *   an `acr_values` or `max_age` of the wrong form).
 *
 * @example
 * const response = await customers.fetch(user.id, `${apiUrl}/payouts`, { method: 'POST', body });
 * const stepUp = parseStepUpChallenge(response);
 * if (stepUp) redirect((await customers.startAuthorization({ acrValues: stepUp.acrValues, maxAge: stepUp.maxAge })).url);
 */
export function parseStepUpChallenge(answer: Response | string | null | undefined): StepUpDecision | undefined {
  let header: string | null | undefined;
  if (typeof answer === 'string' || answer === null || answer === undefined) header = answer;
  else {
    if (answer.status !== 401) return undefined;
    header = answer.headers.get('www-authenticate');
  }
  if (typeof header !== 'string' || header === '') return undefined;
  const mentioned = /insufficient_user_authentication/i.test(header);
  const malformed = (why: string) => new InvalidResponse(`the API's insufficient_user_authentication challenge is malformed: ${why}`);
  const challenges = header.length > MAX_HEADER_LENGTH ? undefined : parseChallenges(header);
  if (!challenges) {
    if (mentioned) throw malformed('its WWW-Authenticate is no challenge list (RFC 9110 section 11.6.1)');
    return undefined;
  }
  for (const challenge of challenges) {
    // Bearer, or DPoP for an API that takes DPoP-bound tokens (RFC 9449 §7.1).
    if (!['bearer', 'dpop'].includes(challenge.scheme.toLowerCase()) || challenge.params === undefined) continue;
    const error = challenge.params.get('error');
    if (error?.value !== 'insufficient_user_authentication') continue;
    for (const param of challenge.params.values()) if (param.repeated) throw malformed(`${param.name} is repeated`);
    const acr = challenge.params.get('acr_values')?.value;
    const acrValues = acr === undefined ? [] : acr.split(' ').filter((value) => value !== '');
    if (acrValues.some((value) => !ACR_VALUE.test(value))) throw malformed('acr_values must be values separated by spaces');
    const age = challenge.params.get('max_age')?.value;
    if (age !== undefined && !/^\d{1,10}$/.test(age)) throw malformed('max_age must be a whole number of seconds');
    return {
      action: 'reauthorize',
      acrValues: [...new Set(acrValues)],
      maxAge: age === undefined ? undefined : Number(age),
      description: challenge.params.get('error_description')?.value,
    };
  }
  // The word may be there, but not as the error of a Bearer challenge (inside another parameter): no step-up.
  return undefined;
}

interface Param {
  readonly name: string;
  readonly value: string;
  readonly repeated: boolean;
}

interface Challenge {
  readonly scheme: string;
  /** Its auth-params by lower-case name; `undefined` for a token68 challenge. */
  readonly params: Map<string, Param> | undefined;
}

/** The challenges of a `WWW-Authenticate` value (RFC 9110 §11.6.1), or `undefined` when it is no such list. */
function parseChallenges(header: string): Challenge[] | undefined {
  const challenges: Challenge[] = [];
  let rest = header;
  let current: Challenge | undefined;
  const skip = () => {
    rest = rest.replace(/^[ \t]+/, '');
  };
  skip();
  while (rest !== '') {
    if (rest.startsWith(',')) {
      rest = rest.slice(1);
      skip();
      continue;
    }
    const name = TOKEN.exec(rest)?.[0];
    if (!name) return undefined;
    const afterName = rest.slice(name.length);
    const param = current?.params ? /^[ \t]*=[ \t]*/.exec(afterName) : null;
    if (current?.params && param && !afterName.slice(param[0].length).startsWith('=')) {
      // An auth-param of the current challenge: name = token / quoted-string.
      rest = afterName.slice(param[0].length);
      const value = readValue();
      if (value === undefined) return undefined;
      const key = name.toLowerCase();
      const existing = current.params.get(key);
      current.params.set(key, { name: key, value: existing?.value ?? value, repeated: existing !== undefined });
    } else {
      // A new challenge: its scheme, then nothing, a token68, or its first auth-param.
      rest = afterName;
      if (rest !== '' && !/^[ \t,]/.test(rest)) return undefined;
      skip();
      const token68 = TOKEN68.exec(rest)?.[0];
      const after68 = token68 === undefined ? '' : rest.slice(token68.length).replace(/^[ \t]+/, '');
      if (token68 !== undefined && (after68 === '' || after68.startsWith(',')) && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*=[ \t]*[^=]/.test(rest)) {
        current = { scheme: name, params: undefined };
        challenges.push(current);
        rest = after68;
        continue;
      }
      current = { scheme: name, params: new Map() };
      challenges.push(current);
    }
    skip();
    if (rest !== '' && !rest.startsWith(',')) {
      // After a scheme, its first auth-param follows a space; otherwise a comma must.
      const lastParamsEmpty = current.params !== undefined && current.params.size === 0;
      if (!lastParamsEmpty) return undefined;
    }
  }
  return challenges;

  function readValue(): string | undefined {
    if (rest.startsWith('"')) {
      let value = '';
      let index = 1;
      while (index < rest.length) {
        const char = rest[index] as string;
        if (char === '"') {
          rest = rest.slice(index + 1);
          return value;
        }
        if (char === '\\') {
          index++;
          if (index >= rest.length) return undefined;
        }
        const quoted = rest[index] as string;
        if (!/^[\t\x20-\x7e\x80-\xff]$/.test(quoted)) return undefined;
        value += quoted;
        index++;
      }
      return undefined;
    }
    const token = TOKEN.exec(rest)?.[0];
    if (token === undefined) return undefined;
    rest = rest.slice(token.length);
    return token;
  }
}
