import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { getDomain } from 'tldts';
import { z } from 'zod';
import { isSmsCountry } from '../core/customers/mobile.js';
import { ENVIRONMENTS } from '../core/environment.js';
import { MAX_SCOPE_LENGTH, SCOPE_TOKEN_PATTERN, splitScope } from '../core/scopes.js';
import { MASTER_KEY_BYTES } from '../core/keys/master-key.js';
import {
  AUDIT_RETENTION_DAYS_DEFAULT,
  DEFAULT_LIFETIMES,
  JWKS_MAX_AGE_LIMIT_SECONDS,
  REFRESH_REUSE_LIMIT_SECONDS,
} from '../core/lifetimes.js';
import type { DatabaseLocation } from '../core/storage/storage.js';
import { DEFAULTS, type Config, type LogLevel, type SmsSenderKind, type TrustProxy } from './schema.js';

/**
 * Bad configuration. `problems` has one line per problem, each naming its
 * variable; `message` is those lines joined by newlines, so a single problem
 * is a one-line message.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[]) {
    const lines = typeof problems === 'string' ? [problems] : [...problems];
    super(lines.join('\n'));
    this.problems = Object.freeze(lines);
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const satisfies readonly LogLevel[];
const SMS_SENDERS = ['outbox', 'console', 'webhook'] as const satisfies readonly SmsSenderKind[];

// Rate-limit budgets: far above any sensible one, well inside the counters' integer column.
const MAX_LIMIT = 1_000_000;
// Lifetimes and graces: ten years is more than any of them should ever be.
const MAX_SECONDS = 10 * 365 * 86_400;

/** A whole number from `min` to `max`, written in plain decimal digits. */
function wholeNumber(min: number, max = MAX_SECONDS) {
  return z
    .string()
    .regex(/^\d+$/, { error: (issue) => `must be a whole number, not ${quote(String(issue.input))}` })
    .refine((value) => Number(value) >= min && Number(value) <= max, {
      error: (issue) => `must be between ${min} and ${max}, not ${String(issue.input)}`,
      // Only once it is a number at all: "abc" is one problem, not two.
      when: (payload) => payload.issues.length === 0,
    })
    .transform(Number);
}

/** An `http://` or `https://` URL (whether production needs `https://` is a rule across variables). */
const httpUrl = z.string().refine((value) => /^https?:$/.test(parseUrl(value)?.protocol ?? ''), 'must be an http:// or https:// URL');

/** `CONNECT_AUTH_URL` / `CONNECT_BASE_URL`: an http(s) origin with an optional path, without its trailing slash. */
const publicUrl = httpUrl
  .transform((value) => new URL(value))
  .refine((url) => !(url.search || url.hash || url.username || url.password), 'must not carry a query, fragment or credentials')
  .transform((url) => url.href.replace(/\/+$/, ''));

/** `CONNECT_WEBAUTHN_RP_ID`: a host name, lower-cased (whether it fits the auth URL's host is a rule across variables). */
const webauthnRpId = z
  .string()
  .transform((value) => value.toLowerCase())
  .refine((value) => isIP(value) === 0, 'must be a domain name: browsers accept no IP address as a passkeys relying party ID')
  .refine((value) => /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/.test(value), {
    error: (issue) => `must be a domain name (e.g. connect.example), without scheme, port or path, not ${quote(String(issue.input))}`,
  });

/**
 * `CONNECT_WEBAUTHN_ORIGINS`: comma-separated extra origins passkeys are
 * accepted from, each an `https://` origin (no path) or an Android app's
 * `android:apk-key-hash:<base64url SHA-256 of its signing certificate>`.
 */
const webauthnOrigins = z.string().transform((value, ctx): readonly string[] => {
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  const bad = entries.filter((entry) => webauthnOrigin(entry) === undefined);
  if (bad.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `must list origins separated by commas, each https://host[:port] or android:apk-key-hash:<base64url>; not one: ${bad.map(quote).join(', ')}`,
    });
    return z.NEVER;
  }
  return Object.freeze([...new Set(entries.map((entry) => webauthnOrigin(entry) as string))]);
});

