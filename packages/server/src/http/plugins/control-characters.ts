import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hasControlCharacter } from '../../core/control-characters.js';
import { InvalidRequest, parameterLabel } from '../../core/errors.js';

/**
 * THE rule for control characters (`core/control-characters.ts`): a query
 * parameter or a form field (name or value, once percent-decoded), or a
 * header Connect reads, holding one is refused with `400 invalid_request`
 * (an error page on the hosted pages) before any route sees it. No
 * identifier, code, URL, mobile number or PIN contains one, and PostgreSQL
 * refuses a NUL in text outright; refused here, such input never reaches a
 * store. Where each part is checked, so that no request pays for a hook of
 * its own (bench/README.md):
 * - the headers and the query, when the request arrives, by the app's one
 *   `onRequest` hook (`app.ts`, {@link controlCharacterError});
 * - a form body, as it is parsed (`form-body.ts`);
 * - a JSON object body, as it is parsed, on every route registered after
 *   {@link refuseControlCharactersInJson};
 * - HTTP Basic credentials once decoded (`core/clients/client-authenticate.ts`),
 *   and JSON bodies read as text where their values are read (`POST /tokens`),
 *   with {@link hasControlCharacter}.
 */
export function controlCharacterError(request: FastifyRequest): InvalidRequest | undefined {
  const problem = controlCharacterIn(request);
  return problem === undefined ? undefined : new InvalidRequest(`${problem} contains a control character`);
}

/** The error for a body whose parameter `name` holds a control character. */
export function controlCharacterInParameter(name: string): InvalidRequest {
  return new InvalidRequest(`${parameterLabel(name)} contains a control character`);
}

/**
 * Parses JSON bodies as Fastify does by default, refusing an object whose
 * field (name or value) holds a control character, on every route
 * registered after this in `app`'s context.
 */
export function refuseControlCharactersInJson(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parseJson(request, body as string, (error, parsed) => {
      if (error) return done(error, undefined);
      const where = offending(parsed);
      if (where !== undefined) return done(controlCharacterInParameter(where), undefined);
      done(null, parsed);
    });
  });
}

/** What holds a control character, as an error message names it, if anything does. */
function controlCharacterIn(request: FastifyRequest): string | undefined {
  // The request headers Connect reads a value from (besides `X-Request-Id`,
  // which is replaced when malformed, and `X-Forwarded-For`, whose hops are
  // parsed as addresses), each looked up by name: this runs on every request.
  const headers = request.headers;
  if (holdsControlCharacter(headers.authorization)) return 'the Authorization header';
  if (holdsControlCharacter(headers['accept-language'])) return 'the Accept-Language header';
  if (holdsControlCharacter(headers['request-reference-no'])) return 'the Request-Reference-No header';
  const where = offending(request.query);
  return where === undefined ? undefined : parameterLabel(where);
}

function holdsControlCharacter(value: string | string[] | undefined): boolean {
  return typeof value === 'string' && hasControlCharacter(value);
}

/** The name of the first parameter whose name or value holds a control character. */
function offending(params: unknown): string | undefined {
  if (params === null || typeof params !== 'object') return undefined;
  const record = params as Record<string, unknown>;
  for (const name in record) {
    if (!Object.hasOwn(record, name)) continue;
    if (hasControlCharacter(name)) return name;
    const value = record[name];
    if (typeof value === 'string') {
      if (hasControlCharacter(value)) return name;
    } else if (Array.isArray(value) && value.some((one) => typeof one === 'string' && hasControlCharacter(one))) {
      return name;
    }
  }
  return undefined;
}
