import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { isSmsCountry } from '../core/customers/mobile.js';
import { isEnvironment } from '../core/environment.js';
import { MASTER_KEY_BYTES } from '../core/keys/master-key.js';
import { AUDIT_RETENTION_DAYS_DEFAULT, DEFAULT_LIFETIMES, JWKS_MAX_AGE_LIMIT_SECONDS } from '../core/lifetimes.js';
import type { DatabaseLocation } from '../storage/kysely/open-storage.js';
import { DEFAULTS, type Config, type LogLevel, type SmsSenderKind, type TrustProxy } from './schema.js';

/** Bad configuration; `message` is one line naming the variable and the problem. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

// Rate-limit budgets: far above any sensible one, well inside the counters' integer column.
const MAX_LIMIT = 1_000_000;

/**
 * Reads and checks the configuration from environment variables.
 *
 * @param env the variables (normally `process.env`).
 * @param cwd the directory relative paths are resolved against.
 * @throws ConfigError naming the first bad variable.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, cwd = process.cwd()): Config {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };

  const environmentValue = read('CONNECT_ENVIRONMENT') ?? DEFAULTS.environment;
  if (!isEnvironment(environmentValue)) {
    throw new ConfigError(`CONNECT_ENVIRONMENT must be "sandbox" or "production", not ${quote(environmentValue)}`);
  }
  const environment = environmentValue;
  const production = environment === 'production';
  const dataDir = resolve(cwd, read('CONNECT_DATA_DIR') ?? DEFAULTS.dataDir);

  const logLevel = (read('CONNECT_LOG_LEVEL') ?? DEFAULTS.logLevel) as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`CONNECT_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const authUrl = readPublicUrl(read, 'CONNECT_AUTH_URL', production);
  const baseUrl = readPublicUrl(read, 'CONNECT_BASE_URL', production);
  if (production && !authUrl) throw new ConfigError('CONNECT_AUTH_URL is required in production (an https:// URL)');

  const smsWebhookUrl = read('CONNECT_SMS_WEBHOOK_URL');
  const smsWebhookSecret = read('CONNECT_SMS_WEBHOOK_SECRET');
  if (smsWebhookUrl !== undefined) {
    const url = parseUrl(smsWebhookUrl);
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      throw new ConfigError('CONNECT_SMS_WEBHOOK_URL must be an http:// or https:// URL');
    }
    if (production && url.protocol !== 'https:') throw new ConfigError('CONNECT_SMS_WEBHOOK_URL must be https:// in production');
    if (smsWebhookSecret === undefined) throw new ConfigError('CONNECT_SMS_WEBHOOK_SECRET is required when CONNECT_SMS_WEBHOOK_URL is set');
  } else if (smsWebhookSecret !== undefined) {
    throw new ConfigError('CONNECT_SMS_WEBHOOK_SECRET is set but CONNECT_SMS_WEBHOOK_URL is not');
  }
  if (production && smsWebhookUrl === undefined) {
    throw new ConfigError('CONNECT_SMS_WEBHOOK_URL is required in production (one-time PINs go to the SMS gateway)');
  }

  const smsSender = (read('CONNECT_SMS_SENDER') ?? (smsWebhookUrl ? 'webhook' : 'outbox')) as SmsSenderKind;
  if (!['outbox', 'console', 'webhook'].includes(smsSender)) {
    throw new ConfigError(`CONNECT_SMS_SENDER must be outbox, console or webhook, not ${quote(smsSender)}`);
  }
  if (smsSender === 'webhook' && smsWebhookUrl === undefined) {
    throw new ConfigError('CONNECT_SMS_SENDER=webhook needs CONNECT_SMS_WEBHOOK_URL and CONNECT_SMS_WEBHOOK_SECRET');
  }
  if (production && smsSender !== 'webhook') {
    throw new ConfigError(`CONNECT_SMS_SENDER=${smsSender} is for the sandbox only; production sends one-time PINs through the webhook`);
  }

  const trustProxy = readTrustProxy(read('CONNECT_TRUST_PROXY'), production);

  const masterKeyValue = read('CONNECT_MASTER_KEY');
  const masterKey = masterKeyValue === undefined ? undefined : decodeMasterKey(masterKeyValue);
  if (production && !masterKey) throw new ConfigError('CONNECT_MASTER_KEY is required in production (32 random bytes, base64)');

  const redisUrl = read('REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:$/.test(parseUrl(redisUrl)?.protocol ?? '')) {
    throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  }

  const config: Config = {
    environment,
    port: readInteger(read, 'PORT', DEFAULTS.port, 0, 65_535),
    host: read('HOST') ?? DEFAULTS.host,
    database: readDatabase(read('DATABASE_URL'), dataDir, environment, cwd),
    databasePoolSize: readInteger(read, 'CONNECT_DB_POOL_SIZE', DEFAULTS.databasePoolSize, 1, 1000),
    metricsPort: read('CONNECT_METRICS_PORT') === undefined ? undefined : readInteger(read, 'CONNECT_METRICS_PORT', 0, 1, 65_535),
    databaseTimeoutMs: readInteger(read, 'CONNECT_DB_TIMEOUT_MS', DEFAULTS.databaseTimeoutMs, 100, 600_000),
    redisUrl,
    redisTimeoutMs: readInteger(read, 'CONNECT_REDIS_TIMEOUT_MS', DEFAULTS.redisTimeoutMs, 10, 600_000),
    requestTimeoutMs: readInteger(read, 'CONNECT_REQUEST_TIMEOUT_MS', DEFAULTS.requestTimeoutMs, 100, 600_000),
    authUrl,
    baseUrl,
    dataDir,
    masterKey,
    smsWebhookUrl,
    smsWebhookSecret,
    lifetimes: Object.freeze({
      codeSeconds: readInteger(read, 'CONNECT_CODE_TTL', DEFAULT_LIFETIMES.codeSeconds, 1),
      accessTokenSeconds: readInteger(read, 'CONNECT_ACCESS_TOKEN_TTL', DEFAULT_LIFETIMES.accessTokenSeconds, 1),
      refreshTokenSeconds: readInteger(read, 'CONNECT_REFRESH_TOKEN_TTL', DEFAULT_LIFETIMES.refreshTokenSeconds, 1),
      sessionIdleSeconds: readInteger(read, 'CONNECT_SESSION_IDLE_TTL', DEFAULT_LIFETIMES.sessionIdleSeconds, 1),
      sessionSeconds: readInteger(read, 'CONNECT_SESSION_TTL', DEFAULT_LIFETIMES.sessionSeconds, 1),
      jwksMaxAgeSeconds: readInteger(read, 'CONNECT_JWKS_MAX_AGE', DEFAULT_LIFETIMES.jwksMaxAgeSeconds, 1, JWKS_MAX_AGE_LIMIT_SECONDS),
    }),
    smsSender,
    trustProxy,
    secretRotationGraceSeconds: readInteger(read, 'CONNECT_SECRET_ROTATION_GRACE', DEFAULTS.secretRotationGraceSeconds, 0),
    shutdownGraceSeconds: readInteger(read, 'CONNECT_SHUTDOWN_GRACE', DEFAULTS.shutdownGraceSeconds, 1, 3600),
    smsLimitPerMobile: readInteger(read, 'CONNECT_SMS_LIMIT_PER_MOBILE', DEFAULTS.smsLimitPerMobile, 1, MAX_LIMIT),
    smsLimitPerAddress: readInteger(read, 'CONNECT_SMS_LIMIT_PER_ADDRESS', DEFAULTS.smsLimitPerAddress[environment], 1, MAX_LIMIT),
    pinLimitPerAddress: readInteger(read, 'CONNECT_PIN_LIMIT_PER_ADDRESS', DEFAULTS.pinLimitPerAddress[environment], 1, MAX_LIMIT),
    smsLimitGlobal:
      read('CONNECT_SMS_LIMIT_GLOBAL') === undefined
        ? DEFAULTS.smsLimitGlobal[environment]
        : readInteger(read, 'CONNECT_SMS_LIMIT_GLOBAL', 1, 1, MAX_LIMIT),
    smsCountries: readCountries(read('CONNECT_SMS_COUNTRIES')),
    auditRetentionDays: readInteger(read, 'CONNECT_AUDIT_RETENTION_DAYS', AUDIT_RETENTION_DAYS_DEFAULT, 1, 100 * 365),
    logLevel,
  };
  return Object.freeze(config);
}

type Reader = (name: string) => string | undefined;

/** `CONNECT_SMS_COUNTRIES`: comma-separated ISO 3166 alpha-2 codes, upper-cased; unset or blank allows all. */
function readCountries(value: string | undefined): readonly string[] | undefined {
  if (value === undefined) return undefined;
  const codes = value.split(',').map((code) => code.trim().toUpperCase());
  if (codes.length === 1 && codes[0] === '') return undefined;
  const bad = codes.filter((code) => !isSmsCountry(code));
  if (bad.length > 0) {
    throw new ConfigError(`CONNECT_SMS_COUNTRIES must list ISO 3166 alpha-2 country codes separated by commas (e.g. PH,SG); not a country: ${bad.map(quote).join(', ')}`);
  }
  return Object.freeze([...new Set(codes)]);
}

