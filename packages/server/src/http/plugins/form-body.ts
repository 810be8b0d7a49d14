import type { FastifyInstance } from 'fastify';
import { InvalidRequest } from '../../core/errors.js';

/** Largest form body accepted (token, introspection and revocation requests are tiny). */
export const FORM_BODY_LIMIT_BYTES = 16 * 1024;

/** A parsed `application/x-www-form-urlencoded` body: one string per parameter. */
export type FormParams = Readonly<Record<string, string>>;

/**
 * Registers a strict `application/x-www-form-urlencoded` parser (and only
 * that) in this plugin context:
 * - the body must be valid UTF-8, and so must every percent-decoded value;
 * - a parameter may appear once (RFC 6749 §3.1, §3.2);
 * - parameters without a value are dropped, as if omitted (RFC 6749 §3.2).
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

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses a form body; exported for tests. */
export function parseForm(body: Uint8Array): FormParams {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new InvalidRequest('request body is not valid UTF-8');
  }
  const params: Record<string, string> = Object.create(null);
  const seen = new Set<string>();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    if (seen.has(name)) throw new InvalidRequest(`parameter ${JSON.stringify(name.slice(0, 40))} is repeated`);
    seen.add(name);
    if (value !== '') params[name] = value;
  }
  return params;
}

function decode(component: string): string {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    throw new InvalidRequest('request body is not valid form encoding (bad percent-escape or UTF-8)');
  }
}
