/**
 * The purge: deletes what has expired and can no longer be used, and audit
 * events past their retention, in batches (docs/operator-guide.md,
 * "Retention"). `connect-auth purge` runs it, and the server every hour.
 */
import type { AuditStore } from '../audit/audit-log.js';
import type { IdempotentRequestStore } from '../customer-tokens/idempotent-request-store.js';
import type { AuthorizationCodeStore } from '../codes/code-store.js';
import type { AuthorizationRequestStore, CustomerSessionStore } from '../journey/stores.js';
import { AUTHORIZATION_REQUEST_TTL_SECONDS, PURGE_BATCH_SIZE, SMS_OUTBOX_KEEP_SECONDS } from '../lifetimes.js';
import type { RateLimitCounterStore } from '../limits/rate-limit-counter-store.js';
import type { OtpChallengeStore } from '../otp/otp-challenge-store.js';
import type { ReplayStore } from '../replay/replay-store.js';
import type { PushedRequestStore } from '../authorize/pushed-request-store.js';
import type { PasskeyStore } from '../passkeys/passkey-store.js';
import type { SmsOutboxStore } from '../sms/outbox-store.js';
import type { RevokedTokenStore, TokenSessionStore } from '../tokens/token-session-store.js';

/** The stores the purge deletes from. */
export interface PurgeStores {
  readonly authorizationRequests: AuthorizationRequestStore;
  readonly otpChallenges: OtpChallengeStore;
  readonly passkeys: Pick<PasskeyStore, 'deleteWebAuthnChallengesEndedBy'>;
  readonly usedJtis: Pick<ReplayStore, 'deleteExpiredJtis'>;
  readonly pushedRequests: Pick<PushedRequestStore, 'deleteExpiredPushedRequests'>;
  readonly customerSessions: CustomerSessionStore;
  readonly codes: AuthorizationCodeStore;
  readonly tokenSessions: TokenSessionStore;
  readonly revokedTokens: RevokedTokenStore;
  readonly idempotentRequests: IdempotentRequestStore;
  readonly rateLimitCounters: RateLimitCounterStore;
  readonly outbox: SmsOutboxStore;
  readonly audit: AuditStore;
}

/** What the purge deletes, in the order it deletes them. */
export const PURGE_KINDS = [
  'authorizationCodes',
  'authorizationRequests',
  'customerSessions',
  'otpChallenges',
  'webauthnChallenges',
  'usedJtis',
  'pushedRequests',
  'tokenSessions',
  'revokedTokens',
  'idempotentRequests',
  'rateLimitCounters',
  'smsOutbox',
  'auditEvents',
] as const;
/** One kind of record the purge deletes. */
export type PurgeKind = (typeof PURGE_KINDS)[number];

/** How many of each kind a purge deleted. */
export type PurgeCounts = Record<PurgeKind, number>;

/** When the purge runs and what it keeps. */
export interface PurgeOptions {
  /** Epoch seconds. */
  readonly now: number;
  /** `CONNECT_SESSION_IDLE_TTL`: a session unused this long is over. */
  readonly sessionIdleSeconds: number;
  /** `CONNECT_AUDIT_RETENTION_DAYS`. */
  readonly auditRetentionDays: number;
  /** Rows per statement; default {@link PURGE_BATCH_SIZE}. */
  readonly batchSize?: number;
  /** Told after every batch: the kind and how many of it are deleted so far. */
  readonly onProgress?: (kind: PurgeKind, deletedSoFar: number) => void;
}

/**
 * Deletes, batch after batch until none is left, every record that can no
 * longer be used at `now`. Each batch is one short statement of its own
 * (no transaction around them): a purge stopped half-way has deleted only
 * expired rows, and the next one finishes the work.
 */
export async function purgeExpired(stores: PurgeStores, options: PurgeOptions): Promise<PurgeCounts> {
  const { now } = options;
  const batch = options.batchSize ?? PURGE_BATCH_SIZE;
  const steps: Record<PurgeKind, () => Promise<number>> = {
    authorizationCodes: () => stores.codes.deleteExpiredAuthorizationCodes(now, batch),
    authorizationRequests: () => stores.authorizationRequests.deleteExpiredAuthorizationRequests(now, batch),
    customerSessions: () => stores.customerSessions.deleteEndedCustomerSessions(now, options.sessionIdleSeconds, batch),
    // A challenge goes once its journey (created before it) has expired too:
    // the journey's pages still show an expired challenge ("send a new code").
    otpChallenges: () => stores.otpChallenges.deleteOtpChallengesExpiredBy(now - AUTHORIZATION_REQUEST_TTL_SECONDS, batch),
    // Single-use and valid 5 minutes: once consumed or expired, nothing can answer one.
    webauthnChallenges: () => stores.passkeys.deleteWebAuthnChallengesEndedBy(now, batch),
    // Kept only while the assertion or proof it came in could still be accepted.
    usedJtis: () => stores.usedJtis.deleteExpiredJtis(now, batch),
    // Valid 60 seconds and used once: once expired, no /authorize can use one.
    pushedRequests: () => stores.pushedRequests.deleteExpiredPushedRequests(now, batch),
    tokenSessions: () => stores.tokenSessions.deleteExpiredTokenSessions(now, batch),
    revokedTokens: () => stores.revokedTokens.deleteExpiredRevocations(now, batch),
    idempotentRequests: () => stores.idempotentRequests.deleteExpiredIdempotentRequests(now, batch),
    rateLimitCounters: () => stores.rateLimitCounters.deleteExpiredRateLimitCounters(now * 1000, batch),
    smsOutbox: () => stores.outbox.deleteOutboxMessagesSentBefore(now - SMS_OUTBOX_KEEP_SECONDS, batch),
    auditEvents: () => stores.audit.deleteAuditEventsBefore(now - options.auditRetentionDays * 86_400, batch),
  };
  const counts = Object.fromEntries(PURGE_KINDS.map((kind) => [kind, 0])) as PurgeCounts;
  for (const kind of PURGE_KINDS) {
    for (;;) {
      const deleted = await steps[kind]();
      counts[kind] += deleted;
      if (deleted > 0) options.onProgress?.(kind, counts[kind]);
      if (deleted < batch) break;
    }
  }
  return counts;
}