function readInteger(read: Reader, name: string, fallback: number, min: number, max = 10 * 365 * 86_400): number {
  const value = read(name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value)) throw new ConfigError(`${name} must be a whole number, not ${quote(value)}`);
  const number = Number(value);
  if (number < min || number > max) throw new ConfigError(`${name} must be between ${min} and ${max}, not ${value}`);
  return number;
}

function readTrustProxy(value: string | undefined, production: boolean): TrustProxy {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') {
    if (production) {
      throw new ConfigError(
        'CONNECT_TRUST_PROXY=true lets a client choose its own address; in production give the number of proxies in front (e.g. 1) or their addresses',
      );
    }
    return true;
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > 10) throw new ConfigError(`CONNECT_TRUST_PROXY must be a number of proxies from 1 to 10, not ${value}`);
    return hops;
  }
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || extra !== undefined) {
      throw new ConfigError(
        `CONNECT_TRUST_PROXY must be false, a number of proxies, or a comma-separated list of addresses and CIDR ranges (e.g. 10.0.0.0/8), not ${quote(value)}`,
      );
    }
  }
  return Object.freeze(entries);
}

function readPublicUrl(read: Reader, name: string, production: boolean): string | undefined {
  const value = read(name);
  if (value === undefined) return undefined;
  const url = parseUrl(value);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new ConfigError(`${name} must be an http:// or https:// URL`);
  if (production && url.protocol !== 'https:') throw new ConfigError(`${name} must be an https:// URL in production`);
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`${name} must not carry a query, fragment or credentials`);
  }
  return url.href.replace(/\/+$/, '');
}

