/**
 * Connect's configuration: every setting, its environment variable, its
 * default, and whether production must set it (docs/operator-guide.md,
 * "Configuration"; the lifetimes and limits: docs/lifetimes.md).
 * `load.ts` reads and checks it once at start-up.
 */
import type { Environment } from '../core/environment.js';
import { DATABASE_TIMEOUT_MS, REDIS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, type Lifetimes } from '../core/lifetimes.js';
import type { DatabaseLocation } from '../core/storage/storage.js';

/** Log verbosity, as pino names it. */
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** The validated, frozen configuration. */
export interface Config {
  /**
   * `CONNECT_ENVIRONMENT`: `sandbox` (default) or `production`. One server is
   * one environment; production refuses unsafe settings. It must be the
   * environment the database records as its own (its first opener's), or
   * every server and command refuses it (docs/operator-guide.md, "One
   * database, one environment"). A misspelt `CONNECT_*` variable gets a
   * warning naming the closest setting (`unknownSettings` in `load.ts`).
   */
  readonly environment: Environment;
  /** `PORT`: TCP port to listen on; default `3000`; `0` picks a free port. */
  readonly port: number;
  /** `HOST`: address to listen on; default `127.0.0.1`. */
  readonly host: string;
  /** `DATABASE_URL`: default `sqlite:<dataDir>/connect-<environment>.db`; production should use PostgreSQL. */
  readonly database: DatabaseLocation;
  /** `REDIS_URL`: optional `redis://` or `rediss://` URL for cross-instance counters and caches. */
  readonly redisUrl: string | undefined;
  /**
   * `CONNECT_AUTH_URL`: public `{auth_url}` and token issuer. Default
   * `http://<host>:<port>` with the port actually bound, and
   * `http://localhost:<port>` when `HOST` is a loopback address (browsers
   * accept passkeys for `localhost`, never for an IP address;
   * `defaultAuthUrl` in `load.ts`); production must set an `https://` URL.
   */
  readonly authUrl: string | undefined;
  /** `CONNECT_BASE_URL`: public `{base_url}`, the `aud` of client tokens; default the auth URL. */
  readonly baseUrl: string | undefined;
  /**
   * `CONNECT_WEBAUTHN_RP_ID`: the passkeys' relying party ID; default the
   * host of the auth URL (`localhost` for the sandbox's default one). Set,
   * it must be that host or a parent domain of it that is not a public
   * suffix (`connect.example` for `auth.connect.example`), so that
   * passkeys keep working when the auth host moves within that domain;
   * never an IP address (docs/operator-guide.md, "Passkeys").
   */
  readonly webauthnRpId: string;
  /**
   * `CONNECT_WEBAUTHN_ORIGINS`: origins passkeys are accepted from besides
   * the auth URL's own, comma-separated, each `https://host[:port]` or an
   * Android app's `android:apk-key-hash:<base64url>`; default none.
   */
  readonly webauthnOrigins: readonly string[];
  /**
   * `CONNECT_PASSKEY_HOLD`: seconds a passkey added from a sign-in that did
   * not itself use a passkey is held before it gives phishing-resistant
   * strength (`phr`), so that whoever takes over a mobile number cannot
   * make a phishing-resistant sign-in of it the same day; default 86400
   * (24 h) in production, 0 in the sandbox; 0 holds none
   * (docs/lifetimes.md, "Passkeys").
   */
  readonly passkeyHoldSeconds: number;
  /** `CONNECT_DATA_DIR`: embedded database and sandbox master key; default `./data`. */
  readonly dataDir: string;
  /**
   * `CONNECT_MASTER_KEY`: 32 random bytes, base64. Seals signing keys and keys
   * the client-secret hash. Sandbox: generated into the data folder on first
   * start when unset. Production: required.
   */
  readonly masterKey: Buffer | undefined;
  /**
   * `CONNECT_PREVIOUS_MASTER_KEY`: the master key being replaced, same
   * format; only while the master key is replaced (docs/operator-guide.md,
   * "Replacing the master key"). Values made under it are still accepted
   * until `master-key retire`; unset by default.
   */
  readonly previousMasterKey: Buffer | undefined;
  /** `CONNECT_SMS_WEBHOOK_URL`: the SMS gateway (JSON POST); required in production. */
  readonly smsWebhookUrl: string | undefined;
  /**
   * `CONNECT_SMS_WEBHOOK_SECRET`: the key of the HMAC-SHA-256 signature of
   * each SMS webhook call (Standard Webhooks); required with the URL. A
   * Standard Webhooks secret, `whsec_` and the base64 of 24 to 64 random
   * bytes, is given to the gateway's library as it is; any other string (a
   * secret of an earlier release) is the key as its UTF-8 bytes, which the
   * gateway's library takes as `whsec_` and their base64
   * (docs/operator-guide.md, "The SMS gateway").
   */
  readonly smsWebhookSecret: string | undefined;
  /**
   * The configurable lifetimes, each documented with its variable and
   * default in `core/lifetimes.ts`: `CONNECT_CODE_TTL`,
   * `CONNECT_ACCESS_TOKEN_TTL`, `CONNECT_REFRESH_TOKEN_TTL`,
   * `CONNECT_SESSION_IDLE_TTL`, `CONNECT_SESSION_TTL` (whole seconds, 1 up),
   * `CONNECT_REFRESH_REUSE_SECONDS` (refreshes of one token session within
   * this long of the refresh that minted its access token get that token
   * again: whole seconds, 0 to 60, default 10; 0 turns reuse off) and
   * `CONNECT_JWKS_MAX_AGE` (the JWKS document's `max-age`, which a key
   * rotation waits out: whole seconds, 1 to 86400, default 300).
   */
  readonly lifetimes: Lifetimes;
  /**
   * `CONNECT_SMS_SENDER`: how one-time PINs are delivered: `outbox` (sandbox
   * default; readable at `/sandbox/messages`), `console` (sandbox only:
   * printed to stderr) or `webhook` (default when `CONNECT_SMS_WEBHOOK_URL`
   * is set; the only choice in production).
   */
  readonly smsSender: SmsSenderKind;
  /**
   * `CONNECT_TRUST_PROXY`: which proxies in front may say, in
   * `X-Forwarded-For`, whom they forward for; the client address (for the
   * per-address limits and the logs) is the right-most address not among
   * them, never one the client could write itself. Unset or `false`: no
   * proxy, the peer's address counts. A number: that many proxies (hops).
   * A comma-separated list of addresses and CIDR ranges: those proxies.
   * `true` trusts every hop, so the client chooses its own address: sandbox
   * only, refused in production.
   */
  readonly trustProxy: TrustProxy;
  /**
   * `CONNECT_SECRET_ROTATION_GRACE`: after `clients rotate-secret` the previous
   * secret keeps working this many seconds; default 86400 (24 h); 0 ends it
   * at once. `rotate-secret --grace SECONDS` overrides it per rotation.
   */
  readonly secretRotationGraceSeconds: number;
  /**
   * `CONNECT_SHUTDOWN_DELAY`: after `SIGTERM` the server goes on accepting
   * connections and serving requests this many seconds while `/readyz`
   * answers 503, so that load balancers stop sending it traffic before it
   * stops listening; default 5 in production, 0 in the sandbox; 0 to 3600.
   * `SIGINT` (Ctrl-C) skips it (docs/operator-guide.md, "Readiness and shutdown").
   */
  readonly shutdownDelaySeconds: number;
  /**
   * `CONNECT_SHUTDOWN_GRACE`: once the server stopped listening (after
   * `SIGTERM` and `CONNECT_SHUTDOWN_DELAY`, or `SIGINT`) requests in flight
   * may finish for at most this many seconds before the process exits;
   * default 10, 1 to 3600 (docs/operator-guide.md, "Readiness and shutdown").
   */
  readonly shutdownGraceSeconds: number;
  /**
   * `CONNECT_SMS_LIMIT_PER_MOBILE`: one-time PINs sent to one mobile number
   * per 15 minutes; default 5 in production, 1000 in the sandbox (where a
   * consumer's test suite logs one demo customer in hundreds of times).
   * Counted across every instance. PIN resets count against two budgets
   * of their own of this size: one for the codes known devices of the
   * customer ask for, which no stranger can spend, and one for all others
   * (docs/journey.md, "A stranger cannot lock the owner out").
   */
  readonly smsLimitPerMobile: number;
  /**
   * `CONNECT_SMS_LIMIT_PER_ADDRESS`: one-time PINs requested from one client
   * address per hour; default 20 in production, 1000 in the sandbox (where
   * a consumer's test suite logs in hundreds of times an hour from one
   * address). Counted across every instance.
   */
  readonly smsLimitPerAddress: number;
  /**
   * `CONNECT_SMS_LIMIT_GLOBAL`: one-time PINs sent per hour by the whole
   * deployment, a budget against SMS pumping; default 10000 in production,
   * `undefined` (unlimited) in the sandbox. Counted across every instance.
   */
  readonly smsLimitGlobal: number | undefined;
  /**
   * `CONNECT_SMS_COUNTRIES`: the ISO 3166 alpha-2 codes (upper case) of the
   * countries whose mobiles may register and receive PINs; `undefined`
   * (unset) allows every country. Premium-rate, shared-cost and satellite
   * numbers are refused whatever it says.
   */
  readonly smsCountries: readonly string[] | undefined;
  /**
   * `CONNECT_DEFAULT_COUNTRY`: the ISO 3166 alpha-2 code (upper case) of
   * the country whose numbers the hosted pages' mobile fields (login,
   * registration, "Forgot PIN?") read without a country code: `0917 123
   * 4567` is `+639171234567` for `PH`. Numbers are stored and shown in
   * E.164 all the same, and `user_id` and the command line take E.164 only.
   * Default `PH`; when `CONNECT_SMS_COUNTRIES` does not list `PH`, the
   * first country it lists. Set, it must be one `CONNECT_SMS_COUNTRIES`
   * lists (docs/operator-guide.md, "Configuration").
   */
  readonly defaultCountry: string;
  /**
   * `CONNECT_SCOPES_SUPPORTED`: the scopes discovery lists as
   * `scopes_supported` (RFC 8414 §2), space-separated scope tokens (RFC
   * 6749 §3.3, at most 64 characters each); default none (an empty list).
   * It only advertises: what a client may obtain is what it is registered
   * with (`clients create|update --scopes`; docs/tokens.md, "Scopes"), so
   * list here the scopes the platform's APIs check.
   */
  readonly scopesSupported: readonly string[];
  /**
   * `CONNECT_PIN_LIMIT_PER_ADDRESS`: failed PIN checks from one client
   * address per hour; default 50 in production, 1000 in the sandbox. Right
   * PINs do not count. Counted across every instance.
   */
  readonly pinLimitPerAddress: number;
  /**
   * `CONNECT_JOURNEY_LIMIT_PER_ADDRESS`: sign-ins (journeys) started from one
   * client address per hour, each a row written for an anonymous `GET
   * /authorize` or a passkey challenge (`POST /login/passkey/options`); default 300 in production, 10000 in the sandbox (a
   * consumer's test suite). Past it `/authorize` answers a 429 page with
   * `Retry-After`. Counted across every instance (docs/lifetimes.md, "Journeys").
   */
  readonly journeyLimitPerAddress: number;
  /**
   * `CONNECT_AUDIT_RETENTION_DAYS`: audit events older than this many whole
   * days are deleted by the purge (`connect-auth purge` and the server's
   * hourly one); default 365, at least 1.
   */
  readonly auditRetentionDays: number;
  /** `CONNECT_LOG_LEVEL`: default `info`. */
  readonly logLevel: LogLevel;
  /**
   * `CONNECT_METRICS_PORT`: serve Prometheus metrics at `GET /metrics` on
   * this port of `CONNECT_METRICS_HOST`; unset: off. The metrics listener
   * has no authentication of its own.
   */
  readonly metricsPort: number | undefined;
  /**
   * `CONNECT_METRICS_HOST`: the address the metrics listener binds; default
   * `127.0.0.1`, whatever `HOST` is, so that opening the public listener
   * (`HOST=0.0.0.0`) does not publish the metrics. Set it to an address only
   * the scraper reaches.
   */
  readonly metricsHost: string;
  /** `CONNECT_DB_POOL_SIZE`: PostgreSQL connections per instance (1 to 1000); default 10. */
  readonly databasePoolSize: number;
  /**
   * `CONNECT_DB_TIMEOUT_MS`: the bound, measured by Connect itself, on a
   * PostgreSQL connect, pool wait, row-lock wait, statement and transaction
   * (a silent network included), and on SQLite's wait for another process's
   * write lock (100 to 600000 ms); default 5000. Past it the request gets `503`.
   */
  readonly databaseTimeoutMs: number;
  /** `CONNECT_REDIS_TIMEOUT_MS`: the bound on one Redis command and on connecting (10 to 600000 ms); default 1000. Past it the request gets `503`. */
  readonly redisTimeoutMs: number;
  /**
   * `CONNECT_REQUEST_TIMEOUT_MS`: a request not answered within this many
   * milliseconds (100 to 600000) is answered `503`, and whatever of its work
   * is still running may no longer send an SMS; default 30000.
   */
  readonly requestTimeoutMs: number;
}

