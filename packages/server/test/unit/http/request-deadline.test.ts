import type { FastifyReply, FastifyRequest } from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RequestEnded, requestDeadlines, requestSignal, RequestTimedOut } from '../../../src/http/plugins/request-deadline.js';

/** A request, and a reply that records what was sent. */
function exchange() {
  const sent: unknown[] = [];
  const request = {} as FastifyRequest;
  const reply = {
    sent: false,
    raw: { headersSent: false },
    send(payload: unknown) {
      sent.push(payload);
      reply.sent = true;
      return reply;
    },
  };
  return { request, reply: reply as unknown as FastifyReply & { sent: boolean }, sent };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('requestDeadlines', () => {
  it('answers 503 to every request past its deadline, oldest first, and no other', () => {
    const deadlines = requestDeadlines(1000);
    const [a, b, c, d] = [exchange(), exchange(), exchange(), exchange()];
    deadlines.start(a.request, a.reply);
    deadlines.start(b.request, b.reply);
    vi.advanceTimersByTime(500);
    deadlines.start(c.request, c.reply);
    deadlines.start(d.request, d.reply);
    // b answered in time; a is left to its deadline.
    deadlines.finish(b.request);
    expect(requestSignal(b.request).reason).toBeInstanceOf(RequestEnded);
    vi.advanceTimersByTime(750);
    expect(a.sent).toEqual([expect.any(RequestTimedOut)]);
    expect(requestSignal(a.request).aborted).toBe(true);
    expect(requestSignal(a.request).reason).toBeInstanceOf(RequestTimedOut);
    expect([b.sent, c.sent, d.sent]).toEqual([[], [], []]);
    expect(requestSignal(c.request).aborted).toBe(false);
    // The last one is answered by itself; the other one reaches its deadline.
    deadlines.finish(d.request);
    vi.advanceTimersByTime(500);
    expect(c.sent).toEqual([expect.any(RequestTimedOut)]);
    expect(d.sent).toEqual([]);
    deadlines.close();
  });

  it('visits the replies not sent yet, in the order their requests came, and stops sweeping once none is left', () => {
    const deadlines = requestDeadlines(1000);
    const all = [exchange(), exchange(), exchange(), exchange()];
    for (const { request, reply } of all) deadlines.start(request, reply);
    all[1]!.reply.sent = true;
    deadlines.finish(all[2]!.request);
    const visited: FastifyReply[] = [];
    deadlines.forEachUnsent((reply) => visited.push(reply));
    expect(visited).toEqual([all[0]!.reply, all[3]!.reply]);
    for (const { request } of all) deadlines.finish(request);
    deadlines.forEachUnsent((reply) => visited.push(reply));
    expect(visited).toHaveLength(2);
    // Every request answered: the sweep timer is gone, and a new request starts it again.
    vi.advanceTimersByTime(300);
    expect(vi.getTimerCount()).toBe(0);
    const late = exchange();
    deadlines.start(late.request, late.reply);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1250);
    expect(late.sent).toEqual([expect.any(RequestTimedOut)]);
    vi.advanceTimersByTime(250);
    expect(vi.getTimerCount()).toBe(0);
    deadlines.close();
  });

  it('refuses a signal for a request it never saw', () => {
    expect(() => requestSignal(exchange().request)).toThrow(/not registered/);
  });
});
