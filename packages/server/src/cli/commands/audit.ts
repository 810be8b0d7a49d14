import type { AuditCommandDeps } from '../../compose/command-deps.js';
import { AUDIT_EVENT_TYPES, type AuditEventType } from '../../core/audit/audit-log.js';
import { isoTime, printable, UsageError, type CommandResult } from './output.js';

/**
 * `audit [--since WHEN] [--type TYPE] [--limit N]`: the audit log, oldest
 * first; with more than N events in the window, the newest N. WHEN is an ISO date or time (`2026-11-01`, `2026-11-01T08:00:00Z`)
 * or a duration back from now (`90m`, `24h`, `7d`); default the last 24 hours.
 */
export async function auditCommand(
  deps: AuditCommandDeps,
  options: { since?: string | undefined; type?: string | undefined; limit?: string | undefined },
): Promise<CommandResult> {
  const now = deps.clock.nowSeconds();
  const since = options.since === undefined ? now - 86_400 : parseSince(options.since, now);
  if (options.type !== undefined && !AUDIT_EVENT_TYPES.includes(options.type as AuditEventType)) {
    throw new UsageError(`unknown --type ${JSON.stringify(options.type)}; types are ${AUDIT_EVENT_TYPES.join(', ')}`);
  }
  const limit = options.limit === undefined ? 1000 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) throw new UsageError('--limit must be a whole number from 1 to 100000');
  const events = await deps.audit.listAuditEvents({
    since,
    ...(options.type ? { type: options.type as AuditEventType } : {}),
    limit,
  });
  const json = events.map((e) => ({
    at: isoTime(e.at),
    type: e.type,
    actor: e.actor,
    subject: e.subject,
    outcome: e.outcome,
    details: e.details ?? {},
    requestId: e.requestId ?? null,
  }));
  const text =
    json.length === 0
      ? `no audit events since ${isoTime(since)}\n`
      : json
          .map((e) => {
            const details = Object.entries(e.details).map(([k, v]) => `${k}=${String(v)}`).join(' ');
            return printable(`${e.at}  ${e.type.padEnd(29)} ${e.outcome.padEnd(7)} ${e.actor}  ${e.subject ?? '-'}${details ? `  ${details}` : ''}${e.requestId ? `  request=${e.requestId}` : ''}`);
          })
          .join('\n') + '\n';
  return { json, text };
}

function parseSince(value: string, now: number): number {
  const duration = /^(\d+)([smhd])$/.exec(value);
  if (duration) {
    const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[duration[2] as 's' | 'm' | 'h' | 'd'];
    return now - Number(duration[1]) * unit;
  }
  // Date.parse rolls a day past the month's end over (2026-02-30 → March 2); such a date is refused.
  const day = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  const lastOfMonth = day ? new Date(Date.UTC(Number(day[1]), Number(day[2]), 0)).getUTCDate() : 0;
  const parsed = day && Number(day[3]) <= lastOfMonth ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(parsed)) throw new UsageError('--since must be an ISO date or time (2026-11-01, 2026-11-01T08:00:00Z) or a duration (90m, 24h, 7d)');
  return Math.floor(parsed / 1000);
}
