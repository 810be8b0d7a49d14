/**
 * Every lifetime, window and count of Connect, in one place (docs/lifetimes.md).
 *
 * Those in {@link Lifetimes} are configurable (`config/schema.ts` names
 * their variables and takes their defaults from here); the rest are fixed
 * rules of the service. All are whole seconds unless the name says otherwise.
 */

/** The configurable lifetimes, as one server runs with them. */
export interface Lifetimes {
  /** `CONNECT_CODE_TTL`: an authorization code is redeemable this long. */
  readonly codeSeconds: number;
  /** `CONNECT_ACCESS_TOKEN_TTL`: client and customer access tokens. */
  readonly accessTokenSeconds: number;
  /** `CONNECT_REFRESH_TOKEN_TTL`: customer refresh tokens. */
  readonly refreshTokenSeconds: number;
  /**
   * `CONNECT_REFRESH_REUSE_SECONDS`: refreshes of one token session within
   * this long of the refresh that minted its access token get that token
   * again, instead of minting one that the next refresh would end at once
   * (docs/tokens.md, "Concurrent refreshes"); 0: every refresh mints.
   */
  readonly refreshReuseSeconds: number;
  /** `CONNECT_SESSION_IDLE_TTL`: a customer's session at Connect unused this long ends. */
  readonly sessionIdleSeconds: number;
  /** `CONNECT_SESSION_TTL`: a customer's session at Connect ends this long after login, used or not. */
  readonly sessionSeconds: number;
  /**
   * `CONNECT_JWKS_MAX_AGE`: how long a verifier may keep a copy of the JWKS
   * document (its `Cache-Control: max-age`). A rotated-in key signs only
   * once every copy made before it was published has expired
   * ({@link keyPublicationDelaySeconds}).
   */
  readonly jwksMaxAgeSeconds: number;
}

/** The defaults of the configurable lifetimes. */
export const DEFAULT_LIFETIMES: Lifetimes = Object.freeze({
  codeSeconds: 300,
  accessTokenSeconds: 3600,
  refreshTokenSeconds: 604_800,
  refreshReuseSeconds: 10,
  sessionIdleSeconds: 1800,
  sessionSeconds: 43_200,
  jwksMaxAgeSeconds: 300,
});

/** The longest `CONNECT_REFRESH_REUSE_SECONDS` allowed: a minute, so a reused token is never much older than a new one would be. */
export const REFRESH_REUSE_LIMIT_SECONDS = 60;

/** The longest `CONNECT_JWKS_MAX_AGE` allowed: a day, so a rotation never waits longer than that. */
export const JWKS_MAX_AGE_LIMIT_SECONDS = 86_400;

/**
 * A pushed authorization request (`POST /par`, RFC 9126) can be used at
 * `/authorize` this long, once (docs/journey.md, "Pushed authorization requests").
 */
export const PUSHED_REQUEST_TTL_SECONDS = 60;
/** Pushed authorization requests one client may store per window, over every instance: what bounds the rows a client can write. */
export const PUSHED_REQUESTS_PER_CLIENT = 1200;
/** The window of {@link PUSHED_REQUESTS_PER_CLIENT}. */
export const PUSHED_REQUESTS_PER_CLIENT_WINDOW_SECONDS = 60;
/** The authorization codes of a `fapi2` client are redeemable this long (FAPI 2.0 Security Profile §5.3.2.1), or `CONNECT_CODE_TTL` when that is shorter. */
export const FAPI2_CODE_TTL_SECONDS = 60;

/** How long the codes of a client of `profile` are redeemable: {@link FAPI2_CODE_TTL_SECONDS} at most for `fapi2`, `CONNECT_CODE_TTL` otherwise. */
export function codeSecondsOf(profile: 'standard' | 'fapi2', lifetimes: Pick<Lifetimes, 'codeSeconds'>): number {
  return profile === 'fapi2' ? Math.min(FAPI2_CODE_TTL_SECONDS, lifetimes.codeSeconds) : lifetimes.codeSeconds;
}

/** A customer has this long to finish signing in once `/authorize` sent them to the hosted pages. */
export const AUTHORIZATION_REQUEST_TTL_SECONDS = 15 * 60;

/** Wrong PINs in a row that lock PIN login for a mobile number. */
export const PIN_MAX_ATTEMPTS = 5;
/** How long such a lock lasts; it then lifts by itself, with 5 tries again. */
export const PIN_LOCK_SECONDS = 15 * 60;

/** A one-time PIN is valid this long after it was sent. */
export const OTP_TTL_SECONDS = 300;
/** Entries that end a one-time-PIN challenge; after the last wrong one even the right code fails. */
export const OTP_MAX_ATTEMPTS = 5;
/** A new code may be sent no sooner than this after the last one. */
export const OTP_RESEND_AFTER_SECONDS = 30;
/** New codes one challenge allows. */
export const OTP_MAX_RESENDS = 3;
/** Once a PIN-reset code was entered right, the new PIN must be chosen within this long. */
export const PIN_RESET_WINDOW_SECONDS = 300;
/**
 * A PIN reset's code, entered right, proves the phone for the login that
 * follows in the same journey for this long: that login sends no second
 * one-time PIN (docs/journey.md, "After a PIN reset").
 */
