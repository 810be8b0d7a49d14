import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { noteSkipped } from './skip-notices.js';

/**
 * Real GnuPG for the credential delivery tests: keys are made and files
 * decrypted with `gpg` itself, the tool a recipient would use.
 */

/** Whether `gpg` runs on this machine. */
export const GPG_AVAILABLE = (() => {
  try {
    return spawnSync('gpg', ['--version'], { encoding: 'utf8' }).status === 0;
  } catch {
    return false;
  }
})();

/**
 * Whether tests that need GnuPG can run. Without `gpg` they are skipped and
 * the run names GnuPG once at its end on a developer machine
 * (test/helpers/skip-notices.ts), and fail in CI (`CI` set), where the
 * package gnupg must be installed.
 */
export function gpgForTests(file: string): boolean {
  if (GPG_AVAILABLE) return true;
  const message = `${file}: GnuPG (gpg) is not installed; install the Debian package gnupg to run these tests`;
  if (process.env.CI) throw new Error(message);
  noteSkipped('GnuPG', file);
  return false;
}

/** What `gpg` printed. */
export interface GpgRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A key to make: an ed25519 or RSA primary key with one user ID. */
export interface KeySpec {
  /** `Name <email>`. */
  readonly userId: string;
  /** `ed25519` (signing primary, cv25519 encryption subkey) or `rsa` (gpg's default RSA 3072 pair). */
  readonly algorithm?: 'ed25519' | 'rsa';
  /** Add an encryption subkey (default true). */
  readonly encrypt?: boolean;
  /** Expiry of the primary key, as gpg takes it: `1y`, `30d`, `never` (default `1y`). */
  readonly expiry?: string;
  /** Expiry of the encryption subkey (default: as the primary key). */
  readonly subkeyExpiry?: string;
  /** Make the key as if it were this time (gpg `--faked-system-time`, `YYYYMMDDTHHMMSS`). */
  readonly madeAt?: string;
}

/** A throw-away GnuPG home folder (mode 0700) with the keys a test file needs. */
export class GnupgHome {
  private constructor(readonly dir: string) {}

  static create(): GnupgHome {
    const dir = mkdtempSync(join(tmpdir(), 'connect-gpg-'));
    chmodSync(dir, 0o700);
    return new GnupgHome(dir);
  }

  /** Runs gpg on this home, without prompts; does not throw. */
  run(args: readonly string[], input?: string): GpgRun {
    const result = spawnSync('gpg', ['--homedir', this.dir, '--batch', '--no-tty', '--pinentry-mode', 'loopback', '--passphrase', '', ...args], {
      encoding: 'utf8',
      env: { ...process.env, GNUPGHOME: this.dir, LC_ALL: 'C' },
      timeout: 60_000,
      ...(input === undefined ? {} : { input }),
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  /** Runs gpg and throws with its messages when it fails. */
  gpg(args: readonly string[], input?: string): string {
    const result = this.run(args, input);
    if (result.status !== 0) throw new Error(`gpg ${args.join(' ')} failed (${String(result.status)}): ${result.stderr}`);
    return result.stdout;
  }

  /** Makes a key; returns its fingerprint. */
  generateKey(spec: KeySpec): string {
    const faked = spec.madeAt ? ['--faked-system-time', `${spec.madeAt}!`] : [];
    const expiry = spec.expiry ?? '1y';
    if (spec.algorithm === 'rsa') {
      if (spec.encrypt === false) this.gpg([...faked, '--quick-gen-key', spec.userId, 'rsa3072', 'sign', expiry]);
      else this.gpg([...faked, '--quick-gen-key', spec.userId, 'default', 'default', expiry]);
    } else {
      this.gpg([...faked, '--quick-gen-key', spec.userId, 'ed25519', 'sign', expiry]);
    }
    const fingerprint = this.fingerprintOf(spec.userId);
    if (spec.algorithm !== 'rsa' && spec.encrypt !== false) {
      this.gpg([...faked, '--quick-add-key', fingerprint, 'cv25519', 'encr', spec.subkeyExpiry ?? expiry]);
    }
    return fingerprint;
  }

  /** Adds a user ID to a key. */
  addUserId(fingerprint: string, userId: string): void {
    this.gpg(['--quick-add-uid', fingerprint, userId]);
  }

  /** Revokes one user ID of a key. */
  revokeUserId(fingerprint: string, userId: string): void {
    this.gpg(['--quick-revoke-uid', fingerprint, userId]);
  }

  /**
   * Revokes a whole key by importing the revocation certificate gpg made
   * with it (its guard colon removed, as the certificate's text says).
   */
  revokeKey(fingerprint: string): void {
    const certificate = readFileSync(join(this.dir, 'openpgp-revocs.d', `${fingerprint}.rev`), 'utf8').replace(/^:-----BEGIN/m, '-----BEGIN');
    this.gpg(['--import'], certificate);
  }

  /** The public key, ASCII-armored (`gpg --armor --export`). */
  exportPublic(fingerprint: string): string {
    return this.gpg(['--armor', '--export', fingerprint]);
  }

  /** The private key, ASCII-armored (`gpg --armor --export-secret-keys`). */
  exportSecret(fingerprint: string): string {
    return this.gpg(['--armor', '--export-secret-keys', fingerprint]);
  }

  /** Writes the public key to `path`; returns the path. */
  writePublic(fingerprint: string, path: string): string {
    writeFileSync(path, this.exportPublic(fingerprint));
    return path;
  }

  /** `gpg --decrypt FILE`, as the recipient would. */
  decrypt(path: string): GpgRun {
    return this.run(['--decrypt', path]);
  }

  /** The key IDs a message is encrypted to (`gpg --list-packets`). */
  recipientsOf(path: string): string[] {
    const listed = this.run(['--list-only', '--list-packets', path]);
    return [...`${listed.stdout}\n${listed.stderr}`.matchAll(/pubkey enc packet: version \d+, algo \d+, keyid ([0-9A-F]{16})/gi)].map((m) =>
      (m[1] as string).toUpperCase(),
    );
  }

  /** The key IDs of a key's encryption subkeys. */
  encryptionKeyIds(fingerprint: string): string[] {
    return this.gpg(['--with-colons', '--list-keys', fingerprint])
      .split('\n')
      .map((line) => line.split(':'))
      .filter((fields) => (fields[0] === 'sub' || fields[0] === 'pub') && (fields[11] ?? '').includes('e'))
      .map((fields) => (fields[4] as string).toUpperCase());
  }

  /** Stops the GnuPG daemons of this home and deletes the folder. */
  remove(): void {
    spawnSync('gpgconf', ['--homedir', this.dir, '--kill', 'all'], { env: { ...process.env, GNUPGHOME: this.dir } });
    rmSync(this.dir, { recursive: true, force: true });
  }

  private fingerprintOf(userId: string): string {
    const email = /<([^>]+)>/.exec(userId)?.[1] ?? userId;
    const lines = this.gpg(['--with-colons', '--list-keys', `=${userId}`]).split('\n');
    const fpr = lines.find((line) => line.startsWith('fpr:'))?.split(':')[9];
    if (!fpr) throw new Error(`no fingerprint for ${email}`);
    return fpr;
  }
}

/** Files in a folder, for checking that nothing was written. */
export function filesIn(dir: string): string[] {
  return readdirSync(dir).sort();
}
