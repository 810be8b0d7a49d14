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

/** A single-use record was consumed before. */
export class AlreadyConsumed extends StorageError {}