export const RESET_PROVES_PHONE_SECONDS = 600;

/** The window of the per-mobile one-time-PIN send budget (`CONNECT_SMS_LIMIT_PER_MOBILE`). */
export const SMS_PER_MOBILE_WINDOW_SECONDS = 15 * 60;
/** The window of the per-address one-time-PIN send budget (`CONNECT_SMS_LIMIT_PER_ADDRESS`). */
export const SMS_PER_ADDRESS_WINDOW_SECONDS = 60 * 60;
/** The window of the whole deployment's one-time-PIN send budget (`CONNECT_SMS_LIMIT_GLOBAL`). */
export const SMS_GLOBAL_WINDOW_SECONDS = 60 * 60;
/** The window of the per-address budget of failed PIN checks (`CONNECT_PIN_LIMIT_PER_ADDRESS`). */
export const PIN_PER_ADDRESS_WINDOW_SECONDS = 60 * 60;
/** The window of `CONNECT_JOURNEY_LIMIT_PER_ADDRESS`: journeys started from one client address per hour. */
export const JOURNEY_PER_ADDRESS_WINDOW_SECONDS = 60 * 60;
/**
 * Wrong login one-time-PIN entries one mobile number may get per window,
 * over all its challenges: each new code brings 5 entries of its own, so
 * without this the SMS budget alone would bound the guesses. A
 * registration's entries count against their challenge only, bounded by
 * its 3 unsolicited codes an hour (docs/journey.md, "Registration").
 */
export const OTP_WRONG_ENTRIES_PER_MOBILE = 10;
/** The window of {@link OTP_WRONG_ENTRIES_PER_MOBILE}. */
export const OTP_WRONG_ENTRIES_WINDOW_SECONDS = 60 * 60;
/**
 * Unsolicited codes (PIN-reset codes not asked for from a known device,
 * and registration codes) one client address may have sent to one mobile
 * number per {@link RESET_SMS_PER_REQUESTER_WINDOW_SECONDS} (first codes
 * and new codes alike): what a stranger on one network can send a number
 * unasked, while the owner, on another network, keeps a budget of their own
 * (docs/journey.md, "A stranger cannot lock the owner out", "Registration").
 */
export const RESET_SMS_PER_REQUESTER = 3;
/** The window of {@link RESET_SMS_PER_REQUESTER}. */
export const RESET_SMS_PER_REQUESTER_WINDOW_SECONDS = 60 * 60;
/**
 * Unsolicited codes one mobile number may be sent per
 * {@link RESET_SMS_UNSOLICITED_WINDOW_SECONDS}, over every client address:
 * each PIN-reset code asked for from a browser that is not a known device
 * of its customer, and each registration code (docs/journey.md, "A
 * stranger cannot lock the owner out", "Registration"). So however many
 * networks a stranger holds, the phone gets at most 3 such codes an hour
 * (per window of an hour: docs/lifetimes.md); none of them spends the
 * budgets of the customer's known devices.
 */
export const RESET_SMS_UNSOLICITED_PER_MOBILE = 3;
/** The window of {@link RESET_SMS_UNSOLICITED_PER_MOBILE}. */
export const RESET_SMS_UNSOLICITED_WINDOW_SECONDS = 60 * 60;
/**
 * PIN-reset codes a known device of a customer (docs/journey.md, "A
 * stranger cannot lock the owner out") may ask for per
 * {@link RESET_SMS_PER_DEVICE_WINDOW_SECONDS}: its own budget, instead of
 * the per-address and unsolicited ones a stranger can spend.
 */
export const RESET_SMS_PER_DEVICE = 3;
/** The window of {@link RESET_SMS_PER_DEVICE}. */
export const RESET_SMS_PER_DEVICE_WINDOW_SECONDS = 60 * 60;
/**
 * Wrong PIN-reset codes one client address may enter per window, over
 * every mobile: counted against the requester, never against the mobile,
 * so that a stranger's wrong codes never refuse the owner's right one.
 */
export const RESET_OTP_WRONG_ENTRIES_PER_ADDRESS = 10;
/** The window of {@link RESET_OTP_WRONG_ENTRIES_PER_ADDRESS}. */
export const RESET_OTP_WRONG_ENTRIES_WINDOW_SECONDS = 60 * 60;

/** How long a `POST /tokens` `Request-Reference-No` is remembered per client. */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
/**
 * How long a reference stays claimed by a request that has not finished. If
 * the process dies mid-request, a retry after this time runs afresh instead
 * of getting 409 for a day.
 */
export const IDEMPOTENCY_CLAIM_SECONDS = 60;

/** How long a client secret that verified is recognised again in memory without a new HMAC (`verified-secrets.ts`). */
export const SECRET_MEMORY_SECONDS = 5;
/**
 * How long a confirmed change signal is trusted, ms: caches are used only
 * while the signal proved, at most this long ago, that every change was
 * heard (docs/operator-guide.md, "Changes reach every instance").
 */
