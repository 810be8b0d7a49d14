import type { AdminActionDeps } from '../../compose/command-deps.js';
import { userInfo } from 'node:os';
import { auditActor, type AuditActor } from '../../core/audit/audit-actor.js';
import { createAuditLog, type AuditEvent } from '../../core/audit/audit-log.js';
import type { Stores } from '../../core/storage/storage.js';

/** Who runs the command, as the audit log names it: `cli:<system user>`. */
export function cliActor(): AuditActor {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    name = 'unknown';
  }
  return auditActor({ kind: 'operator', name });
}

/** Records an admin action done by this command, in the transaction `tx` when given. */
export async function recordAdminAction(
  deps: AdminActionDeps,
  event: Omit<AuditEvent, 'actor' | 'outcome'>,
  tx?: Pick<Stores, 'audit'>,
): Promise<void> {
  await createAuditLog((tx ?? deps).audit, deps.clock).record({ ...event, actor: cliActor(), outcome: 'success' });
}
