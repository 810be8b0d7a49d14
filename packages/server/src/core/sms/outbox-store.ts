/**
 * The storage port of the sandbox SMS outbox.
 *
 * Implemented by `storage/kysely/` for both engines and held to this by
 * `test/storage/contract.ts`; the rules every store follows are in `core/storage/storage.ts`.
 */

/** An SMS kept in the sandbox outbox. */
export interface OutboxMessage {
  readonly id: string;
  readonly to: string;
  readonly body: string;
  readonly sentAt: number;
}

/** The sandbox SMS outbox. */
export interface SmsOutboxStore {
  insertOutboxMessage(message: OutboxMessage): Promise<void>;
  /** Messages to one number, newest first, at most `limit`. */
  listOutboxMessages(to: string, limit: number): Promise<OutboxMessage[]>;
  /** Deletes at most `limit` messages sent before `cutoff`; returns how many. */
  deleteOutboxMessagesSentBefore(cutoff: number, limit: number): Promise<number>;
}
