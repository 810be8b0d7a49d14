import { Writable } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/http/logger.js';
import { markUnavailable, RequestLogController, requestChildLogger } from '../../../src/http/plugins/request-log.js';

type Call = { level: string; fields: Record<string, unknown>; msg: string };

/** A logger that records its calls, and a request and reply whose own `log` must stay unused. */
function fakeExchange(url: string) {
  const calls: Call[] = [];
  const record = (level: string) => (fields: Record<string, unknown>, msg: string) => calls.push({ level, fields, msg });
  const log = { info: record('info'), error: record('error'), warn: record('warn') } as unknown as FastifyBaseLogger;
  const unused = new Proxy({}, { get: () => expect.unreachable('request.log used for the request line') });
  const request = { id: 'req-7', method: 'POST', url, ip: '192.0.2.7', log: unused } as unknown as FastifyRequest;
  const reply = { statusCode: 200, elapsedTime: 1.5004999, log: unused } as unknown as FastifyReply;
  return { controller: new RequestLogController(log), request, reply, calls };
}

/** A real pino logger writing to an array, with a count of the child loggers made from it. */
function countingLogger() {
  const lines: string[] = [];
  const logger = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  });
  const made = { children: 0 };
  const child = logger.child;
  // Children inherit this method: count only the ones made from `logger` itself.
  logger.child = function (this: typeof logger, ...args: Parameters<typeof child>) {
    if (this === logger) made.children += 1;
    return child.apply(this, args);
  } as typeof logger.child;
  const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, made, parsed };
}

describe('RequestLogController', () => {
  it('writes nothing when a request comes in', () => {
    const { controller, request, reply, calls } = fakeExchange('/token');
    controller.incomingRequest(request, reply);
    expect(calls).toEqual([]);
  });

  it('writes one flat info line through the server logger when a response completes, without the query string', () => {
    const { controller, request, reply, calls } = fakeExchange('/authorize?state=secret-state');
    controller.requestCompleted(null, request, reply);
    expect(calls).toEqual([
      {
        level: 'info',
        fields: { reqId: 'req-7', method: 'POST', path: '/authorize', remoteAddress: '192.0.2.7', statusCode: 200, responseTime: 1.5 },
        msg: 'request completed',
      },
    ]);
  });

  it('logs a response that failed at error level, with the error', () => {
    const { controller, request, reply, calls } = fakeExchange('/token');
    const error = new Error('socket hang up');
    controller.requestCompleted(error, request, reply);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ level: 'error', msg: 'request errored', fields: { reqId: 'req-7', path: '/token', statusCode: 200, err: error } });
  });

  it('runs the end-of-request work first, for every completed request, with or without a logger', () => {
    const { request, reply, calls } = fakeExchange('/token');
    const log = { info: (fields: Record<string, unknown>, msg: string) => calls.push({ level: 'info', fields, msg }) } as unknown as FastifyBaseLogger;
    const order: string[] = [];
    const completed = (seenRequest: FastifyRequest, seenReply: FastifyReply) => {
      expect([seenRequest, seenReply]).toEqual([request, reply]);
      order.push(`completed after ${calls.length} lines`);
    };
    new RequestLogController(log, completed).requestCompleted(null, request, reply);
    expect(order).toEqual(['completed after 0 lines']);
    expect(calls).toHaveLength(1);
    new RequestLogController(undefined, completed).requestCompleted(new Error('socket hang up'), request, reply);
    expect(order).toEqual(['completed after 0 lines', 'completed after 1 lines']);
    expect(calls).toHaveLength(1);
  });

  it('logs end-of-request work that throws, instead of throwing from the response event, and still writes the line', () => {
    const { request, reply, calls } = fakeExchange('/token');
    const log = {
      info: (fields: Record<string, unknown>, msg: string) => calls.push({ level: 'info', fields, msg }),
      error: (fields: Record<string, unknown>, msg: string) => calls.push({ level: 'error', fields, msg }),
    } as unknown as FastifyBaseLogger;
    const failure = new Error('counter broke');
    const controller = new RequestLogController(log, () => {
      throw failure;
    });
    expect(() => controller.requestCompleted(null, request, reply)).not.toThrow();
    expect(calls.map(({ level, msg }) => `${level} ${msg}`)).toEqual(['error end-of-request work failed', 'info request completed']);
    expect(calls[0]?.fields).toEqual({ reqId: 'req-7', err: failure });
    expect(() => new RequestLogController(undefined, () => {
      throw failure;
    }).requestCompleted(null, request, reply)).not.toThrow();
  });
});

