import type { PurgeCommandDeps } from '../../compose/command-deps.js';
import { PURGE_KINDS, purgeExpired, type PurgeKind } from '../../core/retention/purge.js';
import type { CommandResult } from './output.js';

/** How the purge names each kind to people. */
export const PURGE_LABELS: Record<PurgeKind, string> = {
  authorizationCodes: 'authorization codes',
  authorizationRequests: 'authorization requests',
  customerSessions: 'customer sessions',
  otpChallenges: 'one-time PIN challenges',
  webauthnChallenges: 'passkey challenges',
  usedJtis: 'used assertion and proof IDs',
  pushedRequests: 'pushed authorization requests',
  tokenSessions: 'token sessions',
  revokedTokens: 'revoked tokens',
  idempotentRequests: 'stored /tokens responses',
  rateLimitCounters: 'rate-limit counters',
  smsOutbox: 'sandbox SMS messages',
  auditEvents: 'audit events',
};

/**
 * `purge`: deletes what has expired, in batches, and prints how many of
 * each (docs/operator-guide.md, "Retention"). A long run reports its
 * progress on `progress` (stderr) every 10,000 rows of a kind.
 */
export async function purgeCommand(deps: PurgeCommandDeps, progress: (line: string) => void): Promise<CommandResult> {
  const now = deps.clock.nowSeconds();
  const counts = await purgeExpired(deps.stores, {
    now,
    sessionIdleSeconds: deps.sessionIdleSeconds,
    auditRetentionDays: deps.auditRetentionDays,
    onProgress: (kind, soFar) => {
      if (soFar % 10_000 === 0) progress(`purge: ${soFar} ${PURGE_LABELS[kind]} deleted so far\n`);
    },
  });
  const width = Math.max(...PURGE_KINDS.map((kind) => PURGE_LABELS[kind].length)) + 2;
  const text = PURGE_KINDS.map((kind) => `${`${PURGE_LABELS[kind]}:`.padEnd(width)}${counts[kind]}`).join('\n') + '\n';
  return { json: { deleted: counts }, text };
}
