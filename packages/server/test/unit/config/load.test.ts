import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, defaultAuthUrl, loadConfig } from '../../../src/config/load.js';
import { MASTER_KEY_FILE, resolveMasterKey } from '../../../src/config/master-key-file.js';
import type { Config } from '../../../src/config/schema.js';

const CWD = '/srv/connect';
const MASTER_KEY = randomBytes(32).toString('base64');

/** Settings production accepts; each production test removes or spoils one of them. */
const PRODUCTION: Record<string, string> = {
  CONNECT_ENVIRONMENT: 'production',
  CONNECT_MASTER_KEY: MASTER_KEY,
  CONNECT_AUTH_URL: 'https://auth.connect.example',
  CONNECT_SMS_WEBHOOK_URL: 'https://sms.gateway.example/send',
  CONNECT_SMS_WEBHOOK_SECRET: 'webhook-signing-secret',
  DATABASE_URL: 'postgres://connect:pw@db.internal:5432/connect',
};

/** Runs `loadConfig` expecting a `ConfigError`, and returns it. */
function configError(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env, CWD);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

/** Expects a `ConfigError` with exactly one problem, one line naming `variable`. */
function expectRefused(env: Record<string, string | undefined>, variable: string, detail?: RegExp): ConfigError {
  const error = configError(env);
  expect(error.problems).toEqual([error.message]);
  expect(error.message).toContain(variable);
  expect(error.message).not.toMatch(/[\r\n]/);
  if (detail) expect(error.message).toMatch(detail);
  return error;
}

