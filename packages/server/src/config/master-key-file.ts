import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MASTER_KEY_BYTES } from '../core/keys/master-key.js';
import { ConfigError } from './load.js';
import type { Config } from './schema.js';

/** The file the sandbox keeps its generated master key in, inside the data folder. */
export const MASTER_KEY_FILE = 'master-key.sandbox';

/**
 * The master key to use: `CONNECT_MASTER_KEY` when set; in the sandbox
 * otherwise the key in the data folder, generated (mode 0600) on first use.
 * `writtenUnder` is the master key the database says it writes under, if
 * it records one: then the key is not generated, since a new one could
 * open nothing of it (a backup restored without its key file), and a
 * missing file stops the command with one line, leaving the folder as it was.
 */
export function resolveMasterKey(config: Config, writtenUnder?: string): Buffer {
  if (config.masterKey) return config.masterKey;
  if (config.environment !== 'sandbox') throw new ConfigError('CONNECT_MASTER_KEY is required in production');
  const path = join(config.dataDir, MASTER_KEY_FILE);
  mkdirSync(config.dataDir, { recursive: true });
  try {
    if (writtenUnder !== undefined) {
      readFileSync(path);
    } else {
      writeFileSync(path, randomBytes(MASTER_KEY_BYTES).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && writtenUnder !== undefined) {
      throw new ConfigError(
        `${path} is missing, and this database is written under master key ${writtenUnder}: put back the ${MASTER_KEY_FILE} it was made with (a backup does not hold it), or set CONNECT_MASTER_KEY to that key`,
      );
    }
    if (code !== 'EEXIST') throw error;
  }
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  if (key.length !== MASTER_KEY_BYTES) throw new ConfigError(`the master key in ${path} is not ${MASTER_KEY_BYTES} bytes of base64`);
  return key;
}
