/**
 * The storage ports: what core and the CLI need from a database, and how each
 * operation behaves. Both engines (SQLite and PostgreSQL, `kysely/`) implement
 * exactly this and are held to it by `test/storage/contract.ts`.
 *
 * Rules shared by every store:
 * - Timestamps are whole epoch seconds and "now" is always passed in; stores
 *   never read the clock.
 * - Lookups of a missing record return `undefined`; updates of one throw
 *   `NotFound`; inserting a duplicate key throws `Conflict` (`./errors.ts`).
 */
import type { Client, ClientStatus, GrantType } from '../core/clients/client.js';
import type { AuditStore } from '../core/audit/audit-log.js';
import type { Customer } from '../core/customers/customer.js';
import type { SigningKeyRecord } from '../core/keys/signing-key.js';
import type {
  AuthorizationCodeRecord,
  AuthorizationRequestRecord,
  CustomerSessionRecord,
  OtpChallengeRecord,
  OutboxMessage,
  TokenSessionRecord,
} from '../core/login/records.js';

/** Fields of a client that `updateClient` may change. */
export interface ClientPatch {
  name?: string;
  redirectUri?: string;
  grants?: readonly GrantType[];
  requirePkce?: boolean;
  status?: ClientStatus;
  secretHash?: string;
  previousSecretHash?: string | null;
  previousSecretExpiresAt?: number | null;
}

/** Registered API consumers. */
export interface ClientStore {
  /** The client with this ID, or `undefined`. */
  findClient(id: string): Promise<Client | undefined>;
  /** Every client, oldest first. */
  listClients(): Promise<Client[]>;
  /** Adds a client. Throws `Conflict` when the ID exists. */
  insertClient(client: Client): Promise<void>;
  /**
   * Changes the given fields and sets `updatedAt` to `now`; returns the
   * updated client. Throws `NotFound` when there is no such client.
   */
  updateClient(id: string, patch: ClientPatch, now: number): Promise<Client>;
}

/** Signing and encryption keys, private halves sealed under the master key. */
export interface SigningKeyStore {
  /** Every key, newest first (by `createdAt`, then `kid`). */
  listKeys(): Promise<SigningKeyRecord[]>;
  /** Adds a key. Throws `Conflict` when the `kid` exists. */
  insertKey(key: SigningKeyRecord): Promise<void>;
  /**
   * Retires every active key of `use` other than `keepKid`: status becomes
   * `retired`, `retiredAt` = `now`, and `verifyUntil` = `verifyUntil` (the
   * moment the last token it signed expires). Returns how many were retired.
   */
  retireKeys(use: SigningKeyRecord['use'], keepKid: string, now: number, verifyUntil: number): Promise<number>;
}

/** Fields of a customer that `updateCustomer` may change. */
export interface CustomerPatch {
  name?: string | null;
  pinHash?: string;
  status?: Customer['status'];
  failedPinAttempts?: number;
  lockedUntil?: number | null;
}

/** Customer accounts. A mobile number belongs to one account at most. */
export interface CustomerStore {
  findCustomer(profileId: string): Promise<Customer | undefined>;
  findCustomerByMobile(mobile: string): Promise<Customer | undefined>;
  /** Every customer, oldest first. */
  listCustomers(): Promise<Customer[]>;
  /** Adds a customer. Throws `Conflict` when the profile ID or the mobile number is taken. */
  insertCustomer(customer: Customer): Promise<void>;
  /** Changes the given fields, sets `updatedAt`; throws `NotFound`. */
  updateCustomer(profileId: string, patch: CustomerPatch, now: number): Promise<Customer>;
  /**
   * Counts one wrong PIN, atomically. When the count reaches `maxAttempts`
   * the account is locked until `now + lockSeconds` and the count starts
   * again from zero. Returns the updated customer; throws `NotFound`.
   */
  recordPinFailure(profileId: string, now: number, maxAttempts: number, lockSeconds: number): Promise<Customer>;
}