/** One entry of `CONNECT_WEBAUTHN_ORIGINS` as a browser or app states it, or `undefined` when it is none. */
function webauthnOrigin(entry: string): string | undefined {
  if (entry.startsWith('android:apk-key-hash:')) return /^android:apk-key-hash:[A-Za-z0-9_-]{43}={0,1}$/.test(entry) ? entry : undefined;
  const url = parseUrl(entry);
  if (url?.protocol !== 'https:' || url.username || url.password || url.search || url.hash || !/^https:\/\/[^/]+\/?$/.test(entry)) return undefined;
  return url.origin;
}

/** `DATABASE_URL`: `sqlite:<path>` (relative to the working directory, or `:memory:`) or a PostgreSQL URL. */
const databaseUrl = z
  .string()
  .refine((value) => value !== 'sqlite:', 'DATABASE_URL "sqlite:" needs a path, e.g. sqlite:./data/connect.db or sqlite::memory:')
  .refine(
    (value) => value.startsWith('sqlite:') || (/^postgres(ql)?:\/\//.test(value) && parseUrl(value) !== undefined),
    'must be sqlite:<path> or a postgres:// / postgresql:// URL',
  )
  .transform((value): DatabaseLocation =>
    value.startsWith('sqlite:') ? { engine: 'sqlite', path: value.slice('sqlite:'.length) } : { engine: 'postgres', url: value },
  );

/** `CONNECT_MASTER_KEY`: 32 bytes in either base64 alphabet. The message never repeats the value. */
const masterKey = z
  .string()
  .transform((value) => (/^[A-Za-z0-9+/_-]+={0,2}$/.test(value) ? Buffer.from(value, 'base64') : Buffer.alloc(0)))
  .refine((key) => key.length === MASTER_KEY_BYTES, `must be ${MASTER_KEY_BYTES} random bytes in base64 (e.g. openssl rand -base64 32)`);

/**
 * `CONNECT_SMS_WEBHOOK_SECRET`: a Standard Webhooks secret, `whsec_` and the
 * base64 of 24 to 64 random bytes, or (as in earlier releases) any other
 * string, whose UTF-8 bytes are the key. The message never repeats the value.
 */
const webhookSecret = z.string().refine((value) => {
  if (!value.startsWith('whsec_')) return true;
  const encoded = value.slice('whsec_'.length);
  const bytes = Buffer.from(encoded, 'base64').length;
  return /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) && encoded.length % 4 === 0 && bytes >= 24 && bytes <= 64;
}, 'starting with whsec_ must go on with the base64 of 24 to 64 random bytes (e.g. whsec_$(openssl rand -base64 32))');

/** `CONNECT_TRUST_PROXY`: `false`, `true`, a number of hops from 1 to 10, or addresses and CIDR ranges. */
const trustProxy = z.string().transform((value, ctx): TrustProxy => {
  if (value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops >= 1 && hops <= 10) return hops;
    ctx.addIssue({ code: 'custom', message: `must be a number of proxies from 1 to 10, not ${value}` });
    return z.NEVER;
  }
  const entries = value.split(',').map((entry) => entry.trim());
  if (entries.every(isAddressOrRange)) return Object.freeze(entries);
  ctx.addIssue({
    code: 'custom',
    message: `must be false, a number of proxies, or a comma-separated list of addresses and CIDR ranges (e.g. 10.0.0.0/8), not ${quote(value)}`,
  });
  return z.NEVER;
});

/** `CONNECT_SMS_COUNTRIES`: comma-separated ISO 3166 alpha-2 codes, upper-cased, without repeats. */
const smsCountries = z
  .string()
  .transform((value) => value.split(',').map((code) => code.trim().toUpperCase()))
  .refine((codes) => codes.every(isSmsCountry), {
    error: (issue) => {
      const bad = (issue.input as string[]).filter((code) => !isSmsCountry(code));
      return `must list ISO 3166 alpha-2 country codes separated by commas (e.g. PH,SG); not a country: ${bad.map(quote).join(', ')}`;
    },
  })
  .transform((codes): readonly string[] => Object.freeze([...new Set(codes)]));

