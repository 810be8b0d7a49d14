import { hostname } from 'node:os';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config/schema.js';
import { TurnBatchedDestination } from './log-destination.js';
import { writeRequestLinesOf } from './plugins/request-log.js';

/**
 * Paths that may hold a secret. No log call passes a secret, so this is the
 * second line of defence.
 *
 * Nothing under `req` or `res`: pino redacts a value after its serializer
 * ran, and the `req` and `res` serializers below keep only the fields they
 * name (never headers, cookies or bodies), so a `req.headers.authorization`
 * path could never match; it would only cost a redaction pass on every
 * request line. No `*` paths either: pino's wildcard redaction is re-evaluated
 * for every line and cost several times the rest of a request's logging
 * (bench/README.md).
 */
const REDACT_PATHS = [
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'client_secret',
  'clientSecret',
  'access_token',
  'accessToken',
  'refresh_token',
  'refreshToken',
  'code',
  'pin',
  'otp',
  'secret',
  'body',
];

interface SerializableRequest {
  id?: string;
  method?: string;
  url?: string;
  ip?: string;
}

/**
 * The server's logger: JSON lines, secrets redacted. Requests are logged by
 * method, path (never the query string, which may carry codes or mobile
 * numbers), client address and request ID.
 */
export function createLogger(options: { level: LogLevel; destination?: DestinationStream }): Logger {
  // The lines of one event-loop turn go out together, with one write(2)
  // when the turn ends; errors at once; nothing is held past the turn or
  // lost at exit (log-destination.ts, bench/README.md).
  const destination = options.destination ?? new TurnBatchedDestination(pino.destination({ dest: 1, sync: true }));
  // pino's own default, stated so that request lines can write it too (`requestLineWriter`).
  const base = { pid: process.pid, hostname: hostname() };
  const logger = pino(
    {
      level: options.level,
      base,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: {
        req: (req: SerializableRequest) => ({
          id: req.id,
          method: req.method,
          path: req.url?.split('?')[0],
          remoteAddress: req.ip,
        }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    destination,
  );
  writeRequestLinesOf(logger, destination, base);
  return logger;
}