export const CHANGE_SIGNAL_TRUST_MS = 1000;
/** How often an instance confirms its change signal, ms (PostgreSQL). */
export const CHANGE_SIGNAL_PING_MS = 250;
/**
 * How long a SQLite instance that did not use the database itself may go
 * without asking the database's change counter, ms: another process's change
 * is seen within this time.
 */
export const CHANGE_SIGNAL_SQLITE_POLL_MS = 20;
/**
 * After `keys rotate`, the new keys activate this long after the rotation:
 * every instance publishes the new key within a second (the change signal,
 * {@link CHANGE_SIGNAL_TRUST_MS}; {@link KEY_PUBLICATION_MARGIN_SECONDS}
 * leaves room for clocks a little apart), and every JWKS copy fetched before
 * that expires within its max-age. So no verifier ever meets a `kid` it
 * could not have fetched.
 */
export function keyPublicationDelaySeconds(lifetimes: Pick<Lifetimes, 'jwksMaxAgeSeconds'>): number {
  return KEY_PUBLICATION_MARGIN_SECONDS + lifetimes.jwksMaxAgeSeconds;
}
/** What {@link keyPublicationDelaySeconds} adds to the JWKS max-age. */
export const KEY_PUBLICATION_MARGIN_SECONDS = 5;
/**
 * A replaced key keeps verifying this long past the moment the last token
 * it can have signed expires: for clocks of instances a little apart, and
 * for an instance that learns of a `keys rotate --now` only through its
 * change signal (within a second) and signs with the old key until then.
 */
export const KEY_RETIREMENT_MARGIN_SECONDS = 60;
/**
 * `clients enable` right after `clients disable`, in the same second of the
 * clock, waits for the next second (docs/operator-guide.md, "Disabling a
 * client"); it gives up after this many milliseconds (a clock that does
 * not move) with a message, changing nothing.
 */
export const CLIENT_STATUS_WAIT_MS = 3000;
/**
 * Whole seconds within which every server has heard of a client's status
 * change (the change signal's bound, {@link CHANGE_SIGNAL_TRUST_MS}): an
 * enable ends the tokens servers may have issued that long after a disable.
 */
export const STATUS_REACHES_SERVERS_SECONDS = 1;

/**
 * The longest any database operation may wait by default, in milliseconds
 * (`CONNECT_DB_TIMEOUT_MS`): SQLite's wait for another process's write lock;
 * PostgreSQL's connect, wait for a pooled connection, wait for a row lock,
 * statement and transaction, measured by Connect itself. Past it the
 * operation fails and the request gets 503.
 */
export const DATABASE_TIMEOUT_MS = 5000;
/** The longest one Redis command (or connecting to Redis) may take by default, ms (`CONNECT_REDIS_TIMEOUT_MS`); past it the request gets a 503. */
export const REDIS_TIMEOUT_MS = 1000;
/** What a 503 tells the client to wait before retrying (`Retry-After`). */
export const RETRY_AFTER_SECONDS = 5;
/**
 * The default of `CONNECT_REQUEST_TIMEOUT_MS`: a request not answered within
 * this many milliseconds is answered `503`, and work of it still running
 * sends no SMS (docs/operator-guide.md, "Timeouts").
 */
export const REQUEST_TIMEOUT_MS = 30_000;
/** `/readyz` answers 200 only when each dependency (the database, Redis) answers within this many milliseconds. */
export const READINESS_TIMEOUT_MS = 1000;
/** PIN checks that may wait for a slot of the hashing queue; past it they get 503 at once. */
export const PIN_CHECK_QUEUE_LIMIT = 32;

/** Default of `CONNECT_AUDIT_RETENTION_DAYS`: audit events are kept this many whole days. */
export const AUDIT_RETENTION_DAYS_DEFAULT = 365;
/** The sandbox SMS outbox keeps a message this long (its one-time PIN expired long before). */
export const SMS_OUTBOX_KEEP_SECONDS = 86_400;
/** The server runs the purge of expired records this often (docs/operator-guide.md, "Retention"). */
export const PURGE_INTERVAL_SECONDS = 3600;
/** How long after start a server runs its first purge, seconds (then every `PURGE_INTERVAL_SECONDS`). */
export const PURGE_FIRST_RUN_SECONDS = 60;
/** Rows one purge statement deletes at most, so none holds its locks long. */
export const PURGE_BATCH_SIZE = 1000;
/**
 * The server deletes expired journeys this often, apart from the hourly
 * purge, so that a flood of `/authorize` requests does not keep its rows
 * for an hour: a journey is gone at most this long after it expired
 * (docs/lifetimes.md, "Journeys").
 */
export const JOURNEY_PURGE_INTERVAL_SECONDS = 60;
/**
 * Statements of `PURGE_BATCH_SIZE` rows one journey sweep runs at most, so
 * that a sweep stays short; what is left waits for the next one.
 */
export const JOURNEY_PURGE_MAX_BATCHES = 50;