/** `CONNECT_DEFAULT_COUNTRY`: one ISO 3166 alpha-2 code of a country with telephone numbers, any case. */
const defaultCountry = z
  .string()
  .transform((value) => value.toUpperCase())
  .refine(isSmsCountry, { error: (issue) => `must be an ISO 3166 alpha-2 country code (e.g. PH), not ${quote(String(issue.input))}` });

/** `CONNECT_SCOPES_SUPPORTED`: space-separated scope tokens (RFC 6749 §3.3), each once, in the order given. */
const scopesSupported = z
  .string()
  .transform((value) => splitScope(value))
  .refine((scopes) => scopes.every((scope) => SCOPE_TOKEN_PATTERN.test(scope) && scope.length <= MAX_SCOPE_LENGTH), {
    error: (issue) => {
      const bad = (issue.input as string[]).filter((scope) => !SCOPE_TOKEN_PATTERN.test(scope) || scope.length > MAX_SCOPE_LENGTH);
      return `must list scopes separated by spaces, each at most ${MAX_SCOPE_LENGTH} printable ASCII characters without double quotes or backslashes; not a scope: ${bad.map(quote).join(', ')}`;
    },
  })
  .transform((scopes): readonly string[] => Object.freeze(scopes));

/**
 * Every variable Connect reads, each with its own check, in the order of
 * docs/operator-guide.md, "Configuration" (problems are listed in this
 * order). Blank values count as unset. Defaults are applied afterwards, in
 * {@link toConfig}, since several depend on the environment.
 */
const VARIABLES = {
  CONNECT_ENVIRONMENT: z.enum(ENVIRONMENTS, {
    error: (issue) => `must be "sandbox" or "production", not ${quote(String(issue.input))}`,
  }),
  PORT: wholeNumber(0, 65_535),
  HOST: z.string(),
  DATABASE_URL: databaseUrl,
  REDIS_URL: z.string().refine((value) => /^rediss?:$/.test(parseUrl(value)?.protocol ?? ''), 'must be a redis:// or rediss:// URL'),
  CONNECT_METRICS_PORT: wholeNumber(1, 65_535),
  CONNECT_METRICS_HOST: z.string(),
  CONNECT_DB_POOL_SIZE: wholeNumber(1, 1000),
  CONNECT_DB_TIMEOUT_MS: wholeNumber(100, 600_000),
  CONNECT_REDIS_TIMEOUT_MS: wholeNumber(10, 600_000),
  CONNECT_REQUEST_TIMEOUT_MS: wholeNumber(100, 600_000),
  CONNECT_AUTH_URL: publicUrl,
  CONNECT_BASE_URL: publicUrl,
  CONNECT_WEBAUTHN_RP_ID: webauthnRpId,
  CONNECT_WEBAUTHN_ORIGINS: webauthnOrigins,
  CONNECT_PASSKEY_HOLD: wholeNumber(0),
  CONNECT_DATA_DIR: z.string(),
  CONNECT_MASTER_KEY: masterKey,
  CONNECT_PREVIOUS_MASTER_KEY: masterKey,
  CONNECT_SMS_WEBHOOK_URL: httpUrl,
  CONNECT_SMS_WEBHOOK_SECRET: webhookSecret,
  CONNECT_SMS_SENDER: z.enum(SMS_SENDERS, { error: (issue) => `must be outbox, console or webhook, not ${quote(String(issue.input))}` }),
  CONNECT_TRUST_PROXY: trustProxy,
  CONNECT_CODE_TTL: wholeNumber(1),
  CONNECT_ACCESS_TOKEN_TTL: wholeNumber(1),
  CONNECT_REFRESH_TOKEN_TTL: wholeNumber(1),
  CONNECT_REFRESH_REUSE_SECONDS: wholeNumber(0, REFRESH_REUSE_LIMIT_SECONDS),
  CONNECT_SESSION_IDLE_TTL: wholeNumber(1),
  CONNECT_SESSION_TTL: wholeNumber(1),
  CONNECT_SECRET_ROTATION_GRACE: wholeNumber(0),
  CONNECT_SHUTDOWN_DELAY: wholeNumber(0, 3600),
  CONNECT_SHUTDOWN_GRACE: wholeNumber(1, 3600),
  CONNECT_JWKS_MAX_AGE: wholeNumber(1, JWKS_MAX_AGE_LIMIT_SECONDS),
  CONNECT_SMS_LIMIT_PER_MOBILE: wholeNumber(1, MAX_LIMIT),
  CONNECT_SMS_LIMIT_PER_ADDRESS: wholeNumber(1, MAX_LIMIT),
  CONNECT_PIN_LIMIT_PER_ADDRESS: wholeNumber(1, MAX_LIMIT),
  CONNECT_JOURNEY_LIMIT_PER_ADDRESS: wholeNumber(1, MAX_LIMIT),
  CONNECT_SMS_LIMIT_GLOBAL: wholeNumber(1, MAX_LIMIT),
  CONNECT_SMS_COUNTRIES: smsCountries,
  CONNECT_DEFAULT_COUNTRY: defaultCountry,
  CONNECT_SCOPES_SUPPORTED: scopesSupported,
  CONNECT_AUDIT_RETENTION_DAYS: wholeNumber(1, 100 * 365),
  CONNECT_LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }),
};

