import type { Clock } from '../clock.js';
import { InvalidClient } from '../errors.js';
import { auditActor, type AuditActor } from './audit-actor.js';
import type { AuditEvent, AuditLog } from './audit-log.js';

/**
 * Distinct failure events one instance writes per minute before it folds
 * further ones into one event per method and reason (docs/operator-guide.md,
 * "The audit log").
 */
export const AUTH_FAILURE_GROUPS_PER_MINUTE = 100;

/** The actor of the events that collect the failures past the per-minute bound: many addresses. */
export const MANY_ADDRESSES_ACTOR: AuditActor = auditActor({ kind: 'address', ip: '*' });

/** Where a failed client authentication came from. */
export interface ClientAuthFailureSource {
  /** The client address, when known. */
  readonly ip?: string | undefined;
  /** The request's ID (`X-Request-Id`). */
  readonly correlationId?: string | undefined;
}

/** Options of {@link createClientAuthFailureAudit}. */
export interface ClientAuthFailureAuditOptions {
  /** Distinct events per minute before folding; default {@link AUTH_FAILURE_GROUPS_PER_MINUTE}. */
  readonly groupsPerMinute?: number;
}

/**
 * Records failed client authentications (`/token`, `/introspect`,
 * `/revoke`) so that a flood writes a bounded number of audit rows:
 *
 * - a client that exists here (a wrong secret, a disabled client) is
 *   recorded under its ID, one event per address, method, reason and
 *   minute (`recordRepeated` counts the repeats);
 * - an ID that names no client here (made up, or another environment's) is
 *   not recorded: its failures are one event per address, method, reason
 *   and minute, with `subject` null and `client: 'unknown'`, so a flood of
 *   made-up IDs from one address is one row a minute;
 * - once this instance has written `groupsPerMinute` distinct events in a
 *   minute, a failure that would open another one (a flood from rotating
 *   addresses) is counted in the minute's event of actor `ip:*` for its
 *   client (or `null`), method and reason instead.
 *
 * So one instance writes at most `groupsPerMinute` events a minute, plus
 * one per method and reason for the made-up IDs past them, plus one per
 * existing client, method and reason (a bounded set the operator made),
 * whatever the flood. Every failure is still counted.
 */
export function createClientAuthFailureAudit(
  audit: Pick<AuditLog, 'recordRepeated'>,
  clock: Clock,
  options: ClientAuthFailureAuditOptions = {},
): (error: InvalidClient, source: ClientAuthFailureSource) => Promise<void> {
  const bound = options.groupsPerMinute ?? AUTH_FAILURE_GROUPS_PER_MINUTE;
  let minute = Number.NaN;
  const opened = new Set<string>();

  return async (error, source) => {
    const known = error.claimedClientKnown && error.claimedClientId !== undefined;
    const subject = known ? (error.claimedClientId as string) : null;
    // An ID that names no client here is not kept: only that there was one.
    const details: AuditEvent['details'] =
      known || error.claimedClientId === undefined
        ? { method: error.attemptedMethod, reason: error.description }
        : { method: error.attemptedMethod, reason: error.description, client: 'unknown' };
    const actor = auditActor({ kind: 'address', ip: source.ip ?? 'unknown' });

    const now = clock.nowSeconds();
    const thisMinute = now - (now % 60);
    if (thisMinute !== minute) {
      minute = thisMinute;
      opened.clear();
    }
    const group = JSON.stringify([actor, subject, details]);
    let folded = false;
    if (!opened.has(group)) {
      if (opened.size < bound) opened.add(group);
      else folded = true;
    }
    await audit.recordRepeated({
      type: 'client.authentication_failed',
      actor: folded ? MANY_ADDRESSES_ACTOR : actor,
      subject,
      outcome: 'failure',
      details,
      requestId: source.correlationId,
    });
  };
}

/**
 * Client authentication whose failures are audited: every `InvalidClient`
 * it throws is recorded by {@link createClientAuthFailureAudit} (a bounded
 * number of events per minute, docs/operator-guide.md, "The audit log")
 * before it is thrown on; other errors pass through unrecorded.
 */
export function auditClientAuthFailures<Input extends ClientAuthFailureSource, Authenticated>(
  authenticate: (input: Input) => Promise<Authenticated>,
  audit: Pick<AuditLog, 'recordRepeated'>,
  clock: Clock,
  options: ClientAuthFailureAuditOptions = {},
): (input: Input) => Promise<Authenticated> {
  const recordFailure = createClientAuthFailureAudit(audit, clock, options);
  return async (input) => {
    try {
      return await authenticate(input);
    } catch (error) {
      if (error instanceof InvalidClient) await recordFailure(error, input);
      throw error;
    }
  };
}
