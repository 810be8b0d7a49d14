/**
 * The storage port of used `jti`s: a client assertion (RFC 7523 §3) or a
 * DPoP proof (RFC 9449 §11.1) is accepted once, on every instance that
 * shares the database (docs/operator-guide.md, "The replay store").
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */

/** What a `jti` came in: a `private_key_jwt` client assertion, or a DPoP proof. */
export type ReplayKind = 'client_assertion' | 'dpop_proof';

/** Every replay kind. */
export const REPLAY_KINDS: readonly ReplayKind[] = ['client_assertion', 'dpop_proof'];

/** `jti`s already accepted. */
export interface ReplayStore {
  /**
   * Records `jtiHash` of `kind` as used until `expiresAt`, in one atomic
   * statement, unless it is recorded already and not expired at `now`.
   *
   * @returns `true` for the one caller that recorded it, on any number of
   *   instances at once; `false` for every other (a replay).
   */
  useJtiOnce(kind: ReplayKind, jtiHash: string, expiresAt: number, now: number): Promise<boolean>;
  /** Removes every record expired at `now` (at most `limit`); returns how many. */
  deleteExpiredJtis(now: number, limit: number): Promise<number>;
}
