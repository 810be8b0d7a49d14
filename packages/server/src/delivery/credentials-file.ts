import { constants } from 'node:fs';
import { access, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Key } from 'openpgp';

/** A refusal to deliver credentials; the message is one line for the operator. */
export class DeliveryError extends Error {
  override readonly name = 'DeliveryError';
}

/** Where and to whom credentials go (`--recipient-email`, `--recipient-key`, `--out`). */
export interface DeliveryTarget {
  readonly recipientEmail: string;
  readonly recipientKeyPath: string;
  readonly outPath: string;
}

/** What the credentials file says. */
export interface CredentialsFileContent {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly name: string;
  readonly environment: string;
  readonly authUrl: string;
  readonly baseUrl: string;
  /** `null` for a resource server, which has none. */
  readonly redirectUri: string | null;
  /** Only for a resource server (docs/resource-servers.md). */
  readonly kind?: 'resource_server';
  /** The client's scopes, only when it has some (docs/tokens.md, "Scopes"). */
  readonly scopes?: readonly string[];
  /** ISO 8601. */
  readonly issuedAt: string;
}

/** A recipient key checked and ready to encrypt to. */
export interface CheckedRecipient {
  readonly key: Key;
  readonly email: string;
  readonly fingerprint: string;
  readonly outPath: string;
}

/**
 * Checks everything before any secret is made: the key file is a public
 * OpenPGP key (not a private one), not revoked or expired at `now`, able to
 * encrypt, with `recipientEmail` in one of its valid user IDs; and `--out`
 * can be written without overwriting anything.
 *
 * @throws DeliveryError with a one-line reason.
 */
export async function checkRecipient(target: DeliveryTarget, now: Date): Promise<CheckedRecipient> {
  const email = target.recipientEmail.trim().toLowerCase();
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(email)) throw new DeliveryError(`--recipient-email "${target.recipientEmail}" is not an e-mail address`);

  let armored: string;
  try {
    armored = await readFile(target.recipientKeyPath, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new DeliveryError(
      code === 'ENOENT' ? `recipient key file ${target.recipientKeyPath} does not exist` : `cannot read recipient key file ${target.recipientKeyPath} (${code ?? 'error'})`,
    );
  }
  let key: Key;
  try {
    key = await (await openpgp()).readKey({ armoredKey: armored });
  } catch {
    throw new DeliveryError(`${target.recipientKeyPath} is not an ASCII-armored OpenPGP public key`);
  }
  if (key.isPrivate()) {
    throw new DeliveryError(`${target.recipientKeyPath} holds a private key; give the recipient's public key (gpg --export --armor)`);
  }
  if (await key.isRevoked(undefined, undefined, now)) throw new DeliveryError(`the recipient key ${key.getFingerprint().toUpperCase()} is revoked`);
  const expires = await key.getExpirationTime();
  if (expires instanceof Date && expires.getTime() <= now.getTime()) {
    throw new DeliveryError(`the recipient key ${key.getFingerprint().toUpperCase()} expired on ${expires.toISOString().slice(0, 10)}`);
  }
  if (!(await hasValidUserWithEmail(key, email, now))) {
    const ids = key.getUserIDs().join(', ') || 'none';
    throw new DeliveryError(`the recipient key has no valid user ID with ${email} (its user IDs: ${ids})`);
  }
  try {
    await key.getEncryptionKey(undefined, now);
  } catch {
    throw new DeliveryError(`the recipient key ${key.getFingerprint().toUpperCase()} cannot encrypt (no valid encryption subkey)`);
  }

  const outPath = resolve(target.outPath);
  if (await exists(outPath)) throw new DeliveryError(`--out ${target.outPath} exists already; choose a new file name`);
  try {
    const dir = dirname(outPath);
    if (!(await stat(dir)).isDirectory()) throw new Error('not a directory');
    await access(dir, constants.W_OK);
  } catch {
    throw new DeliveryError(`cannot write --out ${target.outPath}: its folder does not exist or is not writable`);
  }
  return { key, email, fingerprint: key.getFingerprint().toUpperCase(), outPath };
}

