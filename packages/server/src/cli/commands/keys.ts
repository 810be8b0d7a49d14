import { rotateKeys } from '../../core/keys/key-ring.js';
import { displayStatus } from '../../core/keys/signing-key.js';
import { maxTokenTtlSeconds, type Runtime } from '../../compose/runtime.js';
import { recordAdminAction } from './audit-actor.js';
import { isoTime, type CommandResult } from './output.js';

/** `keys list`: every key with its status (active, retired and still verifying, or expired). */
export async function listKeysCommand(runtime: Runtime): Promise<CommandResult> {
  const now = runtime.clock.nowSeconds();
  const keys = (await runtime.storage.keys.listKeys()).map((k) => ({
    kid: k.kid,
    alg: k.alg,
    use: k.use,
    status: displayStatus(k, now),
    createdAt: isoTime(k.createdAt),
    ...(k.verifyUntil !== null ? { verifyUntil: isoTime(k.verifyUntil) } : {}),
  }));
  const text =
    keys.length === 0
      ? 'no keys yet; the server creates the first signing key when it starts\n'
      : keys
          .map((k) => `${k.kid}  ${k.alg}  ${k.use}  ${k.status.padEnd(7)}  created ${k.createdAt}${k.verifyUntil ? `  verifies until ${k.verifyUntil}` : ''}`)
          .join('\n') + '\n';
  return { json: keys, text };
}

/** `keys rotate`: a new active signing key; the old ones verify until their tokens expire. */
export async function rotateKeysCommand(runtime: Runtime): Promise<CommandResult> {
  const key = await rotateKeys(runtime, maxTokenTtlSeconds(runtime.config), (tx, newKey) =>
    recordAdminAction(runtime, { type: 'keys.rotated', subject: newKey.kid }, tx),
  );
  return {
    json: { kid: key.kid, alg: key.alg, use: key.use, status: key.status, createdAt: isoTime(key.createdAt) },
    text: `new signing key ${key.kid} (${key.alg}) and a new token encryption key are active; running servers use them within 60 seconds\n`,
  };
}
