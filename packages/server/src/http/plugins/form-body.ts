import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { hasControlCharacter } from '../../core/control-characters.js';
import { InvalidRequest, parameterLabel } from '../../core/errors.js';
import { controlCharacterInParameter } from './control-characters.js';

/** Largest form body accepted (token, introspection and revocation requests are tiny). */
export const FORM_BODY_LIMIT_BYTES = 16 * 1024;

/** A parsed `application/x-www-form-urlencoded` body: one string per parameter. */
export type FormParams = Readonly<Record<string, string>>;

/**
 * Registers a strict `application/x-www-form-urlencoded` parser (and only
 * that) in this plugin context:
 * - the body must be valid UTF-8, and so must every percent-decoded value;
 * - a parameter may appear once (RFC 6749 §3.1, §3.2);
 * - parameters without a value are dropped, as if omitted (RFC 6749 §3.2);
 * - no parameter kept may hold a control character in its name or value
 *   (the rule of `control-characters.ts`).
 * Anything else is refused with `invalid_request`.
 */
export function useFormBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer', bodyLimit: FORM_BODY_LIMIT_BYTES },
    (_request, body, done) => {
      try {
        done(null, parseForm(body as Buffer));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
  );
}

/**
 * The object a form parses into: nothing inherited (its prototype chain ends
 * in an empty object without a prototype), so `__proto__`, `constructor` or
 * `toString` are ordinary parameter names. Unlike `Object.create(null)`,
 * whose objects V8 keeps as slow dictionaries, instances keep fast property
 * access: this parser runs on every token request.
 */
const ParsedForm = function ParsedForm() {} as unknown as new () => Record<string, string>;
ParsedForm.prototype = Object.create(null);

/** Parses a form body; exported for tests. */
export function parseForm(body: Uint8Array): FormParams {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (!isUtf8(bytes)) throw new InvalidRequest('request body is not valid UTF-8');
  const text = bytes.toString('utf8');
  const params = new ParsedForm();
  // Names seen with an empty value: dropped from the result, but a repeat is still a repeat.
  let empty: Set<string> | undefined;
  // The first parameter kept that holds a control character: refused once the form parsed, so that
  // a malformed form is refused as such first.
  let controlled: string | undefined;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    if (name in params || empty?.has(name)) throw new InvalidRequest(`${parameterLabel(name)} is repeated`);
    if (value !== '') {
      params[name] = value;
      if (controlled === undefined && (hasControlCharacter(name) || hasControlCharacter(value))) controlled = name;
    } else (empty ??= new Set()).add(name);
  }
  if (controlled !== undefined) throw controlCharacterInParameter(controlled);
  return params;
}

function decode(component: string): string {
  // Most components need no decoding at all (grant_type=client_credentials).
  if (!component.includes('%') && !component.includes('+')) return component;
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    throw new InvalidRequest('request body is not valid form encoding (bad percent-escape or UTF-8)');
  }
}
