import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey, readKey } from 'openpgp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryError, removeCredentialsFile, type CheckedRecipient } from '../../../src/delivery/credentials-file.js';

// What the CLI does with a credentials file it wrote for a change the
// database then refused: the file holds a secret that does not exist.
describe('removeCredentialsFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'connect-remove-'));
  let recipient: Omit<CheckedRecipient, 'outPath'>;
  const refused = new Error('FOREIGN KEY constraint failed\nat COMMIT');

  beforeAll(async () => {
    const { publicKey } = await generateKey({ type: 'curve25519', userIDs: [{ email: 'alice@example.com' }], format: 'armored' });
    const key = await readKey({ armoredKey: publicKey });
    recipient = { key, email: 'alice@example.com', fingerprint: key.getFingerprint().toUpperCase() };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('removes the file and says that nothing was saved, with the first line of the reason', async () => {
    const outPath = join(dir, 'acme.asc');
    writeFileSync(outPath, 'encrypted credentials');
    const error = await removeCredentialsFile({ ...recipient, outPath }, refused).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as Error).message).toBe(`nothing was saved (FOREIGN KEY constraint failed); ${outPath} was removed again`);
    expect((error as Error).cause).toBe(refused);
    expect(existsSync(outPath)).toBe(false);
  });

  it('names the file for the operator to delete when it cannot be removed', async () => {
    // A directory where the file was: rm without `recursive` refuses it, even for root.
    const outPath = join(dir, 'stuck.asc');
    mkdirSync(outPath);
    const error = await removeCredentialsFile({ ...recipient, outPath }, refused).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as Error).message).toBe(
      `nothing was saved (FOREIGN KEY constraint failed), and ${outPath} could not be removed (ERR_FS_EISDIR): delete it, the secret in it does not exist`,
    );
    expect((error as Error).cause).toBe(refused);
    expect(existsSync(outPath)).toBe(true);
  });
});
