import { describe, expect, it } from 'vitest';
import * as sdk from '../../src/index.js';
import { ConnectError, HINTS, InvalidClient, ReauthorizationRequired, type ConnectErrorCode } from '../../src/transport/errors.js';

// Every error says what to do next: a hint per code, as the last sentence of its message.
const pending = { url: 'http://connect.example/authorize?x', state: 's', codeVerifier: 'v', redirectUri: 'http://shop.example/cb' };

function construct(ErrorClass: Function): ConnectError {
  if (ErrorClass === ReauthorizationRequired) return new ReauthorizationRequired('alice', 'no_tokens', pending);
  return new (ErrorClass as new (description: string, options?: sdk.ConnectErrorOptions) => ConnectError)('what happened', { endpoint: 'POST http://connect.example/token', status: 400 });
}

const classes = (Object.values(sdk) as unknown[]).filter((value): value is Function => typeof value === 'function' && value.prototype instanceof ConnectError);

describe('error hints', () => {
  it('covers every exported error class and every code', () => {
    expect(classes).toHaveLength(Object.keys(HINTS).length);
    const codes = classes.map((ErrorClass) => construct(ErrorClass).error).sort();
    expect(codes).toEqual(Object.keys(HINTS).sort());
  });

  it.each(classes.map((ErrorClass) => [ErrorClass.name, ErrorClass] as const))('%s ends its message with the hint of its code', (_name, ErrorClass) => {
    const error = construct(ErrorClass);
    expect(error.hint).toBe(HINTS[error.error as ConnectErrorCode]);
    expect(error.hint).toMatch(/^[A-Z].{20,}\.$/);
    expect(error.message.endsWith(`. ${error.hint}`)).toBe(true);
    expect(error.description).not.toContain(error.hint);
  });

  it('names the request before the hint, and the hint says what to do about invalid_client', () => {
    const error = new InvalidClient('client authentication failed', { endpoint: 'POST http://connect.example/token', status: 401 });
    expect(error.message).toBe(
      'client authentication failed (POST http://connect.example/token, HTTP 401). Check the client ID and secret for this environment (sandbox credentials do not work in production); if the secret was rotated, use the new one; if both are right, ask the operator whether the client is disabled.',
    );
  });

  it("gives a consumer's own subclass its parent's hint", () => {
    class WrappedClientError extends InvalidClient {}
    expect(new WrappedClientError('x').message).toBe(`x. ${HINTS.invalid_client}`);
  });
});