describe('loadConfig: defaults', () => {
  it('gives every setting of docs/operator-guide.md its default when nothing is set', () => {
    const config = loadConfig({}, CWD);
    expect(config).toEqual({
      environment: 'sandbox',
      port: 3000,
      host: '127.0.0.1',
      database: { engine: 'sqlite', path: resolve(CWD, 'data', 'connect-sandbox.db') },
      redisUrl: undefined,
      authUrl: undefined,
      baseUrl: undefined,
      webauthnRpId: 'localhost',
      webauthnOrigins: [],
      passkeyHoldSeconds: 0,
      dataDir: resolve(CWD, 'data'),
      masterKey: undefined,
      smsWebhookUrl: undefined,
      smsWebhookSecret: undefined,
      lifetimes: { codeSeconds: 300, accessTokenSeconds: 3600, refreshTokenSeconds: 604_800, refreshReuseSeconds: 10, sessionIdleSeconds: 1800, sessionSeconds: 43_200, jwksMaxAgeSeconds: 300 },
      smsSender: 'outbox',
      trustProxy: false,
      secretRotationGraceSeconds: 86_400,
      shutdownDelaySeconds: 0,
      shutdownGraceSeconds: 10,
      smsLimitPerMobile: 1000,
      smsLimitPerAddress: 1000,
      pinLimitPerAddress: 1000,
      journeyLimitPerAddress: 10_000,
      defaultCountry: 'PH',
      scopesSupported: [],
      auditRetentionDays: 365,
      logLevel: 'info',
      metricsHost: '127.0.0.1',
      databasePoolSize: 10,
      databaseTimeoutMs: 5000,
      redisTimeoutMs: 1000,
      requestTimeoutMs: 30_000,
    });
  });

  it('keeps the sandbox per-address limits high for test suites, and production ones low', () => {
    expect(loadConfig(PRODUCTION, CWD)).toMatchObject({ smsLimitPerMobile: 5, smsLimitPerAddress: 20, pinLimitPerAddress: 50, journeyLimitPerAddress: 300 });
    expect(loadConfig({ CONNECT_ENVIRONMENT: 'sandbox' }, CWD)).toMatchObject({ smsLimitPerMobile: 1000, smsLimitPerAddress: 1000, pinLimitPerAddress: 1000, journeyLimitPerAddress: 10_000 });
    expect(loadConfig({ CONNECT_JOURNEY_LIMIT_PER_ADDRESS: '25' }, CWD).journeyLimitPerAddress).toBe(25);
    expect(() => loadConfig({ CONNECT_JOURNEY_LIMIT_PER_ADDRESS: '0' }, CWD)).toThrow(/CONNECT_JOURNEY_LIMIT_PER_ADDRESS/);
  });

  it('returns a frozen configuration', () => {
    const config = loadConfig({}, CWD);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('treats empty and blank variables as unset', () => {
    const config = loadConfig({ CONNECT_ENVIRONMENT: '', PORT: '  ', HOST: '', CONNECT_ACCESS_TOKEN_TTL: '', CONNECT_MASTER_KEY: ' ' }, CWD);
    expect(config).toMatchObject({ environment: 'sandbox', port: 3000, host: '127.0.0.1', masterKey: undefined });
    expect(config.lifetimes.accessTokenSeconds).toBe(3600);
  });

  it('names the embedded database after the environment, inside the data folder', () => {
    const config = loadConfig({ ...PRODUCTION, DATABASE_URL: undefined, CONNECT_DATA_DIR: '/var/lib/connect' }, CWD);
    expect(config.database).toEqual({ engine: 'sqlite', path: '/var/lib/connect/connect-production.db' });
  });

  it('resolves a relative data folder against the working directory', () => {
    const config = loadConfig({ CONNECT_DATA_DIR: 'state' }, CWD);
    expect(config.dataDir).toBe('/srv/connect/state');
    expect(config.database).toEqual({ engine: 'sqlite', path: '/srv/connect/state/connect-sandbox.db' });
  });

  it('leaves the public URLs unset, to be derived from the bound address at start-up', () => {
    const config = loadConfig({ HOST: '0.0.0.0', PORT: '8080' }, CWD);
    expect(config.authUrl).toBeUndefined();
    expect(config.baseUrl).toBeUndefined();
  });
});

describe('loadConfig: accepted values', () => {
  it.each([
    ['1', 1],
    ['30', 30],
    ['36500', 36_500],
  ])('CONNECT_AUDIT_RETENTION_DAYS=%j', (value, days) => {
    expect(loadConfig({ CONNECT_AUDIT_RETENTION_DAYS: value }, CWD).auditRetentionDays).toBe(days);
  });

  it.each([
    ['0', 0],
    ['1', 1],
    ['8080', 8080],
    ['65535', 65_535],
    [' 4000 ', 4000],
  ])('PORT=%j', (value, port) => {
    expect(loadConfig({ PORT: value }, CWD).port).toBe(port);
  });

  it('CONNECT_METRICS_PORT: off when unset, a port when set', () => {
    expect(loadConfig({}, CWD).metricsPort).toBeUndefined();
    expect(loadConfig({ CONNECT_METRICS_PORT: '9464' }, CWD).metricsPort).toBe(9464);
  });

  it('CONNECT_DB_POOL_SIZE, CONNECT_DB_TIMEOUT_MS, CONNECT_REDIS_TIMEOUT_MS and CONNECT_REQUEST_TIMEOUT_MS, at their bounds', () => {
    expect(loadConfig({ CONNECT_DB_POOL_SIZE: '1', CONNECT_DB_TIMEOUT_MS: '100', CONNECT_REDIS_TIMEOUT_MS: '10', CONNECT_REQUEST_TIMEOUT_MS: '100' }, CWD)).toMatchObject({
      databasePoolSize: 1,
      databaseTimeoutMs: 100,
      redisTimeoutMs: 10,
      requestTimeoutMs: 100,
    });
    expect(
      loadConfig({ CONNECT_DB_POOL_SIZE: '1000', CONNECT_DB_TIMEOUT_MS: '600000', CONNECT_REDIS_TIMEOUT_MS: '600000', CONNECT_REQUEST_TIMEOUT_MS: '600000' }, CWD),
    ).toMatchObject({
      databasePoolSize: 1000,
      databaseTimeoutMs: 600_000,
      redisTimeoutMs: 600_000,
      requestTimeoutMs: 600_000,
    });
  });

  it.each([
    ['CONNECT_DB_POOL_SIZE', '0', 'CONNECT_DB_POOL_SIZE must be between 1 and 1000, not 0'],
    ['CONNECT_DB_POOL_SIZE', 'ten', 'CONNECT_DB_POOL_SIZE must be a whole number, not "ten"'],
    ['CONNECT_DB_TIMEOUT_MS', '99', 'CONNECT_DB_TIMEOUT_MS must be between 100 and 600000, not 99'],
    ['CONNECT_REDIS_TIMEOUT_MS', '1.5', 'CONNECT_REDIS_TIMEOUT_MS must be a whole number, not "1.5"'],
    ['CONNECT_REQUEST_TIMEOUT_MS', '99', 'CONNECT_REQUEST_TIMEOUT_MS must be between 100 and 600000, not 99'],
    ['CONNECT_METRICS_PORT', '0', 'CONNECT_METRICS_PORT must be between 1 and 65535, not 0'],
    ['CONNECT_METRICS_PORT', '70000', 'CONNECT_METRICS_PORT must be between 1 and 65535, not 70000'],
  ])('%s=%s is refused, naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value }, CWD)).toThrow(message);
  });

  it('HOST', () => {
    expect(loadConfig({ HOST: '0.0.0.0' }, CWD).host).toBe('0.0.0.0');
  });

  it('CONNECT_ENVIRONMENT=sandbox', () => {
    expect(loadConfig({ CONNECT_ENVIRONMENT: 'sandbox' }, CWD).environment).toBe('sandbox');
  });

  it('a complete production configuration', () => {
    const config = loadConfig(PRODUCTION, CWD);
    expect(config).toMatchObject({
      environment: 'production',
      authUrl: 'https://auth.connect.example',
      baseUrl: undefined,
      smsWebhookUrl: 'https://sms.gateway.example/send',
      smsWebhookSecret: 'webhook-signing-secret',
      database: { engine: 'postgres', url: PRODUCTION.DATABASE_URL },
    });
    expect(config.masterKey).toEqual(Buffer.from(MASTER_KEY, 'base64'));
  });

  it.each([
    ['sqlite::memory:', { engine: 'sqlite', path: ':memory:' }],
    ['sqlite:./db/connect.db', { engine: 'sqlite', path: '/srv/connect/db/connect.db' }],
    ['sqlite:/var/lib/connect.db', { engine: 'sqlite', path: '/var/lib/connect.db' }],
    ['postgres://u:p@localhost:5432/connect', { engine: 'postgres', url: 'postgres://u:p@localhost:5432/connect' }],
    ['postgresql://u@db.internal/connect?sslmode=require', { engine: 'postgres', url: 'postgresql://u@db.internal/connect?sslmode=require' }],
  ])('DATABASE_URL=%s', (value, database) => {
    expect(loadConfig({ DATABASE_URL: value }, CWD).database).toEqual(database);
  });

  it.each(['redis://localhost:6379', 'rediss://user:pw@cache.internal:6380/0'])('REDIS_URL=%s', (value) => {
    expect(loadConfig({ REDIS_URL: value }, CWD).redisUrl).toBe(value);
  });

  it.each([
    ['CONNECT_CODE_TTL', 'codeSeconds'],
    ['CONNECT_ACCESS_TOKEN_TTL', 'accessTokenSeconds'],
    ['CONNECT_REFRESH_TOKEN_TTL', 'refreshTokenSeconds'],
    ['CONNECT_SESSION_IDLE_TTL', 'sessionIdleSeconds'],
    ['CONNECT_SESSION_TTL', 'sessionSeconds'],
    ['CONNECT_JWKS_MAX_AGE', 'jwksMaxAgeSeconds'],
  ] as const)('%s takes any whole number of seconds from 1', (variable, key) => {
    expect(loadConfig({ [variable]: '1' }, CWD).lifetimes[key]).toBe(1);
    expect(loadConfig({ [variable]: '86400' }, CWD).lifetimes[key]).toBe(86_400);
  });

  it('CONNECT_REFRESH_REUSE_SECONDS: whole seconds from 0 (off) to 60, default 10', () => {
    expect(loadConfig({}, CWD).lifetimes.refreshReuseSeconds).toBe(10);
    expect(loadConfig({ CONNECT_REFRESH_REUSE_SECONDS: '0' }, CWD).lifetimes.refreshReuseSeconds).toBe(0);
    expect(loadConfig({ CONNECT_REFRESH_REUSE_SECONDS: '60' }, CWD).lifetimes.refreshReuseSeconds).toBe(60);
  });

  it('CONNECT_SMS_LIMIT_GLOBAL: 10000 in production, unlimited in the sandbox, unless set', () => {
    expect(loadConfig({}, CWD).smsLimitGlobal).toBeUndefined();
    expect(loadConfig(PRODUCTION, CWD).smsLimitGlobal).toBe(10_000);
    expect(loadConfig({ CONNECT_SMS_LIMIT_GLOBAL: '500' }, CWD).smsLimitGlobal).toBe(500);
    expect(loadConfig({ ...PRODUCTION, CONNECT_SMS_LIMIT_GLOBAL: '1' }, CWD).smsLimitGlobal).toBe(1);
  });

  it('CONNECT_SMS_COUNTRIES: unset allows every country; else a list of ISO 3166 alpha-2 codes, upper-cased, without repeats', () => {
    expect(loadConfig({}, CWD).smsCountries).toBeUndefined();
    expect(loadConfig({ CONNECT_SMS_COUNTRIES: 'PH' }, CWD).smsCountries).toEqual(['PH']);
    expect(loadConfig({ CONNECT_SMS_COUNTRIES: 'ph, sg ,PH' }, CWD).smsCountries).toEqual(['PH', 'SG']);
  });

  it.each(['XX', 'PHL', 'PH,,SG', 'PH;SG', 'P', '12', 'PH,EU'])('CONNECT_SMS_COUNTRIES=%j is refused naming the variable and the bad code', (value) => {
    expectRefused({ CONNECT_SMS_COUNTRIES: value }, 'CONNECT_SMS_COUNTRIES', /ISO 3166/);
  });

  it.each([
    [{}, 'PH'],
    [{ CONNECT_DEFAULT_COUNTRY: 'sg' }, 'SG'],
    [{ CONNECT_DEFAULT_COUNTRY: ' GB ' }, 'GB'],
    [{ CONNECT_DEFAULT_COUNTRY: '' }, 'PH'],
    [{ CONNECT_SMS_COUNTRIES: 'SG,PH' }, 'PH'],
    // Unset, it is never a country CONNECT_SMS_COUNTRIES leaves out.
    [{ CONNECT_SMS_COUNTRIES: 'SG,MY' }, 'SG'],
    [{ CONNECT_SMS_COUNTRIES: 'SG,MY', CONNECT_DEFAULT_COUNTRY: 'MY' }, 'MY'],
  ])('CONNECT_DEFAULT_COUNTRY with %j: %s', (env, expected) => {
    expect(loadConfig(env, CWD).defaultCountry).toBe(expected);
  });

  it.each(['XX', 'PHL', 'P', '63', '+63', 'PH,SG', 'EU'])('CONNECT_DEFAULT_COUNTRY=%j stops start-up with one line naming the variable', (value) => {
    const error = expectRefused({ CONNECT_DEFAULT_COUNTRY: value }, 'CONNECT_DEFAULT_COUNTRY');
    expect(error.message).toBe(`CONNECT_DEFAULT_COUNTRY must be an ISO 3166 alpha-2 country code (e.g. PH), not ${JSON.stringify(value)}`);
  });

  it('CONNECT_DEFAULT_COUNTRY outside CONNECT_SMS_COUNTRIES stops start-up: every national number would be refused', () => {
    const error = expectRefused({ CONNECT_DEFAULT_COUNTRY: 'PH', CONNECT_SMS_COUNTRIES: 'SG,MY' }, 'CONNECT_DEFAULT_COUNTRY');
    expect(error.message).toBe('CONNECT_DEFAULT_COUNTRY=PH is not one of CONNECT_SMS_COUNTRIES (SG,MY): every number typed without its country code would be refused');
    // A bad list is its own problem, not this one as well.
    expect(configError({ CONNECT_DEFAULT_COUNTRY: 'PH', CONNECT_SMS_COUNTRIES: 'XX' }).problems).toEqual([expect.stringMatching(/^CONNECT_SMS_COUNTRIES /)]);
  });

  it.each([
    ['CONNECT_SMS_LIMIT_PER_MOBILE', 'smsLimitPerMobile'],
    ['CONNECT_SMS_LIMIT_PER_ADDRESS', 'smsLimitPerAddress'],
    ['CONNECT_SMS_LIMIT_GLOBAL', 'smsLimitGlobal'],
    ['CONNECT_PIN_LIMIT_PER_ADDRESS', 'pinLimitPerAddress'],
  ] as const)('%s takes any whole number from 1, in either environment', (variable, key) => {
    expect(loadConfig({ [variable]: '1' }, CWD)[key]).toBe(1);
    expect(loadConfig({ [variable]: ' 250 ' }, CWD)[key]).toBe(250);
    expect(loadConfig({ ...PRODUCTION, [variable]: '3' }, CWD)[key]).toBe(3);
    expect(loadConfig({ ...PRODUCTION, [variable]: '1000000' }, CWD)[key]).toBe(1_000_000);
  });

  it('a base64 master key of 32 bytes, in either base64 alphabet', () => {
    const key = randomBytes(32);
    expect(loadConfig({ CONNECT_MASTER_KEY: key.toString('base64') }, CWD).masterKey).toEqual(key);
    expect(loadConfig({ CONNECT_MASTER_KEY: key.toString('base64url') }, CWD).masterKey).toEqual(key);
  });

  it('public URLs without their trailing slash; the base URL separately', () => {
    const config = loadConfig({ CONNECT_AUTH_URL: 'https://auth.example/', CONNECT_BASE_URL: 'https://api.example/v1/' }, CWD);
    expect(config.authUrl).toBe('https://auth.example');
    expect(config.baseUrl).toBe('https://api.example/v1');
  });

  it('http:// public URLs in the sandbox', () => {
    const config = loadConfig({ CONNECT_AUTH_URL: 'http://localhost:3000' }, CWD);
    expect(config.authUrl).toBe('http://localhost:3000');
  });

  it('an SMS webhook in the sandbox, with its secret', () => {
    const config = loadConfig({ CONNECT_SMS_WEBHOOK_URL: 'http://127.0.0.1:9000/sms', CONNECT_SMS_WEBHOOK_SECRET: 's3cret' }, CWD);
    expect(config).toMatchObject({ smsWebhookUrl: 'http://127.0.0.1:9000/sms', smsWebhookSecret: 's3cret' });
  });

  it.each(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])('CONNECT_LOG_LEVEL=%s', (level) => {
    expect(loadConfig({ CONNECT_LOG_LEVEL: level }, CWD).logLevel).toBe(level);
  });
});