/** Pending `/authorize` requests, looked up by the hash of their ID. */
export interface AuthorizationRequestStore {
  insertAuthorizationRequest(request: AuthorizationRequestRecord): Promise<void>;
  findAuthorizationRequest(idHash: string): Promise<AuthorizationRequestRecord | undefined>;
  /**
   * Marks the request completed, once: returns `true` for the call that did
   * it, `false` when it was completed before or does not exist.
   */
  completeAuthorizationRequest(idHash: string, now: number): Promise<boolean>;
}

/** One-time-PIN challenges. Every change is one conditional update, safe under concurrency. */
export interface OtpChallengeStore {
  insertOtpChallenge(challenge: OtpChallengeRecord): Promise<void>;
  findOtpChallenge(id: string): Promise<OtpChallengeRecord | undefined>;
  /** The newest challenge of an authorization request, consumed or not. */
  findLatestOtpChallenge(requestHash: string): Promise<OtpChallengeRecord | undefined>;
  /** Counts one wrong entry; returns the new attempt count (0 when there is no such challenge). */
  recordOtpFailure(id: string): Promise<number>;
  /**
   * Consumes the challenge if it is unconsumed, unexpired at `now` and has
   * fewer than `maxAttempts` wrong entries. Returns whether this call did.
   */
  consumeOtpChallenge(id: string, now: number, maxAttempts: number): Promise<boolean>;
  /**
   * Replaces the code of a live (unconsumed, unexpired at `now`) challenge (a resend) when it was last sent at
   * or before `sentBefore` and has had fewer than `maxResends` resends:
   * new code hash, `lastSentAt` = `now`, new expiry, one more resend.
   * Returns whether it did.
   */
  resendOtpChallenge(
    id: string,
    update: { codeHash: string; now: number; expiresAt: number; sentBefore: number; maxResends: number },
  ): Promise<boolean>;
}

/** Customers' login sessions at Connect. */
export interface CustomerSessionStore {
  insertCustomerSession(session: CustomerSessionRecord): Promise<void>;
  findCustomerSession(idHash: string): Promise<CustomerSessionRecord | undefined>;
  /** Sets `lastSeenAt` of a session that has not ended. */
  touchCustomerSession(idHash: string, now: number): Promise<void>;
  /** Ends a session (no-op when ended before or missing). */
  endCustomerSession(idHash: string, now: number): Promise<void>;
  /** Ends every live session of a customer; returns how many. */
  endCustomerSessionsOf(profileId: string, now: number): Promise<number>;
}

/** Authorization codes. */
export interface AuthorizationCodeStore {
  insertAuthorizationCode(code: AuthorizationCodeRecord): Promise<void>;
  findAuthorizationCode(codeHash: string): Promise<AuthorizationCodeRecord | undefined>;
  /**
   * Redeems a code with one conditional update: only when it exists, belongs
   * to `clientId`, is unconsumed and `expiresAt > now`. Returns the record
   * for the single caller that redeemed it, `undefined` for every other.
   */
  consumeAuthorizationCode(codeHash: string, clientId: string, now: number): Promise<AuthorizationCodeRecord | undefined>;
}

/** Token sessions (`sid`): what refresh, introspection and revocation check. */
export interface TokenSessionStore {
  insertTokenSession(session: TokenSessionRecord): Promise<void>;
  findTokenSession(sid: string): Promise<TokenSessionRecord | undefined>;
  /** Revokes every session created from a code (a code replay); returns how many. */
  revokeTokenSessionsByCode(codeHash: string, now: number): Promise<number>;
  /**
   * Makes `accessJti` the session's only valid access token, in one
   * conditional update: only while the session is unrevoked, its refresh
   * token is `refreshJti` and unexpired at `now`. Returns whether it did.
   */
  replaceAccessToken(
    sid: string,
    update: { refreshJti: string; accessJti: string; accessExpiresAt: number; now: number },
  ): Promise<boolean>;
  /** Revokes one session (its refresh token and its access token); returns whether it was live. */
  revokeTokenSession(sid: string, now: number): Promise<boolean>;
  /** Ends the session's current access token if it is `accessJti`, leaving the refresh token valid. */
  revokeAccessToken(sid: string, accessJti: string): Promise<boolean>;
}

