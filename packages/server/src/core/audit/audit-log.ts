import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { AuditActor } from './audit-actor.js';

/** Everything the audit log records: admin actions and security events. */
export type AuditEventType =
  | 'client.created'
  | 'client.updated'
  | 'client.disabled'
  | 'client.enabled'
  | 'client.secret_rotated'
  | 'customer.created'
  | 'customer.locked'
  | 'customer.unlocked'
  | 'customer.pin_reset'
  | 'customer.passkey_removed'
  | 'customer.passkey_added'
  | 'customer.passkey_used'
  | 'customer.passkey_refused'
  | 'keys.rotated'
  | 'keys.activated'
  | 'keys.revoked'
  | 'master_key.rotated'
  | 'master_key.retired'
  | 'client.authentication_failed'
  | 'customer.pin_lockout'
  | 'otp.exhausted'
  | 'code.replayed'
  | 'refresh_token.revoked_use'
  | 'sms.send_failed'
  | 'sms.budget_spent';

/** Every event type, for validating `audit --type`. */
export const AUDIT_EVENT_TYPES: readonly AuditEventType[] = [
  'client.created',
  'client.updated',
  'client.disabled',
  'client.enabled',
  'client.secret_rotated',
  'customer.created',
  'customer.locked',
  'customer.unlocked',
  'customer.pin_reset',
  'customer.passkey_removed',
  'customer.passkey_added',
  'customer.passkey_used',
  'customer.passkey_refused',
  'keys.rotated',
  'keys.activated',
  'keys.revoked',
  'master_key.rotated',
  'master_key.retired',
  'client.authentication_failed',
  'customer.pin_lockout',
  'otp.exhausted',
  'code.replayed',
  'refresh_token.revoked_use',
  'sms.send_failed',
  'sms.budget_spent',
];

/** One thing that happened. Details hold identifiers and reasons, never a secret, token, PIN or code. */
export interface AuditEvent {
  readonly type: AuditEventType;
  /** Who did it: `cli:<user>`, `client:<id>`, `ip:<address>`, `system` (`auditActor` renders one). */
  readonly actor: AuditActor;
  /** What it was done to: a client ID, profile ID, `kid`, ... */
  readonly subject: string | null;
  readonly outcome: 'success' | 'failure';
  readonly details?: Readonly<Record<string, string | number | boolean | null>>;
  /** The ID of the request that caused it (its `X-Request-Id`), when a request did. */
  readonly requestId?: string | undefined;
}

/**
 * An event as stored. Its `actor` is a string: what this version records
 * is an {@link AuditActor}, what the store lists is whatever it holds.
 */
export interface AuditRecord extends Omit<AuditEvent, 'actor'> {
  readonly actor: string;
  readonly id: string;
  /** Epoch seconds. */
  readonly at: number;
}

/** Where audit records are kept (`core/storage/storage.ts` has the engine-backed one). */
export interface AuditStore {
  insertAuditEvent(record: AuditRecord): Promise<void>;
  /**
   * Inserts `record` with a count of 1 or, when a record with its ID
   * exists, adds one to that record's count (and changes nothing else), in
   * one atomic statement. Listed, the count is `details.count`.
   */
  countAuditEvent(record: AuditRecord): Promise<void>;
  /** The newest `limit` records at or after `since` (of one type when given), listed oldest first. */
  listAuditEvents(filter: { since?: number; type?: AuditEventType; limit: number }): Promise<AuditRecord[]>;
  /** Deletes at most `limit` records with `at < cutoff`; returns how many. */
  deleteAuditEventsBefore(cutoff: number, limit: number): Promise<number>;
}

/** Records audit events. */
export interface AuditLog {
  record(event: AuditEvent): Promise<void>;
  /**
   * Records a repeated event (a failed client authentication) as one event
   * per minute: the first of a minute with the same type, actor, subject
   * and details is written at once, with `count` 1; each further one in that
   * minute adds one to its `count`; the next minute starts a new event.
   */
  recordRepeated(event: AuditEvent): Promise<void>;
  /**
   * Records `event` in `store`, a transaction's: the event is written with
   * the step's other writes or not at all. A failed write is thrown (and so
   * rolls the step back), never only reported.
   */
  recordIn(store: Pick<AuditStore, 'insertAuditEvent'>, event: AuditEvent): Promise<void>;
}

/**
 * The audit log over a store. Record IDs sort in the order events were
 * recorded (time, then a per-process counter, then randomness).
 * With `onError`, a failed write is reported there instead of failing the
 * caller: a security event must never turn a refusal into a server error.
 */
export function createAuditLog(store: Pick<AuditStore, 'insertAuditEvent' | 'countAuditEvent'>, clock: Clock, onError?: (error: unknown) => void): AuditLog {
  let counter = 0;
  const stamped = (event: AuditEvent): AuditRecord => {
    const at = clock.nowSeconds();
    counter = (counter + 1) % 0x1000000;
    return { ...event, id: `${at.toString(16).padStart(12, '0')}${counter.toString(16).padStart(6, '0')}${randomBytes(6).toString('hex')}`, at };
  };
  return {
    async recordRepeated(event) {
      const at = clock.nowSeconds();
      const minute = at - (at % 60);
      // The same ID for every instance and every repeat within the minute: the
      // minute (so IDs still sort by time), then a digest of what repeats.
      const what = JSON.stringify([event.type, event.actor, event.subject, event.outcome, event.details ?? null]);
      const id = `${minute.toString(16).padStart(12, '0')}000000${createHash('sha256').update(what).digest('hex').slice(0, 24)}`;
      try {
        await store.countAuditEvent({ ...event, id, at });
      } catch (error) {
        if (!onError) throw error;
        onError(error);
      }
    },
    async record(event) {
      try {
        await store.insertAuditEvent(stamped(event));
      } catch (error) {
        if (!onError) throw error;
        onError(error);
      }
    },
    async recordIn(transaction, event) {
      await transaction.insertAuditEvent(stamped(event));
    },
  };
}
