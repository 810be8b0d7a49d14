import { hostname } from 'node:os';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../src/http/logger.js';
import { jsonNumber, requestLineWriter } from '../../../src/http/plugins/request-log.js';

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

describe('jsonNumber', () => {
  it('writes every number as JSON.stringify does', () => {
    const values = [-0, 0.1 + 0.2, 1.2345, 1e-7, 1e21, -1, -0.5, 2_147_483.647, 2_147_483.648, 1e300, Number.MAX_SAFE_INTEGER, Number.NaN, Infinity, -Infinity];
    // Every response time up to 30 s as the request line rounds it (to the microsecond), and status codes.
    for (let thousandths = 0; thousandths <= 30_000; thousandths += 1) values.push(thousandths / 1000);
    for (let i = 0; i < 20_000; i += 1) values.push(Math.round(Math.random() * 2_200_000_000) / 1000, Math.random() * 1000);
    for (const value of values) expect(jsonNumber(value), String(value)).toBe(JSON.stringify(value));
  });
});

describe('requestLineWriter', () => {
  const fields = { reqId: 'req-9', method: 'POST', path: '/token', remoteAddress: '192.0.2.9', statusCode: 200, responseTime: 1.234 };

  /** The line pino itself writes for `fields`, and the writer's, at one fixed time. */
  function bothLines(given: typeof fields) {
    const spy = vi.spyOn(Date, 'now').mockReturnValue(1_795_000_000_123);
    try {
      const pinoOwn = capture();
      pinoOwn.logger.info(given, 'request completed');
      const written = capture();
      requestLineWriter(written.logger)!(given);
      return { pinoLines: pinoOwn.lines, writerLines: written.lines };
    } finally {
      spy.mockRestore();
    }
  }

  it('writes the line pino writes for the same fields, character for character', () => {
    const { pinoLines, writerLines } = bothLines(fields);
    expect(writerLines).toHaveLength(1);
    expect(writerLines).toEqual(pinoLines);
    expect(JSON.parse(writerLines[0]!)).toEqual({
      level: 30,
      time: 1_795_000_000_123,
      pid: process.pid,
      hostname: hostname(),
      ...fields,
      msg: 'request completed',
    });
  });

  it('escapes what JSON escapes, as pino does', () => {
    for (const path of ['/a"b', '/a\\b', '/caf\u00e9', '/\u001b[2J', `/${'x'.repeat(60)}"`]) {
      const { pinoLines, writerLines } = bothLines({ ...fields, path });
      expect(writerLines).toEqual(pinoLines);
      expect(JSON.parse(writerLines[0]!).path).toBe(path);
    }
    const { pinoLines, writerLines } = bothLines({ ...fields, responseTime: Number.NaN });
    expect(writerLines).toEqual(pinoLines);
    // A lone surrogate (which an HTTP path never decodes to) is escaped, where pino writes it raw.
    expect(JSON.parse(bothLines({ ...fields, path: '/\ud800' }).writerLines[0]!).path).toBe('/\ud800');
  });

  it('writes nothing above the info level, and again once the level is lowered', () => {
    const { logger, lines } = capture();
    const write = requestLineWriter(logger)!;
    logger.level = 'warn';
    write(fields);
    expect(lines).toEqual([]);
    logger.level = 'debug';
    write(fields);
    expect(lines).toHaveLength(1);
  });

  it('tells a level-aware destination the line is at info, as pino does', () => {
    const levels: number[] = [];
    const destination = Object.assign(
      {
        lastLevel: 0,
        write() {
          levels.push(destination.lastLevel);
        },
      },
      { [pino.symbols.needsMetadataGsym]: true },
    );
    const logger = createLogger({ level: 'info', destination });
    logger.error('first');
    requestLineWriter(logger)!(fields);
    expect(levels).toEqual([50, 30]);
  });

  it('is only there for a logger made by createLogger', () => {
    expect(requestLineWriter(pino({ level: 'info' }, { write() {} }))).toBeUndefined();
  });
});