describe('requestChildLogger', () => {
  it('makes no child logger until something logs through it', () => {
    const { logger, made, parsed } = countingLogger();
    const log = requestChildLogger(logger, { reqId: 'req-1' }, {});
    expect(log.level).toBe('info');
    expect(made.children).toBe(0);
    expect(parsed()).toEqual([]);
  });

  it('logs at every level with the request ID bound, making the child once', () => {
    const { logger, made, parsed } = countingLogger();
    logger.level = 'trace';
    const log = requestChildLogger(logger, { reqId: 'req-2' }, {});
    log.info({ detail: 'x' }, 'first');
    log.warn('second %s', 'formatted');
    log.error(new Error('third'));
    log.fatal('fourth');
    log.debug('fifth');
    log.trace('sixth');
    log.silent('never written');
    expect(made.children).toBe(1);
    expect(parsed().map(({ level, reqId, msg, detail }) => ({ level, reqId, msg, detail }))).toEqual([
      { level: 30, reqId: 'req-2', msg: 'first', detail: 'x' },
      { level: 40, reqId: 'req-2', msg: 'second formatted', detail: undefined },
      { level: 50, reqId: 'req-2', msg: 'third', detail: undefined },
      { level: 60, reqId: 'req-2', msg: 'fourth', detail: undefined },
      { level: 20, reqId: 'req-2', msg: 'fifth', detail: undefined },
      { level: 10, reqId: 'req-2', msg: 'sixth', detail: undefined },
    ]);
  });

  it('passes the level Fastify asks for (a route logLevel) on to the child, and changes its own level', () => {
    const { logger, parsed } = countingLogger();
    const log = requestChildLogger(logger, { reqId: 'req-3' }, { level: 'warn' });
    expect(log.level).toBe('warn');
    log.info('dropped at warn');
    log.warn('kept');
    log.level = 'error';
    log.warn('dropped at error');
    expect(log.level).toBe('error');
    expect(parsed().map((line) => line.msg)).toEqual(['kept']);
  });

  it('makes grandchildren that keep the request ID', () => {
    const { logger, parsed } = countingLogger();
    requestChildLogger(logger, { reqId: 'req-4' }, {}).child({ part: 'sms' }).info('sent');
    expect(parsed()).toEqual([expect.objectContaining({ reqId: 'req-4', part: 'sms', msg: 'sent' })]);
  });
});

describe('RequestLogController with the server logger', () => {
  function serverExchange() {
    const { logger, parsed } = countingLogger();
    const request = { id: 'req-8', method: 'GET', url: '/authorize?login_hint=%2B639171234567', ip: '192.0.2.8' } as unknown as FastifyRequest;
    const reply = { statusCode: 302, elapsedTime: 0.25 } as unknown as FastifyReply;
    return { controller: new RequestLogController(logger), request, reply, parsed };
  }

  it('writes the line of a request that went well, with every field and without the query string', () => {
    const { controller, request, reply, parsed } = serverExchange();
    controller.requestCompleted(null, request, reply);
    expect(parsed()).toEqual([
      expect.objectContaining({ level: 30, reqId: 'req-8', method: 'GET', path: '/authorize', remoteAddress: '192.0.2.8', statusCode: 302, responseTime: 0.25, msg: 'request completed' }),
    ]);
  });

  it('names the dependency that failed, and logs an error with its stack, through pino', () => {
    const { controller, request, reply, parsed } = serverExchange();
    markUnavailable(request, 'database');
    controller.requestCompleted(null, request, reply);
    controller.requestCompleted(new Error('socket hang up'), request, reply);
    const [unavailable, errored] = parsed();
    expect(unavailable).toMatchObject({ level: 30, reqId: 'req-8', unavailable: 'database', msg: 'request completed' });
    expect(errored).toMatchObject({ level: 50, reqId: 'req-8', msg: 'request errored', err: { message: 'socket hang up' } });
  });
});
