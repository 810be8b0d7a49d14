import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { pino, type Bindings, type ChildLoggerOptions, type DestinationStream, type Logger } from 'pino';

/**
 * What runs once a request's response has been sent (or failed), before its
 * line is logged: the app's per-request bookkeeping (`app.ts`).
 */
export type RequestCompletion = (request: FastifyRequest, reply: FastifyReply) => void;

/**
 * Logs each request once, when its response is sent, as one flat line:
 *
 * `{"level":30,"time":…,"reqId":"3f1c…","method":"POST","path":"/token",
 * "remoteAddress":"127.0.0.1","statusCode":200,"responseTime":1.42,"msg":"request completed"}`
 *
 * The path never includes the query string, which may carry codes or mobile
 * numbers. Fastify's own request logging writes two lines ("incoming
 * request", "request completed") with nested `req`/`res` objects; one flat
 * line, written by Fastify's log controller rather than by an extra
 * `onResponse` hook, keeps logging cheap on the token endpoint's hot path
 * (bench/README.md). The line goes straight to the server's logger, with
 * the request ID as a field, so that a request that logs nothing else needs
 * no child logger (see `requestChildLogger`). Fastify's other log lines (a
 * response stream that failed, a serializer that threw) stay as they are.
 *
 * Fastify calls the controller for every request whose response ended,
 * with or without a logger, right where it would run `onResponse` hooks:
 * the app's own end-of-request work (`completed`) runs here too, so that
 * no request pays for a hook runner of its own (bench/README.md).
 */
export class RequestLogController extends LogController {
  readonly #log: FastifyBaseLogger | undefined;
  readonly #writeLine: RequestLineWriter | undefined;
  readonly #completed: RequestCompletion | undefined;

  /**
   * @param log the server's logger, which writes the request lines; `undefined`: no lines.
   * @param completed runs first, for every request that ended.
   */
  constructor(log: FastifyBaseLogger | undefined, completed?: RequestCompletion) {
    super();
    this.#log = log;
    // The server's own logger (`createLogger`) writes the line of a request
    // that went well without pino's generic pass (`requestLineWriter` below).
    this.#writeLine = log === undefined ? undefined : requestLineWriter(log);
    this.#completed = completed;
  }

  override incomingRequest(_request: FastifyRequest, _reply: FastifyReply): void {
    // Nothing: the request is logged once, when it completes.
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.#completed !== undefined) this.#complete(this.#completed, request, reply);
    const log = this.#log;
    if (log === undefined) return;
    const unavailable = (request as unknown as Record<symbol, string | undefined>)[UNAVAILABLE];
    // One object literal per kind of line, no spreads: the line of a request
    // that went well (nearly all of them) is one small object of one shape.
    const line: RequestLine = {
      reqId: request.id,
      method: request.method,
      path: pathOf(request.url),
      remoteAddress: request.ip,
      statusCode: reply.statusCode,
      // Milliseconds, to the microsecond (Fastify measures it to the nanosecond).
      responseTime: Math.round(reply.elapsedTime * 1000) / 1000,
    };
    if (error == null && unavailable === undefined && this.#writeLine !== undefined && typeof line.remoteAddress === 'string') {
      this.#writeLine(line);
      return;
    }
    if (unavailable) line.unavailable = unavailable;
    if (error) {
      line.err = error;
      log.error(line, 'request errored');
    } else {
      log.info(line, 'request completed');
    }
  }

  /** Runs `completed`: it is called from the response's `finish` event, where a throw would end the process. */
  #complete(completed: RequestCompletion, request: FastifyRequest, reply: FastifyReply): void {
    try {
      completed(request, reply);
    } catch (error) {
      this.#log?.error({ reqId: request.id, err: error }, 'end-of-request work failed');
    }
  }
}

/** A request line: its fields, in the order they are written, and what went wrong. */
interface RequestLine extends RequestLineFields {
  unavailable?: string;
  err?: Error;
}

/** Where a request answered `503` keeps what failed, for its request line. */
const UNAVAILABLE = Symbol('unavailable');

/**
 * Notes on `request` the dependency whose failure made it a `503`
 * (`database`, `redis`, or `request_deadline`): its request line then says
 * `"unavailable":"database"`, and no other line is written for it.
 */
export function markUnavailable(request: FastifyRequest, what: string): void {
  (request as unknown as Record<symbol, string>)[UNAVAILABLE] = what;
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * The Fastify options that log requests through `logger` as Connect does:
 * one line per request (`RequestLogController`, after `completed`) and a
 * request's child logger only when it logs more (`requestChildLogger`).
 */
export function requestLogging(
  logger: FastifyBaseLogger,
  completed?: RequestCompletion,
): Required<Pick<FastifyServerOptions, 'loggerInstance' | 'logController' | 'childLoggerFactory'>> {
  return { loggerInstance: logger, logController: new RequestLogController(logger, completed), childLoggerFactory: requestChildLogger };
}

/**
 * Fastify's `childLoggerFactory`: `request.log` is a child logger bound to
 * the request ID, as Fastify's own, but it is only made when something logs
 * through it. Most requests log nothing besides their request line, and
 * making a pino child for each of them (a new object over the logger's
 * prototype chain, its bindings serialized, its formatters rebuilt) was a
 * measurable part of the token endpoint's cost (bench/README.md).
 */
export function requestChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options);
}

class LazyChildLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #made: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #child(): FastifyBaseLogger {
    return (this.#made ??= this.#parent.child(this.#bindings, this.#options));
  }

  get level(): string {
    return this.#made?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#child().level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#child().child(bindings, options);
  }

  // Each call is passed on as it was made (pino's log methods are overloaded).
  fatal(...args: unknown[]): void {
    Reflect.apply(this.#child().fatal, this.#made, args);
  }
  error(...args: unknown[]): void {
    Reflect.apply(this.#child().error, this.#made, args);
  }
  warn(...args: unknown[]): void {
    Reflect.apply(this.#child().warn, this.#made, args);
  }
  info(...args: unknown[]): void {
    Reflect.apply(this.#child().info, this.#made, args);
  }
  debug(...args: unknown[]): void {
    Reflect.apply(this.#child().debug, this.#made, args);
  }
  trace(...args: unknown[]): void {
    Reflect.apply(this.#child().trace, this.#made, args);
  }
  silent(): void {}
}

/** The fields of every request line, in the order they are written. */
export interface RequestLineFields {
  readonly reqId: string;
  readonly method: string;
  readonly path: string;
  readonly remoteAddress: string;
  readonly statusCode: number;
  readonly responseTime: number;
}

/** Writes the `request completed` line of one request, if the logger writes `info` lines. */
export type RequestLineWriter = (fields: RequestLineFields) => void;

const requestLineWriters = new WeakMap<Logger, RequestLineWriter>();

/**
 * The writer of `request completed` lines for a logger made by
 * `createLogger` (`logger.ts`); `undefined` for any other logger, which then logs
 * them through pino's `info` like every other line.
 *
 * The line is the one pino would write for
 * `logger.info(fields, 'request completed')`, character for character:
 * `{"level":30,"time":…,"pid":…,"hostname":…,"reqId":…,…,"msg":"request completed"}`.
 * It is built here because it is written once for every request, and
 * pino's generic path (each field looked up for a serializer, a redaction
 * and a stringifier, then quoted) was about 15,000 instructions of a
 * token request, 2.3% of all it runs (bench/README.md). None of its
 * fields is ever a secret or redacted: the request ID is well formed or a
 * UUID, the path never holds the query string.
 */
export function requestLineWriter(logger: object): RequestLineWriter | undefined {
  return requestLineWriters.get(logger as Logger);
}

/**
 * Gives `logger` (made by `createLogger`, with these base bindings, writing
 * to `destination`) its {@link requestLineWriter}.
 */
export function writeRequestLinesOf(logger: Logger, destination: DestinationStream, base: { pid: number; hostname: string }): void {
  requestLineWriters.set(logger, writeRequestLine(logger, destination, `,"pid":${base.pid},"hostname":${jsonString(base.hostname)}`));
}

function writeRequestLine(logger: Logger, destination: DestinationStream, bindings: string): RequestLineWriter {
  const needsMetadata = (destination as unknown as Record<symbol, unknown>)[pino.symbols.needsMetadataGsym] === true;
  const withLevel = destination as DestinationStream & { lastLevel?: number };
  return (fields) => {
    if (logger.levelVal > INFO) return;
    const line =
      `{"level":30,"time":${Date.now()}${bindings},"reqId":${jsonString(fields.reqId)},"method":${jsonString(fields.method)}` +
      `,"path":${jsonString(fields.path)},"remoteAddress":${jsonString(fields.remoteAddress)},"statusCode":${jsonNumber(fields.statusCode)}` +
      `,"responseTime":${jsonNumber(fields.responseTime)},"msg":"request completed"}\n`;
    if (needsMetadata) withLevel.lastLevel = INFO;
    destination.write(line);
  };
}

/** pino's `info` level. */
const INFO = 30;

/** Printable ASCII without a quote or a backslash: written between quotes as it is. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A string as JSON writes it (and pino: the same escapes). */
function jsonString(value: string): string {
  return PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);
}

/** Largest number of thousandths written from integers by {@link jsonNumber}. */
const MAX_THOUSANDTHS = 0x7fffffff;

/**
 * A number as JSON (and pino) writes it: `null` when not finite.
 *
 * A whole number of thousandths (a status code, a response time rounded
 * to the microsecond: every request line has both) is written from its
 * integer parts, which is what `String()` gives for it (the shortest
 * decimal that reads back as the same number) without its general
 * conversion, which was a third of the cost of writing a line
 * (bench/README.md).
 */
export function jsonNumber(value: number): string {
  const thousandths = Math.round(value * 1000);
  if (thousandths >= 0 && thousandths <= MAX_THOUSANDTHS && thousandths / 1000 === value) {
    const whole = Math.floor(thousandths / 1000);
    const fraction = thousandths - whole * 1000;
    if (fraction === 0) return String(whole);
    if (fraction % 100 === 0) return `${whole}.${fraction / 100}`;
    if (fraction % 10 === 0) return `${whole}.${fraction < 100 ? '0' : ''}${fraction / 10}`;
    return `${whole}.${fraction < 10 ? '00' : fraction < 100 ? '0' : ''}${fraction}`;
  }
  return Number.isFinite(value) ? String(value) : 'null';
}