describe('loadConfig: bad values stop start-up with one line naming the variable', () => {
  it.each([
    ['CONNECT_ENVIRONMENT', 'staging'],
    ['CONNECT_ENVIRONMENT', 'Production'],
    ['CONNECT_ENVIRONMENT', 'prod\nuction'],
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '65536'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['PORT', '3000\nHOST=0.0.0.0'],
    ['CONNECT_CODE_TTL', '0'],
    ['CONNECT_CODE_TTL', '-5'],
    ['CONNECT_CODE_TTL', '1.5'],
    ['CONNECT_CODE_TTL', 'ten'],
    ['CONNECT_ACCESS_TOKEN_TTL', '0'],
    ['CONNECT_ACCESS_TOKEN_TTL', '-5'],
    ['CONNECT_ACCESS_TOKEN_TTL', '1.5'],
    ['CONNECT_ACCESS_TOKEN_TTL', 'ten'],
    ['CONNECT_ACCESS_TOKEN_TTL', '1e3'],
    ['CONNECT_REFRESH_TOKEN_TTL', '0'],
    ['CONNECT_REFRESH_TOKEN_TTL', '-5'],
    ['CONNECT_REFRESH_TOKEN_TTL', '1.5'],
    ['CONNECT_REFRESH_TOKEN_TTL', 'ten'],
    ['CONNECT_REFRESH_TOKEN_TTL', '99999999999999999999'],
    ['CONNECT_REFRESH_REUSE_SECONDS', '61'],
    ['CONNECT_REFRESH_REUSE_SECONDS', '-1'],
    ['CONNECT_REFRESH_REUSE_SECONDS', '2.5'],
    ['CONNECT_REFRESH_REUSE_SECONDS', '10s'],
    ['CONNECT_JWKS_MAX_AGE', '0'],
    ['CONNECT_JWKS_MAX_AGE', '86401'],
    ['CONNECT_JWKS_MAX_AGE', '5m'],
    ['DATABASE_URL', 'sqlite:'],
    ['DATABASE_URL', 'mysql://u:p@db/connect'],
    ['DATABASE_URL', 'postgres://u:p@db:notaport/connect'],
    ['DATABASE_URL', './data/connect.db'],
    ['REDIS_URL', 'localhost:6379'],
    ['REDIS_URL', 'http://cache.internal:6379'],
    ['REDIS_URL', 'not a url'],
    ['CONNECT_MASTER_KEY', randomBytes(16).toString('base64')],
    ['CONNECT_MASTER_KEY', randomBytes(33).toString('base64')],
    ['CONNECT_MASTER_KEY', 'this is not base64 at all, is it?'],
    ['CONNECT_MASTER_KEY', randomBytes(32).toString('hex')],
    ['CONNECT_AUTH_URL', 'auth.connect.example'],
    ['CONNECT_AUTH_URL', 'ftp://auth.connect.example'],
    ['CONNECT_AUTH_URL', 'javascript:alert(1)'],
    ['CONNECT_AUTH_URL', 'https://auth.connect.example/?tenant=1'],
    ['CONNECT_AUTH_URL', 'https://auth.connect.example/#top'],
    ['CONNECT_AUTH_URL', 'https://user:pw@auth.connect.example'],
    ['CONNECT_BASE_URL', 'api.connect.example'],
    ['CONNECT_BASE_URL', 'https://api.connect.example?x=1'],
    ['CONNECT_SMS_WEBHOOK_URL', 'sms.gateway.example'],
    ['CONNECT_LOG_LEVEL', 'verbose'],
    ['CONNECT_AUDIT_RETENTION_DAYS', '0'],
    ['CONNECT_AUDIT_RETENTION_DAYS', '1.5'],
    ['CONNECT_AUDIT_RETENTION_DAYS', '36501'],
    ['CONNECT_AUDIT_RETENTION_DAYS', '1y'],
    ...['CONNECT_SMS_LIMIT_PER_MOBILE', 'CONNECT_SMS_LIMIT_PER_ADDRESS', 'CONNECT_SMS_LIMIT_GLOBAL', 'CONNECT_PIN_LIMIT_PER_ADDRESS'].flatMap((variable) =>
      ['0', '-1', '2.5', 'five', '1e3', '0x10', '1000001'].map((value) => [variable, value] as [string, string]),
    ),
  ])('%s=%j', (variable, value) => {
    const extra = variable === 'CONNECT_SMS_WEBHOOK_URL' ? { CONNECT_SMS_WEBHOOK_SECRET: 's' } : {};
    expectRefused({ [variable]: value, ...extra }, variable);
  });

  it('says what is wrong with a number', () => {
    expectRefused({ PORT: 'abc' }, 'PORT', /whole number/);
    expectRefused({ PORT: '70000' }, 'PORT', /between 0 and 65535/);
    expectRefused({ CONNECT_ACCESS_TOKEN_TTL: '0' }, 'CONNECT_ACCESS_TOKEN_TTL', /between 1 and/);
    expectRefused({ CONNECT_SMS_LIMIT_PER_MOBILE: 'none' }, 'CONNECT_SMS_LIMIT_PER_MOBILE', /whole number/);
    expectRefused({ CONNECT_PIN_LIMIT_PER_ADDRESS: '0' }, 'CONNECT_PIN_LIMIT_PER_ADDRESS', /between 1 and 1000000, not 0/);
  });

  it('CONNECT_SHUTDOWN_DELAY: 5 in production, 0 in the sandbox, unless set; whole seconds from 0 to 3600', () => {
    expect(loadConfig(PRODUCTION, CWD).shutdownDelaySeconds).toBe(5);
    expect(loadConfig({}, CWD).shutdownDelaySeconds).toBe(0);
    expect(loadConfig({ ...PRODUCTION, CONNECT_SHUTDOWN_DELAY: '0' }, CWD).shutdownDelaySeconds).toBe(0);
    expect(loadConfig({ CONNECT_SHUTDOWN_DELAY: '3600' }, CWD).shutdownDelaySeconds).toBe(3600);
    expectRefused({ CONNECT_SHUTDOWN_DELAY: '3601' }, 'CONNECT_SHUTDOWN_DELAY', /between 0 and 3600, not 3601/);
    expectRefused({ CONNECT_SHUTDOWN_DELAY: '-1' }, 'CONNECT_SHUTDOWN_DELAY', /whole number/);
    expectRefused({ CONNECT_SHUTDOWN_DELAY: '0.5' }, 'CONNECT_SHUTDOWN_DELAY', /whole number/);
    expectRefused({ CONNECT_SHUTDOWN_DELAY: '5s' }, 'CONNECT_SHUTDOWN_DELAY', /whole number/);
  });

  it('CONNECT_SHUTDOWN_GRACE: whole seconds from 1 to 3600', () => {
    expect(loadConfig({ CONNECT_SHUTDOWN_GRACE: '1' }, CWD).shutdownGraceSeconds).toBe(1);
    expect(loadConfig({ CONNECT_SHUTDOWN_GRACE: '3600' }, CWD).shutdownGraceSeconds).toBe(3600);
    expectRefused({ CONNECT_SHUTDOWN_GRACE: '0' }, 'CONNECT_SHUTDOWN_GRACE', /between 1 and 3600, not 0/);
    expectRefused({ CONNECT_SHUTDOWN_GRACE: '3601' }, 'CONNECT_SHUTDOWN_GRACE', /between 1 and 3600/);
    expectRefused({ CONNECT_SHUTDOWN_GRACE: '2.5' }, 'CONNECT_SHUTDOWN_GRACE', /whole number/);
  });

  it('never repeats a master key, database password or webhook secret in the message', () => {
    const shortKey = randomBytes(16).toString('base64');
    expect(configError({ CONNECT_MASTER_KEY: shortKey }).message).not.toContain(shortKey);
    expect(configError({ DATABASE_URL: 'mysql://u:hunter2@db/connect' }).message).not.toContain('hunter2');
    expect(configError({ REDIS_URL: 'http://u:hunter2@cache' }).message).not.toContain('hunter2');
    expect(configError({ CONNECT_SMS_WEBHOOK_SECRET: 'hunter2' }).message).not.toContain('hunter2');
  });

  it('CONNECT_SMS_WEBHOOK_SECRET: whsec_ and the base64 of 24 to 64 bytes, or a plain secret of an earlier release', () => {
    const withSecret = (secret: string) => ({ ...PRODUCTION, CONNECT_SMS_WEBHOOK_SECRET: secret });
    const standard = `whsec_${randomBytes(32).toString('base64')}`;
    expect(loadConfig(withSecret(standard), CWD).smsWebhookSecret).toBe(standard);
    expect(loadConfig(withSecret('webhook-signing-secret'), CWD).smsWebhookSecret).toBe('webhook-signing-secret');
    for (const bad of ['whsec_', `whsec_${randomBytes(16).toString('base64')}`, `whsec_${randomBytes(65).toString('base64')}`, 'whsec_not base64!', `whsec_${randomBytes(32).toString('base64url')}-_`]) {
      const error = expectRefused(withSecret(bad), 'CONNECT_SMS_WEBHOOK_SECRET', /base64 of 24 to 64 random bytes/);
      if (bad.length > 'whsec_'.length) expect(error.message).not.toContain(bad.slice('whsec_'.length));
    }
  });

  it('refuses a webhook secret without a webhook URL, and a URL without a secret', () => {
    expectRefused({ CONNECT_SMS_WEBHOOK_SECRET: 's3cret' }, 'CONNECT_SMS_WEBHOOK_URL');
    expectRefused({ CONNECT_SMS_WEBHOOK_URL: 'https://sms.gateway.example/send' }, 'CONNECT_SMS_WEBHOOK_SECRET');
  });
});