/** `CONNECT_TRUST_PROXY` as read: none, every hop (sandbox), a number of hops, or the proxies' addresses and ranges. */
export type TrustProxy = boolean | number | readonly string[];

/** How one-time PINs reach customers. */
export type SmsSenderKind = 'outbox' | 'console' | 'webhook';

/** Defaults, each documented on the matching {@link Config} key. */
export const DEFAULTS = {
  environment: 'sandbox',
  port: 3000,
  host: '127.0.0.1',
  metricsHost: '127.0.0.1',
  dataDir: './data',
  secretRotationGraceSeconds: 86_400,
  webauthnOrigins: Object.freeze([]) as readonly string[],
  passkeyHoldSeconds: { production: 86_400, sandbox: 0 },
  shutdownDelaySeconds: { production: 5, sandbox: 0 },
  shutdownGraceSeconds: 10,
  smsLimitPerMobile: { production: 5, sandbox: 1000 },
  smsLimitPerAddress: { production: 20, sandbox: 1000 },
  smsLimitGlobal: { production: 10_000, sandbox: undefined },
  pinLimitPerAddress: { production: 50, sandbox: 1000 },
  journeyLimitPerAddress: { production: 300, sandbox: 10_000 },
  defaultCountry: 'PH',
  scopesSupported: Object.freeze([]) as readonly string[],
  logLevel: 'info',
  databasePoolSize: 10,
  databaseTimeoutMs: DATABASE_TIMEOUT_MS,
  redisTimeoutMs: REDIS_TIMEOUT_MS,
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
} as const;
