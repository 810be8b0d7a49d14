import type { FastifyInstance } from 'fastify';
import { InvalidRequest, parameterLabel } from '../../core/errors.js';

/** C0 controls (NUL, TAB, CR, LF, ESC…), DEL and the C1 controls: none belongs in any parameter Connect takes. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** Whether `value` holds a control character (see {@link refuseControlCharacters}). */
export function hasControlCharacter(value: string): boolean {
  return CONTROL_CHARACTER.test(value);
}

/**
 * THE rule for control characters in parameters: a query parameter or a
 * form field (name or value, once percent-decoded) holding one is refused
 * with `400 invalid_request` (an error page on the hosted pages) before
 * any route sees it, on every route registered after this. No identifier,
 * code, URL, mobile number or PIN contains one, and PostgreSQL refuses a
 * NUL in text outright; refused here, such input never reaches a store.
 * JSON bodies are checked where their values are read (`POST /tokens`)
 * with {@link hasControlCharacter}.
 */
export function refuseControlCharacters(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const where = offending(request.query) ?? (typeof request.body === 'object' ? offending(request.body) : undefined);
    if (where !== undefined) throw new InvalidRequest(`${parameterLabel(where)} contains a control character`);
  });
}

/** The name of the first parameter whose name or value holds a control character. */
function offending(params: unknown): string | undefined {
  if (params === null || typeof params !== 'object') return undefined;
  for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
    if (hasControlCharacter(name)) return name;
    const values = Array.isArray(value) ? value : [value];
    if (values.some((one) => typeof one === 'string' && hasControlCharacter(one))) return name;
  }
  return undefined;
}