type Variable = keyof typeof VARIABLES;
const ORDER = new Map(Object.keys(VARIABLES).map((name, index) => [name, index]));

/** Blank counts as unset; surrounding spaces are not part of the value. */
const unsetIfBlank = (value: unknown) => (typeof value === 'string' ? value.trim() || undefined : value);

const ENV_SCHEMA = z
  .object(
    Object.fromEntries(Object.entries(VARIABLES).map(([name, schema]) => [name, z.preprocess(unsetIfBlank, schema.optional())])) as {
      [K in Variable]: z.ZodPipe<z.ZodTransform, z.ZodOptional<(typeof VARIABLES)[K]>>;
    },
  )
  // Runs even when some variables are bad, so their problems and these are listed together.
  .superRefine(checkAcrossVariables, { when: () => true });

type Parsed = z.output<typeof ENV_SCHEMA>;

/**
 * The rules that involve the environment or more than one variable. A rule
 * that needs a variable which is itself bad is skipped: that variable's own
 * problem is already listed.
 */
function checkAcrossVariables(values: Parsed, ctx: z.RefinementCtx<Parsed>): void {
  const bad = new Set(ctx.issues.map((issue) => issue.path?.[0]));
  const ok = (name: Variable) => !bad.has(name);
  const problem = (name: Variable, message: string) => ctx.addIssue({ code: 'custom', path: [name], message, input: undefined });

  const environment = ok('CONNECT_ENVIRONMENT') ? (values.CONNECT_ENVIRONMENT ?? DEFAULTS.environment) : undefined;
  const production = environment === 'production';
  const webhookUrlSet = values.CONNECT_SMS_WEBHOOK_URL !== undefined || !ok('CONNECT_SMS_WEBHOOK_URL');

  if (production) {
    if (values.CONNECT_AUTH_URL === undefined && ok('CONNECT_AUTH_URL')) {
      problem('CONNECT_AUTH_URL', 'CONNECT_AUTH_URL is required in production (an https:// URL)');
    }
    for (const name of ['CONNECT_AUTH_URL', 'CONNECT_BASE_URL'] as const) {
      const url = values[name];
      if (url !== undefined && ok(name) && !url.startsWith('https:')) problem(name, `${name} must be an https:// URL in production`);
    }
    if (values.CONNECT_MASTER_KEY === undefined && ok('CONNECT_MASTER_KEY')) {
      problem('CONNECT_MASTER_KEY', 'CONNECT_MASTER_KEY is required in production (32 random bytes, base64)');
    }
    if (!webhookUrlSet) {
      problem('CONNECT_SMS_WEBHOOK_URL', 'CONNECT_SMS_WEBHOOK_URL is required in production (one-time PINs go to the SMS gateway)');
    } else if (ok('CONNECT_SMS_WEBHOOK_URL') && parseUrl(values.CONNECT_SMS_WEBHOOK_URL ?? '')?.protocol !== 'https:') {
      problem('CONNECT_SMS_WEBHOOK_URL', 'CONNECT_SMS_WEBHOOK_URL must be https:// in production');
    }
    if (values.CONNECT_TRUST_PROXY === true && ok('CONNECT_TRUST_PROXY')) {
      problem(
        'CONNECT_TRUST_PROXY',
        'CONNECT_TRUST_PROXY=true lets a client choose its own address; in production give the number of proxies in front (e.g. 1) or their addresses',
      );
    }
  }

  // docs/operator-guide.md, "Replacing the master key".
  const previousKey = values.CONNECT_PREVIOUS_MASTER_KEY;
  if (previousKey !== undefined && ok('CONNECT_PREVIOUS_MASTER_KEY') && ok('CONNECT_MASTER_KEY')) {
    if (values.CONNECT_MASTER_KEY === undefined) {
      problem('CONNECT_PREVIOUS_MASTER_KEY', 'CONNECT_PREVIOUS_MASTER_KEY is set but CONNECT_MASTER_KEY is not (set the new key there)');
    } else if (values.CONNECT_MASTER_KEY.equals(previousKey)) {
      problem('CONNECT_PREVIOUS_MASTER_KEY', 'CONNECT_PREVIOUS_MASTER_KEY is the same key as CONNECT_MASTER_KEY; it must be the key being replaced');
    }
  }

  const secretSet = values.CONNECT_SMS_WEBHOOK_SECRET !== undefined;
  if (webhookUrlSet && !secretSet) {
    problem('CONNECT_SMS_WEBHOOK_SECRET', 'CONNECT_SMS_WEBHOOK_SECRET is required when CONNECT_SMS_WEBHOOK_URL is set');
  }
  // In production the missing URL is already listed as required.
  if (!webhookUrlSet && secretSet && environment === 'sandbox') {
    problem('CONNECT_SMS_WEBHOOK_SECRET', 'CONNECT_SMS_WEBHOOK_SECRET is set but CONNECT_SMS_WEBHOOK_URL is not');
  }

  const rpId = values.CONNECT_WEBAUTHN_RP_ID;
  if (rpId !== undefined && ok('CONNECT_WEBAUTHN_RP_ID') && ok('CONNECT_AUTH_URL') && ok('HOST')) {
    const host = authHostOf(values.CONNECT_AUTH_URL, values.HOST ?? DEFAULTS.host);
    if (!isRegistrableSuffix(rpId, host)) {
      problem(
        'CONNECT_WEBAUTHN_RP_ID',
        `CONNECT_WEBAUTHN_RP_ID=${rpId} must be the host of the auth URL (${host}) or a parent domain of it that is not a public suffix (e.g. ${registrableDomainOf(host) ?? host})`,
      );
    }
  }

  const country = values.CONNECT_DEFAULT_COUNTRY;
  const countries = values.CONNECT_SMS_COUNTRIES;
  if (country !== undefined && countries !== undefined && ok('CONNECT_DEFAULT_COUNTRY') && ok('CONNECT_SMS_COUNTRIES') && !countries.includes(country)) {
    problem(
      'CONNECT_DEFAULT_COUNTRY',
      `CONNECT_DEFAULT_COUNTRY=${country} is not one of CONNECT_SMS_COUNTRIES (${countries.join(',')}): every number typed without its country code would be refused`,
    );
  }

  // Only an explicit choice: the default follows the webhook URL, whose own rules are above.
  const sender = ok('CONNECT_SMS_SENDER') ? values.CONNECT_SMS_SENDER : undefined;
  if (sender === 'webhook' && !webhookUrlSet && environment === 'sandbox') {
    problem('CONNECT_SMS_SENDER', 'CONNECT_SMS_SENDER=webhook needs CONNECT_SMS_WEBHOOK_URL and CONNECT_SMS_WEBHOOK_SECRET');
  }
  if (sender !== undefined && sender !== 'webhook' && production) {
    problem('CONNECT_SMS_SENDER', `CONNECT_SMS_SENDER=${sender} is for the sandbox only; production sends one-time PINs through the webhook`);
  }
}

