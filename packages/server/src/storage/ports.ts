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
import type { SigningKeyRecord } from '../core/keys/signing-key.js';

/** Fields of a client that `updateClient` may change. */
export interface ClientPatch {
  name?: string;
  redirectUri?: string;
  grants?: readonly GrantType[];
  requirePkce?: boolean;
  status?: ClientStatus;
  secretHash?: string;
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

/** The stores that can take part in one transaction. */
export interface Stores {
  readonly clients: ClientStore;
  readonly keys: SigningKeyStore;
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