describe('loadConfig: production', () => {
  const without = (variable: string) => ({ ...PRODUCTION, [variable]: undefined });

  it('requires CONNECT_MASTER_KEY', () => {
    expectRefused(without('CONNECT_MASTER_KEY'), 'CONNECT_MASTER_KEY', /required in production/);
  });

  it('requires CONNECT_AUTH_URL', () => {
    expectRefused(without('CONNECT_AUTH_URL'), 'CONNECT_AUTH_URL', /required in production/);
  });

  it('requires https:// public URLs', () => {
    expectRefused({ ...PRODUCTION, CONNECT_AUTH_URL: 'http://auth.connect.example' }, 'CONNECT_AUTH_URL', /https/);
    expectRefused({ ...PRODUCTION, CONNECT_BASE_URL: 'http://api.connect.example' }, 'CONNECT_BASE_URL', /https/);
  });

  it('requires the SMS webhook URL', () => {
    expectRefused(without('CONNECT_SMS_WEBHOOK_URL'), 'CONNECT_SMS_WEBHOOK_URL');
  });

  it('requires the SMS webhook over https://', () => {
    expectRefused({ ...PRODUCTION, CONNECT_SMS_WEBHOOK_URL: 'http://sms.gateway.example/send' }, 'CONNECT_SMS_WEBHOOK_URL', /https/);
  });

  it('requires the webhook secret with the webhook URL', () => {
    expectRefused(without('CONNECT_SMS_WEBHOOK_SECRET'), 'CONNECT_SMS_WEBHOOK_SECRET');
  });

  it('still checks the master key format', () => {
    expectRefused({ ...PRODUCTION, CONNECT_MASTER_KEY: 'c2hvcnQ=' }, 'CONNECT_MASTER_KEY', /32/);
  });
});