/**
 * The command-line flags that depend on the environment, checked with the
 * variables so that every problem is listed at once.
 */
export interface StartFlags {
  /** `serve --seed-demo`: sandbox only. */
  readonly seedDemo?: boolean;
}

/**
 * Reads and checks the configuration from environment variables
 * (docs/operator-guide.md, "Configuration").
 *
 * @param env the variables (normally `process.env`).
 * @param cwd the directory relative paths are resolved against.
 * @param flags the flags the command was given that the environment may refuse.
 * @throws ConfigError listing every problem, one line each naming its
 *   variable (or its flag, after the variables).
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, cwd = process.cwd(), flags: StartFlags = {}): Config {
  const result = ENV_SCHEMA.safeParse(env);
  const problems = [...(result.success ? [] : describeIssues(result.error.issues)), ...refusedFlags(env, flags)];
  if (!result.success || problems.length > 0) throw new ConfigError(problems);
  return toConfig(result.data, cwd);
}

/** The flags this environment refuses, one line each naming the flag. A bad `CONNECT_ENVIRONMENT` is its own problem. */
function refusedFlags(env: Readonly<Record<string, string | undefined>>, flags: StartFlags): string[] {
  const environment = VARIABLES.CONNECT_ENVIRONMENT.safeParse(unsetIfBlank(env.CONNECT_ENVIRONMENT) ?? DEFAULTS.environment);
  const production = environment.success && environment.data === 'production';
  return production && flags.seedDemo ? ['--seed-demo is for the sandbox only; production starts without demo data'] : [];
}

