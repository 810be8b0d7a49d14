import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/http/logger.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ level: 'info', destination }), lines };
}

const SECRET = 'csk_sandbox_SECRETSECRETSECRET';

describe('createLogger', () => {
  it('logs a request by method, path and address only: no header, cookie, body or query', () => {
    const { logger, lines } = capture();
    const request = {
      id: 'req-7',
      method: 'POST',
      url: `/token?client_secret=${SECRET}`,
      ip: '192.0.2.1',
      headers: { authorization: `Basic ${SECRET}`, cookie: `connect_session=${SECRET}` },
      body: { client_secret: SECRET },
    };
    const reply = { statusCode: 200, headers: { 'set-cookie': `connect_session=${SECRET}` } };
    logger.info({ req: request, res: reply }, 'request completed');

    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line.req).toEqual({ id: 'req-7', method: 'POST', path: '/token', remoteAddress: '192.0.2.1' });
    expect(line.res).toEqual({ statusCode: 200 });
    expect(lines[0]).not.toContain('SECRET');
  });

  it('redacts secrets passed under their own names or as headers', () => {
    const { logger, lines } = capture();
    logger.info(
      {
        headers: { authorization: `Bearer ${SECRET}`, cookie: SECRET, accept: 'application/json' },
        client_secret: SECRET,
        refreshToken: SECRET,
        pin: '1234',
        otp: '123456',
      },
      'something happened',
    );
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      headers: { authorization: '[redacted]', cookie: '[redacted]', accept: 'application/json' },
      client_secret: '[redacted]',
      refreshToken: '[redacted]',
      pin: '[redacted]',
      otp: '[redacted]',
    });
    expect(lines[0]).not.toContain('SECRET');
  });
});
