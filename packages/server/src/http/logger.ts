import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config/schema.js';

/**
 * Paths that may hold a secret, wherever a log call puts them. The request
 * serializer below never logs headers or bodies; this is the second line.
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
  '*.client_secret',
  '*.clientSecret',
  '*.access_token',
  '*.accessToken',
  '*.refresh_token',
  '*.refreshToken',
  '*.pin',
  '*.otp',
  '*.secret',
  '*.body',
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
    options.destination,
  );
}
