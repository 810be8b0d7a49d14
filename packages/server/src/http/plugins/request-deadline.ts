import type { FastifyInstance, FastifyRequest } from 'fastify';

/** A request was not answered within `CONNECT_REQUEST_TIMEOUT_MS`: answered `503` (`oauth-errors.ts`). */
export class RequestTimedOut extends Error {
  override readonly name = 'RequestTimedOut';
  constructor(timeoutMs: number) {
    super(`the request was not answered within ${timeoutMs} ms`);
  }
}

/** The request was answered (or its client went away): work of it still running is of no use to anyone. */
export class RequestEnded extends Error {
  override readonly name = 'RequestEnded';
  constructor() {
    super('the request was answered or its client went away');
  }
}

const signals = new WeakMap<FastifyRequest, AbortSignal>();

/**
 * The request's signal: aborted once the request no longer waits for its
 * work, because it was not answered within `CONNECT_REQUEST_TIMEOUT_MS`
 * (reason {@link RequestTimedOut}; the request was answered `503`), or its
 * answer was sent, or its client went away ({@link RequestEnded}). Work
 * that must not happen for nobody (sending an SMS) checks it first.
 */
export function requestSignal(request: FastifyRequest): AbortSignal {
  const signal = signals.get(request);
  if (!signal) throw new Error('requestSignal: the request deadline is not registered');
  return signal;
}

/**
 * Gives every request a deadline (docs/operator-guide.md, "Timeouts"): a
 * request not answered within `timeoutMs` gets `503 temporarily_unavailable`
 * (through the one error mapping), and its {@link requestSignal} is
 * aborted, so that work still running (waiting on a partitioned database,
 * say) cannot go on to send an SMS once the partition heals. Fastify's own
 * `handlerTimeout` cannot serve: its signal also aborts when Node closes
 * the request stream after reading a form body, long before the answer.
 */
export function limitRequestTime(app: FastifyInstance, timeoutMs: number): void {
  app.addHook('onRequest', (request, reply, done) => {
    const controller = new AbortController();
    signals.set(request, controller.signal);
    const timer = setTimeout(() => {
      if (reply.sent || reply.raw.headersSent) return;
      const timedOut = new RequestTimedOut(timeoutMs);
      controller.abort(timedOut);
      reply.send(timedOut);
    }, timeoutMs);
    // `finish`: the answer was sent in full; `close`: that, or the connection ended first.
    const ended = () => {
      clearTimeout(timer);
      if (!controller.signal.aborted) controller.abort(new RequestEnded());
    };
    reply.raw.once('finish', ended);
    reply.raw.once('close', ended);
    done();
  });
}
