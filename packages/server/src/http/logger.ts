import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config/schema.js';

/**
 * Paths that may hold a secret. The request serializer below never logs
 * headers or bodies and no log call passes a secret, so this is the second
 * line of defence. No `*` paths: pino's wildcard redaction is re-evaluated for
 * every line and cost several times the rest of a request's logging
 * (bench/README.md).
 */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
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
  return pino(
    {
      level: options.level,
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
    // Lines are written in batches (4 KiB or every 100 ms) instead of one
    // write per line; pino flushes what is pending when the process exits.
    options.destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 }),
  );
}