/** Revoked self-contained tokens (client access tokens), by `jti`, kept until they expire. */
export interface RevokedTokenStore {
  /** Records a revocation; revoking twice is a no-op. */
  revokeToken(entry: { jti: string; clientId: string; revokedAt: number; expiresAt: number }): Promise<void>;
  isTokenRevoked(jti: string): Promise<boolean>;
  /** Forgets revocations of tokens expired by `now`; returns how many. */
  deleteExpiredRevocations(now: number): Promise<number>;
}

/** What `POST /tokens` remembers of a request, by client and `Request-Reference-No`. */
export interface IdempotentRequestRecord {
  readonly clientId: string;
  readonly reference: string;
  /** SHA-256 of the request body. */
  readonly requestHash: string;
  /** The response, sealed under the master key; `null` while the request runs. */
  readonly sealedResponse: string | null;
  readonly createdAt: number;
  /** End of the claim while the request runs; end of the replay window once it is done. */
  readonly expiresAt: number;
}

/** Idempotent retries of `POST /tokens`. */
export interface IdempotentRequestStore {
  /**
   * Claims a reference for a request. Returns `undefined` when this call
   * claimed it, or the record already there (completed, running, or with
   * another body). A record past `expiresAt` at `record.createdAt` is replaced.
   */
  claimIdempotentRequest(record: IdempotentRequestRecord): Promise<IdempotentRequestRecord | undefined>;
  /** Stores the response of a claimed request and keeps it until `expiresAt`. */
  completeIdempotentRequest(clientId: string, reference: string, sealedResponse: string, expiresAt: number): Promise<void>;
  /** Releases a claim whose request failed, so a retry runs again. */
  releaseIdempotentRequest(clientId: string, reference: string): Promise<void>;
  /** Forgets records expired by `now`; returns how many. */
  deleteExpiredIdempotentRequests(now: number): Promise<number>;
}

/** The sandbox SMS outbox. */
export interface SmsOutboxStore {
  insertOutboxMessage(message: OutboxMessage): Promise<void>;
  /** Messages to one number, newest first, at most `limit`. */
  listOutboxMessages(to: string, limit: number): Promise<OutboxMessage[]>;
}

/** The stores that can take part in one transaction. */
export interface Stores {
  readonly clients: ClientStore;
  readonly keys: SigningKeyStore;
  readonly customers: CustomerStore;
  readonly authorizationRequests: AuthorizationRequestStore;
  readonly otpChallenges: OtpChallengeStore;
  readonly customerSessions: CustomerSessionStore;
  readonly codes: AuthorizationCodeStore;
  readonly tokenSessions: TokenSessionStore;
  readonly outbox: SmsOutboxStore;
  readonly revokedTokens: RevokedTokenStore;
  readonly idempotentRequests: IdempotentRequestStore;
  readonly audit: AuditStore;
}

/** A database: the stores, transactions, health and lifecycle. */
export interface Storage extends Stores {
  /** `sqlite` or `postgres`. */
  readonly engine: 'sqlite' | 'postgres';
  /**
   * Runs `work` in one database transaction: every store it is handed writes
   * in that transaction, which commits when `work` resolves and rolls back
   * when it throws.
   */
  transaction<T>(work: (tx: Stores) => Promise<T>): Promise<T>;
  /** Applies pending migrations; returns the names of those applied now. */
  migrate(): Promise<string[]>;
  /** Resolves when the database answers a trivial query; throws otherwise. */
  ping(): Promise<void>;
  /** Closes every connection. */
  close(): Promise<void>;
}