/**
 * The credentials file's plaintext: a short text for people and a JSON
 * block between marker lines for programs.
 */
export function credentialsText(content: CredentialsFileContent): string {
  return [
    `Connect API credentials (${content.environment})`,
    '',
    `These are the credentials of "${content.name}" for the Connect ${content.environment} environment.`,
    'Keep the client secret secret: store it in a secret manager, never in source code,',
    'tickets or chat. Anyone holding it can act as your application.',
    '',
    `Client ID:       ${content.clientId}`,
    `Client secret:   ${content.clientSecret}`,
    `Auth URL:        ${content.authUrl}`,
    `Base URL:        ${content.baseUrl}`,
    ...(content.kind === 'resource_server'
      ? ['Kind:            resource server (it checks tokens at the auth URL\'s /introspect and obtains none)']
      : [`Redirect URL:    ${content.redirectUri ?? '-'}`]),
    ...(content.scopes === undefined ? [] : [`Scopes:          ${content.scopes.join(' ')}`]),
    `Issued:          ${content.issuedAt}`,
    '',
    '-----BEGIN CONNECT CREDENTIALS JSON-----',
    JSON.stringify(content, null, 2),
    '-----END CONNECT CREDENTIALS JSON-----',
    '',
  ].join('\n');
}

/**
 * Encrypts the credentials to the recipient (ASCII armor, decryptable with
 * `gpg --decrypt`) and writes them to the checked `--out` path, mode 0600,
 * never overwriting a file.
 */
export async function writeCredentialsFile(recipient: CheckedRecipient, content: CredentialsFileContent, now: Date): Promise<void> {
  const { createMessage, encrypt } = await openpgp();
  const armored = await encrypt({
    message: await createMessage({ text: credentialsText(content) }),
    encryptionKeys: recipient.key,
    format: 'armored',
    date: now,
  });
  try {
    await writeFile(recipient.outPath, armored, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    throw new DeliveryError(`cannot write ${recipient.outPath} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/**
 * Removes a credentials file written for a change that was then not saved:
 * it would hold a secret that does not exist.
 *
 * @param cause why the change was not saved (its first line is shown).
 * @throws DeliveryError always: saying that nothing was saved and that the
 *   file was removed, or, if it could not be, naming it for the operator to
 *   delete.
 */
export async function removeCredentialsFile(recipient: CheckedRecipient, cause: unknown): Promise<never> {
  const reason = cause instanceof Error ? (cause.message.split('\n')[0] ?? 'error') : String(cause);
  try {
    await rm(recipient.outPath, { force: true });
  } catch (error) {
    throw new DeliveryError(
      `nothing was saved (${reason}), and ${recipient.outPath} could not be removed (${(error as NodeJS.ErrnoException).code ?? 'error'}): delete it, the secret in it does not exist`,
      { cause },
    );
  }
  throw new DeliveryError(`nothing was saved (${reason}); ${recipient.outPath} was removed again`, { cause });
}

/**
 * Whether a user ID with the address `email` (lower case) is valid at `now`:
 * self-certified, not revoked. OpenPGP.js compares addresses exactly, so each
 * spelling the key carries (`Alice@Example.COM`) is checked as written.
 */
async function hasValidUserWithEmail(key: Key, email: string, now: Date): Promise<boolean> {
  const spellings = new Set(key.users.map((user) => user.userID?.email ?? '').filter((address) => address.toLowerCase() === email));
  for (const spelling of spellings) {
    try {
      await key.getPrimaryUser(now, { email: spelling });
      return true;
    } catch {
      // Revoked or without a valid self-signature: try the next spelling.
    }
  }
  return false;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * OpenPGP.js, loaded by the commands that deliver credentials files only:
 * every other command and the server start without it.
 */
function openpgp(): Promise<typeof import('openpgp')> {
  return import('openpgp');
}