/**
 * One line per issue, in the order of {@link VARIABLES}. Each names its
 * variable: a message that does not start with it (those of a single
 * variable, "must be …") gets it in front.
 */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const variableOf = (issue: z.core.$ZodIssue) => String(issue.path[0] ?? '');
  return [...issues]
    .sort((a, b) => (ORDER.get(variableOf(a)) ?? Infinity) - (ORDER.get(variableOf(b)) ?? Infinity))
    .map((issue) => {
      const variable = variableOf(issue);
      return issue.message.startsWith(variable) ? issue.message : `${variable} ${issue.message}`;
    });
}

/** The checked values with their defaults, which may depend on the environment. */
function toConfig(values: Parsed, cwd: string): Config {
  const environment = values.CONNECT_ENVIRONMENT ?? DEFAULTS.environment;
  const dataDir = resolve(cwd, values.CONNECT_DATA_DIR ?? DEFAULTS.dataDir);
  const location = values.DATABASE_URL;
  const database: DatabaseLocation =
    location === undefined
      ? { engine: 'sqlite', path: resolve(dataDir, `connect-${environment}.db`) }
      : location.engine === 'sqlite' && location.path !== ':memory:'
        ? { engine: 'sqlite', path: resolve(cwd, location.path) }
        : location;
  const config: Config = {
    environment,
    port: values.PORT ?? DEFAULTS.port,
    host: values.HOST ?? DEFAULTS.host,
    database,
    databasePoolSize: values.CONNECT_DB_POOL_SIZE ?? DEFAULTS.databasePoolSize,
    metricsPort: values.CONNECT_METRICS_PORT,
    metricsHost: values.CONNECT_METRICS_HOST ?? DEFAULTS.metricsHost,
    databaseTimeoutMs: values.CONNECT_DB_TIMEOUT_MS ?? DEFAULTS.databaseTimeoutMs,
    redisUrl: values.REDIS_URL,
    redisTimeoutMs: values.CONNECT_REDIS_TIMEOUT_MS ?? DEFAULTS.redisTimeoutMs,
    requestTimeoutMs: values.CONNECT_REQUEST_TIMEOUT_MS ?? DEFAULTS.requestTimeoutMs,
    authUrl: values.CONNECT_AUTH_URL,
    baseUrl: values.CONNECT_BASE_URL,
    webauthnRpId: values.CONNECT_WEBAUTHN_RP_ID ?? authHostOf(values.CONNECT_AUTH_URL, values.HOST ?? DEFAULTS.host),
    webauthnOrigins: values.CONNECT_WEBAUTHN_ORIGINS ?? DEFAULTS.webauthnOrigins,
    passkeyHoldSeconds: values.CONNECT_PASSKEY_HOLD ?? DEFAULTS.passkeyHoldSeconds[environment],
    dataDir,
    masterKey: values.CONNECT_MASTER_KEY,
    previousMasterKey: values.CONNECT_PREVIOUS_MASTER_KEY,
    smsWebhookUrl: values.CONNECT_SMS_WEBHOOK_URL,
    smsWebhookSecret: values.CONNECT_SMS_WEBHOOK_SECRET,
    lifetimes: Object.freeze({
      codeSeconds: values.CONNECT_CODE_TTL ?? DEFAULT_LIFETIMES.codeSeconds,
      accessTokenSeconds: values.CONNECT_ACCESS_TOKEN_TTL ?? DEFAULT_LIFETIMES.accessTokenSeconds,
      refreshTokenSeconds: values.CONNECT_REFRESH_TOKEN_TTL ?? DEFAULT_LIFETIMES.refreshTokenSeconds,
      refreshReuseSeconds: values.CONNECT_REFRESH_REUSE_SECONDS ?? DEFAULT_LIFETIMES.refreshReuseSeconds,
      sessionIdleSeconds: values.CONNECT_SESSION_IDLE_TTL ?? DEFAULT_LIFETIMES.sessionIdleSeconds,
      sessionSeconds: values.CONNECT_SESSION_TTL ?? DEFAULT_LIFETIMES.sessionSeconds,
      jwksMaxAgeSeconds: values.CONNECT_JWKS_MAX_AGE ?? DEFAULT_LIFETIMES.jwksMaxAgeSeconds,
    }),
    smsSender: values.CONNECT_SMS_SENDER ?? (values.CONNECT_SMS_WEBHOOK_URL ? 'webhook' : 'outbox'),
    trustProxy: values.CONNECT_TRUST_PROXY ?? false,
    secretRotationGraceSeconds: values.CONNECT_SECRET_ROTATION_GRACE ?? DEFAULTS.secretRotationGraceSeconds,
    shutdownDelaySeconds: values.CONNECT_SHUTDOWN_DELAY ?? DEFAULTS.shutdownDelaySeconds[environment],
    shutdownGraceSeconds: values.CONNECT_SHUTDOWN_GRACE ?? DEFAULTS.shutdownGraceSeconds,
    smsLimitPerMobile: values.CONNECT_SMS_LIMIT_PER_MOBILE ?? DEFAULTS.smsLimitPerMobile[environment],
    smsLimitPerAddress: values.CONNECT_SMS_LIMIT_PER_ADDRESS ?? DEFAULTS.smsLimitPerAddress[environment],
    pinLimitPerAddress: values.CONNECT_PIN_LIMIT_PER_ADDRESS ?? DEFAULTS.pinLimitPerAddress[environment],
    journeyLimitPerAddress: values.CONNECT_JOURNEY_LIMIT_PER_ADDRESS ?? DEFAULTS.journeyLimitPerAddress[environment],
    smsLimitGlobal: values.CONNECT_SMS_LIMIT_GLOBAL ?? DEFAULTS.smsLimitGlobal[environment],
    smsCountries: values.CONNECT_SMS_COUNTRIES,
    defaultCountry: values.CONNECT_DEFAULT_COUNTRY ?? defaultCountryOf(values.CONNECT_SMS_COUNTRIES),
    scopesSupported: values.CONNECT_SCOPES_SUPPORTED ?? DEFAULTS.scopesSupported,
    auditRetentionDays: values.CONNECT_AUDIT_RETENTION_DAYS ?? AUDIT_RETENTION_DAYS_DEFAULT,
    logLevel: values.CONNECT_LOG_LEVEL ?? DEFAULTS.logLevel,
  };
  return Object.freeze(config);
}