describe('loadConfig: CONNECT_SCOPES_SUPPORTED', () => {
  it('reads space-separated scopes, each once, in the order given, frozen; blank is none', () => {
    const config = loadConfig({ CONNECT_SCOPES_SUPPORTED: '  payments:read profile  payments:read https://api.example/orders ' }, CWD);
    expect(config.scopesSupported).toEqual(['payments:read', 'profile', 'https://api.example/orders']);
    expect(Object.isFrozen(config.scopesSupported)).toBe(true);
    expect(loadConfig({ CONNECT_SCOPES_SUPPORTED: '   ' }, CWD).scopesSupported).toEqual([]);
  });

  it.each([
    ['a backslash', 'a\\b', '"a\\\\b"'],
    ['non-ASCII', 'caf\u00e9', '"caf\u00e9"'],
    ['a scope of 65 characters', 'x'.repeat(65), `"${'x'.repeat(65)}"`],
  ])('refuses %s, naming it', (_name, value, named) => {
    const error = expectRefused({ CONNECT_SCOPES_SUPPORTED: `profile ${value}` }, 'CONNECT_SCOPES_SUPPORTED');
    expect(error.message.endsWith(`; not a scope: ${named}`)).toBe(true);
  });
});

describe('loadConfig: every problem at once', () => {
  it('names every bad variable, one line each, in the order of docs/operator-guide.md', () => {
    const error = configError({
      CONNECT_LOG_LEVEL: 'verbose',
      CONNECT_ACCESS_TOKEN_TTL: '0',
      PORT: 'abc',
      CONNECT_ENVIRONMENT: 'staging',
      REDIS_URL: 'http://cache.internal:6379',
      CONNECT_SMS_COUNTRIES: 'PH,XX',
      CONNECT_SCOPES_SUPPORTED: 'profile pay"ments',
    });
    expect(error.problems).toEqual([
      'CONNECT_ENVIRONMENT must be "sandbox" or "production", not "staging"',
      'PORT must be a whole number, not "abc"',
      'REDIS_URL must be a redis:// or rediss:// URL',
      'CONNECT_ACCESS_TOKEN_TTL must be between 1 and 315360000, not 0',
      'CONNECT_SMS_COUNTRIES must list ISO 3166 alpha-2 country codes separated by commas (e.g. PH,SG); not a country: "XX"',
      'CONNECT_SCOPES_SUPPORTED must list scopes separated by spaces, each at most 64 printable ASCII characters without double quotes or backslashes; not a scope: "pay\\"ments"',
      'CONNECT_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    ]);
    expect(error.message).toBe(error.problems.join('\n'));
  });

  it('production with nothing else set lists every variable it requires', () => {
    expect(configError({ CONNECT_ENVIRONMENT: 'production' }).problems).toEqual([
      'CONNECT_AUTH_URL is required in production (an https:// URL)',
      'CONNECT_MASTER_KEY is required in production (32 random bytes, base64)',
      'CONNECT_SMS_WEBHOOK_URL is required in production (one-time PINs go to the SMS gateway)',
    ]);
  });

  it('lists bad values and broken production rules together', () => {
    const error = configError({
      ...PRODUCTION,
      PORT: '70000',
      CONNECT_AUTH_URL: 'http://auth.connect.example',
      CONNECT_MASTER_KEY: undefined,
      CONNECT_SMS_WEBHOOK_SECRET: undefined,
      CONNECT_SMS_SENDER: 'console',
      CONNECT_TRUST_PROXY: 'true',
      CONNECT_LOG_LEVEL: 'verbose',
    });
    expect(error.problems).toEqual([
      'PORT must be between 0 and 65535, not 70000',
      'CONNECT_AUTH_URL must be an https:// URL in production',
      'CONNECT_MASTER_KEY is required in production (32 random bytes, base64)',
      'CONNECT_SMS_WEBHOOK_SECRET is required when CONNECT_SMS_WEBHOOK_URL is set',
      'CONNECT_SMS_SENDER=console is for the sandbox only; production sends one-time PINs through the webhook',
      expect.stringMatching(/^CONNECT_TRUST_PROXY=true lets a client choose its own address/),
      'CONNECT_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    ]);
    for (const line of error.problems) expect(line).not.toMatch(/[\r\n]/);
  });

  it('lists a flag production refuses (serve --seed-demo) after the variables, with them', () => {
    const error = (() => {
      try {
        loadConfig({ ...PRODUCTION, CONNECT_MASTER_KEY: undefined, PORT: 'x' }, CWD, { seedDemo: true });
      } catch (caught) {
        return caught as ConfigError;
      }
      throw new Error('accepted');
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.problems).toEqual([
      'PORT must be a whole number, not "x"',
      'CONNECT_MASTER_KEY is required in production (32 random bytes, base64)',
      '--seed-demo is for the sandbox only; production starts without demo data',
    ]);
    // Alone, it is the one problem; in the sandbox, or when the environment is itself bad, it is none.
    expect(() => loadConfig(PRODUCTION, CWD, { seedDemo: true })).toThrow(
      new ConfigError('--seed-demo is for the sandbox only; production starts without demo data'),
    );
    expect(loadConfig({}, CWD, { seedDemo: true }).environment).toBe('sandbox');
    expect(() => loadConfig({ ...PRODUCTION, CONNECT_ENVIRONMENT: 'prod' }, CWD, { seedDemo: true })).toThrow(
      /^CONNECT_ENVIRONMENT must be "sandbox" or "production", not "prod"$/,
    );
  });

  it('leaves out a rule whose variable is itself bad, instead of a second, confusing line', () => {
    // An unknown environment: whether production rules apply is unknown, so only the environment is named.
    expect(configError({ CONNECT_ENVIRONMENT: 'prod' }).problems).toEqual(['CONNECT_ENVIRONMENT must be "sandbox" or "production", not "prod"']);
    // A bad auth URL in production is not also "required" or "must be https://".
    expect(configError({ ...PRODUCTION, CONNECT_AUTH_URL: 'auth.connect.example' }).problems).toEqual(['CONNECT_AUTH_URL must be an http:// or https:// URL']);
    // A bad master key in production is not also "required".
    expect(configError({ ...PRODUCTION, CONNECT_MASTER_KEY: 'c2hvcnQ=' }).problems).toEqual([
      'CONNECT_MASTER_KEY must be 32 random bytes in base64 (e.g. openssl rand -base64 32)',
    ]);
    // "abc" is not a whole number: it is not also out of range.
    expect(configError({ CONNECT_SHUTDOWN_GRACE: 'abc' }).problems).toEqual(['CONNECT_SHUTDOWN_GRACE must be a whole number, not "abc"']);
  });

  it('a ConfigError made from one line has that line as its only problem', () => {
    const error = new ConfigError('CONNECT_METRICS_PORT: port 9464 on 127.0.0.1 is already in use');
    expect(error.problems).toEqual(['CONNECT_METRICS_PORT: port 9464 on 127.0.0.1 is already in use']);
    expect(error.message).toBe('CONNECT_METRICS_PORT: port 9464 on 127.0.0.1 is already in use');
    expect(error.name).toBe('ConfigError');
  });
});

describe('resolveMasterKey', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'connect-master-key-'));
    dirs.push(dir);
    return dir;
  };
  const sandbox = (dataDir: string, env: Record<string, string> = {}): Config =>
    loadConfig({ CONNECT_DATA_DIR: dataDir, ...env }, CWD);

  it('generates a 32-byte key into the data folder once, readable by the owner only, and reuses it', () => {
    const dataDir = join(tempDir(), 'nested', 'data');
    const config = sandbox(dataDir);
    const path = join(dataDir, MASTER_KEY_FILE);
    expect(existsSync(path)).toBe(false);

    const first = resolveMasterKey(config);
    expect(first).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const stored = readFileSync(path, 'utf8');
    expect(Buffer.from(stored.trim(), 'base64')).toEqual(first);

    const second = resolveMasterKey(sandbox(dataDir));
    expect(second).toEqual(first);
    expect(readFileSync(path, 'utf8')).toBe(stored);
  });

  it('gives each data folder its own key', () => {
    expect(resolveMasterKey(sandbox(tempDir()))).not.toEqual(resolveMasterKey(sandbox(tempDir())));
  });

  it('uses CONNECT_MASTER_KEY when set, and writes no file', () => {
    const dataDir = tempDir();
    expect(resolveMasterKey(sandbox(dataDir, { CONNECT_MASTER_KEY: MASTER_KEY }))).toEqual(Buffer.from(MASTER_KEY, 'base64'));
    expect(existsSync(join(dataDir, MASTER_KEY_FILE))).toBe(false);
  });

  it('generates no key for a database that records one (a backup restored without its key file): one line naming it, the folder left as it was', () => {
    const dataDir = tempDir();
    expect(() => resolveMasterKey(sandbox(dataDir), '1fDoIugvrfJhy9QmBkKoDQ')).toThrow(
      new ConfigError(
        `${join(dataDir, MASTER_KEY_FILE)} is missing, and this database is written under master key 1fDoIugvrfJhy9QmBkKoDQ: put back the ${MASTER_KEY_FILE} it was made with (a backup does not hold it), or set CONNECT_MASTER_KEY to that key`,
      ),
    );
    expect(existsSync(join(dataDir, MASTER_KEY_FILE))).toBe(false);
    // With its file, or with CONNECT_MASTER_KEY, the key is read as ever.
    const key = resolveMasterKey(sandbox(dataDir));
    expect(resolveMasterKey(sandbox(dataDir), '1fDoIugvrfJhy9QmBkKoDQ')).toEqual(key);
    expect(resolveMasterKey(sandbox(tempDir(), { CONNECT_MASTER_KEY: MASTER_KEY }), '1fDoIugvrfJhy9QmBkKoDQ')).toEqual(Buffer.from(MASTER_KEY, 'base64'));
  });

  it('refuses a damaged key file instead of replacing it', () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, MASTER_KEY_FILE), 'c2hvcnQ=\n', { mode: 0o600 });
    expect(() => resolveMasterKey(sandbox(dataDir))).toThrow(ConfigError);
    expect(readFileSync(join(dataDir, MASTER_KEY_FILE), 'utf8')).toBe('c2hvcnQ=\n');
  });

  it('refuses to generate a key in production', () => {
    const dataDir = tempDir();
    const production: Config = { ...sandbox(dataDir), environment: 'production' };
    expect(() => resolveMasterKey(production)).toThrow(ConfigError);
    expect(() => resolveMasterKey(production)).toThrow(/CONNECT_MASTER_KEY/);
    expect(existsSync(join(dataDir, MASTER_KEY_FILE))).toBe(false);
  });
});

