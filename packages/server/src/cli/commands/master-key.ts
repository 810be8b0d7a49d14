import type { MasterKeyCommandDeps } from '../../compose/command-deps.js';
import type { SealedKind } from '../../core/keys/master-key-store.js';
import { masterKeyStatus, retireMasterKey, rotateMasterKey, SEALED_KINDS, type ResealCount } from '../../core/keys/master-key-rotation.js';
import { recordAdminAction } from './audit-actor.js';
import { isoTime, printable, type CommandResult } from './output.js';

const PROGRESS_EVERY = 1000;

/** How each kind of sealed value is named for people. */
const KIND_NAMES: Record<SealedKind, string> = {
  'signing-key': 'signing and encryption keys',
  'idempotent-response': 'stored /tokens responses',
  'refresh-reuse': 'access tokens kept for refresh reuse',
};

/**
 * `master-key rotate`: the new key (`CONNECT_MASTER_KEY`) becomes the
 * writing one and every sealed value is re-sealed under it; progress goes
 * to `progress` (stderr), the summary to stdout. Run again after an
 * interruption: it finishes.
 */
export async function rotateMasterKeyCommand(deps: MasterKeyCommandDeps, progress: (line: string) => void): Promise<CommandResult> {
  // Progress on stderr every 1,000 values of a kind, as purge does: a large table takes a while.
  const printed = new Map<SealedKind, number>();
  const outcome = await rotateMasterKey(deps, (kind, count) => {
    const seen = count.already + count.resealed + count.changed + count.unreadable;
    if (seen - (printed.get(kind) ?? 0) < PROGRESS_EVERY) return;
    printed.set(kind, seen);
    progress(`master-key rotate: ${KIND_NAMES[kind]}: ${count.resealed} re-sealed, ${count.already} already under the new key so far\n`);
  });
  await deps.requireThisRelease();
  if (outcome.switched) {
    await recordAdminAction(deps, { type: 'master_key.rotated', subject: outcome.to, details: { from: outcome.from } });
  }
  const lines = [
    outcome.switched
      ? `master key ${outcome.to} now writes on every running server (within a second); ${outcome.from} is still accepted until master-key retire`
      : `master key ${outcome.to} already wrote (an earlier run switched to it); re-sealed what was left`,
    ...SEALED_KINDS.map((kind) => `  ${KIND_NAMES[kind]}: ${describeCount(outcome.sealed[kind])}`),
    outcome.clientsOnOldKey.length === 0
      ? '  client secrets: all hashed under the new key'
      : `  client secrets: ${outcome.clientsOnOldKey.length} still hashed under the previous key; each moves at its next authentication`,
  ];
  return {
    json: { switched: outcome.switched, writing: outcome.to, previous: outcome.from, sealed: outcome.sealed, clientsOnPreviousKey: outcome.clientsOnOldKey },
    text: lines.map(printable).join('\n') + '\n',
  };
}

/** `master-key status`: the keys the database knows and what still depends on a key other than the writing one. */
export async function masterKeyStatusCommand(deps: MasterKeyCommandDeps): Promise<CommandResult> {
  const status = await masterKeyStatus(deps);
  const configured = (fingerprint: string) =>
    fingerprint === status.current ? '  (CONNECT_MASTER_KEY)' : fingerprint === status.previous ? '  (CONNECT_PREVIOUS_MASTER_KEY)' : '';
  const lines = status.keys.map((k) => `${k.fingerprint}  ${k.state.padEnd(8)}  since ${isoTime(k.changedAt)}${configured(k.fingerprint)}`);
  if (status.sealedOnOtherKeys) {
    for (const kind of SEALED_KINDS) lines.push(`  ${KIND_NAMES[kind]} not under the writing key: ${status.sealedOnOtherKeys[kind]}`);
  } else {
    lines.push('  (sealed values not counted: this command does not hold the writing key)');
  }
  lines.push(`  client secrets not under the writing key: ${status.clientsOnOtherKeys.length}${status.clientsOnOtherKeys.length > 0 ? ` (${status.clientsOnOtherKeys.map((c) => c.id).join(', ')})` : ''}`);
  return {
    json: {
      keys: status.keys.map((k) => ({ fingerprint: k.fingerprint, state: k.state, recordedAt: isoTime(k.recordedAt), changedAt: isoTime(k.changedAt) })),
      current: status.current,
      previous: status.previous ?? null,
      sealedNotUnderWritingKey: status.sealedOnOtherKeys ?? null,
      clientsNotUnderWritingKey: status.clientsOnOtherKeys,
    },
    text: lines.map(printable).join('\n') + '\n',
  };
}

/** `master-key retire [--force]`: the previous key is no longer accepted anywhere, within a second. */
export async function retireMasterKeyCommand(deps: MasterKeyCommandDeps, options: { force?: boolean | undefined }): Promise<CommandResult> {
  const outcome = await retireMasterKey(deps, options);
  await recordAdminAction(deps, {
    type: 'master_key.retired',
    subject: outcome.retired,
    details: { clientsCutOff: outcome.clientsCutOff.map((c) => c.id).join(' ') },
  });
  const resealed = SEALED_KINDS.reduce((sum, kind) => sum + outcome.sealed[kind].resealed, 0);
  const lines = [
    `master key ${outcome.retired} is retired: no running server accepts it any more (within a second); remove CONNECT_PREVIOUS_MASTER_KEY from the configuration`,
    ...(resealed > 0 ? [`  re-sealed first: ${resealed} value(s) still sealed under it`] : []),
    ...(outcome.clientsCutOff.length > 0 ? [`  cut off (--force): ${outcome.clientsCutOff.map((c) => c.id).join(', ')}; give them new secrets with clients rotate-secret`] : []),
  ];
  return { json: { retired: outcome.retired, sealed: outcome.sealed, clientsCutOff: outcome.clientsCutOff }, text: lines.map(printable).join('\n') + '\n' };
}

function describeCount(count: ResealCount): string {
  const parts = [`${count.resealed} re-sealed`, `${count.already} already under the new key`];
  if (count.changed > 0) parts.push(`${count.changed} changed meanwhile (run rotate again)`);
  if (count.unreadable > 0) parts.push(`${count.unreadable} opened by neither key`);
  return parts.join(', ');
}