function readDatabase(value: string | undefined, dataDir: string, environment: string, cwd: string): DatabaseLocation {
  if (value === undefined) return { engine: 'sqlite', path: resolve(dataDir, `connect-${environment}.db`) };
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length);
    if (path === '') throw new ConfigError('DATABASE_URL "sqlite:" needs a path, e.g. sqlite:./data/connect.db or sqlite::memory:');
    return { engine: 'sqlite', path: path === ':memory:' ? path : resolve(cwd, path) };
  }
  if (/^postgres(ql)?:\/\//.test(value) && parseUrl(value)) return { engine: 'postgres', url: value };
  throw new ConfigError('DATABASE_URL must be sqlite:<path> or a postgres:// / postgresql:// URL');
}

function decodeMasterKey(value: string): Buffer {
  const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(value) ? Buffer.from(value, 'base64') : Buffer.alloc(0);
  if (key.length !== MASTER_KEY_BYTES) {
    throw new ConfigError(`CONNECT_MASTER_KEY must be ${MASTER_KEY_BYTES} random bytes in base64 (e.g. openssl rand -base64 32)`);
  }
  return key;
}

/** A value quoted for a one-line message: JSON escapes keep a newline in it from splitting the line. */
function quote(value: string): string {
  return JSON.stringify(value);
}

function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}