describe('CONNECT_TRUST_PROXY', () => {
  it.each([
    [undefined, false],
    ['false', false],
    ['1', 1],
    ['2', 2],
    ['10.0.0.0/8', ['10.0.0.0/8']],
    ['10.0.0.1, 192.168.0.0/16 ,fd00::/8,2001:db8::1', ['10.0.0.1', '192.168.0.0/16', 'fd00::/8', '2001:db8::1']],
  ] as const)('%s is read as %j', (value, expected) => {
    expect(loadConfig({ CONNECT_TRUST_PROXY: value }, CWD).trustProxy).toEqual(expected);
    expect(loadConfig({ ...PRODUCTION, CONNECT_TRUST_PROXY: value }, CWD).trustProxy).toEqual(expected);
  });

  it('true trusts every hop in the sandbox, and is refused in production, where a client could choose its own address', () => {
    expect(loadConfig({ CONNECT_TRUST_PROXY: 'true' }, CWD).trustProxy).toBe(true);
    expect(() => loadConfig({ ...PRODUCTION, CONNECT_TRUST_PROXY: 'true' }, CWD)).toThrow(/^CONNECT_TRUST_PROXY=true lets a client choose its own address/);
  });

  it.each(['0', '11', 'yes', '10.0.0.0/33', '2001:db8::/129', '10.0.0.1/8/1', '10.0.0', 'proxy.example', '10.0.0.1,'])('refuses %j with one line naming the variable', (value) => {
    expect(() => loadConfig({ CONNECT_TRUST_PROXY: value }, CWD)).toThrow(ConfigError);
    expect(() => loadConfig({ CONNECT_TRUST_PROXY: value }, CWD)).toThrow(/^CONNECT_TRUST_PROXY must be [^\n]+$/);
  });
});


