import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hasControlCharacter } from '../../core/control-characters.js';
import { InvalidRequest, parameterLabel } from '../../core/errors.js';

/**
 * THE rule for control characters (`core/control-characters.ts`): a query
 * parameter or a form field (name or value, once percent-decoded), or a
 * header Connect reads, holding one is refused with `400 invalid_request`
 * (an error page on the hosted pages) before any route sees it, on every
 * route registered after this. No identifier, code, URL, mobile number or
 * PIN contains one, and PostgreSQL refuses a NUL in text outright; refused
 * here, such input never reaches a store. Where each part is checked:
 * - the headers and the query by a `preValidation` hook (which also
 *   refuses a repeated `Authorization` header): after every
 *   `onRequest` hook, so that what a route's own hook adds to every answer
 *   (`POST /tokens` echoes `Request-Reference-No`) is on this one too;
 * - a form body as it is parsed (`form-body.ts`), and a JSON object body
 *   by the JSON parser registered here: no second pass over the body;
 * - HTTP Basic credentials once decoded (`core/clients/client-authenticate.ts`),
 *   and JSON bodies read as text where their values are read (`POST /tokens`),
 *   with {@link hasControlCharacter}.
 */
export function refuseControlCharacters(app: FastifyInstance): void {
  // A callback hook, not an async one: no promise per request for synchronous work.
  app.addHook('preValidation', (request, _reply, done) => {
    // Node keeps the first of two Authorization headers and drops the other:
    // credentials of two clients (or two tokens) would pass as the first's.
    if (request.headers.authorization !== undefined && repeatsAuthorization(request.raw.rawHeaders)) {
      done(new InvalidRequest('the Authorization header is repeated'));
      return;
    }
    const problem = controlCharacterIn(request);
    done(problem === undefined ? undefined : new InvalidRequest(`${problem} contains a control character`));
  });
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

/** Whether the request carries more than one `Authorization` header (names in any case). */
function repeatsAuthorization(rawHeaders: readonly string[]): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    if (name.length !== 13 || name.toLowerCase() !== 'authorization') continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}

/** The error for a body whose parameter `name` holds a control character. */
export function controlCharacterInParameter(name: string): InvalidRequest {
  return new InvalidRequest(`${parameterLabel(name)} contains a control character`);
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
