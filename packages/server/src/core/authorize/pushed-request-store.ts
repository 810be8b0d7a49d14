/**
 * The storage port of pushed authorization requests (RFC 9126;
 * docs/journey.md, "Pushed authorization requests").
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */

/** A pushed authorization request as stored. */
export interface PushedRequestRecord {
  /** SHA-256 (base64url) of the random part of its `request_uri`; the `request_uri` itself is never stored. */
  readonly idHash: string;
  /** The client that pushed it: the only one that may use it. */
  readonly clientId: string;
  /** Every authorization parameter the client pushed, as pushed (each present once). */
  readonly parameters: Readonly<Record<string, string>>;
  readonly createdAt: number;
  readonly expiresAt: number;
  /** When `GET /authorize` used it; `null` until then. */
  readonly consumedAt: number | null;
}

/** Pushed authorization requests: each used at most once, by its own client, before it expires. */
export interface PushedRequestStore {
  /** Stores a new pushed request. Throws `Conflict` when its `idHash` exists. */
  insertPushedRequest(record: PushedRequestRecord): Promise<void>;
  /**
   * Uses the pushed request `idHash` of `clientId` at `now`, in one atomic
   * conditional update: it is marked consumed and returned only when it
   * belongs to `clientId`, is not consumed yet and has not expired
   * (`expiresAt > now`). Of any number of concurrent calls, on any number
   * of instances, at most one gets the record; every other (and any later
   * one) gets `undefined`, as does an unknown ID or another client's.
   */
  consumePushedRequest(idHash: string, clientId: string, now: number): Promise<PushedRequestRecord | undefined>;
  /** Removes every pushed request expired at `now` (consumed or not; at most `limit`); returns how many. */
  deleteExpiredPushedRequests(now: number, limit: number): Promise<number>;
}
