/**
 * The storage port of idempotent `POST /tokens` requests.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */

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
  /** The record of a reference, unless there is none or it expired by `now`. */
  findIdempotentRequest(clientId: string, reference: string, now: number): Promise<IdempotentRequestRecord | undefined>;
  /**
   * Releases a claim whose request failed, so a retry runs again: the
   * record this call claimed, and only while it still holds its response
   * (never another request's claim of the same reference).
   */
  releaseIdempotentRequest(record: Pick<IdempotentRequestRecord, 'clientId' | 'reference' | 'sealedResponse'>): Promise<void>;
  /**
   * Replaces the response of the record this call claimed with
   * `sealedResponse`: only while it still holds the response it was claimed
   * with (never another request's claim of the same reference).
   */
  replaceIdempotentResponse(record: Pick<IdempotentRequestRecord, 'clientId' | 'reference' | 'sealedResponse'>, sealedResponse: string): Promise<void>;
  /** Forgets records expired by `now` (at most `limit` of them when given); returns how many. */
  deleteExpiredIdempotentRequests(now: number, limit?: number): Promise<number>;
}
