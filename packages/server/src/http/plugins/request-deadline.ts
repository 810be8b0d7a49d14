import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** A request was not answered within `CONNECT_REQUEST_TIMEOUT_MS`: answered `503` (`oauth-errors.ts`). */
export class RequestTimedOut extends Error {
  override readonly name = 'RequestTimedOut';
  constructor(timeoutMs: number) {
    super(`the request was not answered within ${timeoutMs} ms`);
  }
}

/** The request was answered: work of it still running is of no use to anyone. */
export class RequestEnded extends Error {
  override readonly name = 'RequestEnded';
  constructor() {
    super('the request was answered');
  }
}

/**
 * A request in flight: its deadline, and its signal once some work asked
 * for it. Entries form a list in the order requests arrived (`previous`,
 * `next`): adding and removing one is a few assignments, where a `Set`
 * hashed every entry (bench/README.md).
 */
interface InFlight {
  /**
   * Until the request is answered: then let go (see `finish`), so that an
   * entry kept past its request does not keep the request's objects alive.
   */
  reply: FastifyReply | undefined;
  /** `performance.now()` past which it is answered `503`. */
  readonly deadline: number;
  controller?: AbortController;
  /** Why it no longer waits for its work, once it does not. */
  ended?: Error;
  previous: InFlight | undefined;
  next: InFlight | undefined;
  /** Whether it is still in the list. */
  listed: boolean;
}

/**
 * Where a request keeps its {@link InFlight} entry: a property every
 * request has from the start ({@link declareRequestDeadlines}), so that
 * setting it adds no property to a request object.
 */
const IN_FLIGHT = Symbol('connect.inFlight');
type Tracked = FastifyRequest & { [IN_FLIGHT]: InFlight | null };

/** Declares the property where each request keeps its deadline: call it once on the app, before any request. */
export function declareRequestDeadlines(app: FastifyInstance): void {
  app.decorateRequest(IN_FLIGHT as unknown as string, null);
}

/**
 * The request's signal: aborted once the request no longer waits for its
 * work, because it was not answered within `CONNECT_REQUEST_TIMEOUT_MS`
 * (reason {@link RequestTimedOut}; the request was answered `503`), or its
 * answer was sent ({@link RequestEnded}). Work
 * that must not happen for nobody (sending an SMS) checks it first. Made
 * when first asked for, so requests that never ask pay nothing for it.
 */
export function requestSignal(request: FastifyRequest): AbortSignal {
  const entry = (request as Tracked)[IN_FLIGHT];
  if (!entry) throw new Error('requestSignal: the request deadline is not registered');
  if (!entry.controller) {
    entry.controller = new AbortController();
    if (entry.ended) entry.controller.abort(entry.ended);
  }
  return entry.controller.signal;
}

/** The reason of every answered request's signal: one instance, so answering a request makes no error (and stack) of its own. */
const ANSWERED = new RequestEnded();

/** Marks a request as no longer waiting for its work, aborting its signal if it has one. */
function end(entry: InFlight, why: Error): void {
  if (entry.ended) return;
  entry.ended = why;
  entry.controller?.abort(why);
}

/** The deadlines of the requests in flight (see {@link requestDeadlines}). */
export interface RequestDeadlines {
  /** Starts a request's deadline: called once per request, when it arrives. */
  start(request: FastifyRequest, reply: FastifyReply): void;
  /** The request was answered. */
  finish(request: FastifyRequest): void;
  /** Calls `visit` with the reply of every request in flight that has not been sent yet. */
  forEachUnsent(visit: (reply: FastifyReply) => void): void;
  /** Stops the sweep. */
  close(): void;
}

/**
 * Gives every request a deadline (docs/operator-guide.md, "Timeouts"): a
 * request not answered within `timeoutMs` gets `503 temporarily_unavailable`
 * (through the one error mapping), and its {@link requestSignal} is
 * aborted, so that work still running (waiting on a partitioned database,
 * say) cannot go on to send an SMS once the partition heals.
 *
 * One timer serves every request: the requests in flight are kept in the
 * order they arrived, which is the order of their deadlines, and a sweep
 * every quarter of the timeout (at most 250 ms) answers those past theirs.
 * A request costs a list entry, not a timer and listeners of its own, and
 * its signal is made only when some work asks for it. The app calls
 * `start` from its one `onRequest` hook and `finish` with the rest of its
 * end-of-request work (`app.ts`).
 * Fastify's own `handlerTimeout` cannot serve: its signal also aborts when
 * Node closes the request stream after reading a form body, long before
 * the answer.
 */
export function requestDeadlines(timeoutMs: number): RequestDeadlines {
  // The requests in flight, oldest first.
  let first: InFlight | undefined;
  let last: InFlight | undefined;
  const sweepMs = Math.max(10, Math.min(250, Math.floor(timeoutMs / 4)));
  let sweeper: NodeJS.Timeout | undefined;

  const unlist = (entry: InFlight) => {
    if (!entry.listed) return;
    entry.listed = false;
    if (entry.previous) entry.previous.next = entry.next;
    else first = entry.next;
    if (entry.next) entry.next.previous = entry.previous;
    else last = entry.previous;
    entry.previous = undefined;
    entry.next = undefined;
  };

  const sweep = () => {
    const now = performance.now();
    // Arrived in deadline order: the first one not yet due ends the sweep.
    while (first !== undefined && first.deadline <= now) {
      const entry = first;
      unlist(entry);
      const reply = entry.reply;
      if (!reply || reply.sent || reply.raw.headersSent) continue;
      const timedOut = new RequestTimedOut(timeoutMs);
      end(entry, timedOut);
      reply.send(timedOut);
    }
    if (first === undefined && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };

  return {
    start(request, reply) {
      const entry: InFlight = { reply, deadline: performance.now() + timeoutMs, previous: last, next: undefined, listed: true };
      (request as Tracked)[IN_FLIGHT] = entry;
      if (last) last.next = entry;
      else first = entry;
      last = entry;
      // The process may exit with requests in flight: the sweep keeps nothing alive.
      sweeper ??= setInterval(sweep, sweepMs).unref();
    },
    // Answered. (A client that went away before its answer is let go at its
    // deadline: a hook on every request's abort would cost more than it saves.)
    finish(request) {
      const entry = (request as Tracked)[IN_FLIGHT];
      if (entry) {
        unlist(entry);
        end(entry, ANSWERED);
        // Let go of the reply: V8 can keep an entry that left the list until
        // the next full collection, and one that still held its reply kept
        // the whole request (reply, request, headers, body) alive through
        // every minor collection, which copied it into the old generation.
        // Under load that was about a tenth of all that was allocated, and
        // most of the garbage collector's time (bench/README.md).
        entry.reply = undefined;
      }
    },
    forEachUnsent(visit) {
      for (let entry = first; entry !== undefined; entry = entry.next) {
        const reply = entry.reply;
        if (reply && !reply.sent && !reply.raw.headersSent) visit(reply);
      }
    },
    close() {
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
    },
  };
}
