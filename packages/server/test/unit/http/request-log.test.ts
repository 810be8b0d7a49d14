import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { RequestLogController } from '../../../src/http/plugins/request-log.js';

function fakeExchange(url: string) {
  const calls: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const log = Object.fromEntries(
    ['info', 'error', 'warn'].map((level) => [level, (fields: Record<string, unknown>, msg: string) => calls.push({ level, fields, msg })]),
  );
  const request = { method: 'POST', url, ip: '192.0.2.7', log } as unknown as FastifyRequest;
  const reply = { statusCode: 200, elapsedTime: 1.5004999, log } as unknown as FastifyReply;
  return { request, reply, calls };
}

describe('RequestLogController', () => {
  it('writes nothing when a request comes in', () => {
    const { request, reply, calls } = fakeExchange('/token');
    new RequestLogController().incomingRequest(request, reply);
    expect(calls).toEqual([]);
  });

  it('writes one flat info line when a response completes, without the query string', () => {
    const { request, reply, calls } = fakeExchange('/authorize?state=secret-state');
    new RequestLogController().requestCompleted(null, request, reply);
    expect(calls).toEqual([
      {
        level: 'info',
        fields: { method: 'POST', path: '/authorize', remoteAddress: '192.0.2.7', statusCode: 200, responseTime: 1.5 },
        msg: 'request completed',
      },
    ]);
  });

  it('logs a response that failed at error level, with the error', () => {
    const { request, reply, calls } = fakeExchange('/token');
    const error = new Error('socket hang up');
    new RequestLogController().requestCompleted(error, request, reply);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ level: 'error', msg: 'request errored', fields: { path: '/token', statusCode: 200, err: error } });
  });
});
