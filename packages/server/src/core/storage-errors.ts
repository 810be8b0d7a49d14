/**
 * Storage errors. Stores throw these, never OAuth errors: the caller decides
 * what a missing or already-used record means on the wire.
 */
export class StorageError extends Error {
  override get name(): string {
    return this.constructor.name;
  }
}

/** The record the operation needs does not exist. */
export class NotFound extends StorageError {}

/** A record with the same unique key exists already. */
export class Conflict extends StorageError {}

/** What a {@link StorageUnavailable} failed to reach: the database, or the Redis that holds the rate-limit counters. */
export type StorageDependency = 'database' | 'redis';

/**
 * The database failed or did not answer in time (connection lost, timeout,
 * busy, disk full, …). Nothing of the failed statement or transaction was
 * written; the caller may retry later. The driver's error is the `cause`,
 * for the logs only. `dependency` names what failed (default `database`),
 * for the log of outages (docs/operator-guide.md, "When a dependency fails").
 */
export class StorageUnavailable extends StorageError {
  readonly dependency: StorageDependency;

  constructor(message?: string, options?: ErrorOptions & { dependency?: StorageDependency }) {
    super(message, options);
    this.dependency = options?.dependency ?? 'database';
  }
}