/**
 * `CONNECT_DEFAULT_COUNTRY` when unset: the Philippines, unless
 * `CONNECT_SMS_COUNTRIES` leaves them out; then the first country it lists
 * (numbers typed without a country code are read as numbers a PIN may go to).
 */
function defaultCountryOf(smsCountries: readonly string[] | undefined): string {
  return smsCountries === undefined || smsCountries.includes(DEFAULTS.defaultCountry) ? DEFAULTS.defaultCountry : (smsCountries[0] as string);
}

/**
 * `CONNECT_*` variables that the repository's other programs read, not the
 * server: the example consumer's credentials, the bench's paths, the build's commit and the
 * test suites' databases. They are no typo of a setting.
 */
const OTHER_PROGRAMS = /^CONNECT_(?:TEST_|SDK_TEST_)|^CONNECT_(?:CLIENT_ID|CLIENT_SECRET|RESOURCE_SERVER_ID|RESOURCE_SERVER_SECRET|REFRESH_VIA|ROOT|BIN|DIST|BUILD_COMMIT)$/;

/**
 * One warning line for each `CONNECT_*` variable in `env` that is not a
 * Connect setting, naming the setting closest to it (a misspelt
 * `CONNECT_ENVIROMENT=production` would otherwise leave the sandbox
 * running, silently). A warning, not a problem: start-up goes on.
 */