describe('loadConfig: passkeys', () => {
  it('defaults the sandbox auth URL to localhost for a loopback HOST: browsers give no passkey to an IP address', () => {
    expect(defaultAuthUrl('127.0.0.1', 3000)).toBe('http://localhost:3000');
    expect(defaultAuthUrl('::1', 4000)).toBe('http://localhost:4000');
    expect(defaultAuthUrl('localhost', 3000)).toBe('http://localhost:3000');
    expect(defaultAuthUrl('0.0.0.0', 3000)).toBe('http://0.0.0.0:3000');
    expect(defaultAuthUrl('10.1.2.3', 3000)).toBe('http://10.1.2.3:3000');
  });

  it('CONNECT_WEBAUTHN_RP_ID: by default the host of the auth URL', () => {
    expect(loadConfig({}, CWD).webauthnRpId).toBe('localhost');
    expect(loadConfig(PRODUCTION, CWD).webauthnRpId).toBe('auth.connect.example');
    expect(loadConfig({ CONNECT_AUTH_URL: 'https://login.shop.example:8443/connect' }, CWD).webauthnRpId).toBe('login.shop.example');
  });

  it('CONNECT_WEBAUTHN_RP_ID: the auth host or a registrable parent domain of it', () => {
    expect(loadConfig({ ...PRODUCTION, CONNECT_WEBAUTHN_RP_ID: 'connect.example' }, CWD).webauthnRpId).toBe('connect.example');
    expect(loadConfig({ ...PRODUCTION, CONNECT_WEBAUTHN_RP_ID: 'Auth.Connect.Example' }, CWD).webauthnRpId).toBe('auth.connect.example');
    expect(loadConfig({ CONNECT_WEBAUTHN_RP_ID: 'localhost' }, CWD).webauthnRpId).toBe('localhost');
  });

  it.each([
    ['example.org', /host of the auth URL \(auth\.connect\.example\)/],
    ['example', /parent domain/],
    ['other.connect.example', /host of the auth URL/],
    ['192.0.2.1', /IP address/],
    ['https://connect.example', /domain name/],
  ])('CONNECT_WEBAUTHN_RP_ID=%s is refused', (value, detail) => {
    expectRefused({ ...PRODUCTION, CONNECT_WEBAUTHN_RP_ID: value }, 'CONNECT_WEBAUTHN_RP_ID', detail);
  });

  it('CONNECT_WEBAUTHN_RP_ID: a public suffix is no relying party ID', () => {
    expectRefused({ ...PRODUCTION, CONNECT_AUTH_URL: 'https://connect.com.ph', CONNECT_WEBAUTHN_RP_ID: 'com.ph' }, 'CONNECT_WEBAUTHN_RP_ID', /public suffix/);
    expectRefused({ CONNECT_AUTH_URL: 'http://127.0.0.1:3000', CONNECT_WEBAUTHN_RP_ID: 'localhost' }, 'CONNECT_WEBAUTHN_RP_ID', /127\.0\.0\.1/);
    // Above the host's own registrable domain: a private suffix (another tenant's names lie below it).
    expectRefused({ ...PRODUCTION, CONNECT_AUTH_URL: 'https://app.s3.amazonaws.com', CONNECT_WEBAUTHN_RP_ID: 'amazonaws.com' }, 'CONNECT_WEBAUTHN_RP_ID', /e\.g\. app\.s3\.amazonaws\.com/);
    expect(loadConfig({ ...PRODUCTION, CONNECT_AUTH_URL: 'https://auth.example.com.ph', CONNECT_WEBAUTHN_RP_ID: 'example.com.ph' }, CWD).webauthnRpId).toBe('example.com.ph');
  });

  it('CONNECT_WEBAUTHN_ORIGINS: https origins and Android apps, comma-separated', () => {
    const apk = `android:apk-key-hash:${'a'.repeat(43)}`;
    expect(loadConfig({ CONNECT_WEBAUTHN_ORIGINS: ` https://shop.example:8443/ , ${apk}` }, CWD).webauthnOrigins).toEqual(['https://shop.example:8443', apk]);
    expect(loadConfig({}, CWD).webauthnOrigins).toEqual([]);
  });

  it.each(['http://shop.example', 'https://shop.example/path', 'shop.example', 'android:apk-key-hash:short', 'https://shop.example,ftp://x'])(
    'CONNECT_WEBAUTHN_ORIGINS=%s is refused',
    (value) => {
      expectRefused({ CONNECT_WEBAUTHN_ORIGINS: value }, 'CONNECT_WEBAUTHN_ORIGINS', /https:\/\/host\[:port\] or android:apk-key-hash/);
    },
  );

  it('CONNECT_PASSKEY_HOLD: 86400 in production, 0 in the sandbox, unless set', () => {
    expect(loadConfig(PRODUCTION, CWD).passkeyHoldSeconds).toBe(86_400);
    expect(loadConfig({}, CWD).passkeyHoldSeconds).toBe(0);
    expect(loadConfig({ ...PRODUCTION, CONNECT_PASSKEY_HOLD: '0' }, CWD).passkeyHoldSeconds).toBe(0);
    expect(loadConfig({ CONNECT_PASSKEY_HOLD: '3600' }, CWD).passkeyHoldSeconds).toBe(3600);
    expectRefused({ CONNECT_PASSKEY_HOLD: '1h' }, 'CONNECT_PASSKEY_HOLD', /whole number/);
  });
});
