import type { KeyCommandDeps } from '../../compose/command-deps.js';
import { activateKeysNow, revokeKey, rotateKeys, type RotationPolicy, type RotationResult } from '../../core/keys/key-rotation.js';
import { displayStatus, type KeyDisplayStatus, type SigningKeyRecord } from '../../core/keys/signing-key.js';
import { recordAdminAction } from './audit-actor.js';
import { isoTime, printable, UsageError, type CommandResult } from './output.js';

/** How one key is shown by `keys list` and `keys rotate`. */
function keyView(key: SigningKeyRecord, status: KeyDisplayStatus) {
  return {
    kid: key.kid,
    alg: key.alg,
    use: key.use,
    status,
    createdAt: isoTime(key.createdAt),
    activatesAt: isoTime(key.activatesAt),
    ...(key.verifyUntil !== null && status !== 'revoked' ? { verifyUntil: isoTime(key.verifyUntil) } : {}),
  };
}

/** `keys list`: every key with its status (next, active, retired, expired or revoked). */
export async function listKeysCommand(deps: KeyCommandDeps): Promise<CommandResult> {
  const now = deps.clock.nowSeconds();
  const records = await deps.keys.listKeys();
  const keys = records.map((k) => keyView(k, displayStatus(k, records, now)));
  const text =
    keys.length === 0
      ? 'no keys yet; the server creates the first signing key when it starts\n'
      : keys
          .map((k) => {
            const when = k.status === 'next' ? `  activates ${k.activatesAt}` : '';
            const until = k.verifyUntil && k.status !== 'expired' ? `  verifies until ${k.verifyUntil}` : '';
            return printable(`${k.kid}  ${k.alg}  ${k.use}  ${k.status.padEnd(7)}  created ${k.createdAt}${when}${until}`);
          })
          .join('\n') + '\n';
  return { json: keys, text };
}

/**
 * `keys rotate [--now]`: new signing and encryption keys, published at once
 * and signing once every cached JWKS copy has expired; `--now` activates
 * them (or a pending rotation) at once.
 */
export async function rotateKeysCommand(deps: KeyCommandDeps, values: { now?: boolean | undefined }): Promise<CommandResult> {
  const { policy } = deps;
  const result = values.now
    ? await activateKeysNow(deps, policy, (tx, done) =>
        recordAdminAction(deps, { type: 'keys.activated', subject: signingKid(done), details: rotationDetails(done) }, tx),
      )
    : await rotateKeys(deps, policy, (tx, done) =>
        recordAdminAction(deps, { type: 'keys.rotated', subject: signingKid(done), details: rotationDetails(done) }, tx),
      );
  const now = deps.clock.nowSeconds();
  const signing = result.keys.find((k) => k.use === 'sig') ?? (result.keys[0] as SigningKeyRecord);
  const status: KeyDisplayStatus = result.activatesAt > now ? 'next' : 'active';
  const when = isoTime(result.activatesAt);
  let text: string;
  if (status === 'next') {
    text =
      `new signing key ${signing.kid} (${signing.alg}) and a new token encryption key are published now and ` +
      `become the signing keys at ${when} (in ${result.activatesAt - now} s, once every cached copy of the JWKS has expired)\n`;
  } else if (!values.now) {
    text = `new signing key ${signing.kid} (${signing.alg}) and a new token encryption key are active\n`;
  } else {
    text =
      `${result.created ? 'new ' : 'pending '}signing key ${signing.kid} (${signing.alg}) and its token encryption key are active now; ` +
      `running servers switch within a second, and a verifier holding an older copy of the JWKS ` +
      `may refuse the new key's tokens until that copy expires\n`;
  }
  return { json: { ...keyView(signing, status), encryptionKid: result.keys.find((k) => k.use === 'enc')?.kid ?? null }, text };
}

/** `keys revoke KID`: the key leaves the JWKS and its tokens are refused; a pending key's rotation is cancelled. */
export async function revokeKeyCommand(deps: KeyCommandDeps, kid: string | undefined): Promise<CommandResult> {
  if (!kid) throw new UsageError('keys revoke needs the kid of the key (see keys list)');
  const result = await revokeKey(deps, kid, (tx, done) => {
    const [named, ...others] = done.revoked;
    return recordAdminAction(
      deps,
      {
        type: 'keys.revoked',
        subject: kid,
        details: { use: named?.use ?? null, cancelled_rotation: done.cancelledRotation, also_revoked: others.map((k) => k.kid).join(' ') || null },
      },
      tx,
    );
  });
  const json = {
    kid,
    status: 'revoked',
    alreadyRevoked: result.alreadyRevoked,
    cancelledRotation: result.cancelledRotation,
    revoked: result.revoked.map((k) => k.kid),
  };
  if (result.alreadyRevoked) return { json, text: `key ${kid} was revoked already; nothing changed\n` };
  const others = result.revoked.slice(1).map((k) => k.kid);
  const text = result.cancelledRotation
    ? `key ${kid}${others.length ? ` and key ${others.join(', ')}` : ''} revoked: the pending rotation is cancelled and the current keys go on signing\n`
    : `key ${kid} revoked: it left the JWKS, and running servers refuse every token it signed or encrypted within a second\n`;
  return { json, text };
}

function signingKid(result: RotationResult): string {
  return (result.keys.find((k) => k.use === 'sig') ?? result.keys[0])?.kid ?? '';
}

function rotationDetails(result: RotationResult) {
  return {
    activates_at: isoTime(result.activatesAt),
    encryption_kid: result.keys.find((k) => k.use === 'enc')?.kid ?? null,
    created: result.created,
  };
}