export function unknownSettings(env: Readonly<Record<string, string | undefined>>): string[] {
  const known = Object.keys(VARIABLES).filter((name) => name.startsWith('CONNECT_'));
  return Object.keys(env)
    .filter((name) => name.startsWith('CONNECT_') && env[name] !== undefined && !Object.hasOwn(VARIABLES, name) && !OTHER_PROGRAMS.test(name))
    .sort()
    .map((name) => {
      const closest = known.reduce((best, candidate) => (editDistance(name, candidate) < editDistance(name, best) ? candidate : best));
      const shown = /^\w+$/.test(name) ? name : quote(name);
      return `${shown} is not a Connect setting; did you mean ${closest}?`;
    });
}

/** Levenshtein distance: the fewest one-character insertions, deletions and substitutions that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** One entry of `CONNECT_TRUST_PROXY`: an IPv4 or IPv6 address, optionally with a prefix length. */
function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, extra] = entry.split('/');
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
  return family !== 0 && prefixOk && extra === undefined;
}

/** Whether `host` is a loopback address or `localhost` (browsers treat `http://localhost` as a secure context; IP addresses get no passkeys). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1' || bare === '0:0:0:0:0:0:0:1';
}

/**
 * The default `CONNECT_AUTH_URL` for a listener on `host` and `port`:
 * `http://localhost:<port>` when `host` is a loopback address (browsers
 * accept passkeys for `localhost`, never for an IP address), else
 * `http://<host>:<port>` (docs/operator-guide.md, "Configuration").
 */
export function defaultAuthUrl(host: string, port: number): string {
  if (isLoopbackHost(host)) return `http://localhost:${port}`;
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/** The host name of the auth URL: of `CONNECT_AUTH_URL` when set, else of its default on `HOST`. */
function authHostOf(authUrl: string | undefined, host: string): string {
  return new URL(authUrl ?? defaultAuthUrl(host, 1)).hostname.replace(/^\[|\]$/g, '');
}

/**
 * Whether `rpId` may be the relying party ID of pages on `host` (WebAuthn
 * Level 3, §5.1.3, and the HTML "is a registrable domain suffix of or is
 * equal to" rule): equal to it, or a parent domain of it that is not a
 * public suffix (`com`, `com.ph`, `github.io` …). No IP address qualifies.
 */
function isRegistrableSuffix(rpId: string, host: string): boolean {
  if (isIP(host) !== 0) return false;
  if (rpId === host) return true;
  if (!host.endsWith(`.${rpId}`)) return false;
  // The Public Suffix List with its private part (`github.io`, `s3.amazonaws.com`): a parent domain must be
  // the host's registrable domain or lie below it, never above it (`amazonaws.com` for `app.s3.amazonaws.com`).
  const registrable = registrableDomainOf(host);
  return registrable !== undefined && (rpId === registrable || rpId.endsWith(`.${registrable}`));
}

/** The registrable domain of `host` (one label below its public suffix, private suffixes included), if it has one. */
function registrableDomainOf(host: string): string | undefined {
  return getDomain(host, { allowPrivateDomains: true }) ?? undefined;
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
